// Package docs emits the Markdown catalog of a dsh spec: every extension point with its
// payload and decision, every session-log event, and every other named type. A spec with
// neither events nor session events (a wire package) gets a catalog of its types only.
//
// Type names link to the section that describes them, with GitHub-style heading anchors.
package docs

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"

	"github.com/dshkit/dsh/gen/emit"
	"github.com/dshkit/dsh/gen/ir"
)

// domainDocs explains each domain in one line (docs/design/SEMANTICS.md#1-dispatch-domains).
var domainDocs = map[ir.Domain]string{
	ir.Waterfall:    "a policy chain: each listener gets the payload and `next` and returns a decision; the first registered is outermost.",
	ir.Guard:        "terminal policy: global guards, then the agent's, deny or abstain (never allow); the first deny wins.",
	ir.Wrapper:      "around dispatch: each listener wraps `next` (core dispatch) and returns a normalized result.",
	ir.Fold:         "a left fold with no `next`: each listener, in registration order, sees the value the previous ones made (and the untouched original) and returns a decision the runtime applies before the next runs.",
	ir.Notification: "awaited: every listener runs in order whatever the others did; failures are joined and reported.",
	ir.Observer:     "contained: every listener runs; failures are logged and recorded but change nothing.",
	ir.Vote:         "a bounded vote: every listener runs, each under a bound, and returns its own decision; the runtime folds them by the event's rule, and a failing or overrunning listener counts as the default.",
}

// Emit renders the catalog of s as the file outFile. Each type is described once, in the
// first section that carries it; later sections link to it. The spec must be sorted
// (Spec.Sort); the output depends on nothing else.
func Emit(s *ir.Spec, outFile string) (emit.File, error) {
	return EmitWith(s, outFile, emit.Options{})
}

// EmitWith is Emit for a spec described by o (e.g. a wire package, whose header names
// spec/wire/*.cue).
func EmitWith(s *ir.Spec, outFile string, o emit.Options) (emit.File, error) {
	// Links may point forward, so render twice: the first pass records where each
	// heading's anchor lands, the second writes the links with those anchors.
	header := "<!-- " + o.Header("*.cue") + " -->"
	first := &renderer{spec: s, header: header}
	if err := first.render(); err != nil {
		return emit.File{}, err
	}
	second := &renderer{spec: s, header: header, anchors: first.found}
	if err := second.render(); err != nil {
		return emit.File{}, err
	}
	return emit.File{Path: outFile, Data: second.buf.Bytes()}, nil
}

// renderer writes one pass of the catalog.
type renderer struct {
	spec    *ir.Spec
	header  string            // the first line, naming the spec files
	anchors map[string]string // key ("event:", "session:" or "type:" + name) -> anchor, from the previous pass
	found   map[string]string // the same, recorded by this pass
	slugs   map[string]int    // anchors used so far, each with its count of repeats
	done    map[*ir.Type]bool // types already described
	buf     bytes.Buffer
}

func (r *renderer) printf(format string, args ...any) { fmt.Fprintf(&r.buf, format, args...) }

func (r *renderer) render() error {
	r.found, r.slugs, r.done = map[string]string{}, map[string]int{}, map[*ir.Type]bool{}
	s := r.spec
	r.printf("%s\n", r.header)
	if len(s.Events) == 0 && len(s.SessionEvents) == 0 {
		r.heading(1, "Wire catalog", "")
		r.printf("Every type of package `%s`, which declares wire formats only (no events).\n", s.Package)
		r.types("Every type, by name.")
		return nil
	}
	r.heading(1, "Event catalog", "")
	r.printf("Every extension point of package `%s`, its payload and decision, the session-log events and every other type.\n", s.Package)

	r.heading(2, "Events", "")
	r.printf("| event | domain | payload | decision | default |\n| --- | --- | --- | --- | --- |\n")
	for _, e := range s.Events {
		if e.Payload == nil {
			return fmt.Errorf("%s: event %s has no payload", e.Pos, e.Name)
		}
		r.printf("| %s | %s | %s | %s | %s |\n", r.link("event:"+e.Name, "`"+e.Name+"`"), e.Domain,
			r.typeLink(e.Payload), r.typeLink(e.Decision), code(e.Default))
	}
	for _, e := range s.Events {
		r.event(e)
	}

	r.heading(2, "Session events", "")
	r.printf("| type | owner | data |\n| --- | --- | --- |\n")
	for _, se := range s.SessionEvents {
		r.printf("| %s | %s | %s |\n", r.link("session:"+se.Type, "`"+se.Type+"`"), se.Owner, r.typeLink(se.Data))
	}
	for _, se := range s.SessionEvents {
		r.heading(3, "`"+se.Type+"`", "session:"+se.Type)
		r.printf("%s\n\n- Owner: %s\n", se.Doc, se.Owner)
		r.part("Data", se.Data)
	}

	r.types("Every type not described above, by name.")
	return nil
}

// types writes the Types section: every type not described yet, variants excepted (a
// variant is described with its union).
func (r *renderer) types(intro string) {
	s := r.spec
	r.heading(2, "Types", "")
	r.printf("%s\n", intro)
	for _, t := range s.Types {
		if u, _ := s.IsVariant(t); r.done[t] || u != nil { // a variant is described with its union
			continue
		}
		r.heading(3, code(t.Name), "type:"+t.Name)
		r.body(t, 3)
	}
}

// event writes the section of one extension point.
func (r *renderer) event(e *ir.Event) {
	r.heading(3, "`"+e.Name+"`", "event:"+e.Name)
	r.printf("%s\n\n- Domain: **%s**, %s\n", e.Doc, e.Domain, domainDocs[e.Domain])
	if len(e.Subject) > 0 {
		r.printf("- Subject: `%s`; listeners registered for one agent see only that agent's events.\n", subject(e))
	}
	if e.Default != "" {
		r.printf("- Default: `%s`, when no listener decides.\n", e.Default)
	}
	r.part("Payload", e.Payload)
	if e.Decision != nil {
		label := "Decision"
		if e.Domain == ir.Wrapper {
			label = "Result"
		}
		r.part(label, e.Decision)
	}
}

// part describes a type an event or session event carries, under a level-4 heading, or
// links to its description when an earlier section gave it.
func (r *renderer) part(label string, t *ir.Type) {
	if r.done[t] {
		r.printf("\n%s: %s, described above.\n", label, r.typeLink(t))
		return
	}
	r.heading(4, label+" "+code(t.Name), "type:"+t.Name)
	r.body(t, 4)
}

// body describes t under a heading of the given level: its doc, then its fields, values
// or variants.
func (r *renderer) body(t *ir.Type, level int) {
	r.done[t] = true
	r.printf("%s\n", t.Doc)
	switch t.Kind {
	case ir.Record:
		skip := ""
		if u, _ := r.spec.IsVariant(t); u != nil {
			skip = u.Discriminator
		}
		r.fields(t, skip)
	case ir.Enum:
		r.printf("\n| value | Go constant |\n| --- | --- |\n")
		for _, v := range t.Values {
			r.printf("| `%s` | `%s` |\n", v.Value, v.GoName)
		}
		if t.Default != "" {
			r.printf("\nDefault: `%s`.\n", t.Default)
		}
	case ir.Union:
		r.printf("\nA union discriminated by `%s`:\n", t.Discriminator)
		for _, v := range t.Variants {
			r.heading(level+1, fmt.Sprintf("Variant `%s`: %s", v.Kind, code(v.Type.Name)), "type:"+v.Type.Name)
			r.body(v.Type, level+1)
		}
	}
}

// fields writes the fields table of a record, leaving out the discriminator skip.
func (r *renderer) fields(t *ir.Type, skip string) {
	var rows []string
	for _, f := range t.Fields {
		if f.JSONName == skip && skip != "" {
			continue
		}
		presence := "regular"
		switch {
		case f.Runtime:
			presence = "runtime, never encoded"
		case f.Required:
			presence = "required"
		case f.Optional:
			presence = "optional"
		case f.Default != "":
			presence = "regular, default `" + f.Default + "`"
		}
		typ := r.ref(f.Type)
		if f.Nullable {
			typ += " or `null`"
		}
		rows = append(rows, fmt.Sprintf("| `%s` | %s | %s | %s |\n", f.JSONName, typ, presence, cell(f.Doc)))
	}
	switch {
	case len(rows) > 0:
		r.printf("\n| field | type | presence | description |\n| --- | --- | --- | --- |\n%s", strings.Join(rows, ""))
	case skip != "":
		r.printf("\nNo fields besides `%s`.\n", skip)
	default:
		r.printf("\nNo fields.\n")
	}
	for _, g := range t.Exclusive {
		r.printf("\nAt most one of `%s` may be set.\n", strings.Join(g, "`, `"))
	}
	if t.Open {
		r.printf("\nOpen: fields it does not declare are accepted and ignored.\n")
	}
}

// ref renders a type reference, linking named types.
func (r *renderer) ref(t *ir.TypeRef) string {
	switch t.Kind {
	case ir.Named:
		return r.typeLink(t.Type)
	case ir.List:
		return "list of " + r.ref(t.Elem)
	case ir.Map:
		return "map of " + r.ref(t.Elem)
	case ir.JSON:
		return "any JSON"
	case ir.Handle:
		return "`" + t.Name + "` handle"
	}
	return code(t.String())
}

// typeLink links a named type to its section; nil renders as a dash.
func (r *renderer) typeLink(t *ir.Type) string {
	if t == nil {
		return "—"
	}
	return r.link("type:"+t.Name, code(t.Name))
}

func (r *renderer) link(key, label string) string {
	return fmt.Sprintf("[%s](#%s)", label, r.anchors[key])
}

// heading writes a heading and records its anchor under key (the first one wins).
func (r *renderer) heading(level int, text, key string) {
	r.printf("\n%s %s\n\n", strings.Repeat("#", level), text)
	anchor := r.slug(text)
	if _, ok := r.found[key]; key != "" && !ok {
		r.found[key] = anchor
	}
}

// slug computes a heading's anchor as GitHub does: the lower-cased text without
// punctuation, spaces turned into hyphens, and "-N" added to the Nth repeat.
func (r *renderer) slug(text string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(text) {
		switch {
		case c == ' ':
			b.WriteByte('-')
		case c == '-' || c == '_' || unicode.IsLetter(c) || unicode.IsDigit(c):
			b.WriteRune(c)
		}
	}
	base := b.String()
	slug := base
	for _, seen := r.slugs[slug]; seen; _, seen = r.slugs[slug] {
		r.slugs[base]++
		slug = fmt.Sprintf("%s-%d", base, r.slugs[base])
	}
	r.slugs[slug] = 0
	return slug
}

// subject renders the event's subject as a JSON path through the payload, falling back
// to the Go field path when a step cannot be resolved.
func subject(e *ir.Event) string {
	var path []string
	t := e.Payload
	for _, goName := range e.Subject {
		var field *ir.Field
		for _, f := range fieldsOf(t) {
			if f.GoName == goName {
				field = f
			}
		}
		if field == nil {
			return strings.Join(e.Subject, ".")
		}
		path = append(path, field.JSONName)
		t = field.Type.Type
	}
	return strings.Join(path, ".")
}

// fieldsOf returns the fields of t, or none when t is nil (a non-named step of a path).
func fieldsOf(t *ir.Type) []*ir.Field {
	if t == nil {
		return nil
	}
	return t.Fields
}

// code renders s as inline code, or nothing when s is empty.
func code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + s + "`"
}

// cell makes a doc fit in one table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`)
}
