package gotypes

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"

	"github.com/dshkit/dsh/gen/emit"
)

// checkFiles parses the emitted files and rejects two package-level declarations with
// the same name (e.g. a spec type named like a generated helper), and any import outside
// the standard library and the codec runtime, so that a clash surfaces here rather than in
// the Go build. The blank constants of the version check may repeat.
func checkFiles(files []emit.File) error {
	declared := map[string]string{}
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f.Path, f.Data, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("gotypes: emitted %s does not parse: %w", f.Path, err)
		}
		for _, imp := range file.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") && p != codecPkg {
				return fmt.Errorf("gotypes: emitted %s imports %s, which is neither the standard library nor the codec runtime", f.Path, imp.Path.Value)
			}
		}
		for _, name := range topLevelNames(file) {
			if name == "_" {
				continue
			}
			if prev, ok := declared[name]; ok {
				return fmt.Errorf("gotypes: %s declares %s, already declared in %s", f.Path, name, prev)
			}
			declared[name] = f.Path
		}
	}
	return nil
}

// topLevelNames lists the package-level names a file declares (methods excluded).
func topLevelNames(file *ast.File) []string {
	var names []string
	for _, decl := range file.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				names = append(names, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					names = append(names, s.Name.Name)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						names = append(names, n.Name)
					}
				}
			}
		}
	}
	return names
}
