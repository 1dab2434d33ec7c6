// Package nextonce defines the nextonce analyzer: a waterfall or wrapper listener calls its
// next at most once, and only while it runs.
package nextonce

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/cfg"
	"golang.org/x/tools/go/types/typeutil"

	"github.com/dshkit/dsh/cmd/dshvet/internal/allow"
	"github.com/dshkit/dsh/cmd/dshvet/internal/dshapi"
)

// Analyzer reports a next called twice on one path, or called after the listener returned.
var Analyzer = &analysis.Analyzer{
	Name: "nextonce",
	Doc: `report a waterfall or wrapper listener that calls next twice, or after it returned

A waterfall or wrapper listener (one taking a dsh WaterfallNext or WrapperNext, such as
PostToolNext or ExecuteNext) may call next.Call at most once: a second call fails the
listener with ErrNextReused and so the whole run. This analyzer follows the listener's
control flow and reports a call of next that can run after another on the same path,
including a call in a loop. It also reports a call of next in a go or defer statement (or
in the function literal one runs): that call can run after the listener has returned its
own decision, when the chain is gone, so it fails and its result is lost; and next stored
where it outlives the listener (a field, a map or slice element, a package variable, a
channel). Calls in other function literals, and next passed to another function, are not
followed.`,
	Run: run,
}

func run(pass *analysis.Pass) (any, error) {
	defer allow.Honour(pass)()
	dshapi.Funcs(pass.TypesInfo, pass.Files, func(f dshapi.Func) {
		for i := 0; i < f.Sig.Params().Len(); i++ {
			if v := f.Sig.Params().At(i); dshapi.IsNext(v.Type()) && v.Name() != "" && v.Name() != "_" {
				checkFunc(pass, f, v)
			}
		}
	})
	return nil, nil
}

// isCall reports whether n is a call of next.Call.
func isCall(info *types.Info, next *types.Var, n ast.Node) bool {
	call, ok := n.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Call" {
		return false
	}
	id, ok := ast.Unparen(sel.X).(*ast.Ident)
	return ok && info.Uses[id] == next
}

// calls returns the calls of next.Call in n in source order, not looking into function
// literals.
func calls(info *types.Info, next *types.Var, n ast.Node) []*ast.CallExpr {
	var out []*ast.CallExpr
	ast.Inspect(n, func(n ast.Node) bool {
		if _, ok := n.(*ast.FuncLit); ok {
			return false
		}
		if isCall(info, next, n) {
			out = append(out, n.(*ast.CallExpr))
		}
		return true
	})
	return out
}

func checkFunc(pass *analysis.Pass, f dshapi.Func, next *types.Var) {
	info := pass.TypesInfo
	// Calls that run after the listener may have returned.
	ast.Inspect(f.Body, func(n ast.Node) bool {
		var call *ast.CallExpr
		kw := ""
		switch s := n.(type) {
		case *ast.FuncLit:
			return false // another function; its own listener check, if any, covers it
		case *ast.GoStmt:
			call, kw = s.Call, "go"
		case *ast.DeferStmt:
			call, kw = s.Call, "defer"
		default:
			return true
		}
		var late []*ast.CallExpr
		if lit, ok := ast.Unparen(call.Fun).(*ast.FuncLit); ok {
			late = calls(info, next, lit.Body)
		} else if isCall(info, next, call) {
			late = []*ast.CallExpr{call}
		}
		for _, c := range late {
			pass.Reportf(c.Pos(), "%s is called in a %s statement, so it can run after the listener returned: the call then fails with ErrNextReused and its decision is lost; call it before returning", next.Name(), kw)
		}
		return true
	})

	// next stored where it outlives the listener: a field, an element, a package variable,
	// a channel.
	isNext := func(e ast.Expr) bool {
		id, ok := ast.Unparen(e).(*ast.Ident)
		return ok && info.Uses[id] == next
	}
	escapes := func(lhs ast.Expr) bool {
		id, ok := ast.Unparen(lhs).(*ast.Ident)
		if !ok {
			return true // p.f, m[k], *ptr
		}
		v, ok := info.ObjectOf(id).(*types.Var)
		return ok && v.Parent() == v.Pkg().Scope()
	}
	ast.Inspect(f.Body, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.AssignStmt:
			if len(s.Lhs) == len(s.Rhs) {
				for i, r := range s.Rhs {
					if isNext(r) && escapes(s.Lhs[i]) {
						pass.Reportf(r.Pos(), "%s is stored in %s, where it outlives the listener: a call after the listener returned fails with ErrNextReused", next.Name(), types.ExprString(s.Lhs[i]))
					}
				}
			}
		case *ast.SendStmt:
			if isNext(s.Value) {
				pass.Reportf(s.Value.Pos(), "%s is sent on a channel, where it outlives the listener: a call after the listener returned fails with ErrNextReused", next.Name())
			}
		}
		return true
	})

	// Two calls on one path: a forward data flow over the control-flow graph, counting the
	// calls made so far on some path (0, 1, or 2 for more).
	g := cfg.New(f.Body, func(call *ast.CallExpr) bool { return mayReturn(info, call) })
	preds := map[*cfg.Block][]*cfg.Block{}
	for _, b := range g.Blocks {
		for _, s := range b.Succs {
			preds[s] = append(preds[s], b)
		}
	}
	blockCalls := map[*cfg.Block][]*ast.CallExpr{}
	for _, b := range g.Blocks {
		for _, n := range b.Nodes {
			blockCalls[b] = append(blockCalls[b], nodeCalls(info, next, n)...)
		}
	}
	out := map[*cfg.Block]int{}
	in := func(b *cfg.Block) int {
		m := 0
		for _, p := range preds[b] {
			m = max(m, out[p])
		}
		return m
	}
	for changed := true; changed; {
		changed = false
		for _, b := range g.Blocks {
			if !b.Live {
				continue
			}
			n := min(in(b)+len(blockCalls[b]), 2)
			if n != out[b] {
				out[b], changed = n, true
			}
		}
	}
	reported := map[token.Pos]bool{}
	for _, b := range g.Blocks {
		if !b.Live {
			continue
		}
		n := in(b)
		for _, c := range blockCalls[b] {
			if n > 0 && !reported[c.Pos()] {
				reported[c.Pos()] = true
				pass.Reportf(c.Pos(), "%s can be called a second time on this path (another call may have run before it): a listener calls next at most once, or it fails with ErrNextReused", next.Name())
			}
			n++
		}
	}
}

// nodeCalls returns the calls of next.Call that a node of the control-flow graph makes: not
// those of go and defer statements (reported apart) nor of function literals.
func nodeCalls(info *types.Info, next *types.Var, n ast.Node) []*ast.CallExpr {
	switch n := n.(type) {
	case *ast.GoStmt, *ast.DeferStmt:
		return nil
	case *ast.RangeStmt: // its parts are nodes of their own
		return nil
	default:
		return calls(info, next, n)
	}
}

// mayReturn reports whether a call may return: not panic, os.Exit, log.Fatal*, runtime.Goexit.
func mayReturn(info *types.Info, call *ast.CallExpr) bool {
	if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok {
		if _, ok := info.Uses[id].(*types.Builtin); ok && id.Name == "panic" {
			return false
		}
	}
	fn, ok := typeutil.Callee(info, call).(*types.Func)
	if !ok || fn.Pkg() == nil {
		return true
	}
	switch fn.Pkg().Path() + "." + fn.Name() {
	case "os.Exit", "log.Fatal", "log.Fatalf", "log.Fatalln", "runtime.Goexit":
		return false
	}
	return true
}
