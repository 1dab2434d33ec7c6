package dispatch

// The waterfall runner: listeners nested around a terminal, each able to decide or to call
// next, any failure final.

import (
	"context"
	"reflect"
	"sync"
)

// RunWaterfall runs a waterfall: the listeners that see p, outermost first, around terminal
// (nil: def). Any failure (a listener's, or the terminal's error) is final: it is returned
// whatever the outer listeners do with the error their next returned.
func RunWaterfall[P, D any, F ~func(context.Context, *P, WaterfallNext[D]) (D, error)](
	ctx context.Context, g *Core, event string, l *List[F], p *P, scope func(*P) Scope,
	terminal func(context.Context) (D, error), def D, check func(D) (D, error), kind func(D) string,
) (D, error) {
	var zero D
	chain := l.seenBy(scope(p))
	if len(chain) == 0 { // no listener: the terminal or the default, with nothing to allocate
		d := def
		if terminal != nil {
			var err error
			if d, err = terminal(ctx); err == nil {
				d, err = checkTerminal(event, d, check)
			}
			if err != nil {
				return zero, err
			}
		}
		g.audit(ctx, event, "", func() string { return kind(d) }, d)
		return d, nil
	}
	w := &wfRun[P, D, F]{event: event, chain: chain, p: p, terminal: terminal, def: def, check: check}
	if len(chain) <= len(w.inline) {
		w.frames = w.inline[:len(chain)]
	} else {
		w.frames = make([]nextUse, len(chain))
	}
	if g.cfg.audit != nil {
		w.trace = make([]wfTrace[D], len(chain))
	}
	d, from, err := w.step(ctx, 0)
	if err != nil {
		return zero, err
	}
	g.audit(ctx, event, from, func() string { return kind(d) }, d)
	return d, nil
}

// WaterfallNext runs the rest of a waterfall's chain: the listeners registered after the
// one it is passed to, then the runner's terminal. A listener calls it at most once, with a
// context derived from its own (nil stands for its own). It is a small value: passing it
// allocates nothing. Each waterfall names its own (PreToolNext is
// WaterfallNext[PreToolDecision]). WaterfallNextFunc makes one from a func, to call a
// listener outside a registry; the zero WaterfallNext runs nothing.
type WaterfallNext[D any] struct {
	chain wfChain[D]
	i     int
	ctx   context.Context // the listener's
	fn    func(context.Context) (D, error)
}

// Call runs the rest of the chain under ctx and returns its decision.
func (n WaterfallNext[D]) Call(ctx context.Context) (D, error) {
	switch {
	case n.chain != nil:
		return n.chain.next(n.ctx, ctx, n.i)
	case n.fn != nil:
		return n.fn(ctx)
	}
	var zero D
	return zero, errZeroNext
}

// WaterfallNextFunc returns the WaterfallNext whose Call calls fn.
func WaterfallNextFunc[D any](fn func(ctx context.Context) (D, error)) WaterfallNext[D] {
	return WaterfallNext[D]{fn: fn}
}

// wfChain is a running waterfall, as the next values of its listeners call it.
type wfChain[D any] interface {
	next(ctx, nctx context.Context, i int) (D, error)
}

// wfRun is one run of a waterfall: one allocation, with the state of its first listeners
// inline. A listener's next value points at it, so that passing next allocates nothing.
type wfRun[P, D any, F ~func(context.Context, *P, WaterfallNext[D]) (D, error)] struct {
	runState
	event    string
	chain    []*listener[F]
	p        *P
	terminal func(context.Context) (D, error)
	def      D
	check    func(D) (D, error)
	frames   []nextUse    // the uses of each listener's next
	trace    []wfTrace[D] // set when decisions are audited
	inline   [8]nextUse
}

// wfTrace is what the next of one listener returned, for the audit: the listener
// that returns it unchanged passes on where it came from.
type wfTrace[D any] struct {
	mu    sync.Mutex
	d     D
	from  string
	valid bool
}

// step runs the chain from listener i and returns its decision and the name of the
// listener the decision came from.
func (w *wfRun[P, D, F]) step(ctx context.Context, i int) (D, string, error) {
	var zero D
	if i == len(w.chain) {
		if w.terminal == nil {
			return w.def, "", nil
		}
		d, err := w.terminal(ctx)
		if err == nil {
			d, err = checkTerminal(w.event, d, w.check)
		}
		if err != nil {
			w.fail(err)
			return zero, "", err
		}
		return d, "", nil
	}
	x, f := w.chain[i], &w.frames[i]
	d, le, err := w.invoke(ctx, x, WaterfallNext[D]{chain: w, i: i, ctx: ctx})
	if le != nil {
		w.fail(le)
	}
	f.done()
	if ferr := w.failure(); ferr != nil {
		return zero, "", ferr
	}
	if err == nil {
		d, err = w.check(d)
	}
	if err != nil {
		le := &ListenerError{Event: w.event, Listener: x.name, Err: err}
		w.fail(le)
		return zero, "", le
	}
	from := x.name
	if w.trace != nil {
		t := &w.trace[i]
		t.mu.Lock()
		if t.valid && reflect.DeepEqual(any(d), any(t.d)) {
			from = t.from
		}
		t.mu.Unlock()
	}
	return d, from, nil
}

// invoke calls listener x, turning a panic into its *ListenerError.
func (w *wfRun[P, D, F]) invoke(ctx context.Context, x *listener[F], next WaterfallNext[D]) (d D, le *ListenerError, err error) {
	defer func() {
		if v := recover(); v != nil {
			le = panicError(w.event, x.name, v)
		}
	}()
	d, err = x.fn(ctx, w.p, next)
	return d, nil, err
}

// next is the next value of listener i, which was given ctx: single use, then the rest of
// the chain under nctx (nil: ctx).
func (w *wfRun[P, D, F]) next(ctx, nctx context.Context, i int) (D, error) {
	if err := w.frames[i].use(&w.runState, w.event, w.chain[i].name); err != nil {
		var zero D
		return zero, err
	}
	if nctx == nil {
		nctx = ctx
	}
	d, from, err := w.step(nctx, i+1)
	if w.trace != nil {
		t := &w.trace[i]
		t.mu.Lock()
		t.d, t.from, t.valid = d, from, err == nil
		t.mu.Unlock()
	}
	return d, err
}
