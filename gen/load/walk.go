package load

import (
	"fmt"
	"regexp"
	"strings"

	"cuelang.org/go/cue"

	"github.com/dshkit/dsh/gen/ir"
)

// walker builds the IR from an evaluated spec, collecting problems instead of stopping at
// the first one, so that a reviewer sees everything wrong at once.
type walker struct {
	root       cue.Value
	importPath string
	spec       *ir.Spec
	byName     map[string]*ir.Type
	kinds      map[*ir.Type]string // the concrete `kind` of each record that has one
	problems   []Problem
}

func (w *walker) errorf(pos ir.Pos, format string, args ...any) {
	w.problems = append(w.problems, Problem{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

func (w *walker) err(display string) error {
	sortProblems(w.problems)
	return &Error{Dir: display, Problems: w.problems}
}

// knownHandles are the runtime-only handle types the generator can declare.
var knownHandles = map[string]bool{"Agent": true, "Token": true}

var goIdent = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)

func (w *walker) walk() {
	defs := w.definitions()
	// First pass: create every type so references can be resolved in any order.
	for _, d := range defs {
		w.declare(d.name, d.v)
	}
	// Second pass: fill records; third: resolve unions, whose variants are records.
	for _, d := range defs {
		if t := w.byName[d.name]; t != nil && t.Kind == ir.Record {
			w.record(t, d.v)
		}
	}
	w.keyOrder()
	for _, d := range defs {
		if t := w.byName[d.name]; t != nil && t.Kind == ir.Union {
			w.union(t, d.v)
		}
	}
	if len(w.problems) > 0 {
		return
	}
	if err := w.spec.Link(); err != nil {
		w.errorf(ir.Pos{}, "%v", err)
		return
	}
	w.events()
	w.sessionEvents()
	w.scenarios()
	w.version()
	w.checkNames()
	w.spec.Sort()
}

type def struct {
	name string
	v    cue.Value
}

// definitions lists the top-level definitions of the spec, minus those of meta.cue.
func (w *walker) definitions() []def {
	var out []def
	it, err := w.root.Fields(cue.Definitions(true))
	if err != nil {
		w.errorf(position(w.root.Pos()), "%v", err)
		return nil
	}
	for it.Next() {
		sel := it.Selector()
		if !sel.IsDefinition() {
			continue
		}
		v := it.Value()
		if position(v.Pos()).File == metaFile {
			continue
		}
		out = append(out, def{name: strings.TrimPrefix(sel.String(), "#"), v: v})
	}
	return out
}

// doc returns the doc comment of v, trimmed.
func doc(v cue.Value) string {
	var parts []string
	for _, cg := range v.Doc() {
		if t := strings.TrimSpace(cg.Text()); t != "" {
			parts = append(parts, t)
		}
	}
	// A definition's doc starts with its CUE name ("#PreToolDeny refuses ..."); Go doc
	// comments start with the Go name.
	return strings.TrimPrefix(strings.Join(parts, "\n"), "#")
}

// declare creates the IR type of one top-level definition, deciding its shape.
func (w *walker) declare(name string, v cue.Value) {
	pos := position(v.Pos())
	t := &ir.Type{Name: name, Doc: doc(v), File: pos.File, Pos: pos}
	if !goIdent.MatchString(name) {
		w.errorf(pos, "#%s: definition names must be exported Go identifiers (start with an upper-case letter, letters and digits only)", name)
		return
	}
	if t.Doc == "" {
		w.errorf(pos, "#%s: missing doc comment", name)
	}
	op, args := v.Expr()
	switch {
	case op == cue.OrOp && v.IncompleteKind() == cue.StringKind:
		t.Kind = ir.Enum
		for _, a := range args {
			s, err := a.String()
			if err != nil || !a.IsConcrete() {
				w.errorf(pos, "#%s: an enum is a disjunction of string literals only", name)
				return
			}
			t.Values = append(t.Values, &ir.EnumValue{Value: s, GoName: name + ir.GoName(s)})
		}
		if dv, ok := v.Default(); ok {
			if s, err := dv.String(); err == nil && dv.IsConcrete() {
				t.Default = s
			}
		}
	case op == cue.OrOp, isAlias(v):
		// A disjunction, or a reference to a single variant (a one-variant union).
		t.Kind = ir.Union
		t.Discriminator = "kind"
		if a := v.Attribute("dsh"); a.Err() == nil {
			if on, err := a.Flag(0, "accessors"); err == nil && on && a.NumArgs() == 1 {
				t.Accessors = true
			} else {
				w.errorf(pos, "#%s: unknown attribute @dsh(%s) (a union takes @dsh(accessors))", name, a.Contents())
			}
		}
	case v.IncompleteKind() == cue.StructKind:
		t.Kind = ir.Record
	default:
		w.errorf(pos, "#%s: unsupported definition (kind %v): declare a record {...}, a union of records or an enum of strings", name, v.IncompleteKind())
		return
	}
	w.byName[name] = t
	w.spec.Types = append(w.spec.Types, t)
}

// record fills the fields of a record.
func (w *walker) record(t *ir.Type, v cue.Value) {
	for _, a := range v.Attributes(cue.DeclAttr) {
		if a.Name() != "dsh" {
			continue
		}
		if ex, ok, err := a.Lookup(0, "exclusive"); err == nil && ok {
			t.Exclusive = append(t.Exclusive, strings.Split(ex, "|"))
		} else if on, err := a.Flag(0, "accessors"); err == nil && on && a.NumArgs() == 1 {
			t.Accessors = true
		} else {
			w.errorf(t.Pos, "#%s: unknown declaration attribute @dsh(%s)", t.Name, a.Contents())
		}
	}
	t.Open = v.Allows(cue.Str("dsh-open-probe"))
	it, err := v.Fields(cue.Optional(true))
	if err != nil {
		w.errorf(t.Pos, "#%s: %v", t.Name, err)
		return
	}
	seen := map[string]*ir.Field{}
	for it.Next() {
		sel := it.Selector()
		fv := it.Value()
		f := &ir.Field{JSONName: sel.Unquoted(), Doc: doc(fv), Pos: position(fv.Pos())}
		switch sel.ConstraintType() {
		case cue.RequiredConstraint:
			f.Required = true
		case cue.OptionalConstraint:
			f.Optional = true
		}
		f.GoName = ir.GoName(f.JSONName)
		if a := fv.Attribute("go"); a.Err() == nil {
			if n, err := a.String(0); err == nil && n != "" {
				f.GoName = n
			}
		}
		if f.Doc == "" {
			w.errorf(f.Pos, "#%s.%s: missing doc comment", t.Name, f.JSONName)
		}
		if prev := seen[f.GoName]; prev != nil {
			w.errorf(f.Pos, "#%s.%s: Go name %s is also the Go name of field %q (%s); rename one or set @go(Name)", t.Name, f.JSONName, f.GoName, prev.JSONName, prev.Pos)
		}
		seen[f.GoName] = f
		if a := fv.Attribute("dsh"); a.Err() == nil {
			h, ok, err := a.Lookup(0, "handle")
			if err != nil || !ok {
				w.errorf(f.Pos, "#%s.%s: unknown attribute @dsh(%s)", t.Name, f.JSONName, a.Contents())
				continue
			}
			if !knownHandles[h] {
				w.errorf(f.Pos, "#%s.%s: unknown handle %q (known: Agent, Token)", t.Name, f.JSONName, h)
				continue
			}
			f.Type = &ir.TypeRef{Kind: ir.Handle, Name: h}
			f.Runtime = true
			t.Fields = append(t.Fields, f)
			continue
		}
		var ref *ir.TypeRef
		if k := fv.IncompleteKind(); k&cue.NullKind != 0 && k != cue.NullKind && k != cue.TopKind {
			f.Nullable = true
			ref = w.nonNull(t, f, fv)
		} else {
			ref = w.typeRef(t, f, fv)
		}
		if ref == nil {
			continue
		}
		if f.JSONName == "kind" && fv.IsConcrete() {
			if s, err := fv.String(); err == nil {
				w.kinds[t] = s
			}
		}
		f.Type = ref
		if !f.Optional && !f.Required && ref.Kind != ir.List && ref.Kind != ir.Map {
			if dv, ok := fv.Default(); ok && dv.IsConcrete() && !fv.IsConcrete() {
				b, err := dv.MarshalJSON()
				if err == nil {
					f.Default = string(b)
				}
			}
		}
		t.Fields = append(t.Fields, f)
	}
	for _, group := range t.Exclusive {
		for _, n := range group {
			f := seen[ir.GoName(n)]
			if f == nil || f.JSONName != n {
				w.errorf(t.Pos, "#%s: @dsh(exclusive=...) names %q, which is not a field", t.Name, n)
			} else if !f.Optional {
				w.errorf(f.Pos, "#%s.%s: a field in an exclusive group must be optional (?)", t.Name, n)
			}
		}
	}
}

// isAlias reports whether v is nothing but a reference to another definition (`#U: #V`).
func isAlias(v cue.Value) bool {
	if op, _ := v.Expr(); op == cue.AndOp {
		return false
	}
	_, p := v.ReferencePath()
	return len(p.Selectors()) == 1 && p.Selectors()[0].IsDefinition()
}

// refName returns the name of the definition v refers to, or "". A value unified with a
// schema has several conjuncts and no direct reference path; look through them.
func refName(v cue.Value) string {
	if _, p := v.ReferencePath(); len(p.Selectors()) > 0 {
		sels := p.Selectors()
		if s := sels[len(sels)-1]; s.IsDefinition() && len(sels) == 1 {
			return strings.TrimPrefix(s.String(), "#")
		}
		return ""
	}
	if op, args := v.Expr(); op == cue.AndOp {
		for _, a := range args {
			if n := refName(a); n != "" {
				return n
			}
		}
	}
	return ""
}

// typeRef maps the type of a field (or a list/map element) to the IR.
func (w *walker) typeRef(t *ir.Type, f *ir.Field, v cue.Value) *ir.TypeRef {
	where := "#" + t.Name + "." + f.JSONName
	if n := refName(v); n != "" {
		if w.byName[n] == nil {
			w.errorf(f.Pos, "%s: refers to #%s, which is not a declared record, enum or union", where, n)
			return nil
		}
		return &ir.TypeRef{Kind: ir.Named, Name: n}
	}
	switch k := v.IncompleteKind(); k {
	case cue.StringKind:
		op, args := v.Expr()
		if v.IsConcrete() || op == cue.OrOp {
			return w.inlineEnum(t, f, v, op, args)
		}
		return &ir.TypeRef{Kind: ir.String}
	case cue.IntKind:
		return &ir.TypeRef{Kind: ir.Int}
	case cue.FloatKind, cue.NumberKind:
		return &ir.TypeRef{Kind: ir.Float}
	case cue.BoolKind:
		return &ir.TypeRef{Kind: ir.Bool}
	case cue.TopKind:
		return &ir.TypeRef{Kind: ir.JSON}
	case cue.ListKind:
		el := v.LookupPath(cue.MakePath(cue.AnyIndex))
		if !el.Exists() || el.Err() != nil {
			w.errorf(f.Pos, "%s: a list must be open and typed: [...T]", where)
			return nil
		}
		e := w.typeRef(t, f, el)
		if e == nil {
			return nil
		}
		return &ir.TypeRef{Kind: ir.List, Elem: e}
	case cue.StructKind:
		el := v.LookupPath(cue.MakePath(cue.AnyString))
		if el.Exists() && el.Err() == nil {
			if it, err := v.Fields(cue.Optional(true)); err == nil && !it.Next() {
				e := w.typeRef(t, f, el)
				if e == nil {
					return nil
				}
				return &ir.TypeRef{Kind: ir.Map, Elem: e}
			}
		}
		w.errorf(f.Pos, "%s: inline structs are not supported; declare a named definition and refer to it", where)
		return nil
	default:
		w.errorf(f.Pos, "%s: unsupported type %v; use one of string, int, number, bool, _, [...T], {[string]: T} or a definition (a disjunction of kinds is not representable)", where, k)
		return nil
	}
}

// nonNull maps the type of a nullable field (`T | null`) without its null alternative.
func (w *walker) nonNull(t *ir.Type, f *ir.Field, v cue.Value) *ir.TypeRef {
	op, args := v.Expr()
	var rest []cue.Value
	for _, a := range args {
		if a.IncompleteKind() != cue.NullKind {
			rest = append(rest, a)
		}
	}
	switch {
	case op != cue.OrOp || len(rest) == 0:
		w.errorf(f.Pos, "#%s.%s: unsupported nullable type; write `T | null`", t.Name, f.JSONName)
		return nil
	case len(rest) == 1:
		return w.typeRef(t, f, rest[0])
	}
	for _, a := range rest {
		if a.IncompleteKind() != cue.StringKind || !a.IsConcrete() {
			w.errorf(f.Pos, "#%s.%s: a nullable disjunction must be `T | null` or string literals `| null`", t.Name, f.JSONName)
			return nil
		}
	}
	return w.inlineEnum(t, f, v, cue.OrOp, rest)
}

// inlineEnum turns an inline string literal or literal disjunction into a named enum
// <Record><Field>, or the discriminator of a variant into a plain string.
func (w *walker) inlineEnum(t *ir.Type, f *ir.Field, v cue.Value, op cue.Op, args []cue.Value) *ir.TypeRef {
	if f.JSONName == "kind" {
		return &ir.TypeRef{Kind: ir.String}
	}
	name := t.Name + f.GoName
	e := &ir.Type{Name: name, Doc: fmt.Sprintf("%s is the set of values of %s.%s: %s", name, t.Name, f.GoName, firstLine(f.Doc)), File: t.File, Pos: f.Pos, Kind: ir.Enum}
	if op != cue.OrOp {
		args = []cue.Value{v}
	}
	for _, a := range args {
		s, err := a.String()
		if err != nil || !a.IsConcrete() {
			w.errorf(f.Pos, "#%s.%s: an inline enum is a disjunction of string literals only", t.Name, f.JSONName)
			return nil
		}
		e.Values = append(e.Values, &ir.EnumValue{Value: s, GoName: name + ir.GoName(s)})
	}
	if dv, ok := v.Default(); ok && !v.IsConcrete() {
		if s, err := dv.String(); err == nil {
			e.Default = s
		}
	}
	if prev := w.byName[name]; prev != nil {
		w.errorf(f.Pos, "#%s.%s: the inline enum's Go name %s is already declared at %s", t.Name, f.JSONName, name, prev.Pos)
		return nil
	}
	w.byName[name] = e
	w.spec.Types = append(w.spec.Types, e)
	return &ir.TypeRef{Kind: ir.Named, Name: name}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// union resolves the variants of a union and checks that it is tagged.
func (w *walker) union(t *ir.Type, v cue.Value) {
	op, args := v.Expr()
	if op != cue.OrOp {
		args = []cue.Value{v}
	}
	kinds := map[string]string{}
	for _, a := range args {
		n := refName(a)
		vt := w.byName[n]
		apos := position(a.Pos())
		if apos.File == "" {
			apos = t.Pos
		}
		if n == "" || vt == nil || vt.Kind != ir.Record {
			w.errorf(apos, "#%s: untagged disjunction: every alternative of a union must be a named record definition with a required `kind!: \"...\"` discriminator", t.Name)
			continue
		}
		var kind *ir.Field
		for _, f := range vt.Fields {
			if f.JSONName == "kind" {
				kind = f
			}
		}
		s, ok := w.kinds[vt]
		if kind == nil || !ok {
			w.errorf(vt.Pos, "#%s: union variant of #%s has no concrete discriminator; add `kind!: \"<value>\"`", n, t.Name)
			continue
		}
		if !kind.Required {
			w.errorf(kind.Pos, "#%s.kind: write the discriminator as `kind!: %q` (required), so that CUE and the JSON Schema require it", n, s)
		}
		if prev, dup := kinds[s]; dup {
			w.errorf(vt.Pos, "#%s: kind %q is also the kind of #%s in union #%s", n, s, prev, t.Name)
		}
		kinds[s] = n
		for _, u := range w.spec.Types {
			for _, ov := range u.Variants {
				if ov.Type == vt {
					w.errorf(vt.Pos, "#%s is a variant of both #%s and #%s; a record can belong to one union only", n, u.Name, t.Name)
				}
			}
		}
		t.Variants = append(t.Variants, &ir.Variant{Kind: s, Type: vt})
	}
}
