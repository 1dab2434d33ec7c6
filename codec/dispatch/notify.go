package dispatch

// The notification and observer runners: every listener runs, whatever the others did.

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// RunNotify runs every listener that sees p, in order, whatever the others did, and joins
// their failures.
func RunNotify[P any, F ~func(context.Context, *P) error](
	ctx context.Context, event string, l *List[F], p *P, scope func(*P) Scope,
) error {
	var errs []error
	for _, x := range l.seenBy(scope(p)) {
		var err error
		if le := call(event, x.name, func() { err = x.fn(ctx, p) }); le != nil {
			errs = append(errs, le)
		} else if err != nil {
			errs = append(errs, &ListenerError{Event: event, Listener: x.name, Err: err})
		}
	}
	return errors.Join(errs...)
}

// ErrListenerOverrun is the cause of the context of a listener that exceeded its bound
// (the Bounded notification runners).
var ErrListenerOverrun = errors.New("dsh: listener exceeded its bound")

// overrunGrace is how long a Bounded runner waits, after a listener's bound passed and
// its context was cancelled, before it abandons the listener.
const overrunGrace = 50 * time.Millisecond

// RunNotifyBounded is RunNotify with each listener bounded: a listener still running a grace
// after its bound is abandoned (it keeps its goroutine until it returns) and named.
func RunNotifyBounded[P any, F ~func(context.Context, *P) error](
	ctx context.Context, event string, l *List[F], p *P, scope func(*P) Scope, bound time.Duration,
) (overran []string, err error) {
	var errs []error
	for _, x := range l.seenBy(scope(p)) {
		lctx, cancel := context.WithTimeoutCause(ctx, bound, ErrListenerOverrun)
		done := make(chan error, 1)
		go func() {
			var err error
			if le := call(event, x.name, func() { err = x.fn(lctx, p) }); le != nil {
				done <- le
			} else if err != nil {
				done <- &ListenerError{Event: event, Listener: x.name, Err: err}
			} else {
				done <- nil
			}
		}()
		var res error
		select {
		case res = <-done:
		case <-lctx.Done():
			if errors.Is(context.Cause(lctx), ErrListenerOverrun) {
				overran = append(overran, x.name)
			}
			grace := time.NewTimer(overrunGrace)
			select {
			case res = <-done:
			case <-grace.C:
			}
			grace.Stop()
			if errors.Is(context.Cause(lctx), ErrListenerOverrun) {
				res = nil // the overrun is the listener's failure, reported in overran
			}
		}
		cancel()
		if res != nil {
			errs = append(errs, res)
		}
	}
	return overran, errors.Join(errs...)
}

// RunObserve runs every listener that sees p, in order; a failure (a panic) is logged and
// joined into the returned error, and changes nothing else.
func RunObserve[P any, F ~func(context.Context, *P)](
	ctx context.Context, g *Core, event string, l *List[F], p *P, scope func(*P) Scope,
) error {
	var errs []error
	for _, x := range l.seenBy(scope(p)) {
		if le := call(event, x.name, func() { x.fn(ctx, p) }); le != nil {
			g.logger().LogAttrs(ctx, slog.LevelError, "dsh: observer failed",
				slog.String("event", event), slog.String("listener", x.name), slog.Any("error", le.Err))
			errs = append(errs, le)
		}
	}
	return errors.Join(errs...)
}
