package dispatch

// The fold runner: each listener folds its decision into the payload of the next.

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// RunFold runs a fold: the listeners that see p, in registration order, each given the
// payload apply made of the previous decision. A failure stops the run.
func RunFold[P, D any, F ~func(context.Context, *P) (D, error)](
	ctx context.Context, g *Core, event string, l *List[F], p *P, scope func(*P) Scope,
	bound time.Duration, check func(D) (D, error), kind func(D) string,
	apply func(ctx context.Context, listener string, d D) (*P, error),
) error {
	if apply == nil {
		return fmt.Errorf("dsh: %s: nil apply", event)
	}
	for _, x := range l.seenBy(scope(p)) {
		d, le := foldCall(ctx, g, event, l, x, p, bound)
		if le != nil {
			return le
		}
		d, err := check(d)
		if err != nil {
			return &ListenerError{Event: event, Listener: x.name, Err: err}
		}
		if g.cfg.audit != nil {
			g.audit(ctx, event, x.name, func() string { return kind(d) }, d)
		}
		next, err := apply(ctx, x.name, d)
		if err != nil {
			return err
		}
		if next != nil {
			p = next
		}
	}
	return nil
}

// foldCall calls fold listener x: inline when bound <= 0, otherwise on its own goroutine
// under a context it cancels (cause ErrListenerOverrun) when bound passes, abandoning the
// listener a grace after an overrun or a cancellation of ctx. The bound is a timer of the
// core's pool that the caller watches, not a timeout context: a listener that returns in
// time costs a cancel context, a channel and a goroutine, and no timer of its own.
func foldCall[P, D any, F ~func(context.Context, *P) (D, error)](
	ctx context.Context, g *Core, event string, l *List[F], x *listener[F], p *P, bound time.Duration,
) (D, *ListenerError) {
	var zero D
	if bound <= 0 {
		return foldInvoke(ctx, event, x, p)
	}
	lctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// An answer channel is reused once it delivered, never after an abandon (the listener
	// may still send on it).
	done, _ := l.answers.Get().(chan answer[D])
	if done == nil {
		done = make(chan answer[D], 1)
	}
	go func() {
		d, le := foldInvoke(lctx, event, x, p)
		done <- answer[D]{d, le}
	}()
	timer, _ := g.timers.Get().(*time.Timer)
	if timer == nil {
		timer = time.NewTimer(bound)
	} else {
		timer.Reset(bound)
	}
	// Stopped, a timer's channel delivers nothing stale (go >= 1.23): it can be reused.
	defer func() { timer.Stop(); g.timers.Put(timer) }()
	select {
	case a := <-done:
		l.answers.Put(done)
		return a.d, a.le
	case <-timer.C:
		cancel(ErrListenerOverrun)
	case <-ctx.Done():
		cancel(context.Cause(ctx))
	}
	// It overran its bound, or ctx ended: whatever it returns now is void. It gets a grace
	// to return (and release its goroutine) before it is abandoned.
	grace := time.NewTimer(overrunGrace)
	select {
	case <-done:
	case <-grace.C:
	}
	grace.Stop()
	cause := context.Cause(lctx)
	if !errors.Is(cause, ErrListenerOverrun) {
		cause = context.Cause(ctx)
	}
	return zero, &ListenerError{Event: event, Listener: x.name, Err: cause}
}

// answer is what a bounded fold listener returned.
type answer[D any] struct {
	d  D
	le *ListenerError
}

// foldInvoke calls fold listener x, turning an error or a panic into its *ListenerError.
func foldInvoke[P, D any, F ~func(context.Context, *P) (D, error)](
	ctx context.Context, event string, x *listener[F], p *P,
) (d D, le *ListenerError) {
	defer func() {
		if v := recover(); v != nil {
			var zero D
			d, le = zero, panicError(event, x.name, v)
		}
	}()
	d, err := x.fn(ctx, p)
	if err != nil {
		var zero D
		return zero, &ListenerError{Event: event, Listener: x.name, Err: err}
	}
	return d, nil
}
