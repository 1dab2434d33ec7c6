package loop

import (
	"context"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
)

// Session start: what the scenarios of spec/conformance/loop.cue cannot see (that the
// listeners run before New returns and before any turn, the source of the messages after an
// injected one), and Part A item 6.

func TestSessionStartOnceBeforeNewReturns(t *testing.T) {
	e := newEnv(t, text("ok"))
	var sources []string
	var turnsSeen []int
	e.reg.OnSessionStart(func(ctx context.Context, p *dsh.SessionStartPayload) error {
		sources = append(sources, string(p.Source))
		turnsSeen = append(turnsSeen, len(records[dsh.TurnStart](t, e.log)))
		return nil
	})
	a := e.agent()
	diff(t, "sources at New", []string{"startup"}, sources)
	diff(t, "turn/starts seen", []int{0}, turnsSeen)
	followup(t, a, "u1", "hello")
	wait(t, a)
	diff(t, "sources after a turn", []string{"startup"}, sources)
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant step/end turn/end")
}

func TestSessionStartInjectReachesRequest1(t *testing.T) {
	e := newEnv(t, text("ok"))
	e.reg.OnSessionStart(func(ctx context.Context, p *dsh.SessionStartPayload) error {
		return p.Agent.Inject(ctx, pluginMsg("pre", "preamble"))
	})
	a := e.agent()
	followup(t, a, "u1", "hello")
	wait(t, a)
	diff(t, "request 1", []string{"user:preamble", "user:hello"}, texts(e.requests()[0]))
	diff(t, "user/message sources", []string{`{"kind":"plugin","plugin":"test"}`, `{"kind":"user"}`},
		fields(t, e.log, func(r dsh.UserMessageLogged) string { return jsonOf(t, r.Message.Source) }))
	checkLog(t, e.log, "spliced*2 turn/start spliced*2 step/start user*2 header context chunk*2 assistant step/end turn/end")
}

func TestPartA06_SessionStartIsAwaited(t *testing.T) {
	// An asynchronous contribution that takes a while still reaches request 1.
	e := newEnv(t, text("ok"))
	e.reg.OnSessionStart(func(ctx context.Context, p *dsh.SessionStartPayload) error {
		select {
		case <-time.After(30 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
		return p.Agent.Inject(ctx, pluginMsg("late", "late context"))
	})
	a := e.agent()
	followup(t, a, "u1", "hello")
	wait(t, a)
	diff(t, "request 1", []string{"user:late context", "user:hello"}, texts(e.requests()[0]))
	checkLog(t, e.log, "spliced*2 turn/start spliced*2 step/start user*2 header context chunk*2 assistant step/end turn/end")
}

func TestPartA06_OverrunningListenerIsCancelledAndRecorded(t *testing.T) {
	e := newEnv(t, text("ok"))
	e.cfg.SessionStartTimeout = 40 * time.Millisecond
	p := e.reg.Plugin("slow")
	p.OnSessionStart(func(ctx context.Context, p *dsh.SessionStartPayload) error {
		<-ctx.Done() // overruns, but honours the cancellation
		return ctx.Err()
	})
	ran := false
	e.reg.Plugin("after").OnSessionStart(func(ctx context.Context, p *dsh.SessionStartPayload) error {
		ran = true
		return nil
	})
	start := time.Now()
	a := e.agent()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("New took %v", d)
	}
	if !ran {
		t.Error("the listener after the overrun did not run")
	}
	diff(t, "overruns", []dsh.StartListenerOverrun{{Listener: "slow#1", TimeoutMS: 40}}, records[dsh.StartListenerOverrun](t, e.log))
	followup(t, a, "u1", "hello")
	wait(t, a)
	diff(t, "requests", 1, len(e.requests()))
	checkLog(t, e.log, "overrun spliced turn/start spliced step/start user header context chunk*2 assistant step/end turn/end")
}

func TestPartA06_UncooperativeListenerDoesNotBlockStartup(t *testing.T) {
	e := newEnv(t, text("ok"))
	e.cfg.SessionStartTimeout = 30 * time.Millisecond
	stuck := make(chan struct{})
	defer close(stuck)
	e.reg.Plugin("stuck").OnSessionStart(func(ctx context.Context, p *dsh.SessionStartPayload) error {
		<-stuck // ignores its context
		return nil
	})
	ran := false
	e.reg.Plugin("after").OnSessionStart(func(ctx context.Context, p *dsh.SessionStartPayload) error {
		ran = true
		return nil
	})
	a := e.agent()
	if !ran {
		t.Error("the listener after the abandoned one did not run")
	}
	// Even a listener that ignores its context is named: each listener has its own bound.
	diff(t, "overruns", []dsh.StartListenerOverrun{{Listener: "stuck#1", TimeoutMS: 30}},
		records[dsh.StartListenerOverrun](t, e.log))
	followup(t, a, "u1", "hello")
	wait(t, a)
	diff(t, "reasons", []string{`{"kind":"completed"}`}, reasons(t, e.log))
	checkLog(t, e.log, "overrun spliced turn/start spliced step/start user header context chunk*2 assistant step/end turn/end")
}
