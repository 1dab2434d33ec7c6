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

// Partial is the comment that says a type switch over a union handles some variants on
// purpose: `//dshvet:partial <reason>`, on the line of the switch or the line above it.
// The reason, which says what happens to the variants the switch leaves out, is required.
// The analyzer reports a marker without a reason, one on a switch that misses nothing, and
// one on no type switch over a union, so that a marker stays true.
const Partial = "//dshvet:partial"

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
it. The variants are read from the union's package, so the check follows the spec.

A switch that handles some variants on purpose carries "//dshvet:partial <reason>" on its
line or the line above, the reason saying what the others do. A marker without a reason, on
a switch that misses nothing, or on no type switch over a union is reported.`,
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
	marks := partialMarks(pass)
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	ins.Preorder([]ast.Node{(*ast.TypeSwitchStmt)(nil)}, func(n ast.Node) {
		check(pass, n.(*ast.TypeSwitchStmt), marks)
	})
	for _, m := range marks {
		if !m.used {
			pass.Reportf(m.c.Pos(), "%s marks no type switch over a union: remove it", Partial)
		}
	}
	return nil, nil
}

// partialMark is one //dshvet:partial comment.
type partialMark struct {
	c      *ast.Comment
	reason string
	used   bool // attached to a type switch over a union
}

// markKey locates a marker: its file and line.
type markKey struct {
	file string
	line int
}

// partialMarks collects the package's //dshvet:partial comments by file and line.
func partialMarks(pass *analysis.Pass) map[markKey]*partialMark {
	marks := map[markKey]*partialMark{}
	for _, f := range pass.Files {
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				rest, ok := strings.CutPrefix(c.Text, Partial)
				if !ok || rest != "" && rest[0] != ' ' && rest[0] != '\t' {
					continue
				}
				rest, _, _ = strings.Cut(rest, "//") // the reason ends at a comment after it
				p := pass.Fset.Position(c.Pos())
				marks[markKey{p.Filename, p.Line}] = &partialMark{c: c, reason: strings.TrimSpace(rest)}
			}
		}
	}
	return marks
}

// partialMarkOf returns the marker on sw's line or the line above it, or nil.
func partialMarkOf(pass *analysis.Pass, sw *ast.TypeSwitchStmt, marks map[markKey]*partialMark) *partialMark {
	p := pass.Fset.Position(sw.Pos())
	if m := marks[markKey{p.Filename, p.Line}]; m != nil {
		return m
	}
	return marks[markKey{p.Filename, p.Line - 1}]
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

// check reports sw if it switches over a union, misses a variant and has no default, unless
// a //dshvet:partial marker with a reason says it means to; it reports a marker that is
// wrong (no reason, or a switch that misses nothing).
func check(pass *analysis.Pass, sw *ast.TypeSwitchStmt, marks map[markKey]*partialMark) {
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
	mark := partialMarkOf(pass, sw, marks)
	if mark != nil {
		mark.used = true
	}
	covered := map[string]bool{}
	for _, s := range sw.Body.List {
		cc := s.(*ast.CaseClause)
		if cc.List == nil {
			if mark != nil {
				pass.Reportf(mark.c.Pos(), "%s on a type switch with a default: remove the marker", Partial)
			}
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
	switch {
	case mark != nil && len(missing) == 0:
		pass.Reportf(mark.c.Pos(), "%s on a type switch that misses no variant: remove the marker", Partial)
		return
	case len(missing) == 0:
		return
	case mark != nil && mark.reason == "":
		pass.Reportf(mark.c.Pos(), "%s needs a reason: say what the variants the switch leaves out do", Partial)
		return
	case mark != nil:
		return
	}
	q := union.Pkg().Name() + "."
	pass.Report(analysis.Diagnostic{
		Pos: sw.Pos(),
		End: sw.Body.Lbrace,
		Message: "type switch over " + q + union.Name() + " misses " + q + strings.Join(missing, ", "+q) +
			" and has no default: add the missing cases, a default saying what the others do, or " +
			Partial + " <reason> on the switch",
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
