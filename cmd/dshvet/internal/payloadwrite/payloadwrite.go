// Package payloadwrite defines the payloadwrite analyzer: a listener does not write to its
// payload; it returns a decision.
package payloadwrite

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/dshkit/dsh/cmd/dshvet/internal/allow"
	"github.com/dshkit/dsh/cmd/dshvet/internal/dshapi"
)

// Analyzer reports writes to a listener's payload.
var Analyzer = &analysis.Analyzer{
	Name: "payloadwrite",
	Doc: `report a listener writing to its payload

A listener's payload is a snapshot: the runtime does not read it back, so writing to it
(assigning a field, a slice element or a map entry, ++, --, delete, clear or copy into
what the payload holds) changes nothing the run does, and can race with the other listeners that see
the same snapshot. A listener changes the run through the decision it returns; the report
names it: a variant of the listener's decision with a field of the name written when there
is one, else the decision type and its variants. An observer (no decision) cannot change
the run. Writes through a copy of a payload's slice or map (x := p.List; x[0] = v) are not
followed.`,
	Run: run,
}

func run(pass *analysis.Pass) (any, error) {
	defer allow.Honour(pass)()
	s := dshapi.Load(pass.Pkg)
	if s.Pkg == nil {
		return nil, nil
	}
	dshapi.Funcs(pass.TypesInfo, pass.Files, func(f dshapi.Func) {
		lt := s.Listener(f.Sig)
		if lt == nil {
			return
		}
		pl := dshapi.Param(f.Sig, 1)
		if pl == nil || pl.Name() == "" || pl.Name() == "_" {
			return
		}
		checkFunc(pass, s, f, lt, pl)
	})
	return nil, nil
}

func checkFunc(pass *analysis.Pass, s *dshapi.Surface, f dshapi.Func, lt *types.TypeName, pl *types.Var) {
	report := func(target ast.Expr, what string) {
		path, ok := rooted(pass.TypesInfo, pl, target)
		if !ok || len(path) == 0 && what != "assigned" {
			return
		}
		pass.Report(analysis.Diagnostic{
			Pos: target.Pos(), End: target.End(),
			Message: message(s, lt, pl, target, path, what),
		})
	}
	ast.Inspect(f.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				return true
			}
			for _, l := range n.Lhs {
				report(l, "assigned")
			}
		case *ast.IncDecStmt:
			report(n.X, "assigned")
		case *ast.CallExpr:
			if id, ok := ast.Unparen(n.Fun).(*ast.Ident); ok && len(n.Args) > 0 {
				if b, ok := pass.TypesInfo.Uses[id].(*types.Builtin); ok {
					switch b.Name() {
					case "delete", "clear":
						report(n.Args[0], "cleared by "+b.Name())
					case "copy":
						report(n.Args[0], "written by copy")
					}
				}
			}
		}
		return true
	})
}

// rooted reports whether e denotes memory reached from the payload pl (p.F, p.F[i], *p,
// p.M[k], p.F[i:j], ...) and returns the field names selected on the way, outermost first.
func rooted(info *types.Info, pl *types.Var, e ast.Expr) ([]string, bool) {
	var path []string
	deref := false
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.SelectorExpr:
			if sel, ok := info.Selections[x]; !ok || sel.Kind() != types.FieldVal {
				return nil, false
			}
			path = append([]string{x.Sel.Name}, path...)
			e = x.X
		case *ast.IndexExpr:
			deref = true
			e = x.X
		case *ast.SliceExpr:
			deref = true
			e = x.X
		case *ast.StarExpr:
			deref = true
			e = x.X
		case *ast.Ident:
			if info.Uses[x] != pl {
				return nil, false
			}
			// pl itself reassigned is a local variable, not the payload.
			return path, len(path) > 0 || deref
		default:
			return nil, false
		}
	}
}

// message says what was written and which decision does what the author meant.
func message(s *dshapi.Surface, lt *types.TypeName, pl *types.Var, target ast.Expr, path []string, what string) string {
	var b strings.Builder
	b.WriteString("the payload of a " + lt.Name() + " is written (" + types.ExprString(target) + " " + what + "): ")
	b.WriteString("payloads are snapshots, so this changes nothing the run does and can race with other listeners; ")
	sig := lt.Type().Underlying().(*types.Signature)
	var union *types.TypeName
	if sig.Results().Len() > 0 {
		if n, ok := types.Unalias(sig.Results().At(0).Type()).(*types.Named); ok && n.Obj().Pkg() == s.Pkg {
			if _, ok := n.Underlying().(*types.Interface); ok {
				union = n.Obj()
			}
		}
	}
	if union == nil {
		if sig.Results().Len() == 0 {
			b.WriteString("an observer cannot change the run: to change it, listen at a waterfall and return its decision")
		} else {
			b.WriteString("to change the run, listen at a waterfall and return its decision")
		}
		return b.String()
	}
	variants := dshapi.Variants(s.Pkg, union)
	q := s.Pkg.Name() + "."
	// A variant with a field of a name written says it best.
	for i := len(path) - 1; i >= 0; i-- {
		for _, v := range variants {
			if st, ok := v.Type().Underlying().(*types.Struct); ok {
				for j := 0; j < st.NumFields(); j++ {
					if st.Field(j).Name() == path[i] {
						b.WriteString("return " + q + v.Name() + "{" + path[i] + ": ...} (a " + q + union.Name() + ") instead")
						return b.String()
					}
				}
			}
		}
	}
	names := make([]string, len(variants))
	for i, v := range variants {
		names[i] = q + v.Name()
	}
	b.WriteString("return the " + q + union.Name() + " that says what you meant (" + strings.Join(names, ", ") + ") instead")
	return b.String()
}
