package loop

import (
	"context"
	"errors"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
)

// Part A items 7, 8, 10 and 12 of SEMANTICS.md (items 3, 6, 9 and 11 are tested with the
// scenarios they refine).

const haltedEnough = `{"kind":"aborted","reason":{"kind":"hook","reason":"enough"}}`

func TestPartA07_PreStepHaltLeavesInbox(t *testing.T) {
	e := newEnv(t, text("never"), text("second"))
	queued := make(chan struct{})
	halted := false
	e.reg.OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		if !halted {
			halted = true
			<-queued
			return dsh.PreStepHalt{Reason: "enough"}, nil
		}
		return next.Call(ctx)
	})
	a := e.agent()
	followup(t, a, "u1", "first")
	followup(t, a, "u2", "second")
	close(queued)
	wait(t, a)
	diff(t, "reasons", []string{haltedEnough}, reasons(t, e.log))
	nextTurn, _ := a.Inbox()
	diff(t, "nextTurn", []string{"second"}, msgTexts(nextTurn))
	diff(t, "requests", 0, len(e.requests()))
	checkLog(t, e.log, "spliced turn/start spliced*2 turn/end")
}

func TestPartA07_HaltFromTurnStopping(t *testing.T) {
	e := newEnv(t, text("one"), text("never"))
	e.reg.OnTurnStopping(func(ctx context.Context, p *dsh.TurnStoppingPayload) error {
		p.Agent.Halt("enough")
		return p.Agent.Inject(ctx, pluginMsg("kept", "kept"))
	})
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "reasons", []string{haltedEnough}, reasons(t, e.log))
	diff(t, "requests", 1, len(e.requests()))
	_, nextStep := a.Inbox()
	diff(t, "nextStep", []string{"kept"}, msgTexts(nextStep))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant step/end spliced turn/end")
}

func TestPartA07_PreExecuteHaltSettlesBatch(t *testing.T) {
	e := newEnv(t, calls("c1:t", "c2:t", "c3:t"), text("never"))
	var bodies, post recorder
	e.register(toolDef("t", false, func(ctx context.Context, rc *tools.RunContext) (any, error) {
		bodies.add(rc.Exec().CallID)
		return "ran", nil
	}))
	e.reg.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		if p.Exec.CallID == "c2" {
			return dsh.PreToolHalt{Reason: "enough"}, nil
		}
		return next.Call(ctx)
	})
	e.reg.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		post.add(p.Exec.CallID)
		return next.Call(ctx)
	})
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "bodies", []string{"c1"}, bodies.list())
	diff(t, "post-execute (the denial reaches it)", []string{"c1", "c2"}, post.list())
	diff(t, "results", []string{"ran", "Error: enough", "Error: tool call aborted before dispatch"},
		fields(t, e.log, func(r dsh.ToolResultLogged) string { return textOf(r.Message.Content) }))
	evs := types(e.log)
	diff(t, "tail", []string{"tool/call", "tool/result", "tool/call", "tool/result", "tool/call", "tool/result", "step/end", "turn/end"},
		evs[len(evs)-8:])
	diff(t, "reasons", []string{haltedEnough}, reasons(t, e.log))
	diff(t, "requests", 1, len(e.requests()))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*4 assistant call result call result call result step/end turn/end")
}

func TestPartA07_PostExecuteHaltKeepsResult(t *testing.T) {
	e := newEnv(t, calls("c1:t", "c2:t"), text("never"))
	e.register(okTool("t", false))
	e.reg.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		if p.Exec.CallID == "c1" {
			return dsh.PostToolHalt{Reason: "enough"}, nil
		}
		return next.Call(ctx)
	})
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "results", []string{"ok", "Error: tool call aborted before dispatch"},
		fields(t, e.log, func(r dsh.ToolResultLogged) string { return textOf(r.Message.Content) }))
	diff(t, "reasons", []string{haltedEnough}, reasons(t, e.log))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*3 assistant call result call result step/end turn/end")
}

func TestPartA08_RejectReasonAndDroppedIDs(t *testing.T) {
	e := newEnv(t, text("one"), text("never"))
	reason := "too long"
	e.reg.OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		if p.Step == 2 {
			return dsh.PreStepReject{Reason: &reason}, nil
		}
		return next.Call(ctx)
	})
	e.reg.OnTurnStopping(func(ctx context.Context, p *dsh.TurnStoppingPayload) error {
		if err := p.Agent.Inject(ctx, pluginMsg("i1", "one")); err != nil {
			return err
		}
		return p.Agent.Inject(ctx, pluginMsg("i2", "two"))
	})
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "turn/end", []dsh.TurnEnd{{Turn: 1, Reason: dsh.TurnEndBlocked{Reason: &reason, DroppedMessageIDs: []string{"i1", "i2"}}}},
		records[dsh.TurnEnd](t, e.log))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant step/end spliced*3 turn/end")
}

func TestPartA10_QueueAfterBlockedErrorAborted(t *testing.T) {
	e := newEnv(t, text("one"), text("two"), text("three"))
	queued := make(chan struct{}, 1)
	e.reg.OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		if len(p.Messages) != 1 {
			return next.Call(ctx)
		}
		switch p.Messages[0].ID {
		case "blocked":
			<-queued
			return dsh.PreStepReject{}, nil
		case "broken":
			<-queued
			return nil, errors.New("broken")
		case "held":
			<-queued
			<-ctx.Done()
		}
		return next.Call(ctx)
	})
	a := e.agent()

	// After blocked the driver goes on with the pending follow-up, without a wake.
	followup(t, a, "blocked", "blocked")
	followup(t, a, "f1", "after blocked")
	queued <- struct{}{}
	wait(t, a)
	diff(t, "blocked, then the follow-up", []string{`{"kind":"blocked","droppedMessageIds":["blocked"]}`, `{"kind":"completed"}`},
		reasons(t, e.log))

	// After error the driver stops and keeps the queue.
	followup(t, a, "broken", "broken")
	followup(t, a, "f2", "after error")
	queued <- struct{}{}
	wait(t, a)
	diff(t, "error", `{"kind":"error","error":{"message":"broken","code":"UNKNOWN"}}`, reasons(t, e.log)[2])
	nextTurn, _ := a.Inbox()
	diff(t, "kept after error", []string{"after error"}, msgTexts(nextTurn))

	// The next waking send runs the queue; after aborted the driver stops again.
	followup(t, a, "held", "held") // turn 4 runs "after error", turn 5 holds
	waitFor(t, "turn 5", func() bool { return len(records[dsh.TurnStart](t, e.log)) == 5 })
	followup(t, a, "f3", "after aborted")
	queued <- struct{}{}
	a.Cancel(dsh.CancelUser{}, true)
	wait(t, a)
	diff(t, "reasons", []string{`{"kind":"completed"}`, abortedUser}, reasons(t, e.log)[3:])
	nextTurn, _ = a.Inbox()
	diff(t, "kept after aborted", []string{"after aborted"}, msgTexts(nextTurn))
	diff(t, "status", dsh.AgentStatusIdle, a.Status())
	checkLog(t, e.log, "spliced turn/start spliced*2 turn/end turn/start spliced step/start user header context chunk*2 assistant step/end turn/end spliced turn/start spliced*2 turn/end spliced turn/start spliced step/start user chunk*2 assistant step/end turn/end turn/start spliced*2 turn/end")
}

func TestPartA12_DecisionAudit(t *testing.T) {
	e := newEnv(t, calls("c1:t"), text("done"))
	e.cfg.Audit = true
	e.register(okTool("t", false))
	policy := e.reg.Plugin("policy")
	policy.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		return dsh.PreToolDeny{Reason: "no"}, nil
	})
	reason := "not now"
	policy.OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		if p.Turn == 2 {
			return dsh.PreStepReject{Reason: &reason}, nil
		}
		return next.Call(ctx)
	})
	e.reg.Plugin("passthrough").OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		return next.Call(ctx)
	})
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	followup(t, a, "u2", "again")
	wait(t, a)
	one, two, no, c1 := 1, 2, "no", "c1"
	diff(t, "decisions", []dsh.DecisionRecorded{
		{Turn: &one, Step: &one, Point: "tools/pre-execute", Listener: "policy#1", Decision: "deny", Reason: &no, CallID: &c1},
		{Turn: &two, Step: &one, Point: "agent/pre-step", Listener: "policy#2", Decision: "reject", Reason: &reason},
	}, records[dsh.DecisionRecorded](t, e.log))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant call decision result step/end step/start chunk*2 assistant step/end turn/end spliced turn/start spliced decision turn/end")
}

func TestPartA12_NoAuditByDefault(t *testing.T) {
	e := newEnv(t, text("done"))
	e.reg.OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		return dsh.PreStepEnter{Messages: p.Messages}, nil
	})
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "decisions", 0, len(records[dsh.DecisionRecorded](t, e.log)))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant step/end turn/end")
}
