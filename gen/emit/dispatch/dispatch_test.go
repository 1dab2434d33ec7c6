package dispatch

import (
	"bytes"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshkit/dsh/gen/emit"
	"github.com/dshkit/dsh/gen/emit/gotypes"
	"github.com/dshkit/dsh/gen/internal/gentest"
	"github.com/dshkit/dsh/gen/ir"
	"github.com/dshkit/dsh/gen/ir/irtest"
)

// fixture is irtest.Small plus a second spec file, nested.cue, whose events reach their
// subject through a record (a required one, then an optional one) and an optional string,
// or have no subject, and which declares a second session event.
func fixture(t testing.TB) *ir.Spec {
	t.Helper()
	s := irtest.Small()
	pos := func(line int) ir.Pos { return ir.Pos{File: "nested.cue", Line: line, Col: 1} }
	str := func() *ir.TypeRef { return &ir.TypeRef{Kind: ir.String} }
	execT := &ir.Type{Name: "Exec", Doc: "Exec is a nested record holding an optional subject.", File: "nested.cue", Pos: pos(3), Kind: ir.Record,
		Fields: []*ir.Field{{JSONName: "agentId", GoName: "AgentID", Doc: "agentId is the subject, if any.", Type: str(), Optional: true, Pos: pos(5)}}}
	payload := &ir.Type{Name: "NestedPayload", Doc: "NestedPayload reaches its subject through records.", File: "nested.cue", Pos: pos(8), Kind: ir.Record,
		Fields: []*ir.Field{
			{JSONName: "exec", GoName: "Exec", Doc: "exec is required.", Type: &ir.TypeRef{Kind: ir.Named, Name: "Exec"}, Required: true, Pos: pos(10)},
			{JSONName: "opt", GoName: "Opt", Doc: "opt is optional.", Type: &ir.TypeRef{Kind: ir.Named, Name: "Exec"}, Optional: true, Pos: pos(12)},
		}}
	ended := &ir.Type{Name: "Ended", Doc: "Ended is session event data.", File: "nested.cue", Pos: pos(15), Kind: ir.Record,
		Fields: []*ir.Field{{JSONName: "reason", GoName: "Reason", Doc: "reason says why.", Type: str(), Required: true, Pos: pos(17)}}}
	s.Types = append(s.Types, execT, payload, ended)
	ev := func(name, stem string, d ir.Domain, subject []string, line int) *ir.Event {
		return &ir.Event{Name: name, GoName: stem, Doc: name + " is a nested " + string(d) + ".\nIts doc has two lines.",
			File: "nested.cue", Pos: pos(line), Domain: d, Payload: payload, Subject: subject}
	}
	s.Events = append(s.Events,
		ev("nested/note", "Note", ir.Notification, []string{"Exec", "AgentID"}, 20),
		ev("nested/deep", "Deep", ir.Observer, []string{"Opt", "AgentID"}, 24),
		ev("nested/plain", "Plain", ir.Notification, nil, 28),
	)
	s.SessionEvents = append(s.SessionEvents, &ir.SessionEvent{Type: "nested/ended", GoName: "NestedEnded",
		Doc: "nested/ended records an end.", File: "nested.cue", Pos: pos(32), Data: ended, Owner: "hooks"})
	if err := s.Link(); err != nil {
		t.Fatal(err)
	}
	s.Sort()
	return s
}

const outDir = "generated/demo"

func emitFixture(t testing.TB) []emit.File {
	t.Helper()
	files, err := Emit(fixture(t), outDir)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestFiles(t *testing.T) {
	files := emitFixture(t)
	var got []string
	for _, f := range files {
		got = append(got, f.Path)
	}
	want := []string{
		"generated/demo/demo_events.go",
		"generated/demo/log_session.go",
		"generated/demo/meta_registry.go",
		"generated/demo/meta_session.go",
		"generated/demo/nested_events.go",
		"generated/demo/nested_session.go",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("files:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, f := range files {
		out, err := format.Source(f.Data)
		if err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		if !bytes.Equal(out, f.Data) {
			t.Errorf("%s is not gofmt'ed", f.Path)
		}
		for _, imp := range importsOf(t, f) {
			base := path.Base(f.Path)
			runtime := (imp == "github.com/dshkit/dsh/codec" && base == "meta_session.go") ||
				(imp == "github.com/dshkit/dsh/codec/dispatch" && (base == "meta_registry.go" || strings.HasSuffix(base, "_events.go")))
			if strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") && !runtime {
				t.Errorf("%s imports %s, not from the standard library (nor the codec runtime: codec in meta_session.go, codec/dispatch in meta_registry.go and the events files)", f.Path, imp)
			}
		}
	}
}

func importsOf(t *testing.T, f emit.File) []string {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), f.Path, f.Data, parser.ImportsOnly)
	if err != nil {
		t.Fatalf("%s: %v", f.Path, err)
	}
	var out []string
	for _, imp := range file.Imports {
		out = append(out, strings.Trim(imp.Path.Value, `"`))
	}
	return out
}

func TestHeader(t *testing.T) {
	want := map[string]string{
		"demo_events.go":    "demo.cue",
		"log_session.go":    "log.cue",
		"meta_registry.go":  "meta.cue",
		"meta_session.go":   "meta.cue",
		"nested_events.go":  "nested.cue",
		"nested_session.go": "nested.cue",
	}
	for _, f := range emitFixture(t) {
		first, _, _ := strings.Cut(string(f.Data), "\n")
		if w := "// " + emit.Header(want[filepath.Base(f.Path)]); first != w {
			t.Errorf("%s: first line %q, want %q", f.Path, first, w)
		}
	}
}

func TestDeterministic(t *testing.T) {
	a := emitFixture(t)
	for i := 0; i < 5; i++ {
		// A spec whose lists come in another order must give the same output.
		s := fixture(t)
		for l, r := 0, len(s.Events)-1; l < r; l, r = l+1, r-1 {
			s.Events[l], s.Events[r] = s.Events[r], s.Events[l]
		}
		for l, r := 0, len(s.SessionEvents)-1; l < r; l, r = l+1, r-1 {
			s.SessionEvents[l], s.SessionEvents[r] = s.SessionEvents[r], s.SessionEvents[l]
		}
		s.Sort()
		b, err := Emit(s, outDir)
		if err != nil {
			t.Fatal(err)
		}
		if len(a) != len(b) {
			t.Fatalf("run %d: %d files, then %d", i, len(a), len(b))
		}
		for j := range a {
			if a[j].Path != b[j].Path || !bytes.Equal(a[j].Data, b[j].Data) {
				t.Fatalf("run %d: %s differs", i, a[j].Path)
			}
		}
	}
}

func TestRejects(t *testing.T) {
	cases := []struct {
		want   string
		mutate func(s *ir.Spec)
	}{
		{"is not a variant", func(s *ir.Spec) { eventNamed(s, "demo/policy").Default = "nope" }},
		{"needs a default", func(s *ir.Spec) { eventNamed(s, "demo/policy").Default = "" }},
		{"has no field", func(s *ir.Spec) { eventNamed(s, "demo/policy").Subject = []string{"Nope"} }},
		{"not a record on the way to a string", func(s *ir.Spec) { eventNamed(s, "demo/policy").Subject = []string{"Item"} }},
		{"clashes with event", func(s *ir.Spec) { eventNamed(s, "demo/policy").GoName = "DemoGuard" }},
		{"clashes with Registrar", func(s *ir.Spec) { eventNamed(s, "demo/guard").GoName = "Close" }},
		{"clashes with Registry (from type", func(s *ir.Spec) { s.Lookup("UserMessage").Name = "Registry" }},
		{"share the data", func(s *ir.Spec) { s.SessionEvents[1].Data = s.SessionEvents[0].Data }},
		{"has no decision", func(s *ir.Spec) { eventNamed(s, "demo/seen").Decision = s.Lookup("Decision") }},
		{"needs a decision union", func(s *ir.Spec) { eventNamed(s, "demo/guard").Decision = s.Lookup("Item") }},
	}
	for _, c := range cases {
		s := fixture(t)
		c.mutate(s)
		_, err := Emit(s, outDir)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got error %v", c.want, err)
		}
	}
}

func eventNamed(s *ir.Spec, name string) *ir.Event {
	for _, e := range s.Events {
		if e.Name == name {
			return e
		}
	}
	panic(name)
}

// TestGenerated compiles the generated package, with the types gen/emit/gotypes emits for
// the same spec, in a throwaway module, then runs go vet and the behavioural tests of
// testdata/inner_test.go under -race.
func TestGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a module")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	dir := t.TempDir()
	write := func(name string, data []byte) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range gentest.ModuleFiles(t, "example.com/gentest") {
		write(f.Path, f.Data)
	}
	types, err := gotypes.Emit(fixture(t), outDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(types, emitFixture(t)...) {
		write(f.Path, f.Data)
	}
	data, err := os.ReadFile(filepath.Join("testdata", "inner_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	write(outDir+"/inner_test.go", data)
	run := func(args ...string) {
		cmd := exec.Command(goTool, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		t.Logf("go %s:\n%s", strings.Join(args, " "), out)
	}
	run("vet", "./...")
	run("test", "-race", "-count=1", "./...")
}

// TestDocComments checks that every exported declaration of the generated files, and every
// exported field and interface method, has a doc comment.
func TestDocComments(t *testing.T) {
	for _, f := range emitFixture(t) {
		file, err := parser.ParseFile(token.NewFileSet(), f.Path, f.Data, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		missing := func(name string, docs ...*ast.CommentGroup) {
			if !ast.IsExported(name[strings.LastIndex(name, ".")+1:]) {
				return
			}
			for _, d := range docs {
				if d != nil && strings.TrimSpace(d.Text()) != "" {
					return
				}
			}
			t.Errorf("%s: %s has no doc comment", f.Path, name)
		}
		for _, decl := range file.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				missing(d.Name.Name, d.Doc)
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						missing(s.Name.Name, s.Doc, d.Doc)
						var fields *ast.FieldList
						switch tt := s.Type.(type) {
						case *ast.StructType:
							fields = tt.Fields
						case *ast.InterfaceType:
							fields = tt.Methods
						}
						if fields != nil {
							for _, fl := range fields.List {
								for _, n := range fl.Names {
									missing(s.Name.Name+"."+n.Name, fl.Doc, fl.Comment)
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							missing(n.Name, s.Doc, d.Doc)
						}
					}
				}
			}
		}
	}
}

// TestNoEvents: a spec with neither events nor session events (a wire package) gets no
// dispatch files at all, not even the registry.
func TestNoEvents(t *testing.T) {
	s := fixture(t)
	s.Events, s.SessionEvents = nil, nil
	files, err := Emit(s, "generated/wire/demo")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Errorf("a spec without events got %s", f.Path)
	}
}
