package loop

import (
	"context"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
)

// Pre-step: what the scenarios of spec/conformance/loop.cue do not check (copies of the
// payload and of the caller's message, a reject's reason, the log as pre-step sees it).

// msgTexts returns the texts of msgs.
func msgTexts(msgs []dsh.UserMessage) []string {
	out := []string{}
	for _, m := range msgs {
		out = append(out, textOf(m.Content))
	}
	return out
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
