package loop

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/tools"
)

// Scenarios 21-29 of docs/design/SEMANTICS.md#6-conformance-scenarios (stopping and continuation), Part A items 3 and 9.

// steerWhile is a turn-stopping listener that steers "more-<n>" while cond holds.
func steerWhile(cond func(p *dsh.TurnStoppingPayload) bool) dsh.TurnStoppingListener {
	n := 0
	return func(ctx context.Context, p *dsh.TurnStoppingPayload) error {
		if !cond(p) {
			return nil
		}
		n++
		return p.Agent.Steer(ctx, pluginMsg(fmt.Sprintf("more-%d", n), fmt.Sprintf("more %d", n)))
	}
}

func TestSteeringContinuesTheTurn(t *testing.T) {
	e := newEnv(t, text("one"), text("two"), text("three"), text("never"))
	a := e.agent()
	e.reg.OnTurnStopping(steerWhile(func(p *dsh.TurnStoppingPayload) bool {
		return len(records[dsh.StepEnd](t, e.log)) < 3
	}))
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "requests", 3, len(e.requests()))
	diff(t, "boundaries", []string{"turn/start", "step/start", "step/end", "step/start", "step/end",
		"step/start", "step/end", "turn/end"}, typesOf(e.log, boundaries...))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant step/end spliced*2 step/start user chunk*2 assistant step/end spliced*2 step/start user chunk*2 assistant step/end turn/end")
}

func TestSteerOnceAtStop(t *testing.T) {
	e := newEnv(t, text("one"), text("two"))
	e.reg.OnTurnStopping(steerWhile(func(p *dsh.TurnStoppingPayload) bool { return p.Continuations == 0 }))
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	reqs := e.requests()
	diff(t, "request 2", []string{"user:go", "assistant:one", "user:more 1"}, texts(reqs[1]))
	diff(t, "turn/starts", 1, len(records[dsh.TurnStart](t, e.log)))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant step/end spliced*2 step/start user chunk*2 assistant step/end turn/end")
}

func TestMaxTokensIsStickyAcrossContinuation(t *testing.T) {
	e := newEnv(t, llm.ScriptedResponse{Text: "first half", Finish: dsh.FinishReasonMaxTokens}, text("second half"))
	e.reg.OnTurnStopping(func(ctx context.Context, p *dsh.TurnStoppingPayload) error {
		if p.Continuations == 0 {
			return p.Agent.Steer(ctx, pluginMsg("c", "continue after truncation"))
		}
		return nil
	})
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "reasons", []string{`{"kind":"max-tokens"}`}, reasons(t, e.log))
	diff(t, "request 2", []string{"user:go", "assistant:first half", "user:continue after truncation"}, texts(e.requests()[1]))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*3 assistant step/end spliced*2 step/start user chunk*3 assistant step/end turn/end")
}

func TestMaxTokensThenCompleted(t *testing.T) {
	e := newEnv(t, llm.ScriptedResponse{Text: "cut", Finish: dsh.FinishReasonMaxTokens}, text("whole"))
	a := e.agent()
	followup(t, a, "u1", "one")
	wait(t, a)
	followup(t, a, "u2", "two")
	wait(t, a)
	diff(t, "reasons", []string{`{"kind":"max-tokens"}`, `{"kind":"completed"}`}, reasons(t, e.log))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant step/end turn/end spliced turn/start spliced step/start user chunk*2 assistant step/end turn/end")
}

func TestMaxTokensDropsToolCalls(t *testing.T) {
	e := newEnv(t, llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{ID: "c1", Name: "echo"}},
		Finish: dsh.FinishReasonMaxTokens, Usage: &dsh.Usage{InputTokens: 3, OutputTokens: 4}})
	ran := false
	e.register(toolDef("echo", false, func(context.Context, *tools.RunContext) (any, error) { ran = true; return "x", nil }))
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	if ran {
		t.Error("the truncated tool call ran")
	}
	diff(t, "tool/calls", 0, len(records[dsh.ToolCall](t, e.log)))
	diff(t, "assistant/message", []string{`{"turn":1,"step":1,"message":{"role":"assistant","content":[]},"usage":{"inputTokens":3,"outputTokens":4}}`},
		fields(t, e.log, func(r dsh.AssistantMessageLogged) string { return jsonOf(t, r) }))
	diff(t, "reasons", []string{`{"kind":"max-tokens"}`}, reasons(t, e.log))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant step/end turn/end")
}

// concluding is a tool whose body concludes the turn after do.
func concluding(do func(ctx context.Context) error) tools.Definition {
	return toolDef("finish", false, func(ctx context.Context, rc *tools.RunContext) (any, error) {
		if do != nil {
			if err := do(ctx); err != nil {
				return nil, err
			}
		}
		rc.ConcludeTurn()
		return "finished", nil
	})
}

func TestConcludeTurnEndsAfterBatch(t *testing.T) {
	e := newEnv(t, calls("c1:finish"), text("never"))
	e.register(concluding(nil))
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "requests", 1, len(e.requests()))
	diff(t, "reasons", []string{`{"kind":"completed"}`}, reasons(t, e.log))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant call result step/end turn/end")
}

func TestConcludingToolThatSteers(t *testing.T) {
	e := newEnv(t, calls("c1:finish"), text("after"))
	e.register(concluding(func(ctx context.Context) error {
		a, _ := AgentFromContext(ctx)
		return a.Steer(ctx, pluginMsg("s", "steering"))
	}))
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	reqs := e.requests()
	diff(t, "requests", 2, len(reqs))
	diff(t, "turn/ends", 1, len(records[dsh.TurnEnd](t, e.log)))
	if !contains(reqs[1], "steering") {
		t.Errorf("request 2 = %v", texts(reqs[1]))
	}
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant call spliced result step/end spliced step/start user chunk*2 assistant step/end turn/end")
}

func TestThrowingTurnStoppingEndsError(t *testing.T) {
	e := newEnv(t, text("one"), text("two"))
	var ran []int
	failed := false
	e.reg.OnTurnStopping(func(ctx context.Context, p *dsh.TurnStoppingPayload) error {
		if !failed {
			failed = true
			return errors.New("broken continuation plugin")
		}
		return nil
	})
	// Part A item 3: the listener after the failing one still runs.
	e.reg.OnTurnStopping(func(ctx context.Context, p *dsh.TurnStoppingPayload) error {
		ran = append(ran, p.Turn)
		return nil
	})
	a := e.agent()
	followup(t, a, "u1", "first")
	wait(t, a)
	followup(t, a, "u2", "second")
	wait(t, a)
	diff(t, "reasons", []string{`{"kind":"error","error":{"message":"broken continuation plugin","code":"UNKNOWN"}}`,
		`{"kind":"completed"}`}, reasons(t, e.log))
	diff(t, "second listener ran", []int{1, 2}, ran)
	diff(t, "status", dsh.AgentStatusIdle, a.Status())
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant step/end turn/end spliced turn/start spliced step/start user chunk*2 assistant step/end turn/end")
}

func TestCancelAtTurnStopping(t *testing.T) {
	e := newEnv(t, text("one"), text("never"))
	e.reg.OnTurnStopping(func(ctx context.Context, p *dsh.TurnStoppingPayload) error {
		p.Agent.(*Agent).Cancel(dsh.CancelUser{}, false)
		return nil
	})
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "step/starts", 1, len(records[dsh.StepStart](t, e.log)))
	diff(t, "reasons", []string{`{"kind":"aborted","reason":{"kind":"user"}}`}, reasons(t, e.log))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant step/end turn/end")
}

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
