package loop

import (
	"context"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
)

// docs/design/SEMANTICS.md#a7-halt-is-a-decision: a halt is a decision, honoured wherever it is returned.

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

const haltedEnough = `{"kind":"aborted","reason":{"kind":"hook","reason":"enough"}}`
