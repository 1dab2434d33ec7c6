// Package ctxblock defines the ctxblock analyzer: a listener or a tool body does not block
// without its context.
package ctxblock

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"

	"github.com/dshkit/dsh/cmd/dshvet/internal/allow"
	"github.com/dshkit/dsh/cmd/dshvet/internal/dshapi"
)

// Analyzer reports calls that block without a context in listeners and tool bodies.
var Analyzer = &analysis.Analyzer{
	Name: "ctxblock",
	Doc: `report blocking calls that ignore the context in a listener or a tool body

Cancelling the context is how dsh ends a turn: a listener or a tool body (a func with the
type of runtime/tools Definition.Run) that blocks without it keeps the turn waiting past an
interrupt, a deadline or a shutdown. This analyzer reports, in those functions and the
function literals inside them: time.Sleep (select on ctx.Done() and a timer instead),
exec.Command (exec.CommandContext), http.Get, http.Head, http.Post, http.PostForm and the
same methods of *http.Client (http.NewRequestWithContext and Client.Do), and
http.NewRequest (http.NewRequestWithContext), net.Dial and net.DialTimeout
(net.Dialer.DialContext).`,
	Run: run,
}

// instead maps a blocking function to what to call instead.
var instead = map[string]string{
	"time.Sleep":                  "a select on ctx.Done() and a time.Timer",
	"os/exec.Command":             "exec.CommandContext(ctx, ...)",
	"net/http.Get":                "http.NewRequestWithContext(ctx, ...) and Client.Do",
	"net/http.Head":               "http.NewRequestWithContext(ctx, ...) and Client.Do",
	"net/http.Post":               "http.NewRequestWithContext(ctx, ...) and Client.Do",
	"net/http.PostForm":           "http.NewRequestWithContext(ctx, ...) and Client.Do",
	"net/http.NewRequest":         "http.NewRequestWithContext(ctx, ...)",
	"(*net/http.Client).Get":      "http.NewRequestWithContext(ctx, ...) and Client.Do",
	"(*net/http.Client).Head":     "http.NewRequestWithContext(ctx, ...) and Client.Do",
	"(*net/http.Client).Post":     "http.NewRequestWithContext(ctx, ...) and Client.Do",
	"(*net/http.Client).PostForm": "http.NewRequestWithContext(ctx, ...) and Client.Do",
	"net.Dial":                    "(&net.Dialer{}).DialContext(ctx, ...)",
	"net.DialTimeout":             "(&net.Dialer{Timeout: ...}).DialContext(ctx, ...)",
}

func run(pass *analysis.Pass) (any, error) {
	defer allow.Honour(pass)()
	s := dshapi.Load(pass.Pkg)
	if s.Pkg == nil && s.ToolRun == nil {
		return nil, nil
	}
	seen := map[ast.Node]bool{} // function literals inside a checked function
	dshapi.Funcs(pass.TypesInfo, pass.Files, func(f dshapi.Func) {
		if seen[f.Node] {
			return
		}
		what := ""
		if lt := s.Listener(f.Sig); lt != nil {
			what = "listener (" + lt.Pkg().Name() + "." + lt.Name() + ")"
		} else if s.IsToolBody(f.Sig) {
			what = "tool body"
		} else {
			return
		}
		ast.Inspect(f.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				seen[n] = true
			case *ast.CallExpr:
				fn, ok := typeutil.Callee(pass.TypesInfo, n).(*types.Func)
				if !ok {
					return true
				}
				name := fn.FullName()
				if alt, ok := instead[name]; ok {
					pass.Reportf(n.Pos(), "%s in %s, a %s, blocks without its context, so cancelling the turn does not stop it: use %s", shortName(fn), f.Name, what, alt)
				}
			}
			return true
		})
	})
	return nil, nil
}

// shortName is fn as its callers write it: exec.Command, http.Get, (*http.Client).Get.
func shortName(fn *types.Func) string {
	sig := fn.Type().(*types.Signature)
	if r := sig.Recv(); r != nil {
		return "(" + types.TypeString(r.Type(), func(p *types.Package) string { return p.Name() }) + ")." + fn.Name()
	}
	return fn.Pkg().Name() + "." + fn.Name()
}
