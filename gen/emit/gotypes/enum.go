package gotypes

import (
	"github.com/dave/jennifer/jen"

	"github.com/dshkit/dsh/gen/ir"
)

// enum renders an enum: its string type, one constant per value, the list of values,
// Valid and a rejecting UnmarshalJSON.
func (e *emitter) enum(t *ir.Type) []jen.Code {
	return []jen.Code{
		doc(t.Doc).Type().Id(t.Name).String(),
		e.enumConsts(t),
		e.enumValues(t),
		e.enumValid(t),
		e.enumUnmarshal(t),
	}
}

// enumConsts renders one documented constant per value.
func (e *emitter) enumConsts(t *ir.Type) jen.Code {
	return jen.Const().DefsFunc(func(g *jen.Group) {
		for _, v := range t.Values {
			g.Add(doc(v.GoName + " is the " + t.Name + " value " + quote(v.Value) + ".").
				Id(v.GoName).Id(t.Name).Op("=").Lit(v.Value))
		}
	})
}

// enumValues renders `<E>Values`, every value in spec order.
func (e *emitter) enumValues(t *ir.Type) jen.Code {
	vals := make([]jen.Code, len(t.Values))
	for i, v := range t.Values {
		vals[i] = jen.Id(v.GoName)
	}
	name := t.Name + "Values"
	return doc(name + " lists every " + t.Name + " value, in spec order.").
		Var().Id(name).Op("=").Index().Id(t.Name).Values(vals...)
}

// enumValid renders Valid.
func (e *emitter) enumValid(t *ir.Type) jen.Code {
	vals := make([]jen.Code, len(t.Values))
	for i, v := range t.Values {
		vals[i] = jen.Id(v.GoName)
	}
	body := []jen.Code{jen.Return(jen.False())}
	if len(vals) > 0 {
		body = []jen.Code{
			jen.Switch(jen.Id("v")).Block(jen.Case(vals...).Block(jen.Return(jen.True()))),
			jen.Return(jen.False()),
		}
	}
	return doc("Valid reports whether v is one of the " + t.Name + "Values.").
		Func().Params(jen.Id("v").Id(t.Name)).Id("Valid").Params().Bool().Block(body...)
}

// enumUnmarshal renders the UnmarshalJSON that rejects values outside the enum.
func (e *emitter) enumUnmarshal(t *ir.Type) jen.Code {
	return doc("UnmarshalJSON decodes " + article(t.Name) + ", rejecting any value not in " + t.Name +
		"Values with an ErrInvalidEnum *DecodeError.").
		Func().Params(jen.Id("v").Op("*").Id(t.Name)).Id("UnmarshalJSON").Params(jen.Id("data").Index().Byte()).Error().
		Block(jen.Return(rt("Enum").Call(jen.Lit(t.Name), jen.Id("data"), jen.Id("v"), jen.Id(t.Name+"Values"))))
}

// quote renders s as a Go (and, for spec values, JSON) string literal for comments.
func quote(s string) string {
	return `"` + s + `"`
}
