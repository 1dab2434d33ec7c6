package gotypes

import (
	"bytes"
	"go/build"
	"go/format"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dshkit/dsh/gen/emit"
	"github.com/dshkit/dsh/gen/internal/gentest"
	"github.com/dshkit/dsh/gen/ir"
	"github.com/dshkit/dsh/gen/ir/irtest"
)

// testSpec is irtest.Small() plus Extra, a record in its own spec file holding the field
// shapes Small lacks: a required union, a map of unions, a list of enums, string and enum
// defaults, durations, a Token handle, a regular map and a keyword-named field; and Wire, an
// open record in wire.cue with nullable fields of every presence and shape.
func testSpec() *ir.Spec {
	s := irtest.Small()
	named := func(n string) *ir.TypeRef { return &ir.TypeRef{Kind: ir.Named, Name: n} }
	of := func(k ir.RefKind, elem *ir.TypeRef) *ir.TypeRef { return &ir.TypeRef{Kind: k, Elem: elem} }
	at := func(line int) ir.Pos { return ir.Pos{File: "extra.cue", Line: line, Col: 1} }
	s.Types = append(s.Types, &ir.Type{
		Name: "Extra", Doc: "Extra exercises the field shapes Small lacks.", File: "extra.cue", Pos: at(3), Kind: ir.Record,
		Fields: []*ir.Field{
			{JSONName: "verdict", GoName: "Verdict", Doc: "verdict is a required union.", Type: named("Verdict"), Required: true, Pos: at(5)},
			{JSONName: "byKind", GoName: "ByKind", Doc: "byKind is a map of unions.", Type: of(ir.Map, named("Decision")), Optional: true, Pos: at(6)},
			{JSONName: "colors", GoName: "Colors", Doc: "colors is a regular list of enums.", Type: of(ir.List, named("Color")), Pos: at(7)},
			{JSONName: "mode", GoName: "Mode", Doc: "mode is a regular enum with a default.", Type: named("Color"), Default: `"dark-blue"`, Pos: at(8)},
			{JSONName: "name", GoName: "Name", Doc: "name is a regular string with a default.", Type: &ir.TypeRef{Kind: ir.String}, Default: `"anon"`, Pos: at(9)},
			{JSONName: "wait", GoName: "Wait", Doc: "wait is a duration in milliseconds.", Type: &ir.TypeRef{Kind: ir.Duration}, Required: true, Pos: at(10)},
			{JSONName: "timeout", GoName: "Timeout", Doc: "timeout is an optional duration.", Type: &ir.TypeRef{Kind: ir.Duration}, Optional: true, Pos: at(11)},
			{JSONName: "token", GoName: "Token", Doc: "token identifies the execution.", Type: &ir.TypeRef{Kind: ir.Handle, Name: "Token"}, Required: true, Runtime: true, Pos: at(12)},
			{JSONName: "labels", GoName: "Labels", Doc: "labels is a regular map.", Type: of(ir.Map, &ir.TypeRef{Kind: ir.String}), Pos: at(13)},
			{JSONName: "type", GoName: "Type", Doc: "type has a keyword for a name.", Type: &ir.TypeRef{Kind: ir.String}, Optional: true, Pos: at(14)},
		},
	})
	wat := func(line int) ir.Pos { return ir.Pos{File: "wire.cue", Line: line, Col: 1} }
	null := func(f *ir.Field) *ir.Field { f.Nullable = true; return f }
	s.Types = append(s.Types, &ir.Type{
		Name: "Wire", Doc: "Wire is an open record with nullable fields.", File: "wire.cue", Pos: wat(3), Kind: ir.Record, Open: true,
		Fields: []*ir.Field{
			null(&ir.Field{JSONName: "path", GoName: "Path", Doc: "path is a required nullable string.", Type: &ir.TypeRef{Kind: ir.String}, Required: true, Pos: wat(5)}),
			null(&ir.Field{JSONName: "mode", GoName: "Mode", Doc: "mode is a required nullable enum.", Type: named("Color"), Required: true, Pos: wat(6)}),
			null(&ir.Field{JSONName: "verdict", GoName: "Verdict", Doc: "verdict is a required nullable union.", Type: named("Verdict"), Required: true, Pos: wat(7)}),
			null(&ir.Field{JSONName: "item", GoName: "Item", Doc: "item is an optional nullable record.", Type: named("Item"), Optional: true, Pos: wat(8)}),
			null(&ir.Field{JSONName: "tags", GoName: "Tags", Doc: "tags is an optional nullable list.", Type: of(ir.List, &ir.TypeRef{Kind: ir.String}), Optional: true, Pos: wat(9)}),
			null(&ir.Field{JSONName: "wait", GoName: "Wait", Doc: "wait is a regular nullable duration.", Type: &ir.TypeRef{Kind: ir.Duration}, Pos: wat(10)}),
			null(&ir.Field{JSONName: "note", GoName: "Note", Doc: "note is a regular nullable string defaulting to null.", Type: &ir.TypeRef{Kind: ir.String}, Default: "null", Pos: wat(11)}),
			null(&ir.Field{JSONName: "label", GoName: "Label", Doc: "label is a regular nullable string defaulting to x.", Type: &ir.TypeRef{Kind: ir.String}, Default: `"x"`, Pos: wat(12)}),
		},
	})
	for _, t := range s.Types {
		t.Accessors = t.Kind == ir.Record // as irtest.Small marks its own
	}
	if err := s.Link(); err != nil {
		panic(err)
	}
	s.Sort()
	return s
}

// TestAccessorsAreOptIn: a type the spec does not mark gets no accessor; a marked record
// gets its own; a marked union puts its shared methods in its interface and gives every
// variant its accessors.
func TestAccessorsAreOptIn(t *testing.T) {
	files := func(s *ir.Spec) map[string]string {
		out := map[string]string{}
		for _, f := range emitOrFatal(t, s, "generated/dsh") {
			out[path.Base(f.Path)] = string(f.Data)
		}
		return out
	}
	unmarked := irtest.Small()
	for _, ty := range unmarked.Types {
		ty.Accessors = false
	}
	got := files(unmarked)
	if acc, ok := got["demo_accessors.go"]; ok {
		t.Errorf("no type is marked, yet demo_accessors.go was emitted:\n%s", acc)
	}
	if strings.Contains(got["demo_types.go"], "GetItems") {
		t.Errorf("unmarked union Decision has accessor methods in its interface")
	}

	record := irtest.Small()
	for _, ty := range record.Types {
		ty.Accessors = ty.Name == "Item"
	}
	acc := files(record)["demo_accessors.go"]
	for _, want := range []string{"func (v Item) GetRatio()", "func (v Item) WithOK("} {
		if !strings.Contains(acc, want) {
			t.Errorf("marked record Item: no %q in demo_accessors.go:\n%s", want, acc)
		}
	}
	if strings.Contains(acc, "DemoReplace") {
		t.Errorf("unmarked DemoReplace has accessors:\n%s", acc)
	}

	union := irtest.Small()
	for _, ty := range union.Types {
		ty.Accessors = ty.Name == "Decision"
	}
	got = files(union)
	if !strings.Contains(got["demo_accessors.go"], "func (v DemoReplace) AppendItems(") {
		t.Errorf("marked union Decision: its variant DemoReplace has no AppendItems:\n%s", got["demo_accessors.go"])
	}
	if strings.Contains(got["demo_accessors.go"], "func (v Item)") {
		t.Errorf("unmarked Item has accessors:\n%s", got["demo_accessors.go"])
	}
}

func emitOrFatal(t *testing.T, s *ir.Spec, outDir string) []emit.File {
	t.Helper()
	files, err := Emit(s, outDir)
	if err != nil {
		t.Fatalf("Emit: %v", err)
	}
	return files
}

func TestEmitIsDeterministic(t *testing.T) {
	a := emitOrFatal(t, testSpec(), "generated/dsh")
	b := emitOrFatal(t, testSpec(), "generated/dsh")
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two emissions differ (-first +second):\n%s", diff)
	}
	// The loader's order must not matter either.
	s := testSpec()
	for i, j := 0, len(s.Types)-1; i < j; i, j = i+1, j-1 {
		s.Types[i], s.Types[j] = s.Types[j], s.Types[i]
	}
	if diff := cmp.Diff(a, emitOrFatal(t, s, "generated/dsh")); diff != "" {
		t.Errorf("type order changes the output (-sorted +reversed):\n%s", diff)
	}
}

func TestEmitFilesAndHeaders(t *testing.T) {
	files := emitOrFatal(t, testSpec(), "generated/dsh")
	want := map[string]string{
		"generated/dsh/demo_types.go":   "demo.cue",
		"generated/dsh/extra_types.go":  "extra.cue",
		"generated/dsh/log_types.go":    "log.cue",
		"generated/dsh/meta_codec.go":   "meta.cue",
		"generated/dsh/meta_handles.go": "meta.cue",
		"generated/dsh/wire_types.go":   "wire.cue",
	}
	// Accessor files (accessors.go) are attributed to the spec file of their types.
	for _, base := range []string{"demo", "extra", "wire"} {
		want["generated/dsh/"+base+"_accessors.go"] = base + ".cue"
	}
	if len(files) != len(want) {
		t.Errorf("got %d files, want %d", len(files), len(want))
	}
	for _, f := range files {
		spec, ok := want[f.Path]
		if !ok {
			t.Errorf("unexpected file %s", f.Path)
			continue
		}
		header := "// " + emit.Header(spec) + "\n"
		if !bytes.HasPrefix(f.Data, []byte(header)) {
			first, _, _ := strings.Cut(string(f.Data), "\n")
			t.Errorf("%s starts with %q, want %q", f.Path, first, header)
		}
		if !bytes.Contains(f.Data, []byte("\npackage demo\n")) {
			t.Errorf("%s is not in package demo", f.Path)
		}
		if formatted, err := format.Source(f.Data); err != nil || !bytes.Equal(formatted, f.Data) {
			t.Errorf("%s is not gofmt'ed (%v)", f.Path, err)
		}
	}
}

func TestWireHeaders(t *testing.T) {
	files, err := EmitWith(testSpec(), "generated/wire/demo", emit.Options{SpecDir: "wire"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		want := "// Code generated by dshgen from spec/wire/" + strings.TrimSuffix(strings.TrimSuffix(path.Base(f.Path), "_types.go"), "_accessors.go") + ".cue. DO NOT EDIT.\n"
		if strings.HasPrefix(path.Base(f.Path), "meta_") {
			want = "// " + emit.Header("meta.cue") + "\n" // the shared machinery, from spec/meta.cue
		}
		if !bytes.HasPrefix(f.Data, []byte(want)) {
			first, _, _ := strings.Cut(string(f.Data), "\n")
			t.Errorf("%s starts with %q, want %q", f.Path, first, want)
		}
	}
}

func TestHandlesOnlyWhenUsed(t *testing.T) {
	files := emitOrFatal(t, irtest.Small(), "out")
	var handles []byte
	for _, f := range files {
		if f.Path == "out/meta_handles.go" {
			handles = f.Data
		}
	}
	if !bytes.Contains(handles, []byte("type Agent interface")) {
		t.Errorf("meta_handles.go lacks Agent:\n%s", handles)
	}
	if bytes.Contains(handles, []byte("Token")) {
		t.Errorf("meta_handles.go declares Token, which Small does not use:\n%s", handles)
	}
}

func TestEmitErrors(t *testing.T) {
	cases := map[string]struct {
		edit func(s *ir.Spec)
		want string
	}{
		"unknown handle": {func(s *ir.Spec) {
			s.Lookup("DemoPayload").Fields[0].Type.Name = "Robot"
		}, `unknown handle "Robot"`},
		"agent without UserMessage": {func(s *ir.Spec) {
			s.Lookup("UserMessage").Name = "Message"
			s.Sort()
		}, "no UserMessage record"},
		"bad default": {func(s *ir.Spec) {
			s.Lookup("Item").Fields[1].Default = `"one"`
		}, "not a valid int"},
		"exclusive required field": {func(s *ir.Spec) {
			s.Lookup("DemoReplace").Exclusive = [][]string{{"items", "kind"}}
		}, "not an optional field"},
		"name clash": {func(s *ir.Spec) {
			s.Lookup("Started").Name = "DecisionKinds"
			s.Sort()
		}, "DecisionKinds"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			s := irtest.Small()
			c.edit(s)
			_, err := Emit(s, "out")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Emit: %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func TestNames(t *testing.T) {
	for in, want := range map[string]string{"Reason": "reason", "ID": "id", "URLPath": "urlPath", "CallID": "callID", "Type": "type_", "OK": "ok"} {
		if got := paramName(in); got != want {
			t.Errorf("paramName(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"allow": "Allow", "tool-use": "ToolUse", "dark_blue2": "DarkBlue2"} {
		if got := camel(in); got != want {
			t.Errorf("camel(%q) = %q, want %q", in, got, want)
		}
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

// writeModule writes the emitted test spec as package demo of a throwaway module, with
// testdata/demo_test.go next to it, and returns the module directory.
func writeModule(t *testing.T) string {
	dir := t.TempDir()
	files := emitOrFatal(t, testSpec(), "demo")
	test, err := os.ReadFile(filepath.Join("testdata", "demo_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, gentest.ModuleFiles(t, "example.com/gentest")...)
	files = append(files, emit.File{Path: "demo/demo_test.go", Data: test})
	for _, f := range files {
		writeFile(t, filepath.Join(dir, filepath.FromSlash(f.Path)), f.Data)
	}
	return dir
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// run runs the go command with args in dir, offline and in module mode, sharing the
// build cache, and returns its combined output and error.
func run(t *testing.T, dir string, args ...string) (string, error) {
	cmd := exec.Command(goTool(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local", "GOPROXY=off")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestGeneratedCode vets and tests the emitted code in a throwaway module, and checks that
// a Switch call missing a variant does not compile.
func TestGeneratedCode(t *testing.T) {
	dir := writeModule(t)
	if out, err := run(t, dir, "vet", "./demo"); err != nil {
		t.Fatalf("go vet: %v\n%s", err, out)
	}
	if out, err := run(t, dir, "test", "-count=1", "./demo"); err != nil {
		t.Fatalf("go test: %v\n%s", err, out)
	}

	call := func(args string) []byte {
		return []byte("package use\n\nimport \"example.com/gentest/demo\"\n\n" +
			"func Name(d demo.Decision) string {\n\treturn demo.SwitchDecision(d" + args + ")\n}\n")
	}
	allow := ",\n\t\tfunc(demo.DemoAllow) string { return \"allow\" }"
	deny := ",\n\t\tfunc(demo.DemoDeny) string { return \"deny\" }"
	replace := ",\n\t\tfunc(demo.DemoReplace) string { return \"replace\" },\n\t"
	writeFile(t, filepath.Join(dir, "complete", "use.go"), call(allow+deny+replace))
	if out, err := run(t, dir, "build", "./complete"); err != nil {
		t.Fatalf("a complete Switch call does not build: %v\n%s", err, out)
	}
	writeFile(t, filepath.Join(dir, "missing", "use.go"), call(allow+deny+",\n\t"))
	out, err := run(t, dir, "build", "./missing")
	if err == nil {
		t.Fatal("a Switch call missing a variant builds")
	}
	if !strings.Contains(out, "not enough arguments") {
		t.Errorf("the build fails for another reason:\n%s", out)
	}
}
