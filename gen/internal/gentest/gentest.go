// Package gentest gives the generator's tests what a throwaway module needs to build and
// test generated code: the hand-written packages it imports from this repository, the codec
// runtime (github.com/dshkit/dsh/codec) and its test support (codec/codectest).
package gentest

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshkit/dsh/gen/emit"
)

// Module is this repository's module path.
const Module = "github.com/dshkit/dsh"

// RepoRoot returns the directory of this repository's go.mod, found from the working
// directory up.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(data), "module "+Module+"\n") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no go.mod of %s above the working directory", Module)
		}
		dir = parent
	}
}

// RuntimeFiles returns the Go files (tests excluded) of the codec runtime, at their paths
// in this repository ("codec/encode.go", ...), and those of codec/codectest when withTest is
// set (it imports go-cmp and jsonschema, which the module must then require).
func RuntimeFiles(t testing.TB, withTest bool) []emit.File {
	t.Helper()
	dirs := []string{"codec", "codec/dispatch"}
	if withTest {
		dirs = append(dirs, "codec/codectest")
	}
	root := RepoRoot(t)
	var files []emit.File
	for _, dir := range dirs {
		names, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(dir), "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, emit.File{Path: path.Join(dir, filepath.Base(name)), Data: data})
		}
	}
	if len(files) == 0 {
		t.Fatal("no codec runtime files found")
	}
	return files
}

// ModuleFiles returns the files of a throwaway module named module that builds generated
// code offline: its go.mod, which requires this repository's module and replaces it with a
// copy under dsh/ holding only the codec runtime (standard library only).
func ModuleFiles(t testing.TB, module string) []emit.File {
	t.Helper()
	files := []emit.File{
		{Path: "go.mod", Data: []byte("module " + module + "\n\ngo 1.26\n\nrequire " + Module + " v0.0.0\n\nreplace " + Module + " => ./dsh\n")},
		{Path: "dsh/go.mod", Data: []byte("module " + Module + "\n\ngo 1.26\n")},
	}
	for _, f := range RuntimeFiles(t, false) {
		files = append(files, emit.File{Path: "dsh/" + f.Path, Data: f.Data})
	}
	return files
}
