package loop

import (
	"context"
	"errors"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
)

// Scenarios 1-16 of docs/design/SEMANTICS.md#6-conformance-scenarios: pre-step and turns.

// msgTexts returns the texts of msgs.
func msgTexts(msgs []dsh.UserMessage) []string {
	out := []string{}
	for _, m := range msgs {
		out = append(out, textOf(m.Content))
	}
	return out
}

func TestPreStepSeesPrompt(t *testing.T) {
	e := newEnv(t, text("ok"))
	var seen [][]string
	e.reg.OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		seen = append(seen, msgTexts(p.Messages))
		return next.Call(ctx)
	})
	a := e.agent()
	followup(t, a, "u1", "hello")
	wait(t, a)
	diff(t, "pre-step messages", [][]string{{"hello"}}, seen)
	diff(t, "user/message content", []string{`[{"kind":"text","text":"hello"}]`},
		fields(t, e.log, func(r dsh.UserMessageLogged) string { return jsonOf(t, r.Message.Content) }))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant step/end turn/end")
}

func TestPreStepAtEveryStep(t *testing.T) {
	e := newEnv(t, calls("c1:echo"), text("done"))
	e.register(okTool("echo", false))
	type call struct{ Turn, Step, N int }
	var seen []call
	e.reg.OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		seen = append(seen, call{p.Turn, p.Step, len(p.Messages)})
		return next.Call(ctx)
	})
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "pre-step calls", []call{{1, 1, 1}, {1, 2, 0}}, seen)
	diff(t, "boundaries", []string{"turn/start", "step/start", "step/end", "step/start", "step/end", "turn/end"},
		typesOf(e.log, boundaries...))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant call result step/end step/start chunk*2 assistant step/end turn/end")
}

func TestPreStepPayloadIsPrivate(t *testing.T) {
	e := newEnv(t, text("ok"))
	release := make(chan struct{})
	e.reg.OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		<-release // awaits
		d, err := next.Call(ctx)
		// Changing the payload changes nothing: it is the listener's own copy.
		p.Messages[0].Content[0] = dsh.TextBlock{Text: "mutated"} //dshvet:allow payloadwrite the test checks that writing the payload changes nothing
		p.Messages[0].Source = dsh.SourcePlugin{Plugin: "evil"}   //dshvet:allow payloadwrite the test checks that writing the payload changes nothing
		return d, err
	})
	a := e.agent()
	msg := userMsg("u1", "original")
	if err := a.Followup(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	msg.Content[0] = dsh.TextBlock{Text: "caller changed it"} // the caller's copy is not the inbox's
	close(release)
	wait(t, a)
	want := userMsg("u1", "original")
	diff(t, "logged message", []string{jsonOf(t, want)},
		fields(t, e.log, func(r dsh.UserMessageLogged) string { return jsonOf(t, r.Message) }))
	diff(t, "request 1", []string{"user:original"}, texts(e.requests()[0]))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant step/end turn/end")
}

func TestPreStepRewritesInPlace(t *testing.T) {
	e := newEnv(t, text("ok"))
	e.reg.OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		d, err := next.Call(ctx)
		if err != nil {
			return nil, err
		}
		msgs := d.(dsh.PreStepEnter).Messages
		msgs[0].Content = []dsh.ContentBlock{dsh.TextBlock{Text: "REWRITTEN"}}
		return dsh.PreStepEnter{Messages: msgs}, nil
	})
	a := e.agent()
	followup(t, a, "u1", "original")
	wait(t, a)
	diff(t, "user/message", []string{"REWRITTEN"}, userTexts(t, e.log))
	diff(t, "ids", []string{"u1"}, fields(t, e.log, func(r dsh.UserMessageLogged) string { return r.Message.ID }))
	req := e.requests()[0]
	if !contains(req, "REWRITTEN") || contains(req, "original") {
		t.Errorf("request 1 = %v", texts(req))
	}
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant step/end turn/end")
}

func TestPreStepAddsPluginMessage(t *testing.T) {
	e := newEnv(t, text("ok"))
	e.reg.OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		d, err := next.Call(ctx)
		if err != nil {
			return nil, err
		}
		return dsh.PreStepEnter{Messages: append(d.(dsh.PreStepEnter).Messages, pluginMsg("p1", "added"))}, nil
	})
	a := e.agent()
	followup(t, a, "u1", "prompt")
	wait(t, a)
	diff(t, "sources", []string{"user", "plugin"},
		fields(t, e.log, func(r dsh.UserMessageLogged) string { return string(r.Message.Source.Kind()) }))
	diff(t, "request 1", []string{"user:prompt", "user:added"}, texts(e.requests()[0]))
	checkLog(t, e.log, "spliced turn/start spliced step/start user*2 header context chunk*2 assistant step/end turn/end")
}

func rejectAll(reason string) dsh.PreStepListener {
	return func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		return dsh.PreStepReject{Reason: &reason}, nil
	}
}

func TestPreStepRejectBlocksTurn(t *testing.T) {
	e := newEnv(t, text("never"))
	e.reg.OnPreStep(rejectAll("not allowed"))
	a := e.agent()
	followup(t, a, "u1", "do something")
	wait(t, a)
	// Part A item 8: the reason and the dropped ids are recorded.
	diff(t, "reason", []string{`{"kind":"blocked","reason":"not allowed","droppedMessageIds":["u1"]}`}, reasons(t, e.log))
	diff(t, "requests", 0, len(e.requests()))
	checkLog(t, e.log, "spliced turn/start spliced turn/end")
}

func TestRejectOnePromptThenNextRuns(t *testing.T) {
	// Part A item 10 replaces B's stranded queue: after the blocked turn the driver goes on
	// with the pending follow-up "safe" at once, so no extra wake is needed.
	e := newEnv(t, text("ok"))
	queued := make(chan struct{})
	e.reg.OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		if len(p.Messages) > 0 && textOf(p.Messages[0].Content) == "secret" {
			<-queued
			return dsh.PreStepReject{}, nil
		}
		return next.Call(ctx)
	})
	a := e.agent()
	followup(t, a, "secret", "secret")
	followup(t, a, "safe", "safe")
	close(queued)
	wait(t, a)
	diff(t, "reasons", []string{`{"kind":"blocked","droppedMessageIds":["secret"]}`, `{"kind":"completed"}`}, reasons(t, e.log))
	reqs := e.requests()
	diff(t, "requests", 1, len(reqs))
	if !contains(reqs[0], "safe") || contains(reqs[0], "secret") {
		t.Errorf("request 1 = %v", texts(reqs[0]))
	}
	checkLog(t, e.log, "spliced turn/start spliced*2 turn/end turn/start spliced step/start user header context chunk*2 assistant step/end turn/end")
}

// awaitingPreStep is a pre-step listener that, at step 1 of turn 1, signals entered, waits
// for release and then decides with decide (nil: next).
func awaitingPreStep(entered chan<- struct{}, release <-chan struct{}, decide func() dsh.PreStepDecision) dsh.PreStepListener {
	return func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		if p.Turn == 1 && p.Step == 1 {
			entered <- struct{}{}
			<-release
			if decide != nil {
				return decide(), nil
			}
		}
		return next.Call(ctx)
	}
}

func TestSendsDuringPreStepLandLater(t *testing.T) {
	e := newEnv(t, text("one"), text("two"))
	entered, release := make(chan struct{}, 1), make(chan struct{})
	e.reg.OnPreStep(awaitingPreStep(entered, release, nil))
	a := e.agent()
	followup(t, a, "u1", "prompt")
	await(t, entered, "pre-step")
	if err := a.Inject(context.Background(), pluginMsg("ctx", "ctx")); err != nil {
		t.Fatal(err)
	}
	if err := a.Steer(context.Background(), pluginMsg("s", "steer")); err != nil {
		t.Fatal(err)
	}
	close(release)
	wait(t, a)
	reqs := e.requests()
	diff(t, "request 1", []string{"user:prompt"}, texts(reqs[0]))
	diff(t, "request 2", []string{"user:prompt", "assistant:one", "user:ctx", "user:steer"}, texts(reqs[1]))
	diff(t, "user/message", []string{"prompt", "ctx", "steer"}, userTexts(t, e.log))
	diff(t, "boundaries", []string{"turn/start", "step/start", "step/end", "step/start", "step/end", "turn/end"},
		typesOf(e.log, boundaries...))
	checkLog(t, e.log, "spliced turn/start spliced*3 step/start user header context chunk*2 assistant step/end spliced step/start user*2 chunk*2 assistant step/end turn/end")
}

func TestSendsDuringRejectedPreStepWait(t *testing.T) {
	e := newEnv(t, text("ok"))
	entered, release := make(chan struct{}, 1), make(chan struct{})
	e.reg.OnPreStep(awaitingPreStep(entered, release, func() dsh.PreStepDecision { return dsh.PreStepReject{} }))
	a := e.agent()
	followup(t, a, "u1", "blocked prompt")
	await(t, entered, "pre-step")
	if err := a.Inject(context.Background(), pluginMsg("ctx", "ctx")); err != nil {
		t.Fatal(err)
	}
	if err := a.Steer(context.Background(), pluginMsg("s", "steer")); err != nil {
		t.Fatal(err)
	}
	close(release)
	wait(t, a)
	// No follow-up is pending, so the driver stops after the blocked turn (Part A item 10).
	_, nextStep := a.Inbox()
	diff(t, "nextStep", []string{"ctx", "steer"}, msgTexts(nextStep))
	diff(t, "requests", 0, len(e.requests()))
	followup(t, a, "w", "wake")
	wait(t, a)
	diff(t, "request 1", []string{"user:ctx", "user:steer", "user:wake"}, texts(e.requests()[0]))
	checkLog(t, e.log, "spliced turn/start spliced*3 turn/end spliced turn/start spliced*2 step/start user*3 header context chunk*2 assistant step/end turn/end")
}

func TestOuterRejectsInnerSends(t *testing.T) {
	e := newEnv(t, text("ok"))
	queued := make(chan struct{})
	reason := "blocked prompt"
	e.reg.OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		d, err := next.Call(ctx)
		if err != nil || p.Turn != 1 {
			return d, err
		}
		return dsh.PreStepReject{Reason: &reason}, nil // outer rejects
	})
	e.reg.OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		if p.Turn == 1 { // inner injects and steers
			<-queued
			if err := p.Agent.Inject(ctx, pluginMsg("state", "state")); err != nil {
				return nil, err
			}
			if err := p.Agent.Steer(ctx, pluginMsg("steer", "steer")); err != nil {
				return nil, err
			}
		}
		return next.Call(ctx)
	})
	a := e.agent()
	followup(t, a, "u1", "blocked prompt")
	followup(t, a, "u2", "later prompt")
	close(queued)
	wait(t, a)
	// Part A item 10: the driver goes on with "later prompt" right after the blocked turn.
	diff(t, "reasons", []string{`{"kind":"blocked","reason":"blocked prompt","droppedMessageIds":["u1"]}`, `{"kind":"completed"}`},
		reasons(t, e.log))
	reqs := e.requests()
	diff(t, "requests", 1, len(reqs))
	diff(t, "request 1", []string{"user:state", "user:steer", "user:later prompt"}, texts(reqs[0]))
	checkLog(t, e.log, "spliced turn/start spliced*4 turn/end turn/start spliced*2 step/start user*3 header context chunk*2 assistant step/end turn/end")
}

func TestPreStepThrowEndsTurnError(t *testing.T) {
	e := newEnv(t, text("two"), text("three"))
	queued := make(chan struct{})
	failed := false
	e.reg.OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		if !failed {
			failed = true
			<-queued
			return nil, errors.New("prompt hook broke")
		}
		return next.Call(ctx)
	})
	var statuses recorder
	e.reg.OnStatus(func(ctx context.Context, p *dsh.StatusPayload) { statuses.add(string(p.Status)) })
	var agentErrors []dsh.AgentErrorPayload
	e.reg.OnAgentError(func(ctx context.Context, p *dsh.AgentErrorPayload) { agentErrors = append(agentErrors, *p) })
	a := e.agent()
	followup(t, a, "u1", "first")
	followup(t, a, "u2", "second")
	close(queued)
	wait(t, a)
	diff(t, "reasons", []string{`{"kind":"error","error":{"message":"prompt hook broke","code":"UNKNOWN"}}`}, reasons(t, e.log))
	diff(t, "agent/error", 1, len(agentErrors))
	diff(t, "agent/error step", 1, agentErrors[0].Step)
	diff(t, "statuses", []string{"running", "idle"}, statuses.list())
	diff(t, "requests", 0, len(e.requests()))
	nextTurn, _ := a.Inbox()
	diff(t, "nextTurn", []string{"second"}, msgTexts(nextTurn))
	// The next waking send runs the kept queue, then itself.
	followup(t, a, "u3", "third")
	wait(t, a)
	reqs := e.requests()
	diff(t, "requests", 2, len(reqs))
	diff(t, "request 1", []string{"user:second"}, texts(reqs[0]))
	diff(t, "request 2", []string{"user:second", "assistant:two", "user:third"}, texts(reqs[1]))
	checkLog(t, e.log, "spliced turn/start spliced*2 turn/end spliced turn/start spliced step/start user header context chunk*2 assistant step/end turn/end turn/start spliced step/start user chunk*2 assistant step/end turn/end")
}

func enterNothing(from int) dsh.PreStepListener {
	return func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		if p.Step >= from {
			return dsh.PreStepEnter{Messages: []dsh.UserMessage{}}, nil
		}
		return next.Call(ctx)
	}
}

func TestEmptyFirstBatchCompletesWithoutStep(t *testing.T) {
	e := newEnv(t, text("never"))
	e.reg.OnPreStep(enterNothing(1))
	a := e.agent()
	followup(t, a, "u1", "hello")
	wait(t, a)
	diff(t, "reasons", []string{`{"kind":"completed"}`}, reasons(t, e.log))
	diff(t, "requests", 0, len(e.requests()))
	nextTurn, nextStep := a.Inbox()
	diff(t, "inbox", 0, len(nextTurn)+len(nextStep))
	checkLog(t, e.log, "spliced turn/start spliced turn/end")
}

func TestEmptyContinuationBatchCloses(t *testing.T) {
	e := newEnv(t, text("one"), text("never"))
	e.reg.OnPreStep(enterNothing(2))
	e.reg.OnTurnStopping(func(ctx context.Context, p *dsh.TurnStoppingPayload) error {
		if p.Continuations == 0 {
			return p.Agent.Inject(ctx, pluginMsg("i1", "more"))
		}
		return nil
	})
	a := e.agent()
	followup(t, a, "u1", "hello")
	wait(t, a)
	diff(t, "requests", 1, len(e.requests()))
	diff(t, "boundaries", []string{"turn/start", "step/start", "step/end", "turn/end"}, typesOf(e.log, boundaries...))
	diff(t, "reasons", []string{`{"kind":"completed"}`}, reasons(t, e.log))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant step/end spliced*2 turn/end")
}

func TestRejectSecondProposal(t *testing.T) {
	e := newEnv(t, text("one"), text("never"))
	e.reg.OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		if p.Step == 2 {
			return dsh.PreStepReject{}, nil
		}
		return next.Call(ctx)
	})
	e.reg.OnTurnStopping(func(ctx context.Context, p *dsh.TurnStoppingPayload) error {
		return p.Agent.Inject(ctx, pluginMsg("i1", "more"))
	})
	a := e.agent()
	followup(t, a, "u1", "hello")
	wait(t, a)
	diff(t, "requests", 1, len(e.requests()))
	diff(t, "reasons", []string{`{"kind":"blocked","droppedMessageIds":["i1"]}`}, reasons(t, e.log))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant step/end spliced*2 turn/end")
}

func TestPreStepRunsBeforeStepOpens(t *testing.T) {
	e := newEnv(t, calls("c1:echo"), text("done"))
	e.register(okTool("echo", false))
	var tails []string
	e.reg.OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		evs := events(e.log)
		tails = append(tails, evs[len(evs)-1].Type)
		return next.Call(ctx)
	})
	a := e.agent()
	followup(t, a, "u1", "hello")
	wait(t, a)
	diff(t, "log tails at pre-step", []string{"agent/inbox/spliced", "step/end"}, tails)
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant call result step/end step/start chunk*2 assistant step/end turn/end")
}

func TestSteerThenThrowKeepsSteering(t *testing.T) {
	e := newEnv(t, text("ok"))
	failed := false
	e.reg.OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		if !failed {
			failed = true
			if err := p.Agent.Steer(ctx, pluginMsg("s1", "steering")); err != nil {
				return nil, err
			}
			return nil, errors.New("boom")
		}
		return next.Call(ctx)
	})
	a := e.agent()
	followup(t, a, "u1", "hello")
	wait(t, a)
	diff(t, "reasons", []string{`{"kind":"error","error":{"message":"boom","code":"UNKNOWN"}}`}, reasons(t, e.log))
	diff(t, "requests", 0, len(e.requests()))
	_, nextStep := a.Inbox()
	diff(t, "nextStep", []string{"steering"}, msgTexts(nextStep))
	followup(t, a, "w", "wake")
	wait(t, a)
	diff(t, "request 1", []string{"user:steering", "user:wake"}, texts(e.requests()[0]))
	checkLog(t, e.log, "spliced turn/start spliced*2 turn/end spliced turn/start spliced*2 step/start user*2 header context chunk*2 assistant step/end turn/end")
}
