package dispatch

// The guard runner: each guard in turn until one denies.

import (
	"context"
)

// RunGuard runs guards: the global ones, then those scoped to p's agent, each in
// registration order, re-reading the list at each step, until one denies.
func RunGuard[P, D any, F ~func(context.Context, *P) D](
	ctx context.Context, g *Core, event string, l *List[F], p *P, scope func(*P) Scope,
	def D, check func(D) (D, error), deny func(D) bool, kind func(D) string,
) (D, error) {
	var zero D
	s := scope(p)
	for _, scoped := range [...]bool{false, true} {
		for x := l.after(0, scoped, s); x != nil; x = l.after(x.id, scoped, s) {
			d, le := guardCall(ctx, event, x, p)
			if le != nil {
				return zero, le
			}
			d, err := check(d)
			if err != nil {
				return zero, &ListenerError{Event: event, Listener: x.name, Err: err}
			}
			if deny(d) {
				g.audit(ctx, event, x.name, func() string { return kind(d) }, d)
				return d, nil
			}
		}
	}
	g.audit(ctx, event, "", func() string { return kind(def) }, def)
	return def, nil
}

// guardCall calls guard x, turning a panic into its *ListenerError.
func guardCall[P, D any, F ~func(context.Context, *P) D](ctx context.Context, event string, x *listener[F], p *P) (d D, le *ListenerError) {
	defer func() {
		if v := recover(); v != nil {
			le = panicError(event, x.name, v)
		}
	}()
	return x.fn(ctx, p), nil
}
