// Package gotests emits `roundtrip_test.go` into the generated Go package: a test that
// checks, from the IR alone, that the Go types (gen/emit/gotypes) and the JSON Schemas
// (gen/emit/schema) agree with each other and with themselves.
//
// For every variant of every union, and for every record that has a schema file, the
// generated test builds a deterministic sample value (see sample.go), marshals it, validates
// the JSON against the schema file when there is one, decodes it with the generated decoder
// and requires the value it started from. For variants it then replaces the discriminator
// with "no-such-kind" and removes it, and requires both the schema and the decoder to reject
// each (the decoder with ErrUnknownKind and ErrMissingKind). For records it then adds an
// unknown field, which the schema and the decoder must both reject (ErrUnknownField) when
// the record is closed, and both accept when it is open. A record with nullable fields gets
// a second sample with those fields null, which must validate and survive the round trip.
//
// The generated file is a test of package `<pkg>_test`. It imports the generated package,
// the standard library, github.com/google/go-cmp/cmp and
// github.com/santhosh-tekuri/jsonschema/v6: it is the one generated file allowed to import
// outside the standard library, which it can because test files are never built by the
// generated package's importers. Its output is gofmt'ed and byte-for-byte deterministic.
package gotests

import (
	"bytes"
	"fmt"
	"go/format"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/dshkit/dsh/gen/emit"
	"github.com/dshkit/dsh/gen/emit/schema"
	"github.com/dshkit/dsh/gen/ir"
)

// Module is the module path of the repository the generated tree lives in: the generated
// package's import path is Module + "/" + goDir.
const Module = "github.com/dshkit/dsh"

// FileName is the name of the generated test file inside goDir.
const FileName = "roundtrip_test.go"

// Emit returns `<goDir>/roundtrip_test.go` for s. goDir and schemaDir are slash-separated
// paths relative to the repository root (e.g. "generated/dsh" and "generated/schema"); the
// test reads the schema files from schemaDir relative to goDir. It fails when a sample
// value cannot be built (an enum without values, a type with no finite value) or when the
// rendered test does not parse.
func Emit(s *ir.Spec, goDir, schemaDir string) ([]emit.File, error) {
	return EmitWith(s, goDir, schemaDir, emit.Options{})
}

// EmitWith is Emit for a spec described by o (e.g. a wire package, whose header names
// spec/wire/*.cue).
func EmitWith(s *ir.Spec, goDir, schemaDir string, o emit.Options) ([]emit.File, error) {
	if s.Package == "" {
		return nil, fmt.Errorf("gotests: spec has no Go package name")
	}
	goDir = path.Clean(filepath.ToSlash(goDir))
	schemaDir = path.Clean(filepath.ToSlash(schemaDir))
	rel, err := filepath.Rel(filepath.FromSlash(goDir), filepath.FromSlash(schemaDir))
	if err != nil {
		return nil, fmt.Errorf("gotests: schema directory %s relative to %s: %w", schemaDir, goDir, err)
	}
	schemas := schemaNames(s)
	types := append([]*ir.Type(nil), s.Types...)
	sort.SliceStable(types, func(i, j int) bool { return types[i].Name < types[j].Name })
	b := newSampler(s)
	var cases []testCase
	for _, u := range types {
		if u.Kind != ir.Union {
			continue
		}
		schemaName := ""
		if schemas[u.Name] {
			schemaName = u.Name
		}
		for _, v := range u.Variants {
			expr, err := b.variant(u, v)
			if err != nil {
				return nil, err
			}
			cases = append(cases, testCase{
				Name: u.Name + "/" + v.Kind,
				Call: fmt.Sprintf("checkVariant(t, %s, %s, %s.%s(%s), %s.Unmarshal%s)",
					strconv.Quote(schemaName), strconv.Quote(discriminator(u)), s.Package, u.Name, expr, s.Package, u.Name),
			})
		}
	}
	for _, t := range types {
		if t.Kind != ir.Record || !schemas[t.Name] {
			continue
		}
		expr, err := b.top(t)
		if err != nil {
			return nil, err
		}
		openness := "closed"
		if t.Open {
			openness = "open"
		}
		cases = append(cases, testCase{
			Name: t.Name,
			Call: fmt.Sprintf("checkRecord(t, %s, %s, %s)", strconv.Quote(t.Name), openness, expr),
		})
		nullable, optional := nullableFields(t)
		if !nullable {
			continue
		}
		expr, err = b.topNulls(t)
		if err != nil {
			return nil, err
		}
		args := []string{strconv.Quote(t.Name), expr}
		for _, name := range optional {
			args = append(args, strconv.Quote(name))
		}
		cases = append(cases, testCase{
			Name: t.Name + "/nulls",
			Call: fmt.Sprintf("checkNulls(t, %s)", strings.Join(args, ", ")),
		})
	}

	var buf bytes.Buffer
	err = fileTmpl.Execute(&buf, fileData{
		Header:     o.Header("*.cue"),
		IDPrefix:   schema.ID(s, ""),
		Pkg:        s.Package,
		ImportPath: Module + "/" + goDir,
		UsesTime:   b.usesTime,
		SchemaDir:  filepath.ToSlash(rel),
		Handles:    handles(s),
		Cases:      cases,
	})
	if err != nil {
		return nil, fmt.Errorf("gotests: rendering %s: %w", FileName, err)
	}
	out, err := format.Source(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("gotests: %s does not parse (generator bug): %v\n%s", FileName, err, buf.Bytes())
	}
	return []emit.File{{Path: path.Join(goDir, FileName), Data: out}}, nil
}

// testCase is one subtest of the generated TestRoundTrip.
type testCase struct {
	// Name is the subtest name: "<Union>/<kind>" or "<Record>".
	Name string
	// Call is the Go statement the subtest runs.
	Call string
}

// fileData is what fileTmpl renders.
type fileData struct {
	Header     string
	IDPrefix   string
	Pkg        string
	ImportPath string
	UsesTime   bool
	SchemaDir  string
	Handles    []string
	Cases      []testCase
}

// schemaNames returns the names of the types that have a schema file, as gen/emit/schema
// decides (it is asked rather than imitated, so that the two never disagree).
func schemaNames(s *ir.Spec) map[string]bool {
	names := map[string]bool{}
	for _, t := range schema.Roots(s) {
		names[t.Name] = true
	}
	return names
}

// nullableFields reports whether record t has an encoded nullable field, and lists the JSON
// names of the optional ones (which encode as absent, not null, when nil).
func nullableFields(t *ir.Type) (bool, []string) {
	has := false
	var optional []string
	for _, f := range t.Fields {
		if !f.Nullable || f.Runtime || f.Type.Kind == ir.Handle {
			continue
		}
		has = true
		if f.Optional {
			optional = append(optional, f.JSONName)
		}
	}
	return has, optional
}

// discriminator is the JSON name of a union's discriminator ("kind" when the IR says none).
func discriminator(u *ir.Type) string {
	if u.Discriminator == "" {
		return "kind"
	}
	return u.Discriminator
}

// handles lists, sorted, the handle types some field of s uses: the test compares them
// with == (a Token has unexported fields, which cmp does not read by itself).
func handles(s *ir.Spec) []string {
	seen := map[string]bool{}
	var visit func(r *ir.TypeRef)
	visit = func(r *ir.TypeRef) {
		switch r.Kind {
		case ir.Handle:
			seen[r.Name] = true
		case ir.List, ir.Map:
			visit(r.Elem)
		}
	}
	for _, t := range s.Types {
		for _, f := range t.Fields {
			visit(f.Type)
		}
	}
	out := make([]string, 0, len(seen))
	for h := range seen {
		out = append(out, h)
	}
	sort.Strings(out)
	return out
}

var fileTmpl = template.Must(template.New(FileName).Parse(`// {{.Header}}

// Package {{.Pkg}}_test checks that every union variant and every record with a JSON
// Schema survives a JSON round trip through the generated codec, that the JSON validates
// against its schema, that the schema and the decoder both reject a variant with an
// unknown or a missing discriminator, and that they agree on unknown fields and nulls.
//
// Unlike the rest of the generated code, which imports only the standard library, this
// test file also imports github.com/google/go-cmp/cmp and
// github.com/santhosh-tekuri/jsonschema/v6. Being a _test.go file, it adds neither to what
// importers of package {{.Pkg}} build.
package {{.Pkg}}_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
{{- if .UsesTime}}
	"time"
{{- end}}

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"{{.ImportPath}}"
)

// schemaDir is the directory of the JSON Schema files, relative to this package.
const schemaDir = {{printf "%q" .SchemaDir}}

// closed and open say whether a record rejects or ignores the fields it does not declare.
const (
	closed = false
	open   = true
)

// cmpOptions compare the runtime handles (never encoded, so always zero here) with ==.
var cmpOptions = []cmp.Option{
{{- range .Handles}}
	cmp.Comparer(func(a, b {{$.Pkg}}.{{.}}) bool { return a == b }),
{{- end}}
}

func TestRoundTrip(t *testing.T) {
{{- range .Cases}}
	t.Run({{printf "%q" .Name}}, func(t *testing.T) {
		{{.Call}}
	})
{{- end}}
}

// checkVariant round-trips want, a variant of a union, through JSON and unmarshal, then
// requires the schema (when there is one) and unmarshal to reject it with an unknown and
// without a discriminator.
func checkVariant[U any](t *testing.T, schema, discriminator string, want U, unmarshal func([]byte) (U, error)) {
	t.Helper()
	if v, ok := any(want).(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			t.Errorf("the sample does not validate: %v", err)
		}
	}
	data, err := json.Marshal(want)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	if schema != "" {
		if err := validate(t, schema, data); err != nil {
			t.Errorf("%s does not validate against %s.schema.json: %v", data, schema, err)
		}
	}
	got, err := unmarshal(data)
	if err != nil {
		t.Fatalf("unmarshal %s: %v", data, err)
	}
	if diff := cmp.Diff(want, got, cmpOptions...); diff != "" {
		t.Errorf("round trip through %s (-want +got):\n%s", data, diff)
	}

	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		t.Fatal(err)
	}
	fields[discriminator] = json.RawMessage(` + "`" + `"no-such-kind"` + "`" + `)
	rejects(t, schema, fields, unmarshal, {{.Pkg}}.ErrUnknownKind)
	delete(fields, discriminator)
	rejects(t, schema, fields, unmarshal, {{.Pkg}}.ErrMissingKind)
}

// rejects requires the schema (when there is one) to reject the object fields, and
// unmarshal to fail on it with an error wrapping sentinel.
func rejects[U any](t *testing.T, schema string, fields map[string]json.RawMessage, unmarshal func([]byte) (U, error), sentinel error) {
	t.Helper()
	data, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	if schema != "" && validate(t, schema, data) == nil {
		t.Errorf("%s.schema.json accepts %s", schema, data)
	}
	if _, err := unmarshal(data); !errors.Is(err, sentinel) {
		t.Errorf("unmarshal %s: %v, want an error wrapping %q", data, err, sentinel)
	}
}

// checkRecord round-trips want, a record with a schema file, through JSON, the schema
// and json.Unmarshal, then adds an unknown field, which the schema and the decoder must both
// reject when the record is closed and both accept when it is open.
func checkRecord[T interface{ Validate() error }](t *testing.T, schema string, isOpen bool, want T) {
	t.Helper()
	if err := want.Validate(); err != nil {
		t.Errorf("the sample does not validate: %v", err)
	}
	data, err := json.Marshal(want)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	if err := validate(t, schema, data); err != nil {
		t.Errorf("%s does not validate against %s.schema.json: %v", data, schema, err)
	}
	var got T
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("unmarshal %s: %v", data, err)
	}
	if diff := cmp.Diff(want, got, cmpOptions...); diff != "" {
		t.Errorf("round trip through %s (-want +got):\n%s", data, diff)
	}

	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		t.Fatal(err)
	}
	fields["no-such-field"] = json.RawMessage("1")
	if data, err = json.Marshal(fields); err != nil {
		t.Fatal(err)
	}
	schemaErr := validate(t, schema, data)
	var extra T
	decodeErr := json.Unmarshal(data, &extra)
	switch {
	case isOpen && (schemaErr != nil || decodeErr != nil):
		t.Errorf("open record with an unknown field %s: schema: %v, unmarshal: %v; want both to accept it", data, schemaErr, decodeErr)
	case isOpen:
		if diff := cmp.Diff(want, extra, cmpOptions...); diff != "" {
			t.Errorf("the unknown field of %s changed the value (-want +got):\n%s", data, diff)
		}
	case schemaErr == nil:
		t.Errorf("%s.schema.json accepts the unknown field of %s", schema, data)
	case !errors.Is(decodeErr, {{.Pkg}}.ErrUnknownField):
		t.Errorf("unmarshal %s: %v, want an error wrapping %q", data, decodeErr, {{.Pkg}}.ErrUnknownField)
	}
}

// checkNulls round-trips want, a record whose nullable fields are all absent, through JSON
// where every one of them is null: the required and regular ones encode as null, and the
// optional ones, which encode as absent, are set to null here, as a peer may send them.
func checkNulls[T interface{ Validate() error }](t *testing.T, schema string, want T, optional ...string) {
	t.Helper()
	if err := want.Validate(); err != nil {
		t.Errorf("the sample does not validate: %v", err)
	}
	data, err := json.Marshal(want)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		t.Fatal(err)
	}
	for _, name := range optional {
		fields[name] = json.RawMessage("null")
	}
	if data, err = json.Marshal(fields); err != nil {
		t.Fatal(err)
	}
	if err := validate(t, schema, data); err != nil {
		t.Errorf("%s does not validate against %s.schema.json: %v", data, schema, err)
	}
	var got T
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("unmarshal %s: %v", data, err)
	}
	if diff := cmp.Diff(want, got, cmpOptions...); diff != "" {
		t.Errorf("round trip through %s (-want +got):\n%s", data, diff)
	}
}

// schemas caches the compiled schemas by type name (subtests run one at a time).
var schemas = map[string]*jsonschema.Schema{}

// validate validates data against <name>.schema.json in schemaDir.
func validate(t *testing.T, name string, data []byte) error {
	t.Helper()
	sch, ok := schemas[name]
	if !ok {
		raw, err := os.ReadFile(filepath.Join(schemaDir, name+".schema.json"))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s.schema.json: %v", name, err)
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		url := {{printf "%q" .IDPrefix}} + name
		if err := c.AddResource(url, doc); err != nil {
			t.Fatalf("%s.schema.json: %v", name, err)
		}
		if sch, err = c.Compile(url); err != nil {
			t.Fatalf("%s.schema.json: %v", name, err)
		}
		schemas[name] = sch
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	return sch.Validate(inst)
}

// ptr returns a pointer to a copy of v, for optional fields.
func ptr[T any](v T) *T { return &v }
`))
