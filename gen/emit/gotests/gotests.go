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
	"fmt"
	"path"
	"path/filepath"
	"sort"

	"github.com/dave/jennifer/jen"

	"github.com/dshkit/dsh/gen/emit"
	"github.com/dshkit/dsh/gen/emit/gofile"
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
	pkg := Module + "/" + goDir
	schemas := schemaNames(s)
	types := append([]*ir.Type(nil), s.Types...)
	sort.SliceStable(types, func(i, j int) bool { return types[i].Name < types[j].Name })
	b := newSampler(s, pkg)
	check := func(name string, args ...jen.Code) jen.Code {
		return jen.Qual(codectest, name).Call(append([]jen.Code{jen.Id("t"), jen.Id("schemas")}, args...)...)
	}
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
			sample, err := b.variant(u, v)
			if err != nil {
				return nil, err
			}
			cases = append(cases, testCase{
				Name: u.Name + "/" + v.Kind,
				Call: check("CheckVariant", jen.Lit(schemaName), jen.Lit(discriminator(u)),
					jen.Qual(pkg, u.Name).Call(sample), jen.Qual(pkg, "Unmarshal"+u.Name)),
			})
		}
	}
	for _, t := range types {
		if t.Kind != ir.Record || !schemas[t.Name] {
			continue
		}
		sample, err := b.top(t)
		if err != nil {
			return nil, err
		}
		openness := "closed"
		if t.Open {
			openness = "open"
		}
		cases = append(cases, testCase{
			Name: t.Name,
			Call: check("CheckRecord", jen.Lit(t.Name), jen.Id(openness), sample),
		})
		nullable, optional := nullableFields(t)
		if !nullable {
			continue
		}
		sample, err = b.topNulls(t)
		if err != nil {
			return nil, err
		}
		args := []jen.Code{jen.Lit(t.Name), sample}
		for _, name := range optional {
			args = append(args, jen.Lit(name))
		}
		cases = append(cases, testCase{Name: t.Name + "/nulls", Call: check("CheckNulls", args...)})
	}

	out, err := gofile.Render(FileName, testFile(s, o, pkg, filepath.ToSlash(rel), cases))
	if err != nil {
		return nil, fmt.Errorf("gotests: %w", err)
	}
	return []emit.File{{Path: path.Join(goDir, FileName), Data: out}}, nil
}

// codectest is the import path of the hand-written checks the generated test calls.
const codectest = "github.com/dshkit/dsh/codec/codectest"

// testCase is one subtest of the generated TestRoundTrip.
type testCase struct {
	// Name is the subtest name: "<Union>/<kind>" or "<Record>".
	Name string
	// Call is the statement the subtest runs.
	Call jen.Code
}

// testFile is the generated test of package pkg, whose schema files are in schemaDir
// (relative to the package's directory): the schemas, and one subtest per case.
func testFile(s *ir.Spec, o emit.Options, pkg, schemaDir string, cases []testCase) *jen.File {
	const cmp = "github.com/google/go-cmp/cmp"
	f := gofile.New(s.Package+"_test", o.Header("*.cue"))
	f.ImportName(pkg, s.Package)
	f.ImportName(codectest, "codectest")
	f.ImportName(cmp, "cmp")
	for _, line := range gofile.Wrap(fmt.Sprintf("Package %[1]s_test checks that every union variant and every record with a JSON Schema survives a JSON round trip through the generated codec, that the JSON validates against its schema, that the schema and the decoder both reject a variant with an unknown or a missing discriminator, and that they agree on unknown fields and nulls. The checks are those of github.com/dshkit/dsh/codec/codectest, which (unlike the generated package, which imports only the standard library and the codec runtime) imports go-cmp and jsonschema: being a _test.go file, this adds neither to what importers of package %[1]s build.", s.Package), gofile.ProseWidth) {
		f.PackageComment(line)
	}

	hs := handles(s)
	schemasDoc := "schemas are the JSON Schema files of the package's types"
	if len(hs) > 0 {
		schemasDoc += "; the runtime handles (never encoded, so always zero here) compare with =="
	}
	args := []jen.Code{jen.Lit(schemaDir), jen.Lit(schema.ID(s, ""))}
	for _, h := range hs {
		args = append(args, jen.Line().Qual(cmp, "Comparer").Call(
			jen.Func().Params(jen.List(jen.Id("a"), jen.Id("b")).Qual(pkg, h)).Bool().Block(
				jen.Return(jen.Id("a").Op("==").Id("b")))))
	}
	f.Add(gofile.Prose(schemasDoc+".")).Var().Id("schemas").Op("=").Qual(codectest, "NewSchemas").Call(args...)
	f.Line()
	f.Add(gofile.Comment("closed and open say whether a record rejects or ignores the fields it does not declare.")).
		Const().Defs(
		jen.Id("closed").Op("=").Qual(codectest, "Closed"),
		jen.Id("open").Op("=").Qual(codectest, "Open"))
	f.Line()
	f.Func().Id("TestRoundTrip").Params(jen.Id("t").Op("*").Qual("testing", "T")).BlockFunc(func(g *jen.Group) {
		for _, c := range cases {
			g.Id("t").Dot("Run").Call(jen.Lit(c.Name), jen.Func().Params(jen.Id("t").Op("*").Qual("testing", "T")).Block(c.Call))
		}
	})
	f.Line()
	f.Add(gofile.Comment("ptr returns a pointer to a copy of v, for optional fields.")).
		Func().Id("ptr").Types(jen.Id("T").Any()).Params(jen.Id("v").Id("T")).Op("*").Id("T").Block(
		jen.Return(jen.Op("&").Id("v")))
	return f
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
