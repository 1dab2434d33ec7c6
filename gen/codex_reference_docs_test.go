// The documents of the Codex reference cross-check (codex_reference_test.go): the
// reference schemas compiled, the documents they accept and reject built from them, and
// generated Go values populated from the spec.

package gen_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/dshkit/dsh/gen"
	"github.com/dshkit/dsh/gen/ir"
	"github.com/dshkit/dsh/generated/wire/codex"
	"github.com/dshkit/dsh/internal/oracle"
	"github.com/dshkit/dsh/spec"
)

// codexSpec loads the codex wire package from the embedded spec tree.
func codexSpec(t *testing.T) *ir.Spec {
	t.Helper()
	tree, err := gen.LoadFS(spec.FS, "spec", gen.DefaultLayout)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range tree.Units {
		if u.Spec.Package == "codex" {
			return u.Spec
		}
	}
	t.Fatal("the spec tree has no wire package codex")
	return nil
}

// loadCodexReference reads and compiles every reference schema. A missing directory fails
// the test under CI and skips it elsewhere (internal/oracle).
func loadCodexReference(t *testing.T) map[string]*codexRef {
	t.Helper()
	dir := oracle.Dir(t, codexReferenceDir)
	names, err := filepath.Glob(filepath.Join(dir, "*.schema.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("the Codex reference schemas are missing: no %s/*.schema.json", dir)
	}
	refs := map[string]*codexRef{}
	for _, n := range names {
		name := strings.TrimSuffix(filepath.Base(n), ".schema.json")
		if codexReference[name] == nil {
			t.Errorf("reference schema %s has no generated type in codexReference: map it", filepath.Base(n))
			continue
		}
		refs[name] = compileCodexRef(t, name, n)
	}
	for name := range codexReference {
		if refs[name] == nil {
			t.Errorf("reference schema %s.schema.json is missing from %s", name, dir)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return refs
}

// codexRef is one compiled reference schema.
type codexRef struct {
	name string
	raw  map[string]any
	// strict is the schema as published; relaxed drops the shell-tool-only constraints.
	strict, relaxed *jsonschema.Schema
}

func compileCodexRef(t *testing.T, name, file string) *codexRef {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	r := &codexRef{name: name}
	if err := json.Unmarshal(data, &r.raw); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	compile := func(doc []byte, url string) *jsonschema.Schema {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft7)
		if err := c.AddResource(url, v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		s, err := c.Compile(url)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		return s
	}
	r.strict = compile(data, "file:///codex/"+name+".schema.json")
	var relaxed map[string]any
	if err := json.Unmarshal(data, &relaxed); err != nil {
		t.Fatal(err)
	}
	props, _ := relaxed["properties"].(map[string]any)
	for _, p := range codexShellOnly[name] {
		if props[p] == nil {
			t.Fatalf("%s: codexShellOnly names %q, which the reference does not declare", file, p)
		}
		props[p] = map[string]any{}
	}
	if props["tool_name"] != nil && slices.Contains(codexShellOnly[name], "tool_name") {
		props["tool_name"] = map[string]any{"type": "string"}
	}
	doc, err := json.Marshal(relaxed)
	if err != nil {
		t.Fatal(err)
	}
	r.relaxed = compile(doc, "file:///codex/"+name+".relaxed.schema.json")
	return r
}

func (r *codexRef) validate(s *jsonschema.Schema, doc []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// checkGoDocument validates data, a marshalled generated value, against the (relaxed)
// reference. The fields of codexDeviations are removed first, after checking that the
// reference still rejects them, so that the list cannot go stale.
func (r *codexRef) checkGoDocument(t *testing.T, data []byte, full bool) {
	t.Helper()
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		t.Fatal(err)
	}
	for _, d := range codexDeviations[r.name] {
		f := d.field
		if _, ok := obj[f]; !ok {
			if full {
				t.Errorf("codexDeviations lists %s.%s, which the generated type no longer encodes", r.name, f)
			}
			continue
		}
		one, _ := json.Marshal(map[string]json.RawMessage{f: obj[f]})
		if r.validate(r.relaxed, one) == nil {
			t.Errorf("codexDeviations lists %s.%s, which the reference now accepts: remove it", r.name, f)
		}
		delete(obj, f)
	}
	stripped, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.validate(r.relaxed, stripped); err != nil {
		what := "minimal"
		if full {
			what = "fully populated"
		}
		t.Errorf("a %s generated value encodes as %s, which %s.schema.json rejects: %v", what, stripped, r.name, err)
	}
}

// forGo adds to doc, a document the reference accepts, the fields of codexDeviations the
// generated type requires and the reference does not declare.
func (r *codexRef) forGo(doc []byte) []byte {
	var obj map[string]any
	if json.Unmarshal(doc, &obj) != nil {
		return doc
	}
	for _, d := range codexDeviations[r.name] {
		if _, ok := obj[d.field]; !ok && d.fill != nil {
			obj[d.field] = d.fill
		}
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return doc
	}
	return out
}

// resolve follows $ref and single-schema allOf wrappers to the schema that says what a value
// is; `true` resolves to the empty schema (any JSON).
func (r *codexRef) resolve(s any) map[string]any {
	for {
		m, ok := s.(map[string]any)
		if !ok {
			return map[string]any{}
		}
		if ref, ok := m["$ref"].(string); ok {
			defs, _ := r.raw["definitions"].(map[string]any)
			s = defs[strings.TrimPrefix(ref, "#/definitions/")]
			continue
		}
		if all, ok := m["allOf"].([]any); ok && len(all) == 1 && m["properties"] == nil {
			s = all[0]
			continue
		}
		return m
	}
}

// shape resolves s to its non-null schema and says whether s accepts null.
func (r *codexRef) shape(s any) (m map[string]any, nullable bool) {
	m = r.resolve(s)
	if branches, ok := m["anyOf"].([]any); ok {
		var out map[string]any
		for _, b := range branches {
			bm := r.resolve(b)
			if bm["type"] == "null" {
				nullable = true
			} else if out == nil {
				out = bm
			}
		}
		return out, nullable
	}
	if types, ok := m["type"].([]any); ok {
		nullable = slices.Contains(types, any("null"))
	}
	if m["type"] == nil && m["enum"] == nil && m["const"] == nil && m["properties"] == nil {
		nullable = true // any JSON
	}
	return m, nullable
}

// primaryType is the first non-null type of m, or "" (any JSON, or an enum without type).
func primaryType(m map[string]any) string {
	switch t := m["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				return s
			}
		}
	}
	return ""
}

// instance builds a value m accepts: every property (full) or the required ones.
func (r *codexRef) instance(m map[string]any, full bool) any {
	if enum, ok := m["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	if c, ok := m["const"]; ok {
		return c
	}
	switch primaryType(m) {
	case "string":
		return "text"
	case "boolean":
		return true
	case "integer", "number":
		return 1
	case "array":
		items, _ := r.shape(m["items"])
		return []any{r.instance(items, full)}
	case "object":
		props, _ := m["properties"].(map[string]any)
		if props == nil {
			if ap, ok := m["additionalProperties"].(map[string]any); ok {
				as, _ := r.shape(ap)
				return map[string]any{"k": r.instance(as, full)}
			}
			return map[string]any{}
		}
		required, _ := m["required"].([]any)
		obj := map[string]any{}
		for name, p := range props {
			if !full && !slices.Contains(required, any(name)) {
				continue
			}
			ps, _ := r.shape(p)
			obj[name] = r.instance(ps, full)
		}
		return obj
	}
	return map[string]any{"k": "v"} // any JSON
}

// property is one property of the reference, reached by path from the top-level object.
type property struct {
	path     []string
	schema   map[string]any // non-null schema
	nullable bool
	// closed tells whether the object schema holding it forbids additional properties.
	closed bool
}

// properties lists every property of the reference, depth first in name order, descending
// into object-valued properties that declare their own.
func (r *codexRef) properties() []property {
	var out []property
	var walk func(m map[string]any, prefix []string)
	walk = func(m map[string]any, prefix []string) {
		props, _ := m["properties"].(map[string]any)
		closed := m["additionalProperties"] == false
		for _, name := range sortedNames(props) {
			s, nullable := r.shape(props[name])
			p := append(slices.Clip(prefix), name)
			out = append(out, property{path: p, schema: s, nullable: nullable, closed: closed})
			if s != nil && s["properties"] != nil {
				walk(s, p)
			}
		}
	}
	walk(r.resolve(r.raw), nil)
	return out
}

// shellOnly reports whether path is a shell-tool-only property of this reference.
func (r *codexRef) shellOnly(path []string) bool {
	return len(path) > 0 && slices.Contains(codexShellOnly[r.name], path[0])
}

// full is the fully populated document of the reference.
func (r *codexRef) full() map[string]any {
	return r.instance(r.resolve(r.raw), true).(map[string]any)
}

// with returns a copy of doc with the value at path set to v, encoded.
func with(doc map[string]any, path []string, v any) []byte {
	var cp map[string]any
	data, _ := json.Marshal(doc)
	_ = json.Unmarshal(data, &cp)
	m := cp
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
	out, _ := json.Marshal(cp)
	return out
}

// accepted lists documents the reference accepts: fully populated, minimal, and the full one
// with each property set in turn to each of its enum values and to null where allowed (minus
// those a conditional rule rejects, such as a null reason next to a "block" decision).
func (r *codexRef) accepted(t *testing.T) [][]byte {
	t.Helper()
	full := r.full()
	fullDoc, _ := json.Marshal(full)
	minDoc, _ := json.Marshal(r.instance(r.resolve(r.raw), false))
	for _, doc := range [][]byte{fullDoc, minDoc} {
		if err := r.validate(r.strict, doc); err != nil {
			t.Fatalf("test bug: the reference rejects the document built from it, %s: %v", doc, err)
		}
	}
	docs := [][]byte{fullDoc, minDoc}
	var variants [][]byte
	for _, p := range r.properties() {
		if p.schema != nil {
			if enum, ok := p.schema["enum"].([]any); ok {
				for _, v := range enum {
					variants = append(variants, with(full, p.path, v))
				}
			}
		}
		if p.nullable {
			variants = append(variants, with(full, p.path, nil))
		}
	}
	for _, doc := range variants {
		if r.validate(r.strict, doc) == nil {
			docs = append(docs, doc)
		}
	}
	return docs
}

// rejection is a document the reference rejects and the error the Go must wrap.
type rejection struct {
	doc      []byte
	sentinel error
}

// rejected lists documents the reference rejects: the full one with an unknown field in each
// closed object, and with a wrong value for each enum or const property.
func (r *codexRef) rejected() []rejection {
	full := r.full()
	var out []rejection
	seen := map[string]bool{}
	for _, p := range r.properties() {
		parent := strings.Join(p.path[:len(p.path)-1], ".")
		if p.closed && !seen[parent] && !r.shellOnly(p.path[:len(p.path)-1]) {
			seen[parent] = true
			out = append(out, rejection{with(full, append(slices.Clip(p.path[:len(p.path)-1]), "no_such_field"), 1), codex.ErrUnknownField})
		}
		if p.schema == nil || r.shellOnly(p.path) {
			continue
		}
		if p.schema["enum"] != nil || p.schema["const"] != nil {
			out = append(out, rejection{with(full, p.path, "no-such-value"), codex.ErrInvalidEnum})
		}
	}
	return out
}

// nullLeniency returns "<schema>: <path>" for every property of the reference that rejects
// null where the generated type decodes null.
func (r *codexRef) nullLeniency(typ reflect.Type) []string {
	full := r.full()
	var out []string
	for _, p := range r.properties() {
		if p.nullable || r.shellOnly(p.path) {
			continue
		}
		doc := with(full, p.path, nil)
		if _, err := decodeAs(typ, r.forGo(doc)); err == nil && r.validate(r.strict, doc) != nil {
			out = append(out, r.name+": "+strings.Join(p.path, "."))
		}
	}
	return out
}

// decodeAs decodes data as a new value of typ with encoding/json (hence the generated,
// strict UnmarshalJSON).
func decodeAs(typ reflect.Type, data []byte) (any, error) {
	p := reflect.New(typ)
	err := json.Unmarshal(data, p.Interface())
	return p.Elem().Interface(), err
}

// populate sets the fields of v, a value of the generated struct of record t: every field
// (full) or the required, non-nullable ones, with a valid value (enums their first value,
// records recursively, any JSON {"k":"v"}).
func populate(t *testing.T, s *ir.Spec, rt *ir.Type, v reflect.Value, full bool) {
	t.Helper()
	for _, f := range rt.Fields {
		if f.Runtime || !full && (!f.Required || f.Nullable) {
			continue
		}
		fv := v.FieldByName(f.GoName)
		if !fv.IsValid() {
			t.Fatalf("the generated %s has no field %s (is generated/ stale?)", rt.Name, f.GoName)
		}
		set(t, s, f.Type, f.JSONName, fv, full)
	}
}

func set(t *testing.T, s *ir.Spec, r *ir.TypeRef, name string, fv reflect.Value, full bool) {
	t.Helper()
	if fv.Kind() == reflect.Pointer {
		p := reflect.New(fv.Type().Elem())
		set(t, s, r, name, p.Elem(), full)
		fv.Set(p)
		return
	}
	switch r.Kind {
	case ir.String:
		fv.SetString("text-" + name)
	case ir.Int:
		fv.SetInt(1)
	case ir.Float:
		fv.SetFloat(1.5)
	case ir.Bool:
		fv.SetBool(true)
	case ir.JSON:
		fv.Set(reflect.ValueOf(json.RawMessage(`{"k":"v"}`)))
	case ir.List:
		l := reflect.MakeSlice(fv.Type(), 1, 1)
		set(t, s, r.Elem, name, l.Index(0), full)
		fv.Set(l)
	case ir.Map:
		m := reflect.MakeMap(fv.Type())
		e := reflect.New(fv.Type().Elem()).Elem()
		set(t, s, r.Elem, name, e, full)
		m.SetMapIndex(reflect.ValueOf("k"), e)
		fv.Set(m)
	case ir.Named:
		nt := s.Lookup(r.Name)
		switch {
		case nt == nil:
			t.Fatalf("no type %s", r.Name)
		case nt.Kind == ir.Enum:
			fv.SetString(nt.Values[0].Value)
		case nt.Kind == ir.Record:
			populate(t, s, nt, fv, full)
		default:
			t.Fatalf("%s: a %s field is not supported by this test", name, nt.Kind)
		}
	default:
		t.Fatalf("%s: a %s field is not supported by this test", name, r)
	}
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
