package dispatch

// The wrapper runner: listeners nested around a terminal that always returns a result.

import (
	"context"
	"fmt"
)

// RunWrapper runs wrappers: the listeners that see p, outermost first, around terminal. Any
// failure is final: the run returns it, whatever the outer wrappers return.
func RunWrapper[P, D any, F ~func(context.Context, *P, WrapperNext[D]) D](
	ctx context.Context, g *Core, event string, l *List[F], p *P, scope func(*P) Scope,
	terminal func(context.Context) D, check func(D) (D, error),
) (D, error) {
	var zero D
	if terminal == nil {
		return zero, fmt.Errorf("dsh: %s: nil terminal", event)
	}
	chain := l.seenBy(scope(p))
	if len(chain) == 0 { // no wrapper: the core operation alone, with nothing to allocate
		return checkTerminal(event, terminal(ctx), check)
	}
	w := &wrRun[P, D, F]{event: event, chain: chain, p: p, terminal: terminal, check: check}
	if len(chain) <= len(w.inline) {
		w.frames = w.inline[:len(chain)]
	} else {
		w.frames = make([]nextUse, len(chain))
	}
	d := w.step(ctx, 0)
	if err := w.failure(); err != nil {
		return zero, err
	}
	return d, nil
}

// WrapperNext runs the rest of a wrapper chain: the wrappers registered after the one it
// is passed to, then the core operation. A wrapper calls it at most once, with a context
// derived from its own (nil stands for its own); that context reaches the core operation.
// It is a small value: passing it allocates nothing. Each wrapper event names its own
// (ExecuteNext is WrapperNext[ToolExecutionResult]). WrapperNextFunc makes one from a func,
// to call a wrapper outside a registry; the zero WrapperNext runs nothing and returns nil.
type WrapperNext[D any] struct {
	chain wrChain[D]
	i     int
	ctx   context.Context // the wrapper's
	fn    func(context.Context) D
}

// Call runs the rest of the chain under ctx and returns its result.
func (n WrapperNext[D]) Call(ctx context.Context) D {
	switch {
	case n.chain != nil:
		return n.chain.next(n.ctx, ctx, n.i)
	case n.fn != nil:
		return n.fn(ctx)
	}
	var zero D
	return zero
}

// WrapperNextFunc returns the WrapperNext whose Call calls fn.
func WrapperNextFunc[D any](fn func(ctx context.Context) D) WrapperNext[D] {
	return WrapperNext[D]{fn: fn}
}

// wrChain is a running wrapper chain, as the next values of its wrappers call it.
type wrChain[D any] interface {
	next(ctx, nctx context.Context, i int) D
}

// wrRun is one run of a wrapper chain: one allocation, with the state of its first
// wrappers inline. A wrapper's next value points at it, so that passing next allocates
// nothing.
type wrRun[P, D any, F ~func(context.Context, *P, WrapperNext[D]) D] struct {
	runState
	event    string
	chain    []*listener[F]
	p        *P
	terminal func(context.Context) D
	check    func(D) (D, error)
	frames   []nextUse // the uses of each wrapper's next
	inline   [4]nextUse
}

func (w *wrRun[P, D, F]) step(ctx context.Context, i int) D {
	var zero D
	if i == len(w.chain) {
		d, err := checkTerminal(w.event, w.terminal(ctx), w.check)
		if err != nil {
			w.fail(err)
		}
		return d
	}
	x, f := w.chain[i], &w.frames[i]
	d, le := w.invoke(ctx, x, WrapperNext[D]{chain: w, i: i, ctx: ctx})
	if le != nil {
		w.fail(le)
	}
	f.done()
	if w.failure() != nil {
		return zero
	}
	d, err := w.check(d)
	if err != nil {
		w.fail(&ListenerError{Event: w.event, Listener: x.name, Err: err})
		return zero
	}
	return d
}

// invoke calls wrapper x, turning a panic into its *ListenerError.
func (w *wrRun[P, D, F]) invoke(ctx context.Context, x *listener[F], next WrapperNext[D]) (d D, le *ListenerError) {
	defer func() {
		if v := recover(); v != nil {
			le = panicError(w.event, x.name, v)
		}
	}()
	return x.fn(ctx, w.p, next), nil
}

func (w *wrRun[P, D, F]) next(ctx, nctx context.Context, i int) D {
	if err := w.frames[i].use(&w.runState, w.event, w.chain[i].name); err != nil {
		var zero D
		return zero
	}
	if nctx == nil {
		nctx = ctx
	}
	return w.step(nctx, i+1)
}
