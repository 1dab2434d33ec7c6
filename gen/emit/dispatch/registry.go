package dispatch

import (
	"github.com/dave/jennifer/jen"

	"github.com/dshkit/dsh/gen/emit/gofile"
	"github.com/dshkit/dsh/gen/ir"
)

// registryFile is meta_registry.go: the Registry with one listener list per event, the
// Events table, Listens, the Registrar, the checks of the decision unions, and aliases of
// the engine's types, so that a plugin needs no import but the generated package.
func registryFile(s *ir.Spec, evs []*event) *jen.File {
	f := newFile(s, MetaFile)
	doc := gofile.Comment
	// decl adds a declaration and a blank line after it.
	decl := func(c jen.Code) { f.Add(c); f.Line() }
	alias := func(text, name string) *jen.Statement {
		return doc(text).Type().Id(name).Op("=").Add(eng(name))
	}
	generic := func(text, name string) *jen.Statement {
		return doc(text).Type().Id(name).Types(jen.Id("D").Any()).Op("=").Add(eng(name)).Types(jen.Id("D"))
	}
	// forward declares func name(params) result { return dispatch.name(args) }.
	forward := func(text, name string, params []jen.Code, result jen.Code, args ...jen.Code) *jen.Statement {
		return doc(text).Func().Id(name).Params(params...).Add(result).Block(jen.Return(eng(name).Call(args...)))
	}

	decl(alias(`Domain is the authority kind of an extension point: it fixes the shape of the event's
listeners and how its runner composes them.`, "Domain"))
	decl(doc("The authority kinds of extension points.").Const().DefsFunc(func(g *jen.Group) {
		for _, d := range domainDocs {
			g.Add(doc(d[1])).Id(d[0]).Op("=").Add(eng(d[0]))
		}
	}))
	decl(alias(`EventInfo describes one extension point: its name, domain, documentation and the Go
names of its payload, decision, listener type and registration method.`, "EventInfo"))
	decl(doc("Events lists every extension point, sorted by name.").
		Var().Id("Events").Op("=").Index().Id("EventInfo").CustomFunc(multiline, func(g *jen.Group) {
		for _, e := range evs {
			g.Custom(multiline,
				jen.Id("Name").Op(":").Lit(e.Name),
				jen.Id("Domain").Op(":").Id(e.DomainConst),
				jen.Id("Doc").Op(":").Lit(e.Doc),
				jen.Id("Payload").Op(":").Lit(e.Payload),
				jen.Id("Decision").Op(":").Lit(e.Decision),
				jen.Id("Default").Op(":").Lit(e.Default),
				jen.Id("Register").Op(":").Lit(e.Register),
				jen.Id("Listener").Op(":").Lit(e.Listener))
		}
	}))
	decl(jen.Var().DefsFunc(func(g *jen.Group) {
		for _, v := range errorDocs {
			g.Add(doc(v[1])).Id(v[0]).Op("=").Add(eng(v[0]))
		}
	}))
	decl(alias(`ListenerError is the failure of one listener: an error it returned, a panic it raised
(Panic holds the recovered value), a nil decision (ErrNilDecision), one of an unknown
type (ErrUnknownVariant) or a reused next (ErrNextReused). errors.Is and errors.As see
through it to Err.`, "ListenerError"))
	decl(alias(`ResolvedDecision is what one waterfall or guard run resolved to, as passed to the hook
installed with WithDecisionAudit.`, "ResolvedDecision"))
	decl(doc("RegistryOption configures a Registry.").Type().Id("RegistryOption").Op("=").Add(eng("Option")))
	decl(forward(`WithLogger sets the logger that records observer failures and ignored registrations.
Without it (or with nil) the registry logs through slog.Default().`, "WithLogger",
		[]jen.Code{jen.Id("l").Op("*").Qual("log/slog", "Logger")}, jen.Id("RegistryOption"), jen.Id("l")))
	decl(forward(`WithDecisionAudit installs fn, called once for every waterfall and guard run that
resolves to a decision (not for a failed run), with the listener the decision came from,
and once for every decision of a fold listener (before the runtime applies it).
fn runs on the dispatching goroutine and must not block.`, "WithDecisionAudit",
		[]jen.Code{jen.Id("fn").Func().Params(ctx(), jen.Id("d").Id("ResolvedDecision"))}, jen.Id("RegistryOption"), jen.Id("fn")))

	decl(doc(`Registry holds the listeners of every event and runs them. Create it with NewRegistry.
It is safe for concurrent registration and dispatch: a run sees the listeners registered
when it reaches them (guards) or when it starts (every other domain).

Registry embeds its root Registrar, which is global and anonymous, so that listeners can
be registered on the registry directly; reg.Close() unregisters every listener, of every
plugin.`).Type().Id("Registry").StructFunc(func(g *jen.Group) {
		g.Op("*").Id("Registrar")
		g.Line().Id("core").Op("*").Add(eng("Core"))
		g.Line()
		for _, e := range evs {
			g.Id(e.Field).Add(eng("List")).Types(jen.Id(e.Listener))
		}
	}))
	decl(doc("NewRegistry returns an empty registry configured by opts.").
		Func().Id("NewRegistry").Params(jen.Id("opts").Op("...").Id("RegistryOption")).Op("*").Id("Registry").Block(
		jen.Id("g").Op(":=").Op("&").Id("Registry").Values(jen.Id("core").Op(":").Add(eng("NewCore")).Call(jen.Id("opts").Op("..."))),
		jen.Id("g").Dot("Registrar").Op("=").Op("&").Id("Registrar").Values(jen.Id("reg").Op(":").Id("g"), jen.Id("r").Op(":").Id("g").Dot("core").Dot("Root").Call()),
		jen.Return(jen.Id("g"))))
	decl(doc(`Plugin returns a registrar for the plugin called name, registering globally. Its
listeners are named "<name>#<n>", n counting the plugin's registrations from 1 (an empty
name is "anonymous"). The registrar is derived from the registry's root registrar.`).
		Func().Params(jen.Id("g").Op("*").Id("Registry")).Id("Plugin").Params(jen.Id("name").String()).Op("*").Id("Registrar").Block(
		jen.Return(jen.Op("&").Id("Registrar").Values(jen.Id("reg").Op(":").Id("g"), jen.Id("r").Op(":").Id("g").Dot("core").Dot("Root").Call().Dot("Plugin").Call(jen.Id("name"))))))
	decl(doc(`Listens reports whether running event (an extension point's name, such as the
<Event>EventName constants) would reach anyone right now: a listener of any scope is
registered for it, or, for a waterfall or a guard, decisions are audited
(WithDecisionAudit). An unknown name reaches no one. When it is false, a caller may skip
building the payload and take the event's default outcome instead of running it.`).
		Func().Params(jen.Id("g").Op("*").Id("Registry")).Id("Listens").Params(jen.Id("event").String()).Bool().Block(
		jen.Switch(jen.Id("event")).BlockFunc(func(g *jen.Group) {
			for _, e := range evs {
				listens := jen.Id("g").Dot(e.Field).Dot("Len").Call().Op(">").Lit(0)
				if e.DomainConst == "DomainWaterfall" || e.DomainConst == "DomainGuard" {
					listens = jen.Id("g").Dot("core").Dot("Audited").Call().Op("||").Add(listens)
				}
				g.Case(jen.Id(e.Const)).Block(jen.Return(listens))
			}
		}),
		jen.Return(jen.False())))

	decl(doc(`Registrar registers listeners for one plugin (or anonymously), either globally or for one
agent. Every registration returns a func that unregisters it (calling it again does
nothing); Close unregisters everything the registrar and the registrars derived from it
registered. A Registrar is safe for concurrent use.`).Type().Id("Registrar").Struct(
		jen.Id("reg").Op("*").Id("Registry"),
		jen.Id("r").Op("*").Add(eng("Registrar"))))
	decl(doc(`ForAgent returns a registrar of the same plugin whose listeners only see the events whose
subject is the agent id (events without a subject path are seen by every listener). It
is derived from r: r.Close() also unregisters what it registered.`).
		Func().Params(jen.Id("r").Op("*").Id("Registrar")).Id("ForAgent").Params(jen.Id("id").String()).Op("*").Id("Registrar").Block(
		jen.Return(jen.Op("&").Id("Registrar").Values(jen.Id("reg").Op(":").Id("r").Dot("reg"), jen.Id("r").Op(":").Id("r").Dot("r").Dot("ForAgent").Call(jen.Id("id"))))))
	decl(doc(`Close unregisters every listener r and the registrars derived from it registered, and
closes them all. Registering on a closed registrar does nothing (it is logged) and returns
a no-op unregister func. Close is idempotent.`).
		Func().Params(jen.Id("r").Op("*").Id("Registrar")).Id("Close").Params().Block(jen.Id("r").Dot("r").Dot("Close").Call()))

	decl(generic(`WaterfallNext runs the rest of a waterfall's chain: the listeners registered after the
one it is passed to, then the runner's terminal. A listener calls it at most once, with a
context derived from its own (nil stands for its own). It is a small value: passing it
allocates nothing. Each waterfall names its own (PreToolNext is
WaterfallNext[PreToolDecision]). WaterfallNextFunc makes one from a func, to call a
listener outside a registry; the zero WaterfallNext runs nothing.`, "WaterfallNext"))
	decl(doc("WaterfallNextFunc returns the WaterfallNext whose Call calls fn.").
		Func().Id("WaterfallNextFunc").Types(jen.Id("D").Any()).
		Params(jen.Id("fn").Func().Params(jen.Id("ctx").Qual("context", "Context")).Params(jen.Id("D"), jen.Error())).
		Id("WaterfallNext").Types(jen.Id("D")).Block(jen.Return(eng("WaterfallNextFunc").Call(jen.Id("fn")))))
	decl(generic(`WrapperNext runs the rest of a wrapper chain: the wrappers registered after the one it
is passed to, then the core operation. A wrapper calls it at most once, with a context
derived from its own (nil stands for its own); that context reaches the core operation.
It is a small value: passing it allocates nothing. Each wrapper event names its own
(ExecuteNext is WrapperNext[ToolExecutionResult]). WrapperNextFunc makes one from a func,
to call a wrapper outside a registry; the zero WrapperNext runs nothing and returns nil.`, "WrapperNext"))
	decl(doc("WrapperNextFunc returns the WrapperNext whose Call calls fn.").
		Func().Id("WrapperNextFunc").Types(jen.Id("D").Any()).
		Params(jen.Id("fn").Func().Params(jen.Id("ctx").Qual("context", "Context")).Id("D")).
		Id("WrapperNext").Types(jen.Id("D")).Block(jen.Return(eng("WrapperNextFunc").Call(jen.Id("fn")))))
	f.Add(generic(`Vote is one listener's part in a vote (the Run<Event> runners of vote events):
its decision, or why it has none. A listener that failed, panicked, returned a nil
decision or one of an unknown type has Err set (a *ListenerError); one that overran its
bound has Overran set and no decision. Exactly one of Decision (non-nil), Err and Overran
is set.`, "Vote"))

	unions := decisionUnions(evs)
	if deep := deepVariants(unions); len(deep) > 0 {
		f.Line()
		f.Add(doc(`The walks of the variants whose records reach a union, made of every such decision to
find a pointer variant inside it (see evCheck<Union>).`).Var().DefsFunc(func(g *jen.Group) {
			for _, v := range deep {
				g.Id("evPlan" + v).Op("=").Add(eng("PlanOf")).Types(jen.Id(v)).Call()
			}
		}))
	}
	for _, u := range unions {
		f.Line()
		f.Add(checkFunc(u))
	}
	return f
}

// domainDocs are the authority-kind constants, each with its doc.
var domainDocs = [][2]string{
	{"DomainWaterfall", "DomainWaterfall is a policy chain: each listener gets the payload and next and returns\na decision; the first registered listener is outermost."},
	{"DomainGuard", "DomainGuard is terminal policy: guards deny or abstain, never allow; the first deny wins."},
	{"DomainWrapper", "DomainWrapper is around-dispatch: each listener wraps next and returns a result."},
	{"DomainFold", "DomainFold is a left fold with no next: each listener gets the payload the runtime\nmade of the decisions before it and returns its own decision."},
	{"DomainNotification", "DomainNotification is awaited: every listener runs in order; failures are reported."},
	{"DomainObserver", "DomainObserver is contained: every listener runs; failures are logged and change nothing."},
	{"DomainVote", "DomainVote is a bounded vote: every listener runs under a bound and returns a decision\nof its own; the runtime folds the decisions by the event's rule."},
}

// errorDocs are the engine's sentinel errors, each with its doc.
var errorDocs = [][2]string{
	{"ErrNextReused", "ErrNextReused is the failure of a listener that called its next more than once. The\nsecond call returns it and the listener's run fails with it, whatever it returns."},
	{"ErrNilDecision", "ErrNilDecision is the failure of a listener that returned a nil decision or result."},
	{"ErrUnknownVariant", "ErrUnknownVariant is the failure of a listener that returned a decision or result of\na type that is not a variant of its union (a type that embeds a variant, say)."},
	{"ErrListenerOverrun", "ErrListenerOverrun is the cause of the context of a listener that exceeded its bound\n(the Bounded notification runners, votes and bounded folds)."},
}

// checkFunc declares evCheck<Union>, which checks what a listener or terminal returned and
// normalizes it to the value form of its variant.
func checkFunc(u union) *jen.Statement {
	nilDecision := jen.Return(jen.Nil(), jen.Id("ErrNilDecision"))
	return gofile.Comment(`evCheck`+u.Name+` checks what a listener or terminal returned and normalizes it to the
value form of its variant: a pointer variant becomes the value it points to, and so does
every variant held through a pointer inside it (dispatch.Normalize), so that the runtime
sees one dynamic type per variant. It fails with ErrNilDecision for nil (or a nil pointer
variant), and with ErrUnknownVariant for a type that is not a variant of `+u.Name+`.`).
		Func().Id("evCheck"+u.Name).Params(jen.Id("d").Id(u.Name)).Params(jen.Id(u.Name), jen.Error()).Block(
		jen.Switch(jen.Id("v").Op(":=").Id("d").Assert(jen.Type())).BlockFunc(func(g *jen.Group) {
			if len(u.Plain) > 0 {
				g.CaseFunc(func(g *jen.Group) {
					for _, v := range u.Plain {
						g.Id(v)
					}
				}).Block(jen.Return(jen.Id("d"), jen.Nil()))
			}
			for _, v := range u.Deep {
				g.Case(jen.Id(v)).Block(
					jen.If(jen.Id("evPlan"+v).Dot("Has").Call(jen.Id("d"))).Block(
						jen.Return(eng("Normalize").Call(jen.Id("v")), jen.Nil())),
					jen.Return(jen.Id("d"), jen.Nil()))
			}
			pointer := func(v string, value jen.Code) {
				g.Case(jen.Op("*").Id(v)).Block(
					jen.If(jen.Id("v").Op("==").Nil()).Block(nilDecision),
					jen.Return(value, jen.Nil()))
			}
			for _, v := range u.Plain {
				pointer(v, jen.Op("*").Id("v"))
			}
			for _, v := range u.Deep {
				pointer(v, eng("Normalize").Call(jen.Op("*").Id("v")))
			}
			g.Case(jen.Nil()).Block(nilDecision)
		}),
		jen.Return(jen.Nil(), jen.Id("ErrUnknownVariant")))
}
