package dispatch

import (
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/dshkit/dsh/gen/emit"
	"github.com/dshkit/dsh/gen/emit/gofile"
	"github.com/dshkit/dsh/gen/ir"
)

// The import paths of the codec runtime and its dispatch engine, which the generated code
// calls.
const (
	codecPath = "github.com/dshkit/dsh/codec"
	engine    = "github.com/dshkit/dsh/codec/dispatch"
)

// The jennifer shorthands the dispatch files are written with.
var (
	para = gofile.Prosef
	ctx  = func() *jen.Statement { return jen.Id("ctx").Qual("context", "Context") }
	eng  = func(name string) *jen.Statement { return jen.Qual(engine, name) }
)

// newFile is a generated file of s attributed to specFile, importing the engine as dispatch.
func newFile(s *ir.Spec, specFile string) *jen.File {
	f := gofile.New(s.Package, emit.Header(specFile))
	f.ImportName(engine, "dispatch")
	return f
}

// eventsFile is <spec>_events.go: the events declared in one spec file.
func eventsFile(s *ir.Spec, file string, evs []*event) *jen.File {
	f := newFile(s, file)
	for i, e := range evs {
		if i > 0 {
			f.Line()
		}
		e.write(f)
	}
	return f
}

// ptr is the Go type *name.
func ptr(name string) *jen.Statement { return jen.Op("*").Id(name) }

// kindString is the func a runner names a decision with: func(d D) string { return string(d.Kind()) }.
func kindString(decision string) *jen.Statement {
	return jen.Func().Params(jen.Id("d").Id(decision)).String().Block(
		jen.Return(jen.String().Call(jen.Id("d").Dot("Kind").Call())))
}

func (e *event) write(f *jen.File) {
	f.Add(para("%s is the name of the %s event, %s.", e.Const, e.Name, article(string(e.ir.Domain)))).
		Const().Id(e.Const).Op("=").Lit(e.Name)
	f.Line()

	// The listener type, with the event's documentation.
	var doc *jen.Statement
	switch e.ir.Domain {
	case ir.Waterfall:
		doc = para("%s is a listener of %s, a waterfall. It gets the payload and next, which runs the listeners registered after it and then the runtime's default, and returns a decision: what next returned, a transformed one, or its own without calling next (which skips the inner listeners). next may be called at most once, with a context derived from ctx. Returning an error, a nil decision, one of a type that is not a variant of %s, or panicking fails the run.", e.Listener, e.Name, e.Decision)
	case ir.Guard:
		doc = para("%s is a guard of %s: it denies or abstains, never allows. Returning a nil verdict, one of a type that is not a variant of %s, or panicking fails the run.", e.Listener, e.Name, e.Decision)
	case ir.Wrapper:
		doc = para("%s is a wrapper of %s. It gets the payload and next, which runs the wrappers registered after it and then the core operation, and returns a result: usually what next returned. next may be called at most once; the context passed to it reaches the core operation. Returning %s or panicking fails the run.", e.Listener, e.Name, e.badResult())
	case ir.Fold:
		doc = para("%s is a listener of %s, a fold: listeners run one after the other in registration order, with no next; each gets the payload the runtime made of the decisions before it and returns its own decision (%s is no opinion). Returning an error, a nil decision, one of a type that is not a variant of %s, panicking or overrunning the runner's bound fails the run.", e.Listener, e.Name, e.defaultDoc(), e.Decision)
	case ir.Notification:
		doc = para("%s is a listener of %s, an awaited notification: every listener runs, in order; a returned error or a panic is reported to the caller and stops nothing.", e.Listener, e.Name)
	case ir.Observer:
		doc = para("%s is a listener of %s, an observer: every listener runs, in order; a panic is logged and reported to the caller, and changes nothing.", e.Listener, e.Name)
	case ir.Vote:
		doc = para("%s is a listener of %s, a vote: every listener runs, in order, each under a bound, and returns its own decision (a variant of %s); it does not see the others' decisions. The runtime folds the decisions by the event's rule. Returning an error, a nil decision, one of a type that is not a variant of %s, panicking or overrunning the bound makes the listener count as the default, %s.", e.Listener, e.Name, e.Decision, e.Decision, e.Default)
	}
	if e.Doc != "" {
		doc.Comment("//").Line().Add(gofile.Comment(e.Doc))
	}
	params := []jen.Code{ctx(), jen.Id("p").Add(ptr(e.Payload))}
	if e.Next != "" {
		params = append(params, jen.Id("next").Id(e.Next))
	}
	listener := doc.Type().Id(e.Listener).Func().Params(params...)
	switch e.ir.Domain {
	case ir.Waterfall, ir.Fold, ir.Vote:
		listener.Params(jen.Id(e.Decision), jen.Error())
	case ir.Guard, ir.Wrapper:
		listener.Id(e.Decision)
	case ir.Notification:
		listener.Error()
	}
	f.Add(listener)
	f.Line()
	if e.Next != "" {
		generic := map[ir.Domain]string{ir.Waterfall: "WaterfallNext", ir.Wrapper: "WrapperNext"}[e.ir.Domain]
		f.Add(para("%s runs the rest of the %s chain (see %s).", e.Next, e.Name, generic)).
			Type().Id(e.Next).Op("=").Id(generic).Types(jen.Id(e.Decision))
		f.Line()
	}

	// Registration.
	what := map[ir.Domain]string{ir.Guard: "guard", ir.Wrapper: "wrapper"}[e.ir.Domain]
	if what == "" {
		what = "listener"
	}
	f.Add(para("%s registers fn as a %s %s, after those already registered, and returns a func that unregisters it. fn must not be nil.", e.Register, e.Name, what)).
		Func().Params(jen.Id("r").Add(ptr("Registrar"))).Id(e.Register).Params(jen.Id("fn").Id(e.Listener)).
		Params(jen.Id("unregister").Func().Params()).Block(
		jen.Return(eng("Register").Call(jen.Id("r").Dot("r"), jen.Id(e.Const), jen.Op("&").Id("r").Dot("reg").Dot(e.Field), jen.Id("fn"))))
	f.Line()
	f.Add(e.runner())

	// The subject.
	if len(e.subject) > 0 {
		f.Line()
		f.Add(e.scopeFunc())
	}
}

// runner is the Registry method that runs e's listeners through the engine.
func (e *event) runner() *jen.Statement {
	scopeDoc := "The listeners registered for one agent run only when p's subject is that agent."
	if len(e.subject) == 0 {
		scopeDoc = "The event has no subject: every listener sees it."
	}
	p := jen.Id("p").Add(ptr(e.Payload))
	method := func(doc *jen.Statement, name string, params ...jen.Code) *jen.Statement {
		return doc.Func().Params(jen.Id("g").Add(ptr("Registry"))).Id(name).Params(append([]jen.Code{ctx(), p}, params...)...)
	}
	// run is the call of the engine's runner fn with the arguments every runner passes first.
	run := func(fn string, withCore bool, args ...jen.Code) *jen.Statement {
		head := []jen.Code{jen.Id("ctx")}
		if withCore {
			head = append(head, jen.Id("g").Dot("core"))
		}
		head = append(head, jen.Id(e.Const), jen.Op("&").Id("g").Dot(e.Field), jen.Id("p"), e.scope())
		return jen.Return(eng(fn).Call(append(head, args...)...))
	}
	bound := jen.Id("bound").Qual("time", "Duration")
	switch e.ir.Domain {
	case ir.Waterfall:
		doc := para("%s runs the %s listeners that see p in registration order, the first registered outermost, around terminal, and returns the decision of the outermost one. A nil terminal decides %s. %s A listener failure is final and returned as a *ListenerError, as is an error of terminal (unwrapped); the decision is then nil.", e.Runner, e.Name, e.defaultDoc(), scopeDoc)
		terminal := jen.Id("terminal").Func().Params(jen.Qual("context", "Context")).Params(jen.Id(e.Decision), jen.Error())
		return method(doc, e.Runner, terminal).Params(jen.Id(e.Decision), jen.Error()).Block(
			run("RunWaterfall", true, jen.Id("terminal"), e.defaultValue(), e.check(), kindString(e.Decision)))
	case ir.Guard:
		doc := para("%s runs the global %s guards, then those registered for p's agent, each in registration order, until one denies, and returns that verdict, or %s when every guard abstains. Guards registered during the run are seen by it. A failing guard stops the run with a *ListenerError.", e.Runner, e.Name, e.defaultDoc())
		denies := jen.Func().Params(jen.Id("d").Id(e.Decision)).Bool().Block(
			jen.Return(jen.Id("d").Dot("Kind").Call().Op("==").Lit(e.denyKind)))
		return method(doc, e.Runner).Params(jen.Id(e.Decision), jen.Error()).Block(
			run("RunGuard", true, e.defaultValue(), e.check(), denies, kindString(e.Decision)))
	case ir.Wrapper:
		doc := para("%s runs terminal, the core operation, wrapped by the %s wrappers that see p, the first registered outermost, and returns the outermost result. %s A wrapper failure is final and returned as a *ListenerError; the result is then nil.", e.Runner, e.Name, scopeDoc)
		terminal := jen.Id("terminal").Func().Params(jen.Qual("context", "Context")).Id(e.Decision)
		return method(doc, e.Runner, terminal).Params(jen.Id(e.Decision), jen.Error()).Block(
			run("RunWrapper", true, jen.Id("terminal"), e.check()))
	case ir.Fold:
		doc := para("%s runs the %s listeners that see p, in registration order, as a left fold: the first gets p; apply gets each listener's decision (checked, the default %s included) and returns the payload the next listener gets (nil: the same one). With bound > 0 each listener runs under a context cancelled (with cause ErrListenerOverrun) when bound passes, and one that has not returned by then fails the run (it is abandoned a short grace later if it still has not returned); with bound <= 0 listeners run unbounded on the caller's goroutine. %s A listener failure stops the run and is returned as a *ListenerError (an overrun's Err is ErrListenerOverrun; a cancellation of ctx while a listener runs, ctx's cause); an error of apply stops it and is returned as is.", e.Runner, e.Name, e.defaultDoc(), scopeDoc)
		apply := jen.Id("apply").Func().Params(ctx(), jen.Id("listener").String(), jen.Id("d").Id(e.Decision)).Params(ptr(e.Payload), jen.Error())
		return method(doc, e.Runner, bound, apply).Error().Block(
			run("RunFold", true, jen.Id("bound"), e.check(), kindString(e.Decision), jen.Id("apply")))
	case ir.Notification:
		doc := para("%s runs every %s listener that sees p, in registration order, whatever the others did, and returns their failures (each a *ListenerError) joined. %s", e.Runner, e.Name, scopeDoc)
		bdoc := para("%sBounded is %s with a bound on each listener: a listener runs under a context cancelled (with cause ErrListenerOverrun) when bound passes; one that has not returned a short grace later is abandoned, named in overran, and the run goes on with the next listener. Failures are returned as by %s; an abandoned listener's is not.", e.Runner, e.Runner, e.Runner)
		return method(doc, e.Runner).Error().Block(run("RunNotify", false)).Line().Line().
			Add(method(bdoc, e.Runner+"Bounded", bound).Params(jen.Id("overran").Index().String(), jen.Err().Error()).Block(
				run("RunNotifyBounded", false, jen.Id("bound"))))
	case ir.Vote:
		doc := para("%s runs every %s listener that sees p, in registration order, each under a context cancelled (with cause ErrListenerOverrun) when bound passes (bound <= 0: none), and returns one vote per listener, in that order: its decision, its failure (a *ListenerError), or Overran for a listener that had not returned a short grace after its bound (it is abandoned). %s", e.Runner, e.Name, scopeDoc)
		return method(doc, e.Runner, bound).Index().Id("Vote").Types(jen.Id(e.Decision)).Block(
			run("RunVote", true, jen.Id("bound"), e.check(), kindString(e.Decision)))
	default: // ir.Observer; plan rejects every other domain
		doc := para("%s runs every %s listener that sees p, in registration order. A failure is logged, changes nothing, and is returned (each a *ListenerError, joined) for the caller to record. %s", e.Runner, e.Name, scopeDoc)
		return method(doc, e.Runner).Error().Block(run("RunObserve", true))
	}
}

// scope is the scope function a runner passes: evScope<Stem>, or dispatch.Unscoped.
func (e *event) scope() *jen.Statement {
	if len(e.subject) == 0 {
		return eng("Unscoped").Types(jen.Id(e.Payload))
	}
	return jen.Id("evScope" + e.Stem)
}

// scopeFunc declares evScope<Stem>, which reads the subject off a payload.
func (e *event) scopeFunc() *jen.Statement {
	// sel is p.<first n fields of the subject path>.
	sel := func(n int) *jen.Statement {
		s := jen.Id("p")
		for _, step := range e.subject[:n] {
			s.Dot(step.field)
		}
		return s
	}
	noSubject := jen.Id("p").Op("==").Nil()
	for i, step := range e.subject {
		if step.optional {
			noSubject.Op("||").Add(sel(i + 1)).Op("==").Nil()
		}
	}
	id := sel(len(e.subject))
	if e.subject[len(e.subject)-1].optional {
		id = jen.Op("*").Add(id)
	}
	var path []string
	for _, step := range e.subject {
		path = append(path, step.field)
	}
	return para("evScope%s is the scope of the payload of %s: its subject is %s.", e.Stem, e.Name, strings.Join(path, ".")).
		Func().Id("evScope"+e.Stem).Params(jen.Id("p").Add(ptr(e.Payload))).Add(eng("Scope")).Block(
		jen.If(noSubject).Block(jen.Return(eng("NoSubject").Call())),
		jen.Return(eng("Subject").Call(id)),
	)
}

// sessionFile is <spec>_session.go: the session events declared in one spec file.
func sessionFile(s *ir.Spec, file string, ses []*ir.SessionEvent) *jen.File {
	f := gofile.New(s.Package, emit.Header(file))
	for i, se := range ses {
		if i > 0 {
			f.Line()
		}
		c := se.GoName + "Type"
		doc := para("%s is the session-log type of the %s event, whose data is %s (appended by: %s).", c, se.Type, se.Data.Name, se.Owner)
		if d := strings.TrimSpace(se.Doc); d != "" {
			doc.Comment("//").Line().Add(gofile.Comment(d))
		}
		f.Add(doc).Const().Id(c).Op("=").Lit(se.Type)
		f.Line()
		f.Add(para("SessionEventType returns %s: %s is the data of %s events.", c, se.Data.Name, se.Type)).
			Func().Params(jen.Id(se.Data.Name)).Id("SessionEventType").Params().String().Block(jen.Return(jen.Id(c)))
	}
	return f
}

// metaSessionFile is meta_session.go: SessionEventData and its decoder.
func metaSessionFile(s *ir.Spec) *jen.File {
	f := gofile.New(s.Package, emit.Header(MetaFile))
	f.ImportName(codecPath, "codec")
	f.Add(para("SessionEventData is the data of a durable session-log event: the data record of every session event implements it.")).
		Comment("//").Line().Comment("//sumtype:decl").Line().
		Type().Id("SessionEventData").Interface(
		jen.Comment("SessionEventType returns the envelope type of the events the data belongs to.").Line().
			Id("SessionEventType").Params().String())
	f.Line()
	if s.Version != "" {
		f.Add(para("SpecVersion is the version of the spec this package was generated from (MAJOR.MINOR.PATCH). A session log records it in its session/created event; a log of another major version does not open.")).
			Const().Id("SpecVersion").Op("=").Lit(s.Version)
		f.Line()
	}
	f.Add(para("SessionEventTypes lists every session-log event type, sorted.")).
		Var().Id("SessionEventTypes").Op("=").Index().String().CustomFunc(multiline, func(g *jen.Group) {
		for _, se := range s.SessionEvents {
			g.Id(se.GoName + "Type")
		}
	})
	f.Line()
	f.Add(para("DecodeSessionEventData strictly decodes the data of a session-log event of type typ into its record (a value, not a pointer). A decoding error wraps the record's *DecodeError; an unknown type is an error wrapping ErrUnknownKind.")).
		Func().Id("DecodeSessionEventData").Params(jen.Id("typ").String(), jen.Id("data").Index().Byte()).
		Params(jen.Id("SessionEventData"), jen.Error()).BlockFunc(func(g *jen.Group) {
		if len(s.SessionEvents) == 0 {
			g.Id("_").Op("=").Id("data")
		} else {
			g.Switch(jen.Id("typ")).BlockFunc(func(g *jen.Group) {
				for _, se := range s.SessionEvents {
					g.Case(jen.Id(se.GoName+"Type")).Block(
						jen.Var().Id("v").Id(se.Data.Name),
						jen.If(jen.Err().Op(":=").Qual("github.com/dshkit/dsh/codec", "Unmarshal").Call(jen.Id("data"), jen.Op("&").Id("v")), jen.Err().Op("!=").Nil()).Block(
							jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit(s.Package+": %s data: %w"), jen.Id("typ"), jen.Err()))),
						jen.Return(jen.Id("v"), jen.Nil()),
					)
				}
			})
		}
		g.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit(s.Package+": session event type %q: %w"), jen.Id("typ"), jen.Id("ErrUnknownKind")))
	})
	return f
}

// multiline lays out a composite literal's elements one per line.
var multiline = jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}

// article prefixes a noun with "a" or "an".
func article(noun string) string {
	if noun != "" && strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}
