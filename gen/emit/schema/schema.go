// Package schema emits JSON Schema (draft 2020-12) for the encoded surface of a dsh spec:
// one self-contained file per event payload, event decision and session event data type or,
// for a spec without events and session events (a wire package such as spec/wire/codex.cue),
// one per record, so that bridge authors in any language get the wire formats.
//
// The schemas are built from the IR alone and accept exactly what the generated Go decoder
// accepts (docs/generated-api.md): records are closed unless the spec marks them open
// (CUE `...`), required fields are required, regular and optional fields may be absent,
// nullable fields (`T | null`) also accept null, runtime fields do not exist on the wire,
// unions are a oneOf of variants each carrying a required const discriminator, and an
// exclusive group forbids setting more than one of its fields.
package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"sort"

	"github.com/dshkit/dsh/gen/emit"
	"github.com/dshkit/dsh/gen/ir"
)

// draft is the JSON Schema dialect every emitted file declares in "$schema".
const draft = "https://json-schema.org/draft/2020-12/schema"

// Emit returns one file "<outDir>/<TypeName>.schema.json" per type used as an event payload,
// an event decision or a session event data record, sorted by path. A type shared by several
// events is emitted once; a runtime-only record (never encoded) has no schema. A spec with
// neither events nor session events gets one file per record instead (see Roots).
func Emit(s *ir.Spec, outDir string) ([]emit.File, error) {
	return EmitWith(s, outDir, emit.Options{})
}

// EmitWith is Emit for a spec described by o (e.g. a wire package, whose "$comment" names
// spec/wire/<file>).
func EmitWith(s *ir.Spec, outDir string, o emit.Options) ([]emit.File, error) {
	roots := Roots(s)
	files := make([]emit.File, 0, len(roots))
	for _, t := range roots {
		data, err := document(s, t, o)
		if err != nil {
			return nil, err
		}
		files = append(files, emit.File{Path: path.Join(outDir, t.Name+".schema.json"), Data: data})
	}
	emit.Sort(files)
	return files, nil
}

// Roots returns the types that get a schema file, sorted by name: the payloads, decisions
// and session event data of s or, when s declares neither events nor session events (a wire
// package), every record. Runtime-only records never have one.
func Roots(s *ir.Spec) []*ir.Type {
	roots := map[string]*ir.Type{}
	add := func(t *ir.Type) {
		if t != nil && !t.Runtime {
			roots[t.Name] = t
		}
	}
	if RecordCatalog(s) {
		for _, t := range s.Types {
			if t.Kind == ir.Record {
				add(t)
			}
		}
	}
	for _, e := range s.Events {
		add(e.Payload)
		add(e.Decision)
	}
	for _, se := range s.SessionEvents {
		add(se.Data)
	}
	names := make([]string, 0, len(roots))
	for n := range roots {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]*ir.Type, len(names))
	for i, n := range names {
		out[i] = roots[n]
	}
	return out
}

// RecordCatalog reports whether s is a spec without events and session events, such as a
// wire package: it describes wire formats only, and every record gets a schema.
func RecordCatalog(s *ir.Spec) bool {
	return len(s.Events) == 0 && len(s.SessionEvents) == 0
}

// ID is the "$id" of the schema of type name in s: "urn:dsh:schema:<Name>" for a spec with
// events, "urn:dsh:schema:<package>:<Name>" for a record catalog (a wire package), so that
// the schemas of two wire packages declaring the same record name do not clash.
func ID(s *ir.Spec, name string) string {
	if RecordCatalog(s) {
		return "urn:dsh:schema:" + s.Package + ":" + name
	}
	return "urn:dsh:schema:" + name
}

// obj is a JSON object under construction; encoding/json writes its keys sorted.
type obj = map[string]any

// document renders the schema file of root: its own schema at the top level, and every
// type it references under $defs.
func document(s *ir.Spec, root *ir.Type, o emit.Options) ([]byte, error) {
	b := &builder{spec: s, root: root, defs: obj{}}
	doc, err := b.typeSchema(root)
	if err != nil {
		return nil, err
	}
	doc["$schema"] = draft
	doc["$id"] = ID(s, root.Name)
	doc["$comment"] = o.Header(root.File)
	if len(b.defs) > 0 {
		doc["$defs"] = b.defs
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf) // Encode ends the document with a newline
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("%s: encoding the schema of %s: %w", root.Pos, root.Name, err)
	}
	return buf.Bytes(), nil
}

// builder collects the $defs of one schema file.
type builder struct {
	spec *ir.Spec
	root *ir.Type
	defs obj
}

// typeSchema is the schema of a named type.
func (b *builder) typeSchema(t *ir.Type) (obj, error) {
	o := obj{"title": t.Name, "description": t.Doc}
	switch t.Kind {
	case ir.Record:
		return o, b.record(t, o)
	case ir.Enum:
		values := make([]string, len(t.Values))
		for i, v := range t.Values {
			values[i] = v.Value
		}
		o["type"] = "string"
		o["enum"] = values
		if t.Default != "" {
			o["default"] = t.Default
		}
	case ir.Union:
		variants := make([]any, len(t.Variants))
		for i, v := range t.Variants {
			r, err := b.ref(v.Type)
			if err != nil {
				return nil, err
			}
			variants[i] = r
		}
		o["oneOf"] = variants
	default:
		return nil, fmt.Errorf("%s: type %s has unknown kind %v", t.Pos, t.Name, t.Kind)
	}
	return o, nil
}

// record fills o with the schema of the record t: an object, closed unless t is open, whose
// runtime fields are absent, whose nullable fields also accept null, whose discriminator
// (when t is a union variant) is a required const, and whose exclusive groups are pairwise
// "not both".
func (b *builder) record(t *ir.Type, o obj) error {
	props := obj{}
	var required []string
	for _, f := range t.Fields {
		if f.Runtime {
			continue
		}
		fs, err := b.refSchema(f.Type)
		if err != nil {
			return fmt.Errorf("%s: field %s of %s: %w", f.Pos, f.JSONName, t.Name, err)
		}
		if f.Nullable {
			fs = orNull(fs)
		}
		fs["description"] = f.Doc
		if f.Default != "" {
			if !json.Valid([]byte(f.Default)) {
				return fmt.Errorf("%s: field %s of %s: default %q is not JSON", f.Pos, f.JSONName, t.Name, f.Default)
			}
			fs["default"] = json.RawMessage(f.Default)
		}
		props[f.JSONName] = fs
		if f.Required {
			required = append(required, f.JSONName)
		}
	}
	if union, v := b.spec.IsVariant(t); v != nil {
		d := union.Discriminator
		if d == "" {
			d = "kind"
		}
		p, ok := props[d].(obj)
		if !ok {
			p = obj{}
			props[d] = p
		}
		p["type"] = "string"
		p["const"] = v.Kind
		if !slices.Contains(required, d) {
			required = append([]string{d}, required...)
		}
	}
	var exclusive []any
	for _, group := range t.Exclusive {
		for i, a := range group {
			if props[a] == nil {
				return fmt.Errorf("%s: exclusive group of %s names unknown or runtime field %q", t.Pos, t.Name, a)
			}
			for _, c := range group[i+1:] {
				exclusive = append(exclusive, obj{"not": obj{"required": []string{a, c}}})
			}
		}
	}

	o["type"] = "object"
	o["properties"] = props
	if !t.Open {
		o["additionalProperties"] = false
	}
	if len(required) > 0 {
		o["required"] = required
	}
	if len(exclusive) > 0 {
		o["allOf"] = exclusive
	}
	return nil
}

// orNull is the schema of a nullable value of schema fs: "type": [T, "null"] when fs is a
// plain typed schema, else an anyOf of fs and null (a reference or an enum). Any JSON
// (the empty schema) already accepts null.
func orNull(fs obj) obj {
	if len(fs) == 0 {
		return fs
	}
	if typ, ok := fs["type"].(string); ok && fs["enum"] == nil && fs["const"] == nil {
		fs["type"] = []string{typ, "null"}
		return fs
	}
	return obj{"anyOf": []any{fs, obj{"type": "null"}}}
}

// refSchema is the schema of a field or element type. It always returns a fresh object,
// so that the caller may add a description or a default to it.
func (b *builder) refSchema(r *ir.TypeRef) (obj, error) {
	switch r.Kind {
	case ir.String:
		return obj{"type": "string"}, nil
	case ir.Int, ir.Duration: // a duration is encoded as integer milliseconds
		return obj{"type": "integer"}, nil
	case ir.Float:
		return obj{"type": "number"}, nil
	case ir.Bool:
		return obj{"type": "boolean"}, nil
	case ir.JSON:
		return obj{}, nil
	case ir.Named:
		if r.Type == nil {
			return nil, fmt.Errorf("unresolved type %s (Spec.Link not run?)", r.Name)
		}
		return b.ref(r.Type)
	case ir.List, ir.Map:
		elem, err := b.refSchema(r.Elem)
		if err != nil {
			return nil, err
		}
		if r.Kind == ir.List {
			return obj{"type": "array", "items": elem}, nil
		}
		return obj{"type": "object", "additionalProperties": elem}, nil
	case ir.Handle:
		return nil, fmt.Errorf("handle %s is never encoded; the field must be marked runtime", r.Name)
	}
	return nil, fmt.Errorf("unknown type reference kind %d", r.Kind)
}

// ref returns a reference to t, adding t (and, transitively, what it references) to $defs.
// The root refers to itself as "#".
func (b *builder) ref(t *ir.Type) (obj, error) {
	if t == b.root {
		return obj{"$ref": "#"}, nil
	}
	if t.Runtime {
		return nil, fmt.Errorf("runtime-only type %s cannot be encoded", t.Name)
	}
	if _, ok := b.defs[t.Name]; !ok {
		b.defs[t.Name] = nil // placeholder: a recursive reference stops here
		d, err := b.typeSchema(t)
		if err != nil {
			return nil, err
		}
		b.defs[t.Name] = d
	}
	return obj{"$ref": "#/$defs/" + t.Name}, nil
}
