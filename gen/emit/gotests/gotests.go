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
// The checks themselves are hand-written, in github.com/dshkit/dsh/codec/codectest; the
// generated file holds the samples and one call per case. It is a test of package
// `<pkg>_test` and imports the generated package, the standard library, codectest and (for
// the runtime handles' comparers) github.com/google/go-cmp/cmp: being a test file, it adds
// nothing to what the generated package's importers build. Its output is gofmt'ed and
// byte-for-byte deterministic.
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
				Call: fmt.Sprintf("codectest.CheckVariant(t, schemas, %s, %s, %s.%s(%s), %s.Unmarshal%s)",
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
			Call: fmt.Sprintf("codectest.CheckRecord(t, schemas, %s, %s, %s)", strconv.Quote(t.Name), openness, expr),
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
			Call: fmt.Sprintf("codectest.CheckNulls(t, schemas, %s)", strings.Join(args, ", ")),
		})
	}

	var buf bytes.Buffer
	err = fileTmpl.Execute(&buf, fileData{
		Header:     o.Header("*.cue"),
		IDPrefix:   schema.ID(s, ""),
		Pkg:        s.Package,
		ImportPath: Module + "/" + goDir,
		UsesTime:   b.usesTime,
		UsesJSON:   usesJSON(cases),
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
	UsesJSON   bool
	SchemaDir  string
	Handles    []string
	Cases      []testCase
}

// usesJSON reports whether a sample refers to package encoding/json (json.RawMessage).
func usesJSON(cases []testCase) bool {
	for _, c := range cases {
		if strings.Contains(c.Call, "json.") {
			return true
		}
	}
	return false
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
// unknown or a missing discriminator, and that they agree on unknown fields and nulls. The
// checks are those of github.com/dshkit/dsh/codec/codectest, which (unlike the generated
// package, which imports only the standard library and the codec runtime) imports go-cmp
// and jsonschema: being a _test.go file, this adds neither to what importers of package
// {{.Pkg}} build.
package {{.Pkg}}_test

import (
{{- if .UsesJSON}}
	"encoding/json"
{{- end}}
	"testing"
{{- if .UsesTime}}
	"time"
{{- end}}
{{if .Handles}}
	"github.com/google/go-cmp/cmp"
{{end}}
	"github.com/dshkit/dsh/codec/codectest"
	"{{.ImportPath}}"
)

// schemas are the JSON Schema files of the package's types{{if .Handles}}; the runtime handles (never
// encoded, so always zero here) compare with =={{end}}.
var schemas = codectest.NewSchemas({{printf "%q" .SchemaDir}}, {{printf "%q" .IDPrefix}}{{range .Handles}},
	cmp.Comparer(func(a, b {{$.Pkg}}.{{.}}) bool { return a == b }){{end}})

// closed and open say whether a record rejects or ignores the fields it does not declare.
const (
	closed = codectest.Closed
	open   = codectest.Open
)

func TestRoundTrip(t *testing.T) {
{{- range .Cases}}
	t.Run({{printf "%q" .Name}}, func(t *testing.T) {
		{{.Call}}
	})
{{- end}}
}

// ptr returns a pointer to a copy of v, for optional fields.
func ptr[T any](v T) *T { return &v }
`))
