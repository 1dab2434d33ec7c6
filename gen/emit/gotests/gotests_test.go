package gotests

import (
	"bytes"
	"go/build"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"
	"github.com/google/go-cmp/cmp"
	// The generated test imports jsonschema: importing it here too puts it in the module
	// cache before TestGeneratedTestPasses runs the generated test offline.
	_ "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/dshkit/dsh/gen/emit"
	"github.com/dshkit/dsh/gen/emit/gotypes"
	"github.com/dshkit/dsh/gen/emit/schema"
	"github.com/dshkit/dsh/gen/internal/gentest"
	"github.com/dshkit/dsh/gen/ir"
	"github.com/dshkit/dsh/gen/ir/irtest"
)

func ref(n string) *ir.TypeRef                      { return &ir.TypeRef{Kind: ir.Named, Name: n} }
func of(k ir.RefKind, elem *ir.TypeRef) *ir.TypeRef { return &ir.TypeRef{Kind: k, Elem: elem} }
func scalar(k ir.RefKind) *ir.TypeRef               { return &ir.TypeRef{Kind: k} }

// field builds a field declared in extra.cue; mod is "!" (required), "?" (optional) or ""
// (regular).
func field(json, goName string, t *ir.TypeRef, mod string) *ir.Field {
	return &ir.Field{JSONName: json, GoName: goName, Doc: json + " is a test field.", Type: t,
		Required: mod == "!", Optional: mod == "?", Pos: ir.Pos{File: "extra.cue", Line: 1, Col: 1}}
}

func record(name string, fields ...*ir.Field) *ir.Type {
	return &ir.Type{Name: name, Doc: name + " is a test record.", File: "extra.cue", Pos: ir.Pos{File: "extra.cue", Line: 1, Col: 1},
		Kind: ir.Record, Fields: fields}
}

func kind() *ir.Field { return field("kind", "Kind", scalar(ir.String), "!") }

// testSpec is irtest.Small() plus the shapes it lacks: durations, a Token handle, a map of
// unions, defaults, a keyword-named field, and Tree, a recursive union whose first variant
// recurses through a required field, a list and an optional field. Extra and Forest are
// session event data, so they have schema files.
func testSpec() *ir.Spec {
	s := irtest.Small()
	extra := record("Extra",
		field("verdict", "Verdict", ref("Verdict"), "!"),
		field("byKind", "ByKind", of(ir.Map, ref("Decision")), "?"),
		field("colors", "Colors", of(ir.List, ref("Color")), ""),
		field("mode", "Mode", ref("Color"), ""),
		field("name", "Name", scalar(ir.String), ""),
		field("wait", "Wait", scalar(ir.Duration), "!"),
		field("timeout", "Timeout", scalar(ir.Duration), "?"),
		field("token", "Token", &ir.TypeRef{Kind: ir.Handle, Name: "Token"}, "!"),
		field("labels", "Labels", of(ir.Map, scalar(ir.String)), ""),
		field("type", "Type", scalar(ir.String), "?"),
		field("nested", "Nested", of(ir.List, of(ir.Map, scalar(ir.Int))), "?"),
		field("tree", "Tree", ref("Tree"), "?"),
	)
	extra.Fields[3].Default = `"dark-blue"`
	extra.Fields[4].Default = `"anon"`
	extra.Fields[7].Runtime = true
	node := record("Node", kind(),
		field("child", "Child", ref("Tree"), "!"),
		field("children", "Children", of(ir.List, ref("Tree")), "!"),
		field("next", "Next", ref("Tree"), "?"),
		field("parent", "Parent", ref("Holder"), "?"),
	)
	leaf := record("Leaf", kind(), field("label", "Label", scalar(ir.String), "!"))
	tree := &ir.Type{Name: "Tree", Doc: "Tree is a recursive union.", File: "extra.cue", Pos: ir.Pos{File: "extra.cue", Line: 2, Col: 1},
		Kind: ir.Union, Discriminator: "kind", Variants: []*ir.Variant{{Kind: "node", Type: node}, {Kind: "leaf", Type: leaf}}}
	holder := record("Holder", field("tree", "Tree", ref("Tree"), "!"), field("weight", "Weight", scalar(ir.Float), "?"),
		field("trees", "Trees", of(ir.List, ref("Tree")), "!"))
	forest := record("Forest", field("trees", "Trees", of(ir.List, ref("Tree")), "!"))
	nullable := func(f *ir.Field) *ir.Field { f.Nullable = true; return f }
	wire := record("Wire",
		nullable(field("path", "Path", scalar(ir.String), "!")),
		nullable(field("color", "Color", ref("Color"), "!")),
		nullable(field("holder", "Holder", ref("Holder"), "?")),
		nullable(field("tags", "Tags", of(ir.List, scalar(ir.String)), "?")),
		nullable(field("count", "Count", scalar(ir.Int), "")),
		field("id", "ID", scalar(ir.String), "!"),
	)
	wire.Open = true
	s.Types = append(s.Types, extra, node, leaf, tree, holder, forest, wire)
	for i, t := range []*ir.Type{extra, forest, wire} {
		s.SessionEvents = append(s.SessionEvents, &ir.SessionEvent{Type: "demo/" + strings.ToLower(t.Name), GoName: "Demo" + t.Name,
			Doc: "a test event.", File: "extra.cue", Pos: ir.Pos{File: "extra.cue", Line: 10 + i, Col: 1}, Data: t, Owner: "runtime"})
	}
	if err := s.Link(); err != nil {
		panic(err)
	}
	s.Sort()
	return s
}

func emitOrFatal(t *testing.T, s *ir.Spec) emit.File {
	t.Helper()
	files, err := Emit(s, "generated/demo", "generated/schema")
	if err != nil {
		t.Fatalf("Emit: %v", err)
	}
	if len(files) != 1 || files[0].Path != "generated/demo/roundtrip_test.go" {
		t.Fatalf("Emit returned %d files, want generated/demo/roundtrip_test.go", len(files))
	}
	return files[0]
}

func TestEmitIsDeterministic(t *testing.T) {
	a := emitOrFatal(t, testSpec())
	if diff := cmp.Diff(string(a.Data), string(emitOrFatal(t, testSpec()).Data)); diff != "" {
		t.Errorf("two emissions differ (-first +second):\n%s", diff)
	}
	s := testSpec()
	for i, j := 0, len(s.Types)-1; i < j; i, j = i+1, j-1 {
		s.Types[i], s.Types[j] = s.Types[j], s.Types[i]
	}
	if diff := cmp.Diff(string(a.Data), string(emitOrFatal(t, s).Data)); diff != "" {
		t.Errorf("type order changes the output (-sorted +reversed):\n%s", diff)
	}
	if formatted, err := format.Source(a.Data); err != nil || !bytes.Equal(formatted, a.Data) {
		t.Errorf("the output is not gofmt'ed (%v)", err)
	}
	if want := "// " + emit.Header("*.cue") + "\n"; !bytes.HasPrefix(a.Data, []byte(want)) {
		t.Errorf("the output does not start with %q", want)
	}
	for _, want := range []string{
		"\npackage demo_test\n",
		`"github.com/dshkit/dsh/generated/demo"`,
		`var schemas = codectest.NewSchemas("../schema", "urn:dsh:schema:",`,
		"cmp.Comparer(func(a, b demo.Token) bool {\n\t\treturn a == b\n\t})",
		`t.Run("Decision/replace", func(t *testing.T) {`,
		`codectest.CheckVariant(t, schemas, "", "kind", demo.Tree(demo.Node{`,
		`codectest.CheckRecord(t, schemas, "Extra", closed, demo.Extra{`,
		`codectest.CheckRecord(t, schemas, "Wire", open, demo.Wire{`,
		`Path:  ptr("text-path"),`,
		`codectest.CheckNulls(t, schemas, "Wire", demo.Wire{`,
		`}, "holder", "tags")`,
		`Timeout: ptr(time.Millisecond),`,
	} {
		if !bytes.Contains(a.Data, []byte(want)) {
			t.Errorf("the output lacks %s", want)
		}
	}
	// Only the first field of an exclusive group is set; runtime fields never are.
	if bytes.Contains(a.Data, []byte("Value:")) || bytes.Contains(a.Data, []byte("Token:")) {
		t.Errorf("the output sets a second exclusive field or a runtime field")
	}
}

// TestWirePackage: a spec without events (a wire package) gets a round trip of every record,
// a header naming spec/wire and the schemas' namespaced $id.
func TestWirePackage(t *testing.T) {
	s := testSpec()
	s.Events, s.SessionEvents = nil, nil
	files, err := EmitWith(s, "generated/wire/demo", "generated/schema/demo", emit.Options{SpecDir: "wire"})
	if err != nil {
		t.Fatal(err)
	}
	data := files[0].Data
	for _, want := range []string{
		"// Code generated by dshgen from spec/wire/*.cue. DO NOT EDIT.\n",
		`var schemas = codectest.NewSchemas("../../schema/demo", "urn:dsh:schema:demo:"`,
		`codectest.CheckRecord(t, schemas, "Item", closed, demo.Item{`,
		`codectest.CheckRecord(t, schemas, "UserMessage", closed, demo.UserMessage{`,
		`codectest.CheckRecord(t, schemas, "Wire", open, demo.Wire{`,
	} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("the output lacks %s", want)
		}
	}
}

func TestSchemaDirRelative(t *testing.T) {
	files, err := Emit(testSpec(), "out/go/demo", "out/schemas")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(files[0].Data, []byte(`codectest.NewSchemas("../../schemas", `)) {
		t.Errorf("schemaDir is not the path from out/go/demo to out/schemas")
	}
}

// TestRecursiveSampleTerminates checks the sample of Tree/node: the first variant is
// chosen down to maxDepth, then the first variant with a finite value (Leaf); optional
// fields stop and lists empty past maxDepth.
func TestRecursiveSampleTerminates(t *testing.T) {
	s := testSpec()
	b := newSampler(s, "example.com/generated/demo")
	u := s.Lookup("Tree")
	got, err := b.variant(u, u.Variants[0])
	if err != nil {
		t.Fatal(err)
	}
	f := jen.NewFile("p")
	f.Var().Id("_").Op("=").Add(got)
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		t.Fatalf("the sample does not parse: %v", err)
	}
	src := buf.Bytes()
	// Nodes at depth 0 to 2 are full; a Tree at depth 3 is a Leaf (the variant with the
	// least nested finite value), and a Holder at depth 3 has no Weight and no Trees.
	text := string(src)
	if n := strings.Count(text, "demo.Node{"); n == 0 || n > 40 {
		t.Errorf("%d Nodes in the sample:\n%s", n, src)
	}
	if !strings.Contains(text, "demo.Leaf{") {
		t.Errorf("the recursion did not end in a Leaf:\n%s", src)
	}
	if !strings.Contains(text, "[]demo.Tree{},") || strings.Count(text, "Weight:") >= strings.Count(text, "demo.Holder{") {
		t.Errorf("a Holder past the depth limit has its list filled or its optional field set:\n%s", src)
	}
}

func TestNoFiniteSample(t *testing.T) {
	s := irtest.Small()
	a := record("Chicken", field("egg", "Egg", ref("Egg"), "!"))
	e := record("Egg", field("chicken", "Chicken", ref("Chicken"), "!"))
	s.Types = append(s.Types, a, e)
	s.SessionEvents = append(s.SessionEvents, &ir.SessionEvent{Type: "demo/chicken", GoName: "Chicken", Doc: "a test event.",
		File: "extra.cue", Data: a, Owner: "runtime"})
	if err := s.Link(); err != nil {
		t.Fatal(err)
	}
	s.Sort()
	_, err := Emit(s, "generated/demo", "generated/schema")
	if err == nil || !strings.Contains(err.Error(), "no finite sample value") {
		t.Fatalf("Emit: %v, want a no finite sample value error", err)
	}
}

// goTool returns the go command that runs this test, or skips.
func goTool(t *testing.T) string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	p := filepath.Join(build.Default.GOROOT, "bin", "go")
	if _, err := os.Stat(p); err != nil {
		t.Skip("no go command")
	}
	return p
}

// TestGeneratedTestPasses runs the emitted test against the emitted Go types and schemas
// of testSpec in a throwaway module that has this repository's module path, go.mod and
// go.sum (offline: the module cache holds go-cmp and jsonschema). It then breaks one schema
// and requires the emitted test to fail.
func TestGeneratedTestPasses(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not running the generated test")
	}
	s := testSpec()
	dir := t.TempDir()
	var files []emit.File
	for _, step := range []func() ([]emit.File, error){
		func() ([]emit.File, error) { return gotypes.Emit(s, "generated/demo") },
		func() ([]emit.File, error) { return schema.Emit(s, "generated/schema") },
		func() ([]emit.File, error) { return Emit(s, "generated/demo", "generated/schema") },
	} {
		fs, err := step()
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	files = append(files, gentest.RuntimeFiles(t, true)...)
	for _, name := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "..", name))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, emit.File{Path: name, Data: data})
	}
	write := func(f emit.File) {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		write(f)
	}
	goTest := func() (string, error) {
		cmd := exec.Command(goTool(t), "test", "-count=1", "-v", "./generated/demo")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local", "GOPROXY=off")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := goTest()
	if err != nil {
		t.Fatalf("the generated test fails: %v\n%s", err, out)
	}
	for _, sub := range []string{"Tree/node", "Tree/leaf", "Decision/replace", "Extra", "Forest", "DemoPayload", "Wire", "Wire/nulls"} {
		if !strings.Contains(out, "--- PASS: TestRoundTrip/"+sub+" ") {
			t.Errorf("subtest %s did not pass:\n%s", sub, out)
		}
	}

	// A schema that forgets a field must fail the generated test.
	write(emit.File{Path: "generated/schema/Started.schema.json",
		Data: []byte(`{"type": "object", "properties": {}, "additionalProperties": false}`)})
	out, err = goTest()
	if err == nil || !strings.Contains(out, "--- FAIL: TestRoundTrip/Started") {
		t.Errorf("the generated test passes with a broken schema: %v\n%s", err, out)
	}
}
