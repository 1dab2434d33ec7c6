// Package ir is the plain Go model of a dsh spec: the seam between the CUE loader
// (gen/load, the only package that knows CUE) and the emitters, which read nothing else.
//
// Every node records the CUE position it came from, so that emitters and validators can
// report a problem at the place a spec reviewer has to edit.
package ir

import (
	"fmt"
	"sort"
)

// Pos is a position in a spec file.
type Pos struct {
	File string // file name relative to the spec directory, e.g. "tools.cue"
	Line int
	Col  int
}

// String renders the position as file:line:col.
func (p Pos) String() string {
	if p.File == "" {
		return "<unknown>"
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Spec is a whole loaded and validated spec.
type Spec struct {
	// Package is the Go package name of the generated surface (e.g. "dsh").
	Package string
	// Version is the spec's semantic version (MAJOR.MINOR.PATCH, the top-level field
	// version); empty for a package that declares none (the wire and conformance packages).
	Version string
	// VersionPos is where the version is declared.
	VersionPos Pos
	// Types holds every named type (records, enums, unions), sorted by Name.
	Types []*Type
	// Events holds every extension point, sorted by Name.
	Events []*Event
	// SessionEvents holds every durable session-log event, sorted by Type.
	SessionEvents []*SessionEvent
	// Scenarios holds the conformance scenarios of the package, sorted by ID.
	Scenarios []*Scenario

	byName map[string]*Type
}

// TypeKind says what shape a named type has.
type TypeKind int

// The shapes a named type can have.
const (
	// Record is a closed struct with named fields.
	Record TypeKind = iota + 1
	// Enum is a closed set of string values.
	Enum
	// Union is a tagged union of records, discriminated by a required "kind" field.
	Union
)

// String names the kind.
func (k TypeKind) String() string {
	switch k {
	case Record:
		return "record"
	case Enum:
		return "enum"
	case Union:
		return "union"
	}
	return fmt.Sprintf("TypeKind(%d)", int(k))
}

// Type is a named type of the spec: a record, an enum or a union.
type Type struct {
	// Name is the exported Go name, e.g. "PreToolDecision" (the CUE definition without '#').
	Name string
	// Doc is the doc comment, without comment markers; never empty in a valid spec.
	Doc string
	// File is the spec file the type is declared in, e.g. "tools.cue".
	File string
	// Pos is where the definition starts.
	Pos Pos
	// Kind is the shape of the type.
	Kind TypeKind

	// Fields are the fields of a record, in source order.
	Fields []*Field
	// Exclusive lists groups of optional fields of a record of which at most one may be set.
	Exclusive [][]string
	// Accessors says the spec asks for the type's generated accessors (@dsh(accessors)): on
	// a record, Get/With/Append methods for its optional scalars and, as a union variant,
	// its lists; on a union, the methods its variants share in its interface (its variants
	// then get theirs) and the interfaces of the lists some variants share.
	Accessors bool

	// Values are the values of an enum, in source order.
	Values []*EnumValue
	// Default is the enum's default value, if the spec marks one.
	Default string

	// Variants are the variants of a union, in source order.
	Variants []*Variant
	// Discriminator is the JSON name of a union's discriminator field ("kind").
	Discriminator string

	// Runtime marks a record that only lives in memory (it is never encoded), such as a
	// payload carrying an agent handle.
	Runtime bool

	// Open marks a record that tolerates unknown fields (CUE `...`): decoding ignores
	// them and the JSON Schema allows them. External wire formats that add fields over
	// time (Claude Code's hook output) are open; dsh's own types are closed.
	Open bool
}

// EnumValue is one value of an enum.
type EnumValue struct {
	// Value is the JSON string.
	Value string
	// GoName is the exported constant name, e.g. "SessionStartSourceStartup".
	GoName string
}

// Variant is one variant of a union: a record whose discriminator is Kind.
type Variant struct {
	// Kind is the discriminator value, e.g. "deny".
	Kind string
	// Type is the variant record; its Name is the Go struct name (e.g. "PreToolDeny").
	Type *Type
}

// Field is one field of a record.
type Field struct {
	// JSONName is the wire name.
	JSONName string
	// GoName is the exported Go field name.
	GoName string
	// Doc is the field's doc comment; never empty in a valid spec.
	Doc string
	// Pos is where the field is declared.
	Pos Pos
	// Type is the field's type.
	Type *TypeRef
	// Required means the field must be present in JSON (CUE "name!:").
	Required bool
	// Optional means the field may be absent (CUE "name?:"). A field that is neither
	// required nor optional is regular: always encoded, defaulted when absent.
	Optional bool
	// Default is the JSON literal of a user-written default, if any.
	Default string
	// Runtime marks a field that is never encoded (json:"-"), such as an agent handle.
	Runtime bool
	// Nullable means JSON null is an accepted value (CUE `T | null`); it decodes as absent
	// (nil) and a nil required nullable field encodes as null.
	Nullable bool
}

// RefKind is the kind of a type reference.
type RefKind int

// The kinds of type reference.
const (
	String RefKind = iota + 1
	Int
	Float
	Bool
	// JSON is any JSON value (CUE "_"), carried as json.RawMessage.
	JSON
	// Named refers to a named Type.
	Named
	// List is a list of Elem.
	List
	// Map is an object with string keys and Elem values.
	Map
	// Handle is a runtime-only Go interface declared by the generator (e.g. "Agent").
	Handle
	// Duration is a time.Duration, encoded as integer milliseconds.
	Duration
)

// TypeRef is the type of a field or an element.
type TypeRef struct {
	Kind RefKind
	// Name is the referenced type's Go name (Named) or the handle's name (Handle).
	Name string
	// Elem is the element type of a List or Map.
	Elem *TypeRef
	// Type is the resolved named type (Named only); set by Spec.Link.
	Type *Type
}

// String renders the reference in a CUE-like notation, for messages and docs.
func (r *TypeRef) String() string {
	switch r.Kind {
	case String:
		return "string"
	case Int:
		return "int"
	case Float:
		return "number"
	case Bool:
		return "bool"
	case JSON:
		return "json"
	case Named, Handle:
		return r.Name
	case List:
		return "[..." + r.Elem.String() + "]"
	case Map:
		return "{[string]: " + r.Elem.String() + "}"
	case Duration:
		return "duration(ms)"
	}
	return "?"
}

// Domain is the authority kind of an extension point.
type Domain string

// The authority kinds, see docs/design/SEMANTICS.md#1-dispatch-domains.
const (
	// Waterfall is a policy chain: each listener gets the payload and next, returns a decision.
	Waterfall Domain = "waterfall"
	// Guard is terminal policy: deny or abstain, never allow.
	Guard Domain = "guard"
	// Wrapper is around-dispatch: each listener wraps next, returns a normalized result.
	Wrapper Domain = "wrapper"
	// Notification is awaited: every listener runs in order; a failure is reported.
	Notification Domain = "notification"
	// Observer is contained: every listener runs, failures are recorded and ignored.
	Observer Domain = "observer"
	// Vote is a bounded vote: every listener runs, each bounded, and returns a decision of
	// its own; the runner returns every listener's decision or failure, in registration
	// order, for the runtime to fold by the event's documented rule.
	Vote Domain = "vote"
	// Fold is a left fold with no next: each listener gets the payload the runtime made of
	// the previous listener's decision and returns its own decision.
	Fold Domain = "fold"
)

// Domains lists every domain, in the order the docs present them.
var Domains = []Domain{Waterfall, Guard, Wrapper, Fold, Notification, Observer, Vote}

// Event is an extension point.
type Event struct {
	// Name is the event name, e.g. "tools/pre-execute".
	Name string
	// GoName is the stem used for generated identifiers, e.g. "PreTool" gives
	// PreToolListener and OnPreTool.
	GoName string
	// Doc is the event's doc comment.
	Doc string
	// File is the spec file the event is declared in.
	File string
	// Pos is where the event is declared.
	Pos Pos
	// Domain is the authority kind.
	Domain Domain
	// Payload is the payload record.
	Payload *Type
	// Decision is the union a waterfall or guard returns, or the record a wrapper's chain
	// passes up (its result); nil for notifications and observers.
	Decision *Type
	// Default is the discriminator of the variant a waterfall resolves to when no listener
	// decides (e.g. "allow"); empty for the other domains.
	Default string
	// Subject is the dotted Go field path, from the payload, of the subject agent's id used
	// for scope filtering (e.g. "Exec.AgentID"); empty when the event is not scoped.
	Subject []string
}

// SessionEvent is a durable session-log event type.
type SessionEvent struct {
	// Type is the envelope type, e.g. "turn/start".
	Type string
	// GoName is the stem for generated identifiers, e.g. "TurnStart".
	GoName string
	// Doc is the event's doc comment.
	Doc string
	// File is the spec file the event is declared in.
	File string
	// Pos is where the event is declared.
	Pos Pos
	// Data is the record carried in the envelope's data.
	Data *Type
	// Owner says which part of dsh appends it: "runtime", "hooks" or "approval".
	Owner string
}

// Lookup returns the named type, or nil.
func (s *Spec) Lookup(name string) *Type {
	if s.byName == nil {
		s.index()
	}
	return s.byName[name]
}

func (s *Spec) index() {
	s.byName = make(map[string]*Type, len(s.Types))
	for _, t := range s.Types {
		s.byName[t.Name] = t
	}
}

// Sort puts types, events and session events in their canonical (name) order, so that
// every emitter's output is deterministic whatever order the loader found them in.
func (s *Spec) Sort() {
	sort.Slice(s.Types, func(i, j int) bool { return s.Types[i].Name < s.Types[j].Name })
	sort.Slice(s.Events, func(i, j int) bool { return s.Events[i].Name < s.Events[j].Name })
	sort.Slice(s.SessionEvents, func(i, j int) bool { return s.SessionEvents[i].Type < s.SessionEvents[j].Type })
	sort.Slice(s.Scenarios, func(i, j int) bool { return s.Scenarios[i].ID < s.Scenarios[j].ID })
	s.index()
}

// Link resolves every Named reference to its Type and reports the first reference to
// a type the spec does not declare.
func (s *Spec) Link() error {
	s.index()
	var visit func(r *TypeRef, where Pos) error
	visit = func(r *TypeRef, where Pos) error {
		switch r.Kind {
		case Named:
			t := s.byName[r.Name]
			if t == nil {
				return fmt.Errorf("%s: reference to undeclared type %q", where, r.Name)
			}
			r.Type = t
		case List, Map:
			return visit(r.Elem, where)
		}
		return nil
	}
	for _, t := range s.Types {
		for _, f := range t.Fields {
			if err := visit(f.Type, f.Pos); err != nil {
				return err
			}
		}
	}
	return nil
}

// Walk calls fn for every type reachable from t (t included), each once, in a
// deterministic depth-first order. It is how emitters collect what a payload needs.
func Walk(t *Type, fn func(*Type)) {
	seen := map[*Type]bool{}
	var visitRef func(r *TypeRef)
	var visit func(t *Type)
	visitRef = func(r *TypeRef) {
		switch r.Kind {
		case Named:
			if r.Type != nil {
				visit(r.Type)
			}
		case List, Map:
			visitRef(r.Elem)
		}
	}
	visit = func(t *Type) {
		if seen[t] {
			return
		}
		seen[t] = true
		fn(t)
		for _, f := range t.Fields {
			visitRef(f.Type)
		}
		for _, v := range t.Variants {
			visit(v.Type)
		}
	}
	visit(t)
}

// IsVariant reports whether t is the variant record of some union, and returns it.
func (s *Spec) IsVariant(t *Type) (*Type, *Variant) {
	for _, u := range s.Types {
		for _, v := range u.Variants {
			if v.Type == t {
				return u, v
			}
		}
	}
	return nil, nil
}

// Scenario is one conformance scenario (spec/conformance): data, checked against the
// canonical spec by the generator and replayed by the conformance harness.
type Scenario struct {
	// ID is the scenario id, e.g. "b06-pre-step-reject".
	ID string
	// Doc is the scenario's doc comment: what it checks, in a sentence or two.
	Doc string
	// File is the spec file the scenario is declared in.
	File string
	// Pos is where the scenario is declared.
	Pos Pos
	// Data is the scenario as JSON (refs, setup, run, expect).
	Data []byte
}
