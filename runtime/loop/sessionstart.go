package loop

import (
	"context"
	"errors"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
)

// errStartOverrun is the cause of the context of session-start listeners that exceeded
// the bound.
var errStartOverrun = errors.New("loop: agent/session-start exceeded its bound")

// startGrace is how long, after the bound passed, the agent waits for cancelled
// session-start listeners to return (and so to name themselves) before it proceeds.
const startGrace = 50 * time.Millisecond

// unidentifiedListener names an overrunning session-start listener that did not return
// a cancellation error, so that the runner could not name it.
const unidentifiedListener = "(unidentified)"

// sessionStart runs the agent/session-start listeners (SEMANTICS.md B §2.1, Part A item
// 6): awaited in order, all of them together bounded by Config.SessionStartTimeout. At
// the bound their context is cancelled and, after a short grace, startup proceeds; each
// listener that returned the cancellation is recorded as session/start-listener-overrun
// (one unnamed record when none could be named). Other failures are logged; nothing
// vetoes startup.
func (a *Agent) sessionStart(ctx context.Context, source dsh.SessionStartSource) {
	bound := a.cfg.SessionStartTimeout
	sctx, cancel := context.WithTimeoutCause(withScope(ctx, scope{agent: a}), bound, errStartOverrun)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- a.reg.NotifySessionStart(sctx, &dsh.SessionStartPayload{Agent: a, AgentID: a.id, Source: source})
	}()
	var err error
	select {
	case err = <-done:
	case <-sctx.Done():
		grace := time.NewTimer(startGrace)
		select {
		case err = <-done:
		case <-grace.C:
		}
		grace.Stop()
	}
	overran := errors.Is(context.Cause(sctx), errStartOverrun)
	named := 0
	for _, le := range listenerErrors(err) {
		if overran && (errors.Is(le.Err, context.DeadlineExceeded) || errors.Is(le.Err, errStartOverrun)) {
			a.recordOverrun(le.Listener, bound)
			named++
			continue
		}
		a.logger.Warn("loop: agent/session-start listener failed", "listener", le.Listener, "err", le.Err)
	}
	if overran && named == 0 {
		a.recordOverrun(unidentifiedListener, bound)
	}
}

// recordOverrun appends session/start-listener-overrun.
func (a *Agent) recordOverrun(listener string, bound time.Duration) {
	if _, err := a.log.Append(a.base, dsh.StartListenerOverrun{Listener: listener, TimeoutMS: int(bound / time.Millisecond)}); err != nil {
		a.logger.Error("loop: cannot record a session-start overrun", "listener", listener, "err", err)
	}
}

// listenerErrors returns the listener errors err joins.
func listenerErrors(err error) []*dsh.ListenerError {
	if err == nil {
		return nil
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*dsh.ListenerError
		for _, e := range joined.Unwrap() {
			out = append(out, listenerErrors(e)...)
		}
		return out
	}
	var le *dsh.ListenerError
	if errors.As(err, &le) {
		return []*dsh.ListenerError{le}
	}
	return []*dsh.ListenerError{{Event: dsh.SessionStartEventName, Listener: "?", Err: err}}
}
