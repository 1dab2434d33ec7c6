package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Domain is the authority kind of an extension point: it fixes the shape of the event's
// listeners and how its runner composes them.
type Domain string

// The authority kinds of extension points.
const (
	// DomainWaterfall is a policy chain: each listener gets the payload and next and returns
	// a decision; the first registered listener is outermost.
	DomainWaterfall Domain = "waterfall"
	// DomainGuard is terminal policy: guards deny or abstain, never allow; the first deny wins.
	DomainGuard Domain = "guard"
	// DomainWrapper is around-dispatch: each listener wraps next and returns a result.
	DomainWrapper Domain = "wrapper"
	// DomainFold is a left fold with no next: each listener gets the payload the runtime
	// made of the decisions before it and returns its own decision.
	DomainFold Domain = "fold"
	// DomainNotification is awaited: every listener runs in order; failures are reported.
	DomainNotification Domain = "notification"
	// DomainObserver is contained: every listener runs; failures are logged and change nothing.
	DomainObserver Domain = "observer"
	// DomainVote is a bounded vote: every listener runs under a bound and returns a decision
	// of its own; the runtime folds the decisions by the event's rule.
	DomainVote Domain = "vote"
)

// EventInfo describes one extension point.
type EventInfo struct {
	// Name is the event name, e.g. "tools/pre-execute".
	Name string
	// Domain is the authority kind.
	Domain Domain
	// Doc is the event's documentation.
	Doc string
	// Payload is the Go name of the payload record.
	Payload string
	// Decision is the Go name of the decision union (or of a wrapper's result); empty for
	// notifications and observers.
	Decision string
	// Default is the kind of the variant a waterfall or guard resolves to when no listener
	// decides; empty for the other domains.
	Default string
	// Register is the Registrar method that registers a listener, e.g. "Guard", "OnPreTool"
	// or "WrapExecute".
	Register string
	// Listener is the Go name of the listener type, e.g. "GuardListener".
	Listener string
}

var (
	// ErrNextReused is the failure of a listener that called its next more than once. The
	// second call returns it and the listener's run fails with it, whatever it returns.
	ErrNextReused = errors.New("dsh: next called more than once")
	// ErrNilDecision is the failure of a listener that returned a nil decision or result.
	ErrNilDecision = errors.New("dsh: nil decision")
	// ErrUnknownVariant is the failure of a listener that returned a decision or result of
	// a type that is not a variant of its union (a type that embeds a variant, say).
	ErrUnknownVariant = errors.New("dsh: a decision or result of an unknown type")
	// errZeroNext is the failure of a call of the zero WaterfallNext.
	errZeroNext = errors.New("dsh: call of a zero next value, which runs nothing")
)

// ListenerError is the failure of one listener: an error it returned, a panic it raised
// (Panic holds the recovered value), a nil decision (ErrNilDecision), one of an unknown
// type (ErrUnknownVariant) or a reused next (ErrNextReused). errors.Is and errors.As see
// through it to Err.
type ListenerError struct {
	// Event is the event name, e.g. "tools/pre-execute".
	Event string
	// Listener is the listener's name: "<plugin>#<n>" or "anonymous#<n>".
	Listener string
	// Err is the failure. For a panic it reads "panic: <value>" and wraps the value when
	// that is an error.
	Err error
	// Panic is the recovered panic value; nil when the listener did not panic.
	Panic any
}

// Error describes the failure, naming the event and the listener.
func (e *ListenerError) Error() string {
	return fmt.Sprintf("dsh: %s listener %s: %v", e.Event, e.Listener, e.Err)
}

// Unwrap returns Err.
func (e *ListenerError) Unwrap() error { return e.Err }

// ResolvedDecision is what one waterfall or guard run resolved to, as passed to the hook
// installed with WithDecisionAudit.
type ResolvedDecision struct {
	// Event is the event name.
	Event string
	// Listener is the name of the listener the decision came from; empty when it came from
	// the terminal or is the event's default.
	Listener string
	// Kind is the kind of the decision.
	Kind string
	// Decision is the decision, a value of the event's decision union.
	Decision any
}

// Option configures a Core (a generated package's RegistryOption is an Option).
type Option func(*config)

type config struct {
	logger *slog.Logger
	audit  func(context.Context, ResolvedDecision)
}

// WithLogger sets the logger that records observer failures and ignored registrations.
// Without it (or with nil) the registry logs through slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// WithDecisionAudit installs fn, called once for every waterfall and guard run that
// resolves to a decision (not for a failed run), with the listener the decision came from,
// and once for every decision of a fold listener (before the runtime applies it).
// fn runs on the dispatching goroutine and must not block.
func WithDecisionAudit(fn func(ctx context.Context, d ResolvedDecision)) Option {
	return func(c *config) { c.audit = fn }
}

// Core is the state a generated Registry shares between its events: its configuration,
// the registration sequence and the listener names handed out so far. Create it with
// NewCore; a generated Registry holds one beside the List of each of its events.
type Core struct {
	cfg    config
	seq    atomic.Uint64
	namesM sync.Mutex
	names  map[string]int
	root   *Registrar
	timers sync.Pool // idle *time.Timer of bounded fold calls (foldCall)
}

// NewCore returns an empty core configured by opts (nil options are ignored).
func NewCore(opts ...Option) *Core {
	g := &Core{names: make(map[string]int)}
	for _, o := range opts {
		if o != nil {
			o(&g.cfg)
		}
	}
	g.root = newRegistrar(g, nil, "", "", false)
	return g
}

// Root returns the core's root registrar: global and anonymous. Closing it unregisters
// every listener, of every plugin.
func (g *Core) Root() *Registrar { return g.root }

// Audited reports whether decisions are audited (WithDecisionAudit).
func (g *Core) Audited() bool { return g.cfg.audit != nil }

func (g *Core) logger() *slog.Logger {
	if g.cfg.logger != nil {
		return g.cfg.logger
	}
	return slog.Default()
}

func (g *Core) nextName(plugin string) string {
	if plugin == "" {
		plugin = "anonymous"
	}
	g.namesM.Lock()
	defer g.namesM.Unlock()
	g.names[plugin]++
	return fmt.Sprintf("%s#%d", plugin, g.names[plugin])
}

func (g *Core) audit(ctx context.Context, event, listener string, kind func() string, d any) {
	if g.cfg.audit != nil {
		g.cfg.audit(ctx, ResolvedDecision{Event: event, Listener: listener, Kind: kind(), Decision: d})
	}
}

// Registrar registers listeners for one plugin (or anonymously), either globally or for one
// agent. Every registration returns a func that unregisters it (calling it again does
// nothing); Close unregisters everything the registrar and the registrars derived from it
// registered. A Registrar is safe for concurrent use.
type Registrar struct {
	reg    *Core
	parent *Registrar
	plugin string
	agent  string
	scoped bool

	mu       sync.Mutex
	closed   bool
	regs     map[uint64]func()
	children map[*Registrar]struct{}
}

func newRegistrar(g *Core, parent *Registrar, plugin, agent string, scoped bool) *Registrar {
	return &Registrar{
		reg:      g,
		parent:   parent,
		plugin:   plugin,
		agent:    agent,
		scoped:   scoped,
		regs:     make(map[uint64]func()),
		children: make(map[*Registrar]struct{}),
	}
}

// ForAgent returns a registrar of the same plugin whose listeners only see the events whose
// subject is the agent id (events without a subject path are seen by every listener). It
// is derived from r: r.Close() also unregisters what it registered.
func (r *Registrar) ForAgent(id string) *Registrar {
	return r.derive(r.plugin, id, true)
}

// Close unregisters every listener r and the registrars derived from it registered, and
// closes them all. Registering on a closed registrar does nothing (it is logged) and returns
// a no-op unregister func. Close is idempotent.
func (r *Registrar) Close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	regs, children := r.regs, r.children
	r.regs, r.children = nil, nil
	r.mu.Unlock()
	for c := range children {
		c.Close()
	}
	for _, unregister := range regs {
		unregister()
	}
	if p := r.parent; p != nil {
		p.mu.Lock()
		delete(p.children, r)
		p.mu.Unlock()
	}
}

// Plugin returns a registrar for the plugin called name, derived from r (a generated
// Registry calls it on its root). Its listeners are named "<name>#<n>", n counting the
// plugin's registrations from 1 (an empty name is "anonymous").
func (r *Registrar) Plugin(name string) *Registrar {
	return r.derive(name, "", false)
}

func (r *Registrar) derive(plugin, agent string, scoped bool) *Registrar {
	c := newRegistrar(r.reg, r, plugin, agent, scoped)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		c.closed = true
		return c
	}
	r.children[c] = struct{}{}
	return c
}

// Register adds fn to l on behalf of r.
func Register[F any](r *Registrar, event string, l *List[F], fn F) (unregister func()) {
	if isNil(fn) {
		panic("dsh: nil " + event + " listener")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		r.reg.logger().Warn("dsh: registration on a closed registrar ignored",
			slog.String("event", event), slog.String("plugin", r.plugin))
		return func() {}
	}
	x := &listener[F]{name: r.reg.nextName(r.plugin), agent: r.agent, scoped: r.scoped, fn: fn}
	l.add(&r.reg.seq, x)
	var once sync.Once
	unregister = func() {
		once.Do(func() {
			l.remove(x)
			r.mu.Lock()
			delete(r.regs, x.id)
			r.mu.Unlock()
		})
	}
	r.regs[x.id] = unregister
	return unregister
}

// listener is one registration.
type listener[F any] struct {
	id     uint64 // registration sequence number, increasing in registration order
	name   string
	agent  string
	scoped bool
	fn     F
}

// List is the listener list of one event, in registration order. Writers copy it under
// mu; readers load the current snapshot without locking.
type List[F any] struct {
	mu  sync.Mutex
	all atomic.Pointer[[]*listener[F]]
	// answers holds idle answer channels of a bounded fold (foldCall), emptied.
	answers sync.Pool
}

// Len returns the number of listeners registered now.
func (l *List[F]) Len() int { return len(l.load()) }

func (l *List[F]) load() []*listener[F] {
	if p := l.all.Load(); p != nil {
		return *p
	}
	return nil
}

func (l *List[F]) add(seq *atomic.Uint64, x *listener[F]) {
	l.mu.Lock()
	defer l.mu.Unlock()
	x.id = seq.Add(1)
	old := l.load()
	all := make([]*listener[F], len(old), len(old)+1)
	copy(all, old)
	all = append(all, x)
	l.all.Store(&all)
}

func (l *List[F]) remove(x *listener[F]) {
	l.mu.Lock()
	defer l.mu.Unlock()
	old := l.load()
	for i, y := range old {
		if y == x {
			all := make([]*listener[F], 0, len(old)-1)
			all = append(all, old[:i]...)
			all = append(all, old[i+1:]...)
			l.all.Store(&all)
			return
		}
	}
}

// seenBy returns the listeners that see an event of scope s, in registration order.
func (l *List[F]) seenBy(s Scope) []*listener[F] {
	all := l.load()
	every := true
	for _, x := range all {
		if !s.sees(x.scoped, x.agent) {
			every = false
			break
		}
	}
	if every {
		return all // the snapshot is never modified: a registration replaces it
	}
	out := make([]*listener[F], 0, len(all))
	for _, x := range all {
		if s.sees(x.scoped, x.agent) {
			out = append(out, x)
		}
	}
	return out
}

// after returns the first listener registered after the one numbered id that is global
// (scoped false) or scoped to an agent of s (scoped true), reading the list as it is now.
func (l *List[F]) after(id uint64, scoped bool, s Scope) *listener[F] {
	all := l.load()
	for i := sort.Search(len(all), func(i int) bool { return all[i].id > id }); i < len(all); i++ {
		if x := all[i]; x.scoped == scoped && (!scoped || s.sees(true, x.agent)) {
			return x
		}
	}
	return nil
}

// Scope is the subject of one event occurrence, as the scope function of an event makes
// it of a payload: Unscoped for an event without a subject path, NoSubject or Subject for
// one with a subject path.
type Scope struct {
	scoped bool   // the event has a subject path
	has    bool   // the payload names a subject agent
	agent  string // the subject agent id
}

// sees reports whether a listener (scoped to agent, or global) sees the event.
func (s Scope) sees(scoped bool, agent string) bool {
	if !scoped || !s.scoped {
		return true
	}
	return s.has && agent == s.agent
}

// NoSubject is the scope of a payload of an event with a subject path that names no
// subject agent: only global listeners see it.
func NoSubject() Scope { return Scope{scoped: true} }

// Subject is the scope of a payload of an event with a subject path whose subject is the
// agent id: global listeners and those registered for id see it.
func Subject(id string) Scope { return Scope{scoped: true, has: true, agent: id} }

// Unscoped is the scope function of events without a subject.
func Unscoped[P any](*P) Scope { return Scope{} }

// runState collects the first failure of one run; a failure is final. It is read after every
// listener, so reading it is one atomic load.
type runState struct {
	err atomic.Pointer[error]
}

func (r *runState) fail(err error) {
	r.err.CompareAndSwap(nil, &err)
}

func (r *runState) failure() error {
	if p := r.err.Load(); p != nil {
		return *p
	}
	return nil
}

// nextUse tracks the uses of one next value in one word: bit 0 is set once the listener
// returned, the bits above count the calls.
type nextUse struct {
	state atomic.Uint32
}

// use records a call of next and says whether it may proceed: it returns ErrNextReused for
// a second call (the listener's failure, recorded in run) and a wrapped ErrNextReused for a
// call made after the listener returned.
func (n *nextUse) use(run *runState, event, listener string) error {
	s := n.state.Add(2)
	switch {
	case s&1 != 0:
		return fmt.Errorf("%w: called after the listener returned", ErrNextReused)
	case s>>1 > 1:
		run.fail(&ListenerError{Event: event, Listener: listener, Err: ErrNextReused})
		return ErrNextReused
	}
	return nil
}

func (n *nextUse) done() { n.state.Or(1) }

// call calls f, turning a panic into the listener's *ListenerError.
func call(event, listener string, f func()) (le *ListenerError) {
	defer func() {
		if v := recover(); v != nil {
			le = panicError(event, listener, v)
		}
	}()
	f()
	return nil
}

// panicError is the *ListenerError of a listener that panicked with v.
func panicError(event, listener string, v any) *ListenerError {
	err, ok := v.(error)
	if ok {
		err = fmt.Errorf("panic: %w", err)
	} else {
		err = fmt.Errorf("panic: %v", v)
	}
	return &ListenerError{Event: event, Listener: listener, Err: err, Panic: v}
}

// isNil reports whether v is nil or holds a nil pointer, func, map, slice, channel or
// interface.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch reflect.TypeOf(v).Kind() {
	case reflect.Pointer, reflect.Func, reflect.Map, reflect.Slice, reflect.Chan, reflect.Interface:
		return reflect.ValueOf(v).IsNil()
	}
	return false
}

// checkTerminal checks what a terminal returned: the checked value, or the failure of the
// run (the check's error, naming the event's terminal).
func checkTerminal[D any](event string, d D, check func(D) (D, error)) (D, error) {
	d, err := check(d)
	if err != nil {
		var zero D
		return zero, fmt.Errorf("dsh: %s terminal: %w", event, err)
	}
	return d, nil
}

// CheckRecord is the check of a record result: a value, never nil or unknown, returned
// as is.
func CheckRecord[D any](d D) (D, error) { return d, nil }

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
