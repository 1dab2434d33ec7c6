package gotypes

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/dshkit/dsh/gen/ir"
)

// This file renders `<spec>_accessors.go`: the methods that spare plugin code pointers and
// type switches (docs/generated-api.md, "Accessors"). They are opt-in per type: the spec
// marks a record `@dsh(accessors)` (a declaration attribute in its body) or a union
// (`#U: #A | #B @dsh(accessors)`), and only those types get them:
//
//   - on a marked record, for each optional scalar field F (a *T): Get<F>() T, the value
//     or T's zero value, and With<F>(T) returning a copy with F set;
//   - on a marked union variant, for each list field F: Append<F>(more ...E) returning, as
//     the union, a copy with more appended (the variant's own slice is never written);
//   - on a marked union, the methods of the fields all its variants share with one Go
//     type: Get<F>() T for each, and Append<F>(more ...E) U for a shared list, so that
//     code holding the union reads a shared field or adds to it without a type switch;
//     every variant of a marked union has its accessors, which these methods need.
//
// (A method cannot have its field's name, hence Get<F>.)

// hasAccessors reports whether record t gets its accessors: it is marked, or it is a
// variant of a marked union.
func (e *emitter) hasAccessors(t *ir.Type) bool {
	u, isVariant := e.variants[t]
	return t.Accessors || isVariant && u.union.Accessors
}

// accessor is one generated method of a record.
type accessor struct {
	name string
	// sig is the method's signature in an interface (shared union methods).
	sig jen.Code
	// decl is the method declaration.
	decl jen.Code
}

// goTypeKey renders c for comparing field types across variants.
func goTypeKey(c jen.Code) string { return fmt.Sprintf("%#v", jen.Null().Add(c)) }

// isOptionalScalar reports whether f is a pointer to a scalar (string, int, float, bool).
func (e *emitter) isOptionalScalar(f *ir.Field) bool {
	if !absentable(f) {
		return false
	}
	switch f.Type.Kind {
	case ir.String, ir.Int, ir.Float, ir.Bool:
		return true
	}
	return false
}

// accessors returns the accessor methods of record t, in field order.
func (e *emitter) accessors(t *ir.Type) []accessor {
	var out []accessor
	u, isVariant := e.variants[t]
	for _, f := range e.fields(t) {
		if f.Runtime || f.Type.Kind == ir.Handle {
			continue
		}
		switch {
		case e.isOptionalScalar(f):
			get := "Get" + f.GoName
			elem := e.goType(f.Type)
			out = append(out, accessor{
				name: get,
				sig:  doc(get + " returns " + f.GoName + ", or the zero value when it is absent.").Id(get).Params().Add(elem),
				decl: doc(get+" returns "+f.GoName+", or the zero value when it is absent.").
					Func().Params(jen.Id("v").Id(t.Name)).Id(get).Params().Add(elem).Block(
					jen.If(jen.Id("v").Dot(f.GoName).Op("==").Nil()).Block(jen.Var().Id("zero").Add(e.goType(f.Type)), jen.Return(jen.Id("zero"))),
					jen.Return(jen.Op("*").Id("v").Dot(f.GoName)),
				),
			})
			with := "With" + f.GoName
			out = append(out, accessor{
				name: with,
				decl: doc(with+" returns a copy of v with "+f.GoName+" set to x.").
					Func().Params(jen.Id("v").Id(t.Name)).Id(with).Params(jen.Id("x").Add(e.goType(f.Type))).Id(t.Name).Block(
					jen.Id("v").Dot(f.GoName).Op("=").Op("&").Id("x"),
					jen.Return(jen.Id("v")),
				),
			})
		case f.Type.Kind == ir.List && isVariant:
			with := "Append" + f.GoName
			union := u.union.Name
			elem := e.goType(f.Type.Elem)
			comment := with + " returns, as " + article(union) + ", a copy of v with more appended to " +
				f.GoName + " (to an empty one: then it holds just more); v's own slice is not written."
			get := "Get" + f.GoName
			out = append(out, accessor{
				name: get,
				sig:  doc(get + " returns " + f.GoName + ".").Id(get).Params().Add(e.fieldType(f)),
				decl: doc(get + " returns " + f.GoName + ".").
					Func().Params(jen.Id("v").Id(t.Name)).Id(get).Params().Add(e.fieldType(f)).Block(
					jen.Return(jen.Id("v").Dot(f.GoName)),
				),
			})
			out = append(out, accessor{
				name: with,
				sig:  doc(comment).Id(with).Params(jen.Id("more").Op("...").Add(elem)).Id(union),
				decl: doc(comment).Func().Params(jen.Id("v").Id(t.Name)).Id(with).
					Params(jen.Id("more").Op("...").Add(elem)).Id(union).Block(
					jen.Id("v").Dot(f.GoName).Op("=").Append(
						jen.Id("v").Dot(f.GoName).Index(jen.Op(":").Len(jen.Id("v").Dot(f.GoName)).Op(":").Len(jen.Id("v").Dot(f.GoName))),
						jen.Id("more").Op("..."),
					),
					jen.Return(jen.Id("v")),
				),
			})
		}
	}
	return out
}

// sharedFields returns the non-pointer fields every variant of union t has with one Go
// type (the pointer scalars have their Get<F> already), by name; list fields are also
// covered by the Append<F> every variant has.
func (e *emitter) sharedFields(t *ir.Type) []*ir.Field {
	if len(t.Variants) == 0 {
		return nil
	}
	var shared []*ir.Field
	for _, f := range e.fields(t.Variants[0].Type) {
		if f.Runtime || f.Type.Kind == ir.Handle {
			continue
		}
		key := goTypeKey(e.fieldType(f))
		all := true
		for _, v := range t.Variants[1:] {
			g := fieldByGo(e.fields(v.Type), f.GoName)
			if g == nil || g.Runtime || goTypeKey(e.fieldType(g)) != key {
				all = false
				break
			}
		}
		if all {
			shared = append(shared, f)
		}
	}
	return shared
}

// fieldByGo returns the field of fs with the Go name, or nil.
func fieldByGo(fs []*ir.Field, name string) *ir.Field {
	for _, f := range fs {
		if f.GoName == name {
			return f
		}
	}
	return nil
}

// unionAccessorSigs are the methods union t's interface gains from its shared fields, when
// t is marked.
func (e *emitter) unionAccessorSigs(t *ir.Type) []jen.Code {
	if !t.Accessors {
		return nil
	}
	var sigs []jen.Code
	for _, f := range e.sharedFields(t) {
		switch {
		case e.isOptionalScalar(f):
			for _, a := range e.accessors(t.Variants[0].Type) {
				if a.name == "Get"+f.GoName {
					sigs = append(sigs, a.sig)
				}
			}
		case f.Type.Kind == ir.List:
			for _, a := range e.accessors(t.Variants[0].Type) {
				if a.name == "Append"+f.GoName || a.name == "Get"+f.GoName {
					sigs = append(sigs, a.sig)
				}
			}
		default:
			sigs = append(sigs, e.plainGetterSig(f))
		}
	}
	return sigs
}

// plainGetterSig is the interface signature of Get<F> for a shared non-pointer field.
func (e *emitter) plainGetterSig(f *ir.Field) jen.Code {
	get := "Get" + f.GoName
	return doc(get + " returns " + f.GoName + ".").Id(get).Params().Add(e.fieldType(f))
}

// sharedGetterDecls renders Get<F> on variant t for each non-pointer field its union's
// variants share, when the union is marked.
func (e *emitter) sharedGetterDecls(t *ir.Type) []jen.Code {
	u, ok := e.variants[t]
	if !ok || !u.union.Accessors {
		return nil
	}
	var out []jen.Code
	for _, f := range e.sharedFields(u.union) {
		if e.isOptionalScalar(f) || f.Type.Kind == ir.List {
			continue // accessors renders these
		}
		get := "Get" + f.GoName
		out = append(out, doc(get+" returns "+f.GoName+".").
			Func().Params(jen.Id("v").Id(t.Name)).Id(get).Params().Add(e.fieldType(f)).Block(
			jen.Return(jen.Id("v").Dot(f.GoName)),
		))
	}
	return out
}

// partialInterfaces renders, for marked union t, one interface per list field that some
// variants (at least two, not all) have with one Go type: `<U>With<F>`, the union plus that
// field's Get and Append, so that code holding the union adds to the field with one type
// assertion.
func (e *emitter) partialInterfaces(t *ir.Type) []jen.Code {
	type group struct {
		field    *ir.Field
		variants []string
	}
	var order []string
	groups := map[string]*group{}
	for _, v := range t.Variants {
		for _, f := range e.fields(v.Type) {
			if f.Runtime || f.Type.Kind != ir.List {
				continue
			}
			key := f.GoName + " " + goTypeKey(e.fieldType(f))
			if groups[key] == nil {
				groups[key] = &group{field: f}
				order = append(order, key)
			}
			groups[key].variants = append(groups[key].variants, v.Type.Name)
		}
	}
	var out []jen.Code
	for _, key := range order {
		g := groups[key]
		if len(g.variants) < 2 || len(g.variants) == len(t.Variants) {
			continue
		}
		name := t.Name + "With" + g.field.GoName
		var sigs []jen.Code
		sigs = append(sigs, jen.Id(t.Name))
		for _, a := range e.accessors(e.spec.Lookup(g.variants[0])) {
			if a.name == "Get"+g.field.GoName || a.name == "Append"+g.field.GoName {
				sigs = append(sigs, a.sig)
			}
		}
		comment := name + " is " + article(t.Name) + " variant that has " + g.field.GoName + " (" +
			strings.Join(g.variants, ", ") + "): `if w, ok := d.(" + name + "); ok { d = w.Append" +
			g.field.GoName + "(...) }` adds to it whatever the variant."
		out = append(out, doc(comment).Type().Id(name).Interface(sigs...))
	}
	return out
}

// accessorsFile renders `<spec>_accessors.go` for specFile, or nil when it declares no
// accessor.
func (e *emitter) accessorsFile(specFile string) ([]byte, error) {
	f := jen.NewFile(e.spec.Package)
	f.HeaderComment(e.opts.Header(specFile))
	n := 0
	for _, t := range e.typesOf(specFile) {
		if t.Kind == ir.Union && t.Accessors {
			for _, d := range e.partialInterfaces(t) {
				f.Add(d)
				f.Line()
				n++
			}
		}
		if t.Kind != ir.Record || !e.hasAccessors(t) {
			continue
		}
		for _, a := range e.accessors(t) {
			f.Add(a.decl)
			f.Line()
			n++
		}
		for _, d := range e.sharedGetterDecls(t) {
			f.Add(d)
			f.Line()
			n++
		}
	}
	if n == 0 {
		return nil, nil
	}
	return render(f, specFile)
}
