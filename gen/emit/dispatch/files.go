package dispatch

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/dshkit/dsh/gen/emit"
	"github.com/dshkit/dsh/gen/ir"
)

// writer accumulates Go source; the caller formats it.
type writer struct{ bytes.Buffer }

func (w *writer) p(format string, args ...any) {
	fmt.Fprintf(&w.Buffer, format, args...)
	w.WriteByte('\n')
}

// doc writes text as a // comment, one line per line ("//" for a blank one).
func (w *writer) doc(text string) {
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		line = strings.TrimRight(line, " \t")
		if line == "" {
			w.p("//")
		} else {
			w.p("// %s", line)
		}
	}
}

// para writes one paragraph of prose as a // comment wrapped at 92 columns.
func (w *writer) para(format string, args ...any) {
	const width = 92
	line := "//"
	for _, word := range strings.Fields(fmt.Sprintf(format, args...)) {
		if len(line)+1+len(word) > width && line != "//" {
			w.p("%s", line)
			line = "//"
		}
		line += " " + word
	}
	w.p("%s", line)
}

// next writes the Next type of a waterfall or wrapper event: an alias of the domain's
// generic next value (generic is WaterfallNext or WrapperNext).
func (w *writer) next(e *event, generic string) {
	w.para("%s runs the rest of the %s chain (see %s).", e.Next, e.Name, generic)
	w.p("type %s = %s[%s]", e.Next, generic, e.Decision)
}

func (w *writer) header(specFile, pkg string) {
	w.p("// %s", emit.Header(specFile))
	w.p("")
	w.p("package %s", pkg)
	w.p("")
}

// eventsFile is <spec>_events.go: the events declared in one spec file.
func eventsFile(s *ir.Spec, file string, evs []*event) []byte {
	var w writer
	w.header(file, s.Package)
	timed := false
	for _, e := range evs {
		timed = timed || e.ir.Domain == ir.Notification || e.ir.Domain == ir.Vote || e.ir.Domain == ir.Fold
	}
	w.p("import (")
	w.p(`	"context"`)
	if timed {
		w.p(`	"time"`)
	}
	w.p("")
	w.p(`	"github.com/dshkit/dsh/codec/dispatch"`)
	w.p(")")
	for _, e := range evs {
		w.p("")
		e.write(&w)
	}
	return w.Bytes()
}

func (e *event) write(w *writer) {
	w.para("%s is the name of the %s event, %s.", e.Const, e.Name, article(string(e.ir.Domain)))
	w.p("const %s = %q", e.Const, e.Name)
	w.p("")

	// The listener type, with the event's documentation.
	switch e.ir.Domain {
	case ir.Waterfall:
		w.para("%s is a listener of %s, a waterfall. It gets the payload and next, which runs the listeners registered after it and then the runtime's default, and returns a decision: what next returned, a transformed one, or its own without calling next (which skips the inner listeners). next may be called at most once, with a context derived from ctx. Returning an error, a nil decision, one of a type that is not a variant of %s, or panicking fails the run.", e.Listener, e.Name, e.Decision)
	case ir.Guard:
		w.para("%s is a guard of %s: it denies or abstains, never allows. Returning a nil verdict, one of a type that is not a variant of %s, or panicking fails the run.", e.Listener, e.Name, e.Decision)
	case ir.Wrapper:
		w.para("%s is a wrapper of %s. It gets the payload and next, which runs the wrappers registered after it and then the core operation, and returns a result: usually what next returned. next may be called at most once; the context passed to it reaches the core operation. Returning %s or panicking fails the run.", e.Listener, e.Name, e.badResult())
	case ir.Fold:
		w.para("%s is a listener of %s, a fold: listeners run one after the other in registration order, with no next; each gets the payload the runtime made of the decisions before it and returns its own decision (%s is no opinion). Returning an error, a nil decision, one of a type that is not a variant of %s, panicking or overrunning the runner's bound fails the run.", e.Listener, e.Name, e.defaultExpr, e.Decision)
	case ir.Notification:
		w.para("%s is a listener of %s, an awaited notification: every listener runs, in order; a returned error or a panic is reported to the caller and stops nothing.", e.Listener, e.Name)
	case ir.Observer:
		w.para("%s is a listener of %s, an observer: every listener runs, in order; a panic is logged and reported to the caller, and changes nothing.", e.Listener, e.Name)
	case ir.Vote:
		w.para("%s is a listener of %s, a vote: every listener runs, in order, each under a bound, and returns its own decision (a variant of %s); it does not see the others' decisions. The runtime folds the decisions by the event's rule. Returning an error, a nil decision, one of a type that is not a variant of %s, panicking or overrunning the bound makes the listener count as the default, %s.", e.Listener, e.Name, e.Decision, e.Decision, e.Default)
	}
	if e.Doc != "" {
		w.p("//")
		w.doc(e.Doc)
	}
	switch e.ir.Domain {
	case ir.Waterfall:
		w.p("type %s func(ctx context.Context, p *%s, next %s) (%s, error)", e.Listener, e.Payload, e.Next, e.Decision)
		w.p("")
		w.next(e, "WaterfallNext")
	case ir.Guard:
		w.p("type %s func(ctx context.Context, p *%s) %s", e.Listener, e.Payload, e.Decision)
	case ir.Wrapper:
		w.p("type %s func(ctx context.Context, p *%s, next %s) %s", e.Listener, e.Payload, e.Next, e.Decision)
		w.p("")
		w.next(e, "WrapperNext")
	case ir.Fold:
		w.p("type %s func(ctx context.Context, p *%s) (%s, error)", e.Listener, e.Payload, e.Decision)
	case ir.Notification:
		w.p("type %s func(ctx context.Context, p *%s) error", e.Listener, e.Payload)
	case ir.Observer:
		w.p("type %s func(ctx context.Context, p *%s)", e.Listener, e.Payload)
	case ir.Vote:
		w.p("type %s func(ctx context.Context, p *%s) (%s, error)", e.Listener, e.Payload, e.Decision)
	}
	w.p("")

	// Registration.
	what := map[ir.Domain]string{ir.Guard: "guard", ir.Wrapper: "wrapper"}[e.ir.Domain]
	if what == "" {
		what = "listener"
	}
	w.para("%s registers fn as a %s %s, after those already registered, and returns a func that unregisters it. fn must not be nil.", e.Register, e.Name, what)
	w.p("func (r *Registrar) %s(fn %s) (unregister func()) {", e.Register, e.Listener)
	w.p("	return dispatch.Register(r.r, %s, &r.reg.%s, fn)", e.Const, e.Field)
	w.p("}")
	w.p("")

	// The runner.
	scope := "dispatch.Unscoped[" + e.Payload + "]"
	if e.subjectExpr != "" {
		scope = "evScope" + e.Stem
	}
	scopeDoc := "The listeners registered for one agent run only when p's subject is that agent."
	if e.subjectExpr == "" {
		scopeDoc = "The event has no subject: every listener sees it."
	}
	switch e.ir.Domain {
	case ir.Waterfall:
		w.para("%s runs the %s listeners that see p in registration order, the first registered outermost, around terminal, and returns the decision of the outermost one. A nil terminal decides %s. %s A listener failure is final and returned as a *ListenerError, as is an error of terminal (unwrapped); the decision is then nil.", e.Runner, e.Name, e.defaultExpr, scopeDoc)
		w.p("func (g *Registry) %s(ctx context.Context, p *%s, terminal func(context.Context) (%s, error)) (%s, error) {", e.Runner, e.Payload, e.Decision, e.Decision)
		w.p("	return dispatch.RunWaterfall(ctx, g.core, %s, &g.%s, p, %s, terminal, %s(%s), %s,", e.Const, e.Field, scope, e.Decision, e.defaultExpr, e.check())
		w.p("		func(d %s) string { return string(d.Kind()) })", e.Decision)
		w.p("}")
	case ir.Guard:
		w.para("%s runs the global %s guards, then those registered for p's agent, each in registration order, until one denies, and returns that verdict, or %s when every guard abstains. Guards registered during the run are seen by it. A failing guard stops the run with a *ListenerError.", e.Runner, e.Name, e.defaultExpr)
		w.p("func (g *Registry) %s(ctx context.Context, p *%s) (%s, error) {", e.Runner, e.Payload, e.Decision)
		w.p("	return dispatch.RunGuard(ctx, g.core, %s, &g.%s, p, %s, %s(%s), %s,", e.Const, e.Field, scope, e.Decision, e.defaultExpr, e.check())
		w.p("		func(d %s) bool { return d.Kind() == %q },", e.Decision, e.denyKind)
		w.p("		func(d %s) string { return string(d.Kind()) })", e.Decision)
		w.p("}")
	case ir.Wrapper:
		w.para("%s runs terminal, the core operation, wrapped by the %s wrappers that see p, the first registered outermost, and returns the outermost result. %s A wrapper failure is final and returned as a *ListenerError; the result is then nil.", e.Runner, e.Name, scopeDoc)
		w.p("func (g *Registry) %s(ctx context.Context, p *%s, terminal func(context.Context) %s) (%s, error) {", e.Runner, e.Payload, e.Decision, e.Decision)
		w.p("	return dispatch.RunWrapper(ctx, g.core, %s, &g.%s, p, %s, terminal, %s)", e.Const, e.Field, scope, e.check())
		w.p("}")
	case ir.Fold:
		w.para("%s runs the %s listeners that see p, in registration order, as a left fold: the first gets p; apply gets each listener's decision (checked, the default %s included) and returns the payload the next listener gets (nil: the same one). With bound > 0 each listener runs under a context cancelled (with cause ErrListenerOverrun) when bound passes, and one that has not returned by then fails the run (it is abandoned a short grace later if it still has not returned); with bound <= 0 listeners run unbounded on the caller's goroutine. %s A listener failure stops the run and is returned as a *ListenerError (an overrun's Err is ErrListenerOverrun; a cancellation of ctx while a listener runs, ctx's cause); an error of apply stops it and is returned as is.", e.Runner, e.Name, e.defaultExpr, scopeDoc)
		w.p("func (g *Registry) %s(ctx context.Context, p *%s, bound time.Duration, apply func(ctx context.Context, listener string, d %s) (*%s, error)) error {", e.Runner, e.Payload, e.Decision, e.Payload)
		w.p("	return dispatch.RunFold(ctx, g.core, %s, &g.%s, p, %s, bound, %s, func(d %s) string { return string(d.Kind()) }, apply)", e.Const, e.Field, scope, e.check(), e.Decision)
		w.p("}")
	case ir.Notification:
		w.para("%s runs every %s listener that sees p, in registration order, whatever the others did, and returns their failures (each a *ListenerError) joined. %s", e.Runner, e.Name, scopeDoc)
		w.p("func (g *Registry) %s(ctx context.Context, p *%s) error {", e.Runner, e.Payload)
		w.p("	return dispatch.RunNotify(ctx, %s, &g.%s, p, %s)", e.Const, e.Field, scope)
		w.p("}")
		w.p("")
		w.para("%sBounded is %s with a bound on each listener: a listener runs under a context cancelled (with cause ErrListenerOverrun) when bound passes; one that has not returned a short grace later is abandoned, named in overran, and the run goes on with the next listener. Failures are returned as by %s; an abandoned listener's is not.", e.Runner, e.Runner, e.Runner)
		w.p("func (g *Registry) %sBounded(ctx context.Context, p *%s, bound time.Duration) (overran []string, err error) {", e.Runner, e.Payload)
		w.p("	return dispatch.RunNotifyBounded(ctx, %s, &g.%s, p, %s, bound)", e.Const, e.Field, scope)
		w.p("}")
	case ir.Vote:
		w.para("%s runs every %s listener that sees p, in registration order, each under a context cancelled (with cause ErrListenerOverrun) when bound passes (bound <= 0: none), and returns one vote per listener, in that order: its decision, its failure (a *ListenerError), or Overran for a listener that had not returned a short grace after its bound (it is abandoned). %s", e.Runner, e.Name, scopeDoc)
		w.p("func (g *Registry) %s(ctx context.Context, p *%s, bound time.Duration) []Vote[%s] {", e.Runner, e.Payload, e.Decision)
		w.p("	return dispatch.RunVote(ctx, g.core, %s, &g.%s, p, %s, bound, %s,", e.Const, e.Field, scope, e.check())
		w.p("		func(d %s) string { return string(d.Kind()) })", e.Decision)
		w.p("}")
	case ir.Observer:
		w.para("%s runs every %s listener that sees p, in registration order. A failure is logged, changes nothing, and is returned (each a *ListenerError, joined) for the caller to record. %s", e.Runner, e.Name, scopeDoc)
		w.p("func (g *Registry) %s(ctx context.Context, p *%s) error {", e.Runner, e.Payload)
		w.p("	return dispatch.RunObserve(ctx, g.core, %s, &g.%s, p, %s)", e.Const, e.Field, scope)
		w.p("}")
	}

	// The subject.
	if e.subjectExpr != "" {
		w.p("")
		w.para("evScope%s is the scope of the payload of %s: its subject is %s.", e.Stem, e.Name, strings.TrimPrefix(strings.TrimPrefix(e.subjectExpr, "*"), "p."))
		w.p("func evScope%s(p *%s) dispatch.Scope {", e.Stem, e.Payload)
		w.p("	if %s {", strings.Join(append([]string{"p == nil"}, e.subjectNil...), " || "))
		w.p("		return dispatch.NoSubject()")
		w.p("	}")
		w.p("	return dispatch.Subject(%s)", e.subjectExpr)
		w.p("}")
	}
}

// sessionFile is <spec>_session.go: the session events declared in one spec file.
func sessionFile(s *ir.Spec, file string, ses []*ir.SessionEvent) []byte {
	var w writer
	w.header(file, s.Package)
	for i, se := range ses {
		if i > 0 {
			w.p("")
		}
		c := se.GoName + "Type"
		w.para("%s is the session-log type of the %s event, whose data is %s (appended by: %s).", c, se.Type, se.Data.Name, se.Owner)
		if doc := strings.TrimSpace(se.Doc); doc != "" {
			w.p("//")
			w.doc(doc)
		}
		w.p("const %s = %q", c, se.Type)
		w.p("")
		w.para("SessionEventType returns %s: %s is the data of %s events.", c, se.Data.Name, se.Type)
		w.p("func (%s) SessionEventType() string { return %s }", se.Data.Name, c)
	}
	return w.Bytes()
}

// metaSessionFile is meta_session.go: SessionEventData and its decoder.
func metaSessionFile(s *ir.Spec) []byte {
	var w writer
	w.header(MetaFile, s.Package)
	if len(s.SessionEvents) > 0 {
		w.p("import (")
		w.p(`	"fmt"`)
		w.p("")
		w.p(`	"github.com/dshkit/dsh/codec"`)
		w.p(")")
	} else {
		w.p(`import "fmt"`)
	}
	w.p("")
	w.para("SessionEventData is the data of a durable session-log event: the data record of every session event implements it.")
	w.p("//")
	w.p("//sumtype:decl")
	w.p("type SessionEventData interface {")
	w.p("	// SessionEventType returns the envelope type of the events the data belongs to.")
	w.p("	SessionEventType() string")
	w.p("}")
	w.p("")
	if s.Version != "" {
		w.para("SpecVersion is the version of the spec this package was generated from (MAJOR.MINOR.PATCH). A session log records it in its session/created event; a log of another major version does not open.")
		w.p("const SpecVersion = %q", s.Version)
		w.p("")
	}
	w.para("SessionEventTypes lists every session-log event type, sorted.")
	w.p("var SessionEventTypes = []string{")
	for _, se := range s.SessionEvents {
		w.p("	%sType,", se.GoName)
	}
	w.p("}")
	w.p("")
	w.para("DecodeSessionEventData strictly decodes the data of a session-log event of type typ into its record (a value, not a pointer). A decoding error wraps the record's *DecodeError; an unknown type is an error wrapping ErrUnknownKind.")
	w.p("func DecodeSessionEventData(typ string, data []byte) (SessionEventData, error) {")
	if len(s.SessionEvents) > 0 {
		w.p("	switch typ {")
		for _, se := range s.SessionEvents {
			w.p("	case %sType:", se.GoName)
			w.p("		var v %s", se.Data.Name)
			w.p("		if err := codec.Unmarshal(data, &v); err != nil {")
			w.p(`			return nil, fmt.Errorf("%s: %%s data: %%w", typ, err)`, s.Package)
			w.p("		}")
			w.p("		return v, nil")
		}
		w.p("	}")
	} else {
		w.p("	_ = data")
	}
	w.p(`	return nil, fmt.Errorf("%s: session event type %%q: %%w", typ, ErrUnknownKind)`, s.Package)
	w.p("}")
	return w.Bytes()
}

// article prefixes a noun with "a" or "an".
func article(noun string) string {
	if noun != "" && strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}
