// Package dshapi recognizes the generated surface in the code dshvet checks: the listener
// types of the extension points, the tool bodies of the tool pipeline, the listener and tool
// functions of a package and the variants of a sealed union. It reads types only, so it
// works on whatever the spec holds.
package dshapi

import (
	"go/ast"
	"go/constant"
	"go/types"
	"sort"
	"strings"
)

// Paths of the packages dshvet knows by name.
const (
	// SurfacePath is the generated surface: listener types, payloads, decisions.
	SurfacePath = "github.com/dshkit/dsh/generated/dsh"
	// EnginePath is the dispatch engine, which declares the next values the surface's
	// WaterfallNext and WrapperNext alias.
	EnginePath = "github.com/dshkit/dsh/codec/dispatch"
	// ToolsPath is the tool pipeline, whose Definition.Run is a tool body.
	ToolsPath = "github.com/dshkit/dsh/runtime/tools"
)

// Surface is what one package sees of the generated surface.
type Surface struct {
	// Pkg is the generated surface package (nil: the package does not import it).
	Pkg *types.Package
	// Listeners are its listener types (named func types whose names end in Listener), sorted.
	Listeners []*types.TypeName
	// ToolRun is the type of runtime/tools.Definition.Run (nil: not imported).
	ToolRun *types.Signature
}

// Load finds the generated surface and the tool pipeline among pkg and its direct imports.
func Load(pkg *types.Package) *Surface {
	s := &Surface{}
	for _, p := range append([]*types.Package{pkg}, pkg.Imports()...) {
		switch p.Path() {
		case SurfacePath:
			s.Pkg = p
		case ToolsPath:
			s.ToolRun = toolRun(p)
		}
	}
	if s.Pkg != nil {
		scope := s.Pkg.Scope()
		for _, name := range scope.Names() {
			tn, ok := scope.Lookup(name).(*types.TypeName)
			if !ok || tn.IsAlias() || !strings.HasSuffix(name, "Listener") {
				continue
			}
			if _, ok := tn.Type().Underlying().(*types.Signature); ok {
				s.Listeners = append(s.Listeners, tn)
			}
		}
	}
	return s
}

// toolRun is the type of the Run field of tools.Definition.
func toolRun(p *types.Package) *types.Signature {
	tn, ok := p.Scope().Lookup("Definition").(*types.TypeName)
	if !ok {
		return nil
	}
	st, ok := tn.Type().Underlying().(*types.Struct)
	if !ok {
		return nil
	}
	for i := 0; i < st.NumFields(); i++ {
		if f := st.Field(i); f.Name() == "Run" {
			sig, _ := f.Type().Underlying().(*types.Signature)
			return sig
		}
	}
	return nil
}

// Listener returns the listener type whose signature sig has (its receiver ignored), or nil.
func (s *Surface) Listener(sig *types.Signature) *types.TypeName {
	if sig == nil {
		return nil
	}
	for _, tn := range s.Listeners {
		if types.Identical(strip(sig), tn.Type().Underlying()) {
			return tn
		}
	}
	return nil
}

// IsToolBody reports whether sig is the signature of a tool body (tools.Definition.Run).
func (s *Surface) IsToolBody(sig *types.Signature) bool {
	return sig != nil && s.ToolRun != nil && types.Identical(strip(sig), s.ToolRun)
}

// strip returns sig without its receiver.
func strip(sig *types.Signature) *types.Signature {
	if sig.Recv() == nil {
		return sig
	}
	return types.NewSignatureType(nil, nil, nil, sig.Params(), sig.Results(), sig.Variadic())
}

// Func is a function with a body: a declaration or a literal.
type Func struct {
	Node ast.Node // *ast.FuncDecl or *ast.FuncLit
	Body *ast.BlockStmt
	Sig  *types.Signature // its own signature: its parameters are the function's variables
	// Name says what it is, for messages: "method Plugin.Guard", "function guard", "func literal".
	Name string
}

// Funcs calls fn for every function with a body in files, declarations first in each file.
func Funcs(info *types.Info, files []*ast.File, fn func(Func)) {
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				if n.Body == nil {
					return false
				}
				obj, _ := info.Defs[n.Name].(*types.Func)
				if obj == nil {
					return true
				}
				sig := obj.Type().(*types.Signature)
				name := "function " + n.Name.Name
				if r := sig.Recv(); r != nil {
					name = "method " + recvName(r.Type()) + "." + n.Name.Name
				}
				fn(Func{Node: n, Body: n.Body, Sig: sig, Name: name})
			case *ast.FuncLit:
				sig, _ := info.TypeOf(n).(*types.Signature)
				if sig != nil {
					fn(Func{Node: n, Body: n.Body, Sig: sig, Name: "func literal"})
				}
			}
			return true
		})
	}
}

// recvName is the name of a receiver's type, without its pointer.
func recvName(t types.Type) string {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := types.Unalias(t).(*types.Named); ok {
		return n.Obj().Name()
	}
	return types.TypeString(t, nil)
}

// Param returns the i-th parameter of sig, or nil.
func Param(sig *types.Signature, i int) *types.Var {
	if sig == nil || i >= sig.Params().Len() {
		return nil
	}
	return sig.Params().At(i)
}

// IsNext reports whether t is a next value of a waterfall or a wrapper
// (WaterfallNext[D] or WrapperNext[D] of the generated surface, which are the dispatch
// engine's; code generated before the engine declared them in the surface itself).
func IsNext(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil {
		return false
	}
	if p := n.Obj().Pkg().Path(); p != SurfacePath && p != EnginePath {
		return false
	}
	switch n.Origin().Obj().Name() {
	case "WaterfallNext", "WrapperNext":
		return true
	}
	return false
}

// Variants returns the variants of the sealed interface union declared in pkg: the named
// non-interface types of pkg that implement it as T or as *T, sorted by name.
func Variants(pkg *types.Package, union *types.TypeName) []*types.TypeName {
	iface, ok := union.Type().Underlying().(*types.Interface)
	if !ok {
		return nil
	}
	var out []*types.TypeName
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*types.TypeName)
		if !ok || tn.IsAlias() || tn == union {
			continue
		}
		t := tn.Type()
		if _, ok := t.Underlying().(*types.Interface); ok {
			continue
		}
		if n, ok := t.(*types.Named); ok && n.TypeParams().Len() > 0 {
			continue
		}
		if types.Implements(t, iface) || types.Implements(types.NewPointer(t), iface) {
			out = append(out, tn)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// Point names the extension point of a listener type: the Registrar method registering it
// (which dshscaffold also uses as the listener method's name) and the event name (from the
// <Name>EventName constant); either is "" when the surface does not say.
func (s *Surface) Point(listener *types.TypeName) (method, event string) {
	base := strings.TrimSuffix(listener.Name(), "Listener")
	if c, ok := s.Pkg.Scope().Lookup(base + "EventName").(*types.Const); ok && c.Val().Kind() == constant.String {
		event = constant.StringVal(c.Val())
	}
	reg, ok := s.Pkg.Scope().Lookup("Registrar").(*types.TypeName)
	if !ok {
		return "", event
	}
	ms := types.NewMethodSet(types.NewPointer(reg.Type()))
	for i := 0; i < ms.Len(); i++ {
		sig := ms.At(i).Type().(*types.Signature)
		if sig.Params().Len() == 1 && types.Identical(sig.Params().At(0).Type(), listener.Type()) {
			return ms.At(i).Obj().Name(), event
		}
	}
	return "", event
}
