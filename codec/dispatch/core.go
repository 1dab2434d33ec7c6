package dispatch

// The core of the engine: authority kinds, event descriptions, listener failures, options
// and the Core every registrar of a registry shares.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
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
