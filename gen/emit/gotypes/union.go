package gotypes

import (
	"github.com/dave/jennifer/jen"

	"github.com/dshkit/dsh/gen/ir"
)

// union renders a union: the sealed interface, its Kind type, constants and list, the
// decoder choosing the variant, the exhaustive Switch and the unexported validator. The
// variant structs are rendered where their records are declared.
func (e *emitter) union(t *ir.Type) []jen.Code {
	return []jen.Code{
		e.unionInterface(t),
		e.unionKinds(t),
		e.unionKindsVar(t),
		e.unionUnmarshal(t),
		e.unionSwitch(t),
		e.unionValidate(t),
		e.unionEncode(t),
	}
}

// marker is the name of the unexported method sealing a union.
func marker(union string) string { return "is" + union }

// unionInterface renders the sealed interface, marked for sumtype checkers.
func (e *emitter) unionInterface(t *ir.Type) jen.Code {
	methods := []jen.Code{
		doc(marker(t.Name) + " seals " + t.Name + ": only its variants implement it.").Id(marker(t.Name)).Params(),
		doc("Kind returns the variant's discriminator.").Id("Kind").Params().Id(kindType(t.Name)),
	}
	methods = append(methods, e.unionAccessorSigs(t)...) // accessors.go
	return doc(t.Doc).Comment("//").Line().Comment("//sumtype:decl").Line().Type().Id(t.Name).Interface(methods...)
}

// unionKinds renders the Kind type and one constant per variant.
func (e *emitter) unionKinds(t *ir.Type) jen.Code {
	kt := kindType(t.Name)
	typ := doc(kt + " is the discriminator (\"" + t.Discriminator + "\") of " + article(t.Name) + ".").Type().Id(kt).String()
	consts := jen.Const().DefsFunc(func(g *jen.Group) {
		for _, v := range t.Variants {
			g.Add(doc(kindConst(v.Type.Name) + " is the kind of " + v.Type.Name + ".").
				Id(kindConst(v.Type.Name)).Id(kt).Op("=").Lit(v.Kind))
		}
	})
	return jen.Add(typ).Line().Line().Add(consts)
}

// unionKindsVar renders `<U>Kinds`, every kind in spec order.
func (e *emitter) unionKindsVar(t *ir.Type) jen.Code {
	vals := make([]jen.Code, len(t.Variants))
	for i, v := range t.Variants {
		vals[i] = jen.Id(kindConst(v.Type.Name))
	}
	return doc(kindsVar(t.Name) + " lists every " + kindType(t.Name) + ", in spec order.").
		Var().Id(kindsVar(t.Name)).Op("=").Index().Id(kindType(t.Name)).Values(vals...)
}

// unionUnmarshal renders Unmarshal<U>, which reads the discriminator and decodes the variant.
func (e *emitter) unionUnmarshal(t *ir.Type) jen.Code {
	name := "Unmarshal" + t.Name
	comment := name + " decodes " + article(t.Name) + ", choosing the variant by its \"" + t.Discriminator +
		"\" field: a missing or unknown kind is an ErrMissingKind or ErrUnknownKind *DecodeError, " +
		"and the variant itself is decoded strictly."
	cases := make([]jen.Code, len(t.Variants))
	for i, v := range t.Variants {
		cases[i] = jen.Case(jen.Id(kindConst(v.Type.Name))).Block(
			jen.Var().Id("v").Id(v.Type.Name),
			jen.If(jen.Err().Op(":=").Id("v").Dot("UnmarshalJSON").Call(jen.Id("data")), jen.Err().Op("!=").Nil()).
				Block(jen.Return(jen.Nil(), jen.Err())),
			jen.Return(jen.Id("v"), jen.Nil()),
		)
	}
	return doc(comment).Func().Id(name).Params(jen.Id("data").Index().Byte()).Params(jen.Id(t.Name), jen.Error()).Block(
		jen.List(jen.Id("kind"), jen.Err()).Op(":=").Add(rt("PeekKind")).Call(jen.Lit(t.Name), jen.Lit(t.Discriminator), jen.Id("data")),
		ifErrReturn(jen.Nil(), jen.Err()),
		jen.Switch(jen.Id(kindType(t.Name)).Call(jen.Id("kind"))).Block(cases...),
		jen.Return(jen.Nil(), rt("UnknownKind").Call(jen.Lit(t.Name), jen.Lit(t.Discriminator), jen.Id("kind"), jen.Id(kindsVar(t.Name)))),
	)
}

// unionSwitch renders the exhaustive Switch<U>: one function per variant, T and *T both
// accepted, a panic on a nil union.
func (e *emitter) unionSwitch(t *ir.Type) jen.Code {
	name := "Switch" + t.Name
	comment := name + " calls the function for the variant u holds (as T or *T) and returns its " +
		"result. It takes one function per variant, so adding a variant to the spec breaks every " +
		"call at compile time. It panics if u is nil or a nil pointer: a programming error."
	params := []jen.Code{jen.Id("u").Id(t.Name)}
	var cases []jen.Code
	for _, v := range t.Variants {
		on := "on" + camel(v.Kind)
		params = append(params, jen.Id(on).Func().Params(jen.Id(v.Type.Name)).Id("R"))
		cases = append(cases,
			jen.Case(jen.Id(v.Type.Name)).Block(jen.Return(jen.Id(on).Call(jen.Id("v")))),
			jen.Case(jen.Op("*").Id(v.Type.Name)).Block(
				jen.If(jen.Id("v").Op("!=").Nil()).Block(jen.Return(jen.Id(on).Call(jen.Op("*").Id("v")))),
			),
		)
	}
	return doc(comment).Func().Id(name).Types(jen.Id("R").Any()).Params(params...).Id("R").Block(
		jen.Switch(jen.Id("v").Op(":=").Id("u").Assert(jen.Type())).Block(cases...),
		jen.Panic(jen.Lit(e.spec.Package+": "+name+" called with a nil "+t.Name)),
	)
}

// unionValidate renders the unexported validator of a union value: the variant's Validate,
// or ErrNilVariant for a nil union or nil pointer variant.
func (e *emitter) unionValidate(t *ir.Type) jen.Code {
	name := unionValidator(t.Name)
	var cases []jen.Code
	for _, v := range t.Variants {
		cases = append(cases,
			jen.Case(jen.Id(v.Type.Name)).Block(jen.Return(jen.Id("v").Dot("Validate").Call())),
			jen.Case(jen.Op("*").Id(v.Type.Name)).Block(
				jen.If(jen.Id("v").Op("!=").Nil()).Block(jen.Return(jen.Id("v").Dot("Validate").Call())),
			),
		)
	}
	return doc(name+" validates the variant u holds; a nil union or nil pointer variant is ErrNilVariant.").
		Func().Id(name).Params(jen.Id("u").Id(t.Name)).Error().Block(
		jen.Switch(jen.Id("v").Op(":=").Id("u").Assert(jen.Type())).Block(cases...),
		jen.Return(rt("ErrNilVariant")),
	)
}

// unionEncode renders the unexported encoder of a union value: the variant's encodeJSON, null
// for a nil union or nil pointer variant (as encoding/json writes them), and encoding/json
// for any other type that satisfies the interface (one embedding a variant).
func (e *emitter) unionEncode(t *ir.Type) jen.Code {
	name := unionEncoder(t.Name)
	var cases []jen.Code
	for _, v := range t.Variants {
		cases = append(cases,
			jen.Case(jen.Id(v.Type.Name)).Block(jen.Id("v").Dot("encodeJSON").Call(jen.Id("enc"))),
			jen.Case(jen.Op("*").Id(v.Type.Name)).Block(rt("EncodePtr").Call(jen.Id("enc"), jen.Id("v"), jen.Id(v.Type.Name).Dot("encodeJSON"))),
		)
	}
	cases = append(cases,
		jen.Case(jen.Nil()).Block(jen.Id("enc").Dot("Null").Call()),
		jen.Default().Block(jen.Id("enc").Dot("Value").Call(jen.Id("v"))),
	)
	return doc(name+" writes u to enc as encoding/json would: the variant's MarshalJSON, or null for a nil union or nil pointer variant.").
		Func().Id(name).Params(jen.Id("enc").Op("*").Add(rt("Encoder")), jen.Id("u").Id(t.Name)).Block(
		jen.Switch(jen.Id("v").Op(":=").Id("u").Assert(jen.Type())).Block(cases...),
	)
}

// variantMethods renders what makes record t a variant of u: the marker, Kind and the
// constructor returning the union.
func (e *emitter) variantMethods(t *ir.Type, u unionOf) []jen.Code {
	union := u.union.Name
	return []jen.Code{
		doc(marker(union) + " makes " + t.Name + " " + article(union) + " variant.").
			Func().Params(jen.Id(t.Name)).Id(marker(union)).Params().Block(),
		doc("Kind returns " + kindConst(t.Name) + ".").
			Func().Params(jen.Id(t.Name)).Id("Kind").Params().Id(kindType(union)).Block(jen.Return(jen.Id(kindConst(t.Name)))),
		e.constructor(t, union),
	}
}

// constructor renders New<Variant>, taking the variant's required fields in order.
func (e *emitter) constructor(t *ir.Type, union string) jen.Code {
	var params, order []jen.Code
	for _, f := range e.fields(t) {
		if !f.Required {
			continue
		}
		p := paramName(f.GoName)
		params = append(params, jen.Id(p).Add(e.fieldType(f)))
		order = append(order, jen.Id(f.GoName).Op(":").Id(p))
	}
	name := "New" + t.Name
	comment := name + " returns " + article(t.Name) + " as " + article(union)
	if len(params) > 0 {
		comment += ", from its required fields in spec order"
	}
	return doc(comment + ".").Func().Id(name).Params(params...).Id(union).Block(
		jen.Return(jen.Id(t.Name).Values(order...)),
	)
}
