// The listener surface the engine's tests run against: a small, hand-written copy of the
// shape dshgen generates over this package (gen/emit/dispatch), for one payload and a
// waterfall, a guard, a wrapper, a notification, an observer, a vote and a fold. The
// behaviour of the generated wiring itself (the Events table, scope functions of nested
// subjects, the checks of decision unions, Listens) is tested on generated code by
// gen/emit/dispatch.

package dispatch_test

import (
	"context"
	"encoding/json"
	"time"

	"github.com/dshkit/dsh/codec/dispatch"
)

const (
	PolicyEventName    = "demo/policy"
	DemoGuardEventName = "demo/guard"
	RunEventName       = "demo/run"
	StoppingEventName  = "demo/stopping"
	SeenEventName      = "demo/seen"
	VoteEventName      = "demo/vote"
	FoldEventName      = "demo/fold"
)

type Item struct{ ID string }

type DemoPayload struct {
	AgentID string
	Item    Item
}

type Decision interface {
	Kind() string
	isDecision()
}

const DemoAllowKind = "allow"

type DemoAllow struct{}

type DemoDeny struct{ Reason string }

type DemoReplace struct {
	Items  []Item
	Value  json.RawMessage
	Nested Decision
	List   []Decision
}

func (DemoAllow) Kind() string   { return "allow" }
func (DemoDeny) Kind() string    { return "deny" }
func (DemoReplace) Kind() string { return "replace" }

func (DemoAllow) isDecision()   {}
func (DemoDeny) isDecision()    {}
func (DemoReplace) isDecision() {}

type Verdict interface {
	Kind() string
	isVerdict()
}

type VerdictAbstain struct{}

type VerdictDeny struct{ Reason string }

func (VerdictAbstain) Kind() string { return "abstain" }
func (VerdictDeny) Kind() string    { return "deny" }

func (VerdictAbstain) isVerdict() {}
func (VerdictDeny) isVerdict()    {}

type (
	ListenerError    = dispatch.ListenerError
	ResolvedDecision = dispatch.ResolvedDecision
	PolicyNext       = dispatch.WaterfallNext[Decision]
	RunNext          = dispatch.WrapperNext[Decision]

	PolicyListener    func(ctx context.Context, p *DemoPayload, next PolicyNext) (Decision, error)
	DemoGuardListener func(ctx context.Context, p *DemoPayload) Verdict
	RunListener       func(ctx context.Context, p *DemoPayload, next RunNext) Decision
	StoppingListener  func(ctx context.Context, p *DemoPayload) error
	SeenListener      func(ctx context.Context, p *DemoPayload)
	VoteListener      func(ctx context.Context, p *DemoPayload) (Decision, error)
	FoldListener      func(ctx context.Context, p *DemoPayload) (Decision, error)
)

var (
	ErrNextReused      = dispatch.ErrNextReused
	ErrNilDecision     = dispatch.ErrNilDecision
	ErrUnknownVariant  = dispatch.ErrUnknownVariant
	ErrListenerOverrun = dispatch.ErrListenerOverrun
	WithLogger         = dispatch.WithLogger
	WithDecisionAudit  = dispatch.WithDecisionAudit
)

func WaterfallNextFunc[D any](fn func(context.Context) (D, error)) dispatch.WaterfallNext[D] {
	return dispatch.WaterfallNextFunc(fn)
}

func WrapperNextFunc[D any](fn func(context.Context) D) dispatch.WrapperNext[D] {
	return dispatch.WrapperNextFunc(fn)
}

type Registry struct {
	*Registrar
	core       *dispatch.Core
	onPolicy   dispatch.List[PolicyListener]
	onGuard    dispatch.List[DemoGuardListener]
	onRun      dispatch.List[RunListener]
	onStopping dispatch.List[StoppingListener]
	onSeen     dispatch.List[SeenListener]
	onVote     dispatch.List[VoteListener]
	onFold     dispatch.List[FoldListener]
}

func NewRegistry(opts ...dispatch.Option) *Registry {
	g := &Registry{core: dispatch.NewCore(opts...)}
	g.Registrar = &Registrar{reg: g, r: g.core.Root()}
	return g
}

func (g *Registry) Plugin(name string) *Registrar {
	return &Registrar{reg: g, r: g.core.Root().Plugin(name)}
}

func (g *Registry) Listens(event string) bool {
	switch event {
	case PolicyEventName:
		return g.core.Audited() || g.onPolicy.Len() > 0
	case DemoGuardEventName:
		return g.core.Audited() || g.onGuard.Len() > 0
	case RunEventName:
		return g.onRun.Len() > 0
	case StoppingEventName:
		return g.onStopping.Len() > 0
	case SeenEventName:
		return g.onSeen.Len() > 0
	case VoteEventName:
		return g.onVote.Len() > 0
	case FoldEventName:
		return g.onFold.Len() > 0
	}
	return false
}

type Registrar struct {
	reg *Registry
	r   *dispatch.Registrar
}

func (r *Registrar) ForAgent(id string) *Registrar {
	return &Registrar{reg: r.reg, r: r.r.ForAgent(id)}
}

func (r *Registrar) Close() { r.r.Close() }

func (r *Registrar) OnPolicy(fn PolicyListener) func() {
	return dispatch.Register(r.r, PolicyEventName, &r.reg.onPolicy, fn)
}

func (r *Registrar) DemoGuard(fn DemoGuardListener) func() {
	return dispatch.Register(r.r, DemoGuardEventName, &r.reg.onGuard, fn)
}

func (r *Registrar) WrapRun(fn RunListener) func() {
	return dispatch.Register(r.r, RunEventName, &r.reg.onRun, fn)
}

func (r *Registrar) OnStopping(fn StoppingListener) func() {
	return dispatch.Register(r.r, StoppingEventName, &r.reg.onStopping, fn)
}

func (r *Registrar) OnSeen(fn SeenListener) func() {
	return dispatch.Register(r.r, SeenEventName, &r.reg.onSeen, fn)
}

func (r *Registrar) OnVote(fn VoteListener) func() {
	return dispatch.Register(r.r, VoteEventName, &r.reg.onVote, fn)
}

func (r *Registrar) OnFold(fn FoldListener) func() {
	return dispatch.Register(r.r, FoldEventName, &r.reg.onFold, fn)
}

func scope(p *DemoPayload) dispatch.Scope {
	if p == nil {
		return dispatch.NoSubject()
	}
	return dispatch.Subject(p.AgentID)
}

func kind[D interface{ Kind() string }](d D) string { return d.Kind() }

// checkDecision and checkVerdict are what dshgen generates for a union: a variant is
// returned in its value form (normalized when its record reaches a union), a nil one or
// one of another type is a failure.
var planReplace = dispatch.PlanOf[DemoReplace]()

func checkDecision(d Decision) (Decision, error) {
	switch v := d.(type) {
	case DemoAllow, DemoDeny:
		return d, nil
	case DemoReplace:
		if planReplace.Has(d) {
			return dispatch.Normalize(v), nil
		}
		return d, nil
	case *DemoAllow:
		return deref(v)
	case *DemoDeny:
		return deref(v)
	case *DemoReplace:
		if v == nil {
			return nil, ErrNilDecision
		}
		return dispatch.Normalize(*v), nil
	case nil:
		return nil, ErrNilDecision
	}
	return nil, ErrUnknownVariant
}

func checkVerdict(d Verdict) (Verdict, error) {
	switch v := d.(type) {
	case VerdictAbstain, VerdictDeny:
		return d, nil
	case *VerdictAbstain:
		return derefVerdict(v)
	case *VerdictDeny:
		return derefVerdict(v)
	case nil:
		return nil, ErrNilDecision
	}
	return nil, ErrUnknownVariant
}

func deref[T Decision](v *T) (Decision, error) {
	if v == nil {
		return nil, ErrNilDecision
	}
	return *v, nil
}

func derefVerdict[T Verdict](v *T) (Verdict, error) {
	if v == nil {
		return nil, ErrNilDecision
	}
	return *v, nil
}

func (g *Registry) RunPolicy(ctx context.Context, p *DemoPayload, terminal func(context.Context) (Decision, error)) (Decision, error) {
	return dispatch.RunWaterfall(ctx, g.core, PolicyEventName, &g.onPolicy, p, scope, terminal, Decision(DemoAllow{}), checkDecision, kind[Decision])
}

func (g *Registry) RunDemoGuard(ctx context.Context, p *DemoPayload) (Verdict, error) {
	return dispatch.RunGuard(ctx, g.core, DemoGuardEventName, &g.onGuard, p, scope, Verdict(VerdictAbstain{}), checkVerdict,
		func(d Verdict) bool { return d.Kind() == "deny" }, kind[Verdict])
}

func (g *Registry) RunRun(ctx context.Context, p *DemoPayload, terminal func(context.Context) Decision) (Decision, error) {
	return dispatch.RunWrapper(ctx, g.core, RunEventName, &g.onRun, p, scope, terminal, checkDecision)
}

func (g *Registry) NotifyStopping(ctx context.Context, p *DemoPayload) error {
	return dispatch.RunNotify(ctx, StoppingEventName, &g.onStopping, p, scope)
}

func (g *Registry) NotifyStoppingBounded(ctx context.Context, p *DemoPayload, bound time.Duration) ([]string, error) {
	return dispatch.RunNotifyBounded(ctx, StoppingEventName, &g.onStopping, p, scope, bound)
}

func (g *Registry) EmitSeen(ctx context.Context, p *DemoPayload) error {
	return dispatch.RunObserve(ctx, g.core, SeenEventName, &g.onSeen, p, scope)
}

func (g *Registry) RunVote(ctx context.Context, p *DemoPayload, bound time.Duration) []dispatch.Vote[Decision] {
	return dispatch.RunVote(ctx, g.core, VoteEventName, &g.onVote, p, scope, bound, checkDecision, kind[Decision])
}

func (g *Registry) RunFold(ctx context.Context, p *DemoPayload, bound time.Duration, apply func(context.Context, string, Decision) (*DemoPayload, error)) error {
	return dispatch.RunFold(ctx, g.core, FoldEventName, &g.onFold, p, scope, bound, checkDecision, kind[Decision], apply)
}
