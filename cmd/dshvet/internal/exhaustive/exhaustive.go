// Package exhaustive defines the exhaustive analyzer: a type switch over a generated union
// must name every variant or have a default.
package exhaustive

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/dshkit/dsh/cmd/dshvet/internal/dshapi"
)

// Marker is the line of a union interface's doc comment that makes it a union: the
// generator writes it on every union it emits (payload unions, results, decisions, the
// data of session events). Any package may use it on its own sealed interfaces.
const Marker = "//sumtype:decl"

// Analyzer reports non-exhaustive type switches over marked unions.
var Analyzer = &analysis.Analyzer{
	Name: "exhaustive",
	Doc: `report type switches over a generated union that miss a variant and have no default

A union of the generated surface (an interface marked //sumtype:decl: payload unions such as
ContentBlock, results such as ToolExecutionResult, decisions such as PreToolDecision, the data
of session events) gains variants when the spec does. A type switch over one that names some
variants and has no default silently does nothing for the others; this analyzer reports it,
naming the missing variants. A case T or *T covers the variant T (variants have value
receivers, so both forms occur); a case naming an interface covers the variants implementing
it. The variants are read from the union's package, so the check follows the spec.`,
	Requires:  []*analysis.Analyzer{inspect.Analyzer},
	FactTypes: []analysis.Fact{new(Union)},
	Run:       run,
}

// Union is the fact exported for a marked interface: the names of its variants.
type Union struct {
	Variants []string
}

// AFact marks Union as a fact.
func (*Union) AFact() {}

// String shows the variants, as analysistest expects facts.
func (u *Union) String() string { return "union(" + strings.Join(u.Variants, ", ") + ")" }

func run(pass *analysis.Pass) (any, error) {
	exportUnions(pass)
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	ins.Preorder([]ast.Node{(*ast.TypeSwitchStmt)(nil)}, func(n ast.Node) {
		check(pass, n.(*ast.TypeSwitchStmt))
	})
	return nil, nil
}

// exportUnions exports a Union fact for every marked interface type declared in the package.
func exportUnions(pass *analysis.Pass) {
	for _, f := range pass.Files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, s := range gd.Specs {
				ts := s.(*ast.TypeSpec)
				doc := ts.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				if !marked(doc) {
					continue
				}
				tn, ok := pass.TypesInfo.Defs[ts.Name].(*types.TypeName)
				if !ok {
					continue
				}
				if _, ok := tn.Type().Underlying().(*types.Interface); !ok {
					continue
				}
				u := &Union{}
				for _, v := range dshapi.Variants(pass.Pkg, tn) {
					u.Variants = append(u.Variants, v.Name())
				}
				pass.ExportObjectFact(tn, u)
			}
		}
	}
}

func marked(doc *ast.CommentGroup) bool {
	if doc == nil {
		return false
	}
	for _, c := range doc.List {
		if strings.TrimSpace(c.Text) == Marker {
			return true
		}
	}
	return false
}

// check reports sw if it switches over a union, misses a variant and has no default.
func check(pass *analysis.Pass, sw *ast.TypeSwitchStmt) {
	var x ast.Expr
	switch a := sw.Assign.(type) {
	case *ast.AssignStmt:
		x = a.Rhs[0].(*ast.TypeAssertExpr).X
	case *ast.ExprStmt:
		x = a.X.(*ast.TypeAssertExpr).X
	default:
		return
	}
	named, ok := types.Unalias(pass.TypesInfo.TypeOf(x)).(*types.Named)
	if !ok {
		return
	}
	union := named.Obj()
	var fact Union
	if !pass.ImportObjectFact(union, &fact) {
		return
	}
	covered := map[string]bool{}
	for _, s := range sw.Body.List {
		cc := s.(*ast.CaseClause)
		if cc.List == nil {
			return // a default
		}
		for _, e := range cc.List {
			cover(pass, union, fact.Variants, pass.TypesInfo.TypeOf(e), covered)
		}
	}
	var missing []string
	for _, v := range fact.Variants {
		if !covered[v] {
			missing = append(missing, v)
		}
	}
	if len(missing) == 0 {
		return
	}
	q := union.Pkg().Name() + "."
	pass.Report(analysis.Diagnostic{
		Pos: sw.Pos(),
		End: sw.Body.Lbrace,
		Message: "type switch over " + q + union.Name() + " misses " + q + strings.Join(missing, ", "+q) +
			" and has no default: add the missing cases, or a default saying what the others do",
	})
}

// cover marks the variants a case of type t covers.
func cover(pass *analysis.Pass, union *types.TypeName, variants []string, t types.Type, covered map[string]bool) {
	if t == nil {
		return
	}
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	t = types.Unalias(t)
	if n, ok := t.(*types.Named); ok && n.Obj().Pkg() == union.Pkg() {
		if _, isIface := n.Underlying().(*types.Interface); !isIface {
			covered[n.Obj().Name()] = true
			return
		}
	}
	iface, ok := t.Underlying().(*types.Interface)
	if !ok {
		return
	}
	for _, v := range variants {
		tn, ok := union.Pkg().Scope().Lookup(v).(*types.TypeName)
		if !ok {
			continue
		}
		if types.Implements(tn.Type(), iface) || types.Implements(types.NewPointer(tn.Type()), iface) {
			covered[v] = true
		}
	}
}
