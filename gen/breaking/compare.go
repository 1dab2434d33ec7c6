package breaking

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/dshkit/dsh/gen"
	"github.com/dshkit/dsh/gen/ir"
)

// Finding is one breaking change, or (in Report.Notes) one compatible change worth a note.
type Finding struct {
	// File is the spec file, as the user names it (e.g. "spec/session.cue"): the file of
	// the new spec where the change is, or of the old one for something removed.
	File string `json:"file"`
	// Line is the line in File.
	Line int `json:"line"`
	// Rule is the rule's ID; empty for a note.
	Rule string `json:"rule,omitempty"`
	// Category is the rule's category; empty for a note.
	Category Category `json:"category,omitempty"`
	// Message says what changed and what it breaks.
	Message string `json:"message"`
}

// String renders the finding as file:line: RULE: message (a note: file:line: note: message).
func (f Finding) String() string {
	id := f.Rule
	if id == "" {
		id = "note"
	}
	return fmt.Sprintf("%s:%d: %s: %s", f.File, f.Line, id, f.Message)
}

// Report is the result of comparing two spec trees.
type Report struct {
	// OldVersion and NewVersion are the spec versions of the old and new canonical spec
	// ("" when the spec declares none).
	OldVersion string `json:"oldVersion"`
	NewVersion string `json:"newVersion"`
	// Findings are the breaking changes, sorted by file, line and rule.
	Findings []Finding `json:"findings"`
	// Notes are compatible changes worth a word (shown with --verbose), sorted likewise.
	Notes []Finding `json:"notes"`
}

// Compare compares the spec tree old with new. display is the spec directory as the user
// names it ("spec"); findings name files under it. Both trees should come from
// gen.LoadCompare in one load.Context so that CUE subsumption can compare their
// definitions; without their schemas only the IR is compared.
func Compare(old, new *gen.Tree, display string) Report {
	c := &comparer{display: display}
	r := Report{OldVersion: old.Main().Spec.Version, NewVersion: new.Main().Spec.Version}
	newUnits := map[string]gen.Unit{}
	for _, u := range new.Units {
		newUnits[path.Join(u.SpecDir, u.Spec.Package)] = u
	}
	for _, ou := range old.Units {
		nu, ok := newUnits[path.Join(ou.SpecDir, ou.Spec.Package)]
		if !ok {
			nu = gen.Unit{Spec: &ir.Spec{Package: ou.Spec.Package}, SpecDir: ou.SpecDir}
		}
		delete(newUnits, path.Join(ou.SpecDir, ou.Spec.Package))
		c.unit(ou, nu, old, new)
	}
	for _, nu := range newUnits {
		var at ir.Pos
		if len(nu.Spec.Types) > 0 {
			at = nu.Spec.Types[0].Pos
		}
		c.note(nu.SpecDir, at, "new package %s: compatible (nothing was built on it)", nu.Spec.Package)
	}
	c.bridges(old.Bridges, new.Bridges)
	sortFindings(c.findings)
	sortFindings(c.notes)
	r.Findings, r.Notes = c.findings, c.notes
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	if r.Notes == nil {
		r.Notes = []Finding{}
	}
	return r
}

func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		return a.Message < b.Message
	})
}

type comparer struct {
	display  string
	findings []Finding
	notes    []Finding
}

// file names a spec file of the subdirectory dir ("" for the canonical spec).
func (c *comparer) file(dir string, p ir.Pos) string {
	name := p.File
	if name == "" {
		name = "?"
	}
	return path.Join(c.display, dir, name)
}

func (c *comparer) report(rule, dir string, p ir.Pos, format string, args ...any) {
	r, ok := RuleByID(rule)
	if !ok {
		panic("breaking: unknown rule " + rule)
	}
	c.findings = append(c.findings, Finding{File: c.file(dir, p), Line: p.Line, Rule: r.ID, Category: r.Category, Message: fmt.Sprintf(format, args...)})
}

func (c *comparer) note(dir string, p ir.Pos, format string, args ...any) {
	c.notes = append(c.notes, Finding{File: c.file(dir, p), Line: p.Line, Message: fmt.Sprintf(format, args...)})
}

// unitCmp compares one package of the tree.
type unitCmp struct {
	*comparer
	dir      string
	old, new *ir.Spec
	// switched are the unions plugins switch over in the new spec: reachable from a
	// payload, a wrapper's result or a session event's data.
	switched map[string]bool
	// touched are the types with a specific WIRE finding (subsumption skips them).
	touched map[string]bool
}

func (c *comparer) unit(ou, nu gen.Unit, oldT, newT *gen.Tree) {
	u := &unitCmp{comparer: c, dir: ou.SpecDir, old: ou.Spec, new: nu.Spec, touched: map[string]bool{}}
	if ou.SpecDir == gen.ConformanceDir {
		u.scenarios()
		return
	}
	u.switched = switchedUnions(nu.Spec)
	for _, ot := range ou.Spec.Types {
		nt := nu.Spec.Lookup(ot.Name)
		if nt == nil {
			u.report(GoTypeRemoved, u.dir, ot.Pos, "type %s was removed", ot.Name)
			continue
		}
		u.typ(ot, nt)
	}
	for _, nt := range nu.Spec.Types {
		if ou.Spec.Lookup(nt.Name) == nil {
			u.note(u.dir, nt.Pos, "new type %s: compatible", nt.Name)
		}
	}
	u.events()
	u.sessionEvents()
	if os, ns := oldT.Schemas(ou), newT.Schemas(nu); os != nil && ns != nil {
		u.subsume(func(name string) error { return ns.Accepts(os, name) })
	}
}

// switchedUnions are the unions of s that plugins receive and so switch over: those
// reachable from an event's payload, a wrapper's result or a session event's data. The
// decision unions of the other authority kinds are only returned by plugins.
func switchedUnions(s *ir.Spec) map[string]bool {
	out := map[string]bool{}
	mark := func(t *ir.Type) {
		if t == nil {
			return
		}
		ir.Walk(t, func(t *ir.Type) {
			if t.Kind == ir.Union {
				out[t.Name] = true
			}
		})
	}
	for _, e := range s.Events {
		mark(e.Payload)
		if e.Domain == ir.Wrapper {
			mark(e.Decision)
		}
	}
	for _, se := range s.SessionEvents {
		mark(se.Data)
	}
	return out
}

func (u *unitCmp) typ(ot, nt *ir.Type) {
	if ot.Kind != nt.Kind {
		u.report(GoTypeKindChanged, u.dir, nt.Pos, "type %s was %s %s and is now %s %s", ot.Name, article(ot.Kind.String()), ot.Kind, article(nt.Kind.String()), nt.Kind)
		u.touched[ot.Name] = true
		return
	}
	if ot.Accessors && !nt.Accessors {
		u.report(GoAccessorsRemoved, u.dir, nt.Pos, "%s no longer asks for its accessors (@dsh(accessors)): its Get, With and Append methods are gone", ot.Name)
	}
	switch ot.Kind {
	case ir.Record:
		u.record(ot, nt)
	case ir.Enum:
		u.enum(ot, nt)
	case ir.Union:
		u.union(ot, nt)
	}
}

func article(s string) string {
	if s != "" && strings.ContainsRune("aeio", rune(s[0])) {
		return "an"
	}
	return "a"
}

func (u *unitCmp) wireReport(t *ir.Type, rule string, p ir.Pos, format string, args ...any) {
	if t.Runtime {
		return
	}
	u.touched[t.Name] = true
	u.report(rule, u.dir, p, format, args...)
}

func fieldBy(fs []*ir.Field, key func(*ir.Field) string, k string) *ir.Field {
	for _, f := range fs {
		if key(f) == k {
			return f
		}
	}
	return nil
}

func jsonName(f *ir.Field) string { return f.JSONName }
func goName(f *ir.Field) string   { return f.GoName }

func (u *unitCmp) record(ot, nt *ir.Type) {
	for _, of := range ot.Fields {
		nf := fieldBy(nt.Fields, jsonName, of.JSONName)
		wired := !of.Runtime
		if nf == nil && wired {
			if r := fieldBy(nt.Fields, goName, of.GoName); r != nil && !r.Runtime {
				u.wireReport(ot, WireFieldJSONRenamed, r.Pos, "%s.%s: JSON name %q is now %q", ot.Name, of.GoName, of.JSONName, r.JSONName)
			} else {
				u.wireReport(ot, WireFieldRemoved, nt.Pos, "%s: field %q was removed", ot.Name, of.JSONName)
			}
		}
		if ng := fieldBy(nt.Fields, goName, of.GoName); ng == nil {
			if nf != nil {
				u.report(GoFieldRemoved, u.dir, nf.Pos, "%s.%s was renamed %s.%s", ot.Name, of.GoName, nt.Name, nf.GoName)
			} else {
				u.report(GoFieldRemoved, u.dir, nt.Pos, "%s.%s was removed", ot.Name, of.GoName)
			}
		} else if ogt, ngt := goFieldType(of), goFieldType(ng); ogt != ngt {
			u.report(GoFieldTypeChanged, u.dir, ng.Pos, "%s.%s: Go type %s is now %s", ot.Name, of.GoName, ogt, ngt)
		}
		if nf == nil || !wired || nf.Runtime {
			continue
		}
		where := ot.Name + "." + of.JSONName
		if nf.Required && !of.Required {
			u.wireReport(ot, WireFieldMadeRequired, nf.Pos, "%s was %s and is now required", where, presence(of))
		}
		if !sameWire(of.Type, nf.Type) {
			u.wireReport(ot, WireFieldTypeChanged, nf.Pos, "%s: type %s is now %s", where, of.Type, nf.Type)
		}
		if of.Nullable && !nf.Nullable {
			u.wireReport(ot, WireFieldNullRemoved, nf.Pos, "%s no longer accepts null", where)
		}
		if od, nd := absentValue(of), absentValue(nf); !of.Required && !nf.Required && od != nd {
			u.wireReport(ot, WireDefaultChanged, nf.Pos, "%s: an absent value decoded as %s and now decodes as %s", where, od, nd)
		}
	}
	for _, nf := range nt.Fields {
		if fieldBy(ot.Fields, jsonName, nf.JSONName) != nil || fieldBy(ot.Fields, goName, nf.GoName) != nil {
			continue
		}
		if nf.Required && !nf.Runtime {
			u.wireReport(ot, WireRequiredFieldAdded, nf.Pos, "%s: new field %q is required", ot.Name, nf.JSONName)
		} else {
			u.note(u.dir, nf.Pos, "%s: new %s field %q: compatible (JSON without it still decodes)", ot.Name, presence(nf), nf.JSONName)
		}
	}
	if ot.Open && !nt.Open {
		u.wireReport(ot, WireRecordClosed, nt.Pos, "%s was open (unknown fields ignored) and is now closed", ot.Name)
	}
	for _, g := range nt.Exclusive {
		for i, a := range g {
			for _, b := range g[i+1:] {
				if !exclusive(ot.Exclusive, a, b) && fieldBy(ot.Fields, jsonName, a) != nil && fieldBy(ot.Fields, jsonName, b) != nil {
					u.wireReport(ot, WireExclusiveAdded, nt.Pos, "%s: %q and %q are now mutually exclusive", ot.Name, a, b)
				}
			}
		}
	}
}

func exclusive(groups [][]string, a, b string) bool {
	for _, g := range groups {
		if slices.Contains(g, a) && slices.Contains(g, b) {
			return true
		}
	}
	return false
}

func presence(f *ir.Field) string {
	switch {
	case f.Required:
		return "required"
	case f.Optional:
		return "optional"
	}
	return "regular"
}

// absentValue is what an absent optional or regular field decodes to: its default (the
// field's own, else its enum's), or nothing.
func absentValue(f *ir.Field) string {
	if f.Default != "" {
		return f.Default
	}
	if f.Type.Kind == ir.Named && f.Type.Type != nil && f.Type.Type.Kind == ir.Enum && f.Type.Type.Default != "" && !f.Optional {
		return fmt.Sprintf("%q", f.Type.Type.Default)
	}
	return "absent"
}

// goFieldType is the Go type of a field as gen/emit/gotypes declares it: a pointer for an
// optional or nullable scalar, duration or record.
func goFieldType(f *ir.Field) string {
	t := goType(f.Type)
	if (f.Optional || f.Nullable) && !f.Runtime {
		switch f.Type.Kind {
		case ir.String, ir.Int, ir.Float, ir.Bool, ir.Duration:
			return "*" + t
		case ir.Named:
			if f.Type.Type != nil && f.Type.Type.Kind == ir.Record {
				return "*" + t
			}
		}
	}
	return t
}

func goType(r *ir.TypeRef) string {
	switch r.Kind {
	case ir.String:
		return "string"
	case ir.Int:
		return "int"
	case ir.Float:
		return "float64"
	case ir.Bool:
		return "bool"
	case ir.JSON:
		return "json.RawMessage"
	case ir.Duration:
		return "time.Duration"
	case ir.List:
		return "[]" + goType(r.Elem)
	case ir.Map:
		return "map[string]" + goType(r.Elem)
	}
	return r.Name
}

// sameWire reports whether two type references have the same JSON: the same scalar (a
// duration is integer milliseconds), lists and maps of the same, or named types of the
// same name (whose own changes are reported on the type) or of the same shape.
func sameWire(a, b *ir.TypeRef) bool {
	switch {
	case a.Kind == ir.Named && b.Kind == ir.Named && a.Name == b.Name:
		return true
	case a.Kind == b.Kind && (a.Kind == ir.List || a.Kind == ir.Map):
		return sameWire(a.Elem, b.Elem)
	}
	return wireShape(a, 2) == wireShape(b, 2)
}

// wireShape renders the JSON shape of a type reference; named types are expanded depth
// levels deep, then stand for themselves by name.
func wireShape(r *ir.TypeRef, depth int) string {
	switch r.Kind {
	case ir.Int, ir.Duration:
		return "int"
	case ir.List:
		return "[" + wireShape(r.Elem, depth) + "]"
	case ir.Map:
		return "{" + wireShape(r.Elem, depth) + "}"
	case ir.Named:
		t := r.Type
		if t == nil || depth == 0 {
			return r.Name
		}
		return typeShape(t, depth-1)
	}
	return r.String()
}

func typeShape(t *ir.Type, depth int) string {
	var b strings.Builder
	b.WriteString(t.Kind.String())
	switch t.Kind {
	case ir.Record:
		for _, f := range t.Fields {
			if f.Runtime {
				continue
			}
			fmt.Fprintf(&b, " %s:%s:%s:%v", f.JSONName, presence(f), wireShape(f.Type, depth), f.Nullable)
		}
	case ir.Enum:
		for _, v := range t.Values {
			b.WriteString(" " + v.Value)
		}
	case ir.Union:
		b.WriteString(" " + t.Discriminator)
		for _, v := range t.Variants {
			b.WriteString(" " + v.Kind + "=" + typeShape(v.Type, depth))
		}
	}
	return b.String()
}

func (u *unitCmp) enum(ot, nt *ir.Type) {
	for _, ov := range ot.Values {
		if !slices.ContainsFunc(nt.Values, func(v *ir.EnumValue) bool { return v.Value == ov.Value }) {
			u.wireReport(ot, WireEnumValueRemoved, nt.Pos, "%s: value %q was removed", ot.Name, ov.Value)
			u.report(GoEnumConstRemoved, u.dir, nt.Pos, "%s: constant %s was removed", ot.Name, ov.GoName)
		}
	}
	for _, nv := range nt.Values {
		if !slices.ContainsFunc(ot.Values, func(v *ir.EnumValue) bool { return v.Value == nv.Value }) {
			u.note(u.dir, nt.Pos, "%s: new value %q: compatible (old JSON never holds it; Go switches over strings need no new case)", ot.Name, nv.Value)
		}
	}
	if ot.Default != nt.Default {
		u.wireReport(ot, WireDefaultChanged, nt.Pos, "%s: the default %q is now %q", ot.Name, ot.Default, nt.Default)
	}
}

func (u *unitCmp) union(ot, nt *ir.Type) {
	if ot.Discriminator != nt.Discriminator {
		u.wireReport(ot, WireDiscriminatorChanged, nt.Pos, "%s: discriminator field %q is now %q", ot.Name, ot.Discriminator, nt.Discriminator)
	}
	byKind := func(vs []*ir.Variant, k string) *ir.Variant {
		for _, v := range vs {
			if v.Kind == k {
				return v
			}
		}
		return nil
	}
	byType := func(vs []*ir.Variant, name string) *ir.Variant {
		for _, v := range vs {
			if v.Type.Name == name {
				return v
			}
		}
		return nil
	}
	for _, ov := range ot.Variants {
		if byKind(nt.Variants, ov.Kind) == nil {
			if nv := byType(nt.Variants, ov.Type.Name); nv != nil {
				u.touched[nv.Type.Name] = true
				u.wireReport(ot, WireDiscriminatorChanged, nv.Type.Pos, "%s: variant %s's %s %q is now %q", ot.Name, ov.Type.Name, nt.Discriminator, ov.Kind, nv.Kind)
			} else {
				u.wireReport(ot, WireVariantRemoved, nt.Pos, "%s: variant %q (%s) was removed", ot.Name, ov.Kind, ov.Type.Name)
			}
		}
		if byType(nt.Variants, ov.Type.Name) == nil {
			u.report(GoVariantRemoved, u.dir, nt.Pos, "%s: variant %s is no longer part of the union", ot.Name, ov.Type.Name)
		}
	}
	if kept := keptOrder(ot.Variants, nt.Variants); !slices.Equal(kept, keptOrder(nt.Variants, ot.Variants)) {
		u.report(GoVariantsReordered, u.dir, nt.Pos, "%s: variants %s are now in the order %s (Switch%s's callbacks follow it)",
			ot.Name, strings.Join(kept, ", "), strings.Join(keptOrder(nt.Variants, ot.Variants), ", "), nt.Name)
	}
	for _, nv := range nt.Variants {
		if byType(ot.Variants, nv.Type.Name) != nil {
			continue
		}
		if u.switched[nt.Name] {
			u.report(GoVariantAdded, u.dir, nv.Type.Pos, "%s: new variant %s in a union plugins switch over", nt.Name, nv.Type.Name)
		} else {
			u.note(u.dir, nv.Type.Pos, "%s: new variant %s: compatible (plugins only return this union; old JSON never holds it)", nt.Name, nv.Type.Name)
		}
	}
}

// keptOrder is the Go names of the variants of vs that other also has, in vs's order: the
// order of the Switch callbacks both versions share.
func keptOrder(vs, other []*ir.Variant) []string {
	var names []string
	for _, v := range vs {
		if slices.ContainsFunc(other, func(o *ir.Variant) bool { return o.Type.Name == v.Type.Name }) {
			names = append(names, v.Type.Name)
		}
	}
	return names
}

func (u *unitCmp) events() {
	for _, oe := range u.old.Events {
		ne := findEvent(u.new.Events, oe.Name)
		if ne == nil {
			u.report(GoEventRemoved, u.dir, oe.Pos, "extension point %q (On%s) was removed", oe.Name, oe.GoName)
			continue
		}
		if oe.Domain != ne.Domain {
			u.report(GoAuthorityChanged, u.dir, ne.Pos, "%q: authority kind %s is now %s", oe.Name, oe.Domain, ne.Domain)
		}
		if oe.GoName != ne.GoName {
			u.report(GoListenerChanged, u.dir, ne.Pos, "%q: Go stem %s is now %s (On%s, %sListener)", oe.Name, oe.GoName, ne.GoName, ne.GoName, ne.GoName)
		}
		if name(oe.Payload) != name(ne.Payload) {
			u.report(GoListenerChanged, u.dir, ne.Pos, "%q: payload %s is now %s", oe.Name, name(oe.Payload), name(ne.Payload))
		}
		if oe.Default != ne.Default {
			u.report(HookPointDefaultChanged, u.dir, ne.Pos, "%q: when no listener decides it resolves to %q, was %q", oe.Name, ne.Default, oe.Default)
		}
		if name(oe.Decision) != name(ne.Decision) {
			u.report(GoListenerChanged, u.dir, ne.Pos, "%q: decision %s is now %s", oe.Name, name(oe.Decision), name(ne.Decision))
		}
	}
	for _, ne := range u.new.Events {
		if findEvent(u.old.Events, ne.Name) == nil {
			u.note(u.dir, ne.Pos, "new extension point %q: compatible (nothing listens to it yet)", ne.Name)
		}
	}
}

func name(t *ir.Type) string {
	if t == nil {
		return "(none)"
	}
	return t.Name
}

func findEvent(es []*ir.Event, n string) *ir.Event {
	for _, e := range es {
		if e.Name == n {
			return e
		}
	}
	return nil
}

func (u *unitCmp) sessionEvents() {
	find := func(ses []*ir.SessionEvent, typ string) *ir.SessionEvent {
		for _, se := range ses {
			if se.Type == typ {
				return se
			}
		}
		return nil
	}
	for _, os := range u.old.SessionEvents {
		ns := find(u.new.SessionEvents, os.Type)
		if ns == nil {
			u.touched[os.Data.Name] = true
			u.report(WireSessionEventRemoved, u.dir, os.Pos, "session event %q was removed: logs holding it no longer decode", os.Type)
			continue
		}
		if os.GoName != ns.GoName {
			u.report(GoSessionEventRenamed, u.dir, ns.Pos, "session event %q: Go stem %s is now %s (%sType)", os.Type, os.GoName, ns.GoName, ns.GoName)
		}
		if os.Data.Name != ns.Data.Name && typeShape(os.Data, 2) != typeShape(ns.Data, 2) {
			u.touched[os.Data.Name] = true
			u.report(WireSessionEventData, u.dir, ns.Pos, "session event %q: data %s is now %s, of another shape", os.Type, os.Data.Name, ns.Data.Name)
		}
	}
	for _, ns := range u.new.SessionEvents {
		if find(u.old.SessionEvents, ns.Type) == nil {
			u.note(u.dir, ns.Pos, "new session event %q: compatible (old logs never hold it; a reader that predates it opens the log, since opening checks only envelopes, and replay skips types it does not fold)", ns.Type)
		}
	}
}

// subsume runs CUE subsumption over every encoded type present in both specs and
// reports the types whose new definition rejects a value the old one accepted, when no
// more specific rule explained it and the cause is local to the type (every type it
// refers to still accepts its old values, so one change gives one finding).
func (u *unitCmp) subsume(accepts func(name string) error) {
	memo := map[string]error{}
	acc := func(n string) error {
		if err, ok := memo[n]; ok {
			return err
		}
		err := accepts(n)
		memo[n] = err
		return err
	}
	for _, ot := range u.old.Types {
		nt := u.new.Lookup(ot.Name)
		if nt == nil || ot.Runtime || u.touched[ot.Name] || ot.Kind != nt.Kind {
			continue
		}
		err := acc(ot.Name)
		if err == nil {
			continue
		}
		local := true
		for _, ref := range refs(nt) {
			if u.touched[ref] || acc(ref) != nil || u.old.Lookup(ref) == nil {
				local = false
				break
			}
		}
		if local {
			u.report(WireSchemaNarrowed, u.dir, nt.Pos, "%s no longer accepts every value it accepted: %v", ot.Name, err)
		}
	}
}

// refs are the names of the types t refers to directly.
func refs(t *ir.Type) []string {
	var out []string
	var ref func(r *ir.TypeRef)
	ref = func(r *ir.TypeRef) {
		switch r.Kind {
		case ir.Named:
			out = append(out, r.Name)
		case ir.List, ir.Map:
			ref(r.Elem)
		}
	}
	for _, f := range t.Fields {
		ref(f.Type)
	}
	for _, v := range t.Variants {
		out = append(out, v.Type.Name)
	}
	return out
}

func (u *unitCmp) scenarios() {
	for _, ns := range u.new.Scenarios {
		if !slices.ContainsFunc(u.old.Scenarios, func(s *ir.Scenario) bool { return s.ID == ns.ID }) {
			u.note(u.dir, ns.Pos, "new conformance scenario %q: compatible", ns.ID)
		}
	}
	for _, os := range u.old.Scenarios {
		if !slices.ContainsFunc(u.new.Scenarios, func(s *ir.Scenario) bool { return s.ID == os.ID }) {
			u.note(u.dir, os.Pos, "conformance scenario %q was removed: not a break of any consumer, but the behaviour it pinned is no longer checked", os.ID)
		}
	}
}
