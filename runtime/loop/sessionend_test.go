package loop

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
)

// agent/session-end: Close runs its listeners once, after the last turn, with the agent
// idle and closed, each under a bound.

func TestSessionEndRunsOnceOnCloseAfterTheTurn(t *testing.T) {
	e := newEnv(t, text("ok"))
	type seen struct {
		reason   dsh.SessionEndReason
		status   dsh.AgentStatus
		turnEnds int
		sendErr  error
	}
	var got []seen
	e.reg.OnSessionEnd(func(ctx context.Context, p *dsh.SessionEndPayload) error {
		a := p.Agent.(*Agent)
		got = append(got, seen{p.Reason, a.Status(), len(records[dsh.TurnEnd](t, e.log)),
			a.Followup(ctx, userMsg("late", "too late"))})
		return nil
	})
	a := e.agent()
	followup(t, a, "u1", "hello")
	wait(t, a)
	if len(got) != 0 {
		t.Fatalf("session-end ran before Close: %+v", got)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("session-end ran %d times, want once", len(got))
	}
	g := got[0]
	diff(t, "reason", dsh.SessionEndReasonClose, g.reason)
	diff(t, "status", dsh.AgentStatusIdle, g.status)
	diff(t, "turn/ends seen", 1, g.turnEnds)
	if !errors.Is(g.sendErr, ErrClosed) {
		t.Errorf("a send during session-end: %v, want ErrClosed", g.sendErr)
	}
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant step/end turn/end")
}

func TestSessionEndListenersAreBoundedAndOverrunsRecorded(t *testing.T) {
	e := newEnv(t)
	e.cfg.SessionEndTimeout = 100 * time.Millisecond
	release := make(chan struct{})
	defer close(release)
	var order recorder
	e.reg.Plugin("slow").OnSessionEnd(func(ctx context.Context, p *dsh.SessionEndPayload) error {
		order.add("slow")
		<-release // ignores its context: abandoned
		return nil
	})
	var laterErr error
	e.reg.Plugin("later").OnSessionEnd(func(ctx context.Context, p *dsh.SessionEndPayload) error {
		order.add("later")
		laterErr = ctx.Err()
		return nil
	})
	cancelled := make(chan error, 1)
	e.reg.Plugin("polite").OnSessionEnd(func(ctx context.Context, p *dsh.SessionEndPayload) error {
		<-ctx.Done() // honours its context: cancelled at its bound
		cancelled <- context.Cause(ctx)
		return ctx.Err()
	})
	e.reg.Plugin("broken").OnSessionEnd(func(ctx context.Context, p *dsh.SessionEndPayload) error {
		panic("cleanup panicked")
	})
	a := e.agent()
	start := time.Now()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %s with a 100 ms session-end budget", d)
	}
	diff(t, "listeners run", []string{"slow", "later"}, order.list())
	if laterErr != nil {
		t.Errorf("the listener after an overrun got a done context: %v", laterErr)
	}
	if c := <-cancelled; !errors.Is(c, dsh.ErrListenerOverrun) {
		t.Errorf("the polite listener's context ended with %v, want ErrListenerOverrun", c)
	}
	diff(t, "overruns", []string{"slow#1:100", "polite#1:100"}, fields(t, e.log, func(r dsh.EndListenerOverrun) string {
		return r.Listener + ":" + itoa(r.BudgetMS)
	}))
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	s := ""
	for n > 0 {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return s
}
