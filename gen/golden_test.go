package gen_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/dshkit/dsh/gen"
	"github.com/dshkit/dsh/gen/emit"
	"github.com/dshkit/dsh/gen/internal/gentest"
	"github.com/dshkit/dsh/spec"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// A golden case is a txtar archive: its spec/*.cue files are the input (meta.cue is the
// real one unless the case brings its own), with wire packages in spec/wire/*.cue, and every
// other file is an expected output of one emitter, named by its path. Run
// `go test ./gen -update` to rewrite the outputs.
func TestGolden(t *testing.T) {
	cases, err := filepath.Glob("testdata/golden/*.txtar")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(filepath.Base(c), ".txtar"), func(t *testing.T) {
			a, err := txtar.ParseFile(c)
			if err != nil {
				t.Fatal(err)
			}
			files := generate(t, a)
			if *update {
				var kept []txtar.File
				for _, f := range a.Files {
					if strings.HasPrefix(f.Name, "spec/") {
						kept = append(kept, f)
					}
				}
				for _, f := range files {
					kept = append(kept, txtar.File{Name: f.Path, Data: f.Data})
				}
				a.Files = kept
				if err := os.WriteFile(c, txtar.Format(a), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := map[string][]byte{}
			for _, f := range a.Files {
				if !strings.HasPrefix(f.Name, "spec/") {
					want[f.Name] = f.Data
				}
			}
			for _, f := range files {
				w, ok := want[f.Path]
				if !ok {
					t.Errorf("%s: generated but not in the golden file (run go test ./gen -update)", f.Path)
					continue
				}
				delete(want, f.Path)
				if !bytes.Equal(w, f.Data) {
					t.Errorf("%s differs from the golden file (run go test ./gen -update and review the diff)", f.Path)
				}
			}
			for p := range want {
				t.Errorf("%s: in the golden file but no longer generated", p)
			}
			compile(t, files)
		})
	}
}

// generate loads the spec tree of a golden case and runs every emitter.
func generate(t *testing.T, a *txtar.Archive) []emit.File {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "spec")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	meta, err := spec.FS.ReadFile("meta.cue")
	if err != nil {
		t.Fatal(err)
	}
	pkg := "dsh"
	for _, f := range a.Files {
		if rest, ok := strings.CutPrefix(f.Name, "spec/"); ok && !strings.Contains(rest, "/") {
			if m := regexp.MustCompile(`(?m)^package (\w+)`).FindSubmatch(f.Data); m != nil {
				pkg = string(m[1])
			}
		}
	}
	meta = bytes.Replace(meta, []byte("\npackage dsh\n"), []byte("\npackage "+pkg+"\n"), 1)
	if err := os.WriteFile(filepath.Join(dir, "meta.cue"), meta, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range a.Files {
		if name, ok := strings.CutPrefix(f.Name, "spec/"); ok {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	tree, err := gen.Load(dir, "spec", gen.DefaultLayout)
	if err != nil {
		t.Fatal(err)
	}
	files, err := tree.Files()
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// compile builds and vets the generated Go of a case in a throwaway module: the
// generated package must compile on its own, with the standard library and the codec
// runtime only. The generated
// test files are left out: they also import go-cmp and jsonschema, which the throwaway
// module does not require; `go test ./generated/...` and gen/emit/gotests' own tests run
// them.
func compile(t *testing.T, files []emit.File) {
	t.Helper()
	if testing.Short() {
		t.Log("-short: not compiling the generated Go")
		return
	}
	mod := t.TempDir()
	write := func(p string, data []byte) {
		full := filepath.Join(mod, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", []byte("module "+gen.Module+"\n\ngo 1.26\n")) // the module path generated imports use
	for _, f := range gentest.RuntimeFiles(t, false) {
		write(f.Path, f.Data) // the codec runtime the generated Go imports
	}
	n := 0
	for _, f := range files {
		switch {
		case strings.HasSuffix(f.Path, "_test.go"):
		case strings.HasSuffix(f.Path, ".go"):
			write(f.Path, f.Data)
			n++
		case strings.HasPrefix(f.Path, "generated/"):
			write(f.Path, f.Data) // files the Go embeds, e.g. scenarios.json
		}
	}
	if n == 0 {
		t.Fatal("the case generated no Go")
	}
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generated Go does not compile or vet:\n%s", out)
	}
}

// embeddedTree generates the tree of the embedded spec: the canonical spec, its wire
// packages and the bridge tables.
func embeddedTree(t testing.TB) []emit.File {
	t.Helper()
	tree, err := gen.LoadFS(spec.FS, "spec", gen.DefaultLayout)
	if err != nil {
		t.Fatal(err)
	}
	files, err := tree.Files()
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestDeterministic generates the real spec tree twice, in two separate loads, and requires
// byte-identical trees.
func TestDeterministic(t *testing.T) {
	run := func() []emit.File { return embeddedTree(t) }
	a, b := run(), run()
	if len(a) != len(b) {
		t.Fatalf("%d files, then %d", len(a), len(b))
	}
	for i := range a {
		if a[i].Path != b[i].Path || !bytes.Equal(a[i].Data, b[i].Data) {
			t.Errorf("%s differs between two runs", a[i].Path)
		}
	}
}

// TestCommittedTreeIsFresh is `dshgen check` as a test: the committed generated/ (wire
// packages and hookmap included) and docs/catalog.md are exactly what the embedded spec
// produces.
func TestCommittedTreeIsFresh(t *testing.T) {
	files := embeddedTree(t)
	diffs, err := gen.Stale("..", files)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Errorf("stale generated file (run go generate ./spec):\n%.2000s", d)
	}
}

// TestEmbeddedTreeIsOnDisk requires the embedded spec (spec.FS) to be the spec tree on disk,
// wire packages and bridge tables included: the same units, types and events, and the same
// generated tree.
func TestEmbeddedTreeIsOnDisk(t *testing.T) {
	embedded, err := gen.LoadFS(spec.FS, "spec", gen.DefaultLayout)
	if err != nil {
		t.Fatal(err)
	}
	disk, err := gen.Load("../spec", "spec", gen.DefaultLayout)
	if err != nil {
		t.Fatal(err)
	}
	summary := func(units []gen.Unit) []string {
		var out []string
		for _, u := range units {
			out = append(out, fmt.Sprintf("%s %s %s %s: %d types, %d events, %d session events, %d scenarios",
				u.Spec.Package, u.Layout.GoDir, u.Layout.SchemaDir, u.Layout.DocsFile,
				len(u.Spec.Types), len(u.Spec.Events), len(u.Spec.SessionEvents), len(u.Spec.Scenarios)))
		}
		return out
	}
	if diff := cmp.Diff(summary(disk.Units), summary(embedded.Units)); diff != "" {
		t.Errorf("the embedded spec tree differs from spec/ (-disk +embedded):\n%s", diff)
	}
	var pkgs []string
	for _, u := range embedded.Units[1:] {
		pkgs = append(pkgs, u.Spec.Package)
	}
	if got := strings.Join(pkgs, " "); got != "claudecode codex gemini conformance" {
		t.Errorf("packages beside the canonical surface = %q, want \"claudecode codex gemini conformance\"", got)
	}
	if len(disk.Bridges) != 3 || len(embedded.Bridges) != 3 {
		t.Errorf("bridge tables: %d on disk, %d embedded; want 3", len(disk.Bridges), len(embedded.Bridges))
	}
	a, err := disk.Files()
	if err != nil {
		t.Fatal(err)
	}
	b := embeddedTree(t)
	if len(a) != len(b) {
		t.Fatalf("%d files from spec/, %d from the embedded spec", len(a), len(b))
	}
	for i := range a {
		if a[i].Path != b[i].Path || !bytes.Equal(a[i].Data, b[i].Data) {
			t.Errorf("%s differs between spec/ and the embedded spec", a[i].Path)
		}
	}
}

// BenchmarkCheck measures `dshgen check` on the full spec tree in process: load and
// evaluate the CUE, run every emitter, compare with the committed tree.
func BenchmarkCheck(b *testing.B) {
	for b.Loop() {
		tree, err := gen.Load("../spec", "spec", gen.DefaultLayout)
		if err != nil {
			b.Fatal(err)
		}
		files, err := tree.Files()
		if err != nil {
			b.Fatal(err)
		}
		if diffs, err := gen.Stale("..", files); err != nil || len(diffs) > 0 {
			b.Fatalf("stale: %v %d", err, len(diffs))
		}
	}
}
