// Package dispatch emits the listener surface of the generated package: per spec file, the
// listener types, registration methods and runners of its events (<spec>_events.go) and the
// type constants of its session events (<spec>_session.go); once, the registry
// (meta_registry.go) and the session-event decoder (meta_session.go). A spec without events
// and session events (a wire package) gets none of these.
//
// The dispatch engine itself (listener lists, registrars, the runner of each authority
// kind) is handwritten Go in github.com/dshkit/dsh/codec/dispatch; the generated code holds
// only what varies per event (the Registry's lists, the Events table, registration methods,
// runners that call the engine, scope functions and the check of each decision union) and
// aliases of the engine's types. It refers by name to the types emitted by gen/emit/gotypes
// (payload records, decision unions with Kind methods) and, in meta_session.go, to its
// ErrUnknownKind sentinel. It imports only the standard library, codec/dispatch and, in
// meta_session.go, github.com/dshkit/dsh/codec (whose Unmarshal decodes an event's data).
package dispatch

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/dshkit/dsh/gen/emit"
	"github.com/dshkit/dsh/gen/emit/gofile"
	"github.com/dshkit/dsh/gen/ir"
)

// MetaFile is the spec file named in the header of the shared meta_* files.
const MetaFile = "meta.cue"

// Emit generates the dispatch files of s under outDir (a slash-separated path relative to
// the repository root, e.g. "generated/dsh"), sorted by path. A spec with neither events nor
// session events (a wire package, which describes wire formats only) has no listener
// surface: Emit returns no files for it, not even the registry.
func Emit(s *ir.Spec, outDir string) ([]emit.File, error) {
	if len(s.Events) == 0 && len(s.SessionEvents) == 0 {
		return nil, nil
	}
	evs, err := plan(s)
	if err != nil {
		return nil, err
	}
	if err := checkNames(s, evs); err != nil {
		return nil, err
	}
	outDir = strings.TrimSuffix(strings.ReplaceAll(outDir, "\\", "/"), "/")
	var files []emit.File
	add := func(name string, f *jen.File) error {
		out, err := gofile.Render(name, f)
		if err != nil {
			return err
		}
		files = append(files, emit.File{Path: path.Join(outDir, name), Data: out})
		return nil
	}

	// Per spec file: events and session events.
	byFile := map[string][]*event{}
	for _, e := range evs {
		byFile[e.ir.File] = append(byFile[e.ir.File], e)
	}
	sessByFile := map[string][]*ir.SessionEvent{}
	for _, se := range s.SessionEvents {
		sessByFile[se.File] = append(sessByFile[se.File], se)
	}
	bases := map[string]string{}
	for _, f := range sortedKeys(keys(byFile), keys(sessByFile)) {
		base := strings.TrimSuffix(path.Base(f), ".cue")
		if other, ok := bases[base]; ok {
			return nil, fmt.Errorf("dispatch: spec files %s and %s give the same Go file names", other, f)
		}
		bases[base] = f
		if list := byFile[f]; len(list) > 0 {
			if err := add(base+"_events.go", eventsFile(s, f, list)); err != nil {
				return nil, err
			}
		}
		if list := sessByFile[f]; len(list) > 0 {
			if err := add(base+"_session.go", sessionFile(s, f, list)); err != nil {
				return nil, err
			}
		}
	}

	// Shared files.
	if err := add("meta_registry.go", registryFile(s, evs)); err != nil {
		return nil, err
	}
	if err := add("meta_session.go", metaSessionFile(s)); err != nil {
		return nil, err
	}
	emit.Sort(files)
	return files, nil
}

// union is a decision or result union, for the check the runners make of what a listener
// returned.
type union struct {
	Name     string
	Variants []string // the variants' Go type names
	Plain    []string // the variants whose records reach no union: a value is checked as is
	Deep     []string // the variants whose records reach a union: a value is normalized
}

// decisionUnions lists the unions the events decide with, each once, sorted by name.
func decisionUnions(evs []*event) []union {
	seen := map[string]bool{}
	var out []union
	for _, e := range evs {
		d := e.ir.Decision
		if d == nil || d.Kind != ir.Union || seen[d.Name] {
			continue
		}
		seen[d.Name] = true
		u := union{Name: d.Name}
		for _, v := range d.Variants {
			u.Variants = append(u.Variants, v.Type.Name)
			if reachesUnion(v.Type, map[*ir.Type]bool{}) {
				u.Deep = append(u.Deep, v.Type.Name)
			} else {
				u.Plain = append(u.Plain, v.Type.Name)
			}
		}
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// deepVariants lists, sorted and each once, the variants of unions whose records reach a
// union.
func deepVariants(us []union) []string {
	seen := map[string]bool{}
	var out []string
	for _, u := range us {
		for _, v := range u.Deep {
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	sort.Strings(out)
	return out
}

// reachesUnion reports whether a value of record t can hold a union value: a field of
// union type, or of a record, list or map that reaches one.
func reachesUnion(t *ir.Type, seen map[*ir.Type]bool) bool {
	if t == nil || seen[t] {
		return false
	}
	seen[t] = true
	var ref func(r *ir.TypeRef) bool
	ref = func(r *ir.TypeRef) bool {
		if r == nil {
			return false
		}
		if r.Type != nil {
			if r.Type.Kind == ir.Union {
				return true
			}
			if reachesUnion(r.Type, seen) {
				return true
			}
		}
		return ref(r.Elem)
	}
	for _, f := range t.Fields {
		if ref(f.Type) {
			return true
		}
	}
	return false
}

// check is the check a runner makes of what e's listeners return.
func (e *event) check() *jen.Statement {
	if e.ir.Decision.Kind == ir.Union {
		return jen.Id("evCheck" + e.Decision)
	}
	return eng("CheckRecord").Types(jen.Id(e.Decision))
}

// defaultDoc is e's default decision as the docs name it, e.g. PreToolAllow{}.
func (e *event) defaultDoc() string { return e.defaultType + "{}" }

// defaultValue is e's default decision as a runner passes it, e.g. PreToolDecision(PreToolAllow{}).
func (e *event) defaultValue() *jen.Statement {
	return jen.Id(e.Decision).Call(jen.Id(e.defaultType).Values())
}

// badResult says what a wrapper of e must not return.
func (e *event) badResult() string {
	if e.ir.Decision.Kind == ir.Union {
		return "a nil result, one of a type that is not a variant of " + e.Decision + ","
	}
	return "a nil result"
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// sortedKeys returns the union of the key lists, sorted, without duplicates.
func sortedKeys(lists ...[]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lists {
		for _, k := range l {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// event is what the emitted code needs to know about one event.
type event struct {
	ir *ir.Event

	Name     string // event name
	Stem     string // Go stem
	Doc      string
	Payload  string // payload Go type name
	Decision string // decision Go type name, "" for notifications and observers
	Default  string // default variant kind (waterfall, guard, fold)

	DomainConst string // DomainWaterfall, ...
	Field       string // the Registry field holding the listener list
	Listener    string // <S>Listener
	Next        string // <S>Next, "" when the domain has none
	Register    string // OnS, S (guards) or WrapS
	Runner      string // RunS (waterfall, guard, wrapper, fold), NotifyS or EmitS
	Const       string // <S>EventName

	defaultType string        // the default variant's Go type, e.g. PreToolAllow
	denyKind    string        // the kind of a guard's deny variant
	subject     []subjectStep // the path from the payload to its subject id; nil: no subject
}

// subjectStep is one field on the path from a payload to its subject id.
type subjectStep struct {
	field    string // the field's Go name
	optional bool   // the field is a pointer, nil when absent
}

// plan checks every event against what its domain needs and resolves its Go names.
func plan(s *ir.Spec) ([]*event, error) {
	if s.Package == "" {
		return nil, fmt.Errorf("dispatch: the spec has no Go package name")
	}
	evs := make([]*event, 0, len(s.Events))
	for _, e := range s.Events {
		x, err := planEvent(e)
		if err != nil {
			return nil, fmt.Errorf("%s: event %q: %v", e.Pos, e.Name, err)
		}
		evs = append(evs, x)
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Name < evs[j].Name })
	for _, se := range s.SessionEvents {
		if se.Data == nil || se.Data.Kind != ir.Record {
			return nil, fmt.Errorf("%s: session event %q: data must be a record", se.Pos, se.Type)
		}
		if se.GoName == "" {
			return nil, fmt.Errorf("%s: session event %q has no Go stem", se.Pos, se.Type)
		}
	}
	return evs, nil
}

func planEvent(e *ir.Event) (*event, error) {
	if e.GoName == "" {
		return nil, fmt.Errorf("no Go stem")
	}
	if e.Payload == nil || e.Payload.Kind != ir.Record {
		return nil, fmt.Errorf("the payload must be a record")
	}
	x := &event{
		ir:       e,
		Name:     e.Name,
		Stem:     e.GoName,
		Doc:      strings.TrimSpace(e.Doc),
		Payload:  e.Payload.Name,
		Field:    "on" + e.GoName,
		Listener: e.GoName + "Listener",
		Const:    e.GoName + "EventName",
	}
	union := func() error {
		if e.Decision == nil || e.Decision.Kind != ir.Union {
			return fmt.Errorf("a %s needs a decision union", e.Domain)
		}
		return nil
	}
	variant := func(kind, what string) (*ir.Variant, error) {
		for _, v := range e.Decision.Variants {
			if v.Kind == kind {
				return v, nil
			}
		}
		return nil, fmt.Errorf("%s %q is not a variant of %s", what, kind, e.Decision.Name)
	}
	switch e.Domain {
	case ir.Waterfall:
		if err := union(); err != nil {
			return nil, err
		}
		if e.Default == "" {
			return nil, fmt.Errorf("a waterfall needs a default variant")
		}
		v, err := variant(e.Default, "the default")
		if err != nil {
			return nil, err
		}
		x.defaultType = v.Type.Name
		x.Default = e.Default
		x.DomainConst = "DomainWaterfall"
		x.Next = e.GoName + "Next"
		x.Register = "On" + e.GoName
		x.Runner = "Run" + e.GoName
	case ir.Guard:
		if err := union(); err != nil {
			return nil, err
		}
		def := e.Default
		if def == "" {
			def = "abstain"
		}
		v, err := variant(def, "the default")
		if err != nil {
			return nil, err
		}
		if _, err := variant("deny", "the verdict"); err != nil {
			return nil, err
		}
		x.defaultType = v.Type.Name
		x.Default = def
		x.denyKind = "deny"
		x.DomainConst = "DomainGuard"
		x.Register = e.GoName
		x.Runner = "Run" + e.GoName
	case ir.Wrapper:
		if e.Decision == nil || (e.Decision.Kind != ir.Union && e.Decision.Kind != ir.Record) {
			return nil, fmt.Errorf("a wrapper needs a result union or record")
		}
		x.DomainConst = "DomainWrapper"
		x.Next = e.GoName + "Next"
		x.Register = "Wrap" + e.GoName
		x.Runner = "Run" + e.GoName
	case ir.Vote:
		if err := union(); err != nil {
			return nil, err
		}
		if e.Default == "" {
			return nil, fmt.Errorf("a vote needs a default variant")
		}
		v, err := variant(e.Default, "the default")
		if err != nil {
			return nil, err
		}
		x.defaultType = v.Type.Name
		x.Default = e.Default
		x.DomainConst = "DomainVote"
		x.Register = "On" + e.GoName
		x.Runner = "Run" + e.GoName
	case ir.Fold:
		if err := union(); err != nil {
			return nil, err
		}
		if e.Default == "" {
			return nil, fmt.Errorf("a fold needs a default variant")
		}
		v, err := variant(e.Default, "the default")
		if err != nil {
			return nil, err
		}
		x.defaultType = v.Type.Name
		x.Default = e.Default
		x.DomainConst = "DomainFold"
		x.Register = "On" + e.GoName
		x.Runner = "Run" + e.GoName
	case ir.Notification, ir.Observer:
		if e.Decision != nil {
			return nil, fmt.Errorf("a %s has no decision", e.Domain)
		}
		x.Register = "On" + e.GoName
		if e.Domain == ir.Notification {
			x.DomainConst = "DomainNotification"
			x.Runner = "Notify" + e.GoName
		} else {
			x.DomainConst = "DomainObserver"
			x.Runner = "Emit" + e.GoName
		}
	default:
		return nil, fmt.Errorf("unknown domain %q", e.Domain)
	}
	if e.Decision != nil {
		x.Decision = e.Decision.Name
	}
	if len(e.Subject) > 0 {
		if err := x.planSubject(e.Payload, e.Subject); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// planSubject resolves the subject path to the fields it reads on the payload, each marked
// optional when it may be nil.
func (x *event) planSubject(t *ir.Type, subject []string) error {
	for i, name := range subject {
		var f *ir.Field
		for _, g := range t.Fields {
			if g.GoName == name {
				f = g
			}
		}
		if f == nil {
			return fmt.Errorf("subject %s: %s has no field %s", strings.Join(subject, "."), t.Name, name)
		}
		last := i == len(subject)-1
		switch {
		case last && f.Type.Kind == ir.String:
		case !last && f.Type.Kind == ir.Named && f.Type.Type != nil && f.Type.Type.Kind == ir.Record:
			t = f.Type.Type
		default:
			return fmt.Errorf("subject %s: %s.%s is %s, not a record on the way to a string",
				strings.Join(subject, "."), t.Name, name, f.Type)
		}
		x.subject = append(x.subject, subjectStep{field: name, optional: f.Optional})
	}
	return nil
}

// checkNames rejects a spec whose generated names collide with one another or with the
// names gen/emit/gotypes declares for the spec's types.
func checkNames(s *ir.Spec, evs []*event) error {
	taken := map[string]string{}
	claim := func(name, by string) error {
		if other, ok := taken[name]; ok {
			return fmt.Errorf("dispatch: the Go name %s of %s clashes with %s", name, by, other)
		}
		taken[name] = by
		return nil
	}
	for _, t := range s.Types {
		names := []string{t.Name}
		switch t.Kind {
		case ir.Enum:
			names = append(names, t.Name+"Values")
			for _, v := range t.Values {
				names = append(names, v.GoName)
			}
		case ir.Union:
			names = append(names, t.Name+"Kind", t.Name+"Kinds", "Unmarshal"+t.Name, "Switch"+t.Name)
			for _, v := range t.Variants {
				names = append(names, v.Type.Name+"Kind", "New"+v.Type.Name)
			}
		}
		for _, n := range names {
			if _, ok := taken[n]; !ok { // gotypes is responsible for its own clashes
				taken[n] = fmt.Sprintf("%s (from type %s at %s)", n, t.Name, t.Pos)
			}
		}
	}
	for _, n := range []string{"Domain", "DomainWaterfall", "DomainGuard", "DomainWrapper",
		"DomainFold", "DomainNotification", "DomainObserver", "DomainVote", "Vote", "EventInfo", "Events", "ErrNextReused",
		"ErrNilDecision", "ErrUnknownVariant", "ListenerError", "ResolvedDecision",
		"RegistryOption", "WithLogger", "WithDecisionAudit", "Registry", "NewRegistry",
		"Registrar", "SessionEventData", "SessionEventTypes", "DecodeSessionEventData",
		"WaterfallNext", "WaterfallNextFunc", "WrapperNext", "WrapperNextFunc"} {
		if err := claim(n, "the registry machinery"); err != nil {
			return err
		}
	}
	// Methods of Registrar and Registry share one namespace (Registry embeds Registrar).
	methods := map[string]string{"Plugin": "Registry", "Listens": "Registry", "ForAgent": "Registrar", "Close": "Registrar"}
	for _, e := range evs {
		by := fmt.Sprintf("event %q (%s)", e.Name, e.ir.Pos)
		for _, n := range []string{e.Listener, e.Next, e.Const} {
			if n == "" {
				continue
			}
			if err := claim(n, by); err != nil {
				return err
			}
		}
		for _, m := range []string{e.Register, e.Runner} {
			if other, ok := methods[m]; ok {
				return fmt.Errorf("dispatch: the method %s of %s clashes with %s", m, by, other)
			}
			methods[m] = by
		}
	}
	data := map[*ir.Type]string{}
	for _, se := range s.SessionEvents {
		by := fmt.Sprintf("session event %q (%s)", se.Type, se.Pos)
		if err := claim(se.GoName+"Type", by); err != nil {
			return err
		}
		if other, ok := data[se.Data]; ok {
			return fmt.Errorf("dispatch: %s and %s share the data record %s", other, by, se.Data.Name)
		}
		data[se.Data] = by
		for _, f := range se.Data.Fields {
			if f.GoName == "SessionEventType" {
				return fmt.Errorf("dispatch: %s: the field %s.SessionEventType clashes with its method", by, se.Data.Name)
			}
		}
	}
	return nil
}
