package loop

import (
	"context"
	"errors"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
)

// docs/design/SEMANTICS.md#a8-reject-has-a-reason, docs/design/SEMANTICS.md#a10-no-stranded-queue-after-a-blocked-turn: a reject has a reason, and no queue is stranded after
// a blocked turn.

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
