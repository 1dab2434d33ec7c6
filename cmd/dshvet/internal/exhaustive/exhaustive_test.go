package exhaustive_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/dshkit/dsh/cmd/dshvet/internal/exhaustive"
	"github.com/dshkit/dsh/cmd/dshvet/internal/vettest"
)

func TestAnalyzer(t *testing.T) {
	analysistest.Run(t, vettest.Dir(t), exhaustive.Analyzer, "exhaustive")
}

// TestGeneratedUnionsMarked checks the generator's side of the contract on the committed
// surface: every sealed union interface (one with its unexported is<Name> method) and the
// session events' data carry the marker, so the analyzer sees every union the spec holds.
func TestGeneratedUnionsMarked(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "..", "generated", "dsh")
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	unions := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, s := range gd.Specs {
				ts := s.(*ast.TypeSpec)
				it, ok := ts.Type.(*ast.InterfaceType)
				if !ok {
					continue
				}
				sealed := ts.Name.Name == "SessionEventData"
				for _, m := range it.Methods.List {
					for _, n := range m.Names {
						sealed = sealed || n.Name == "is"+ts.Name.Name
					}
				}
				if !sealed {
					continue
				}
				unions++
				doc := ts.Doc
				if doc == nil {
					doc = gd.Doc
				}
				marked := false
				for _, c := range doc.List {
					marked = marked || c.Text == exhaustive.Marker
				}
				if !marked {
					t.Errorf("%s: union %s has no %s line in its doc comment", fset.Position(ts.Pos()), ts.Name.Name, exhaustive.Marker)
				}
			}
		}
	}
	if unions < 10 {
		t.Errorf("found %d unions in %s; the generated surface has more", unions, dir)
	}
}
