package loop

import (
	"context"
	"fmt"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
)

// Part A items 3 and 9 at turn-stopping (the stopping and continuation scenarios are in
// spec/conformance/loop_stop.cue).

func TestPartA03_EveryTurnStoppingListenerRuns(t *testing.T) {
	e := newEnv(t, text("one"))
	var ran recorder
	for i := 1; i <= 3; i++ {
		e.reg.OnTurnStopping(func(ctx context.Context, p *dsh.TurnStoppingPayload) error {
			ran.add(fmt.Sprint(i))
			if i == 2 {
				panic("second listener panicked")
			}
			return nil
		})
	}
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "listeners run", []string{"1", "2", "3"}, ran.list())
	diff(t, "reasons", []string{`{"kind":"error","error":{"message":"panic: second listener panicked","code":"UNKNOWN"}}`},
		reasons(t, e.log))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant step/end turn/end")
}

func TestPartA09_ContinuationCap(t *testing.T) {
	e := newEnv(t, text("one"), text("two"), text("three"), text("never"))
	e.cfg.ContinuationCap = 2
	type seen struct {
		Continuations int
		Active        bool
	}
	var payloads []seen
	var discarded []string
	e.reg.OnInboxDiscarded(func(ctx context.Context, p *dsh.InboxDiscardedPayload) {
		discarded = append(discarded, textOf(p.Message.Content))
	})
	e.reg.OnTurnStopping(func(ctx context.Context, p *dsh.TurnStoppingPayload) error {
		payloads = append(payloads, seen{p.Continuations, p.StopHookActive})
		return p.Agent.Steer(ctx, pluginMsg(fmt.Sprintf("m%d", p.Continuations), fmt.Sprintf("again %d", p.Continuations)))
	})
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "payloads", []seen{{0, false}, {1, true}, {2, true}}, payloads)
	diff(t, "requests", 3, len(e.requests()))
	diff(t, "discarded", []string{"again 2"}, discarded)
	diff(t, "capped", []dsh.ContinuationCapped{{Turn: 1, Continuations: 2, Cap: 2}}, records[dsh.ContinuationCapped](t, e.log))
	evs := types(e.log)
	diff(t, "log tail", []string{"step/end", "agent/inbox/spliced", "agent/inbox/spliced", "turn/continuation-capped", "turn/end"},
		evs[len(evs)-5:])
	diff(t, "canceled splice", []string{"", "", "", "", "", "", "", "canceled"},
		fields(t, e.log, func(r dsh.InboxSpliced) string { return string(r.Outcome) }))
	diff(t, "reasons", []string{`{"kind":"completed"}`}, reasons(t, e.log))
	_, nextStep := a.Inbox()
	diff(t, "nextStep", 0, len(nextStep))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant step/end spliced*2 step/start user chunk*2 assistant step/end spliced*2 step/start user chunk*2 assistant step/end spliced*2 capped turn/end")
}
