package dispatch

// The vote runner: every listener votes concurrently, each within its bound.

import (
	"context"
	"errors"
	"time"
)

// Vote is one listener's part in a vote (the Run<Event> runners of vote events):
// its decision, or why it has none. A listener that failed, panicked, returned a nil
// decision or one of an unknown type has Err set (a *ListenerError); one that overran its
// bound has Overran set and no decision. Exactly one of Decision (non-nil), Err and Overran
// is set.
type Vote[D any] struct {
	// Listener is the registered name of the listener.
	Listener string
	// Decision is the listener's decision, when it returned a valid one in time.
	Decision D
	// Err is the listener's failure, a *ListenerError.
	Err error
	// Overran reports that the listener did not return within its bound plus a short grace;
	// it was abandoned (it keeps its goroutine until it returns) and its decision, if any,
	// is ignored.
	Overran bool
}

// RunVote runs every listener that sees p, in registration order, each under a context
// cancelled with cause ErrListenerOverrun once bound passes (bound <= 0: no bound), and
// returns one vote per listener. A listener still running a grace after its bound is
// abandoned.
func RunVote[P, D any, F ~func(context.Context, *P) (D, error)](
	ctx context.Context, g *Core, event string, l *List[F], p *P, scope func(*P) Scope,
	bound time.Duration, check func(D) (D, error), kind func(D) string,
) []Vote[D] {
	var votes []Vote[D]
	for _, x := range l.seenBy(scope(p)) {
		lctx, cancel := ctx, context.CancelFunc(func() {})
		if bound > 0 {
			lctx, cancel = context.WithTimeoutCause(ctx, bound, ErrListenerOverrun)
		}
		type result struct {
			d   D
			err error
		}
		done := make(chan result, 1)
		go func() {
			var r result
			if le := call(event, x.name, func() { r.d, r.err = x.fn(lctx, p) }); le != nil {
				r.err = le
			} else if r.err != nil {
				r.err = &ListenerError{Event: event, Listener: x.name, Err: r.err}
			} else if d, err := check(r.d); err != nil {
				r.err = &ListenerError{Event: event, Listener: x.name, Err: err}
			} else {
				r.d = d
			}
			done <- r
		}()
		v := Vote[D]{Listener: x.name}
		var (
			r   result
			got bool
		)
		select {
		case r, got = <-done:
		case <-lctx.Done():
			grace := time.NewTimer(overrunGrace)
			select {
			case r, got = <-done:
			case <-grace.C:
			}
			grace.Stop()
			if errors.Is(context.Cause(lctx), ErrListenerOverrun) {
				got, v.Overran = false, true
			}
		}
		cancel()
		if got {
			if r.err != nil {
				v.Err = r.err
			} else {
				v.Decision = r.d
				g.audit(ctx, event, x.name, func() string { return kind(r.d) }, r.d)
			}
		} else if !v.Overran {
			v.Err = &ListenerError{Event: event, Listener: x.name, Err: context.Cause(lctx)}
		}
		votes = append(votes, v)
	}
	return votes
}
