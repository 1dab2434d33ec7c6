package dialects_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/hookmap"
)

// No code outside a dialect's own package names one of its events: every event runs where
// its table row (spec/bridges, generated into generated/hookmap) says, so a string
// literal equal to an event's name in any other non-test Go file is hand-written wiring.
// The differential suite, which writes hook configurations for the real engines, is test
// data.
func TestNoEventNameOutsideTheDialects(t *testing.T) {
	names := map[string]bool{}
	for _, b := range hookmap.Bridges {
		for _, e := range b.Events {
			names[e.Name] = true
		}
	}
	root := filepath.Join("..", "..")
	skip := map[string]bool{}
	for _, d := range []string{"generated", "differential", "bridges/claudecode", "bridges/codex", "bridges/gemini", ".git"} {
		skip[filepath.Join(root, d)] = true
	}
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skip[path] || d.Name() == "testdata" || (strings.HasPrefix(d.Name(), ".") && path != root) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		files++
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && names[s] {
					t.Errorf("%s: names the event %q", fset.Position(lit.Pos()), s)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("only %d Go files checked under %s", files, root)
	}
}
