package gotypes

import (
	"slices"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/dshkit/dsh/gen/ir"
)

// record renders a record (or a union variant): its struct, its variant methods when it is
// one, and its codec and validation methods.
func (e *emitter) record(t *ir.Type) []jen.Code {
	decls := []jen.Code{e.recordStruct(t)}
	if u, ok := e.variants[t]; ok {
		decls = append(decls, e.variantMethods(t, u)...)
	}
	decls = append(decls, e.marshal(t)...)
	decls = append(decls, e.unmarshal(t), e.validate(t))
	if len(t.Exclusive) > 0 {
		decls = append(decls, e.checkExclusive(t))
	}
	return decls
}

// fields returns the fields of t that its Go struct declares: all but a variant's
// discriminator, which the variant's Kind method stands for.
func (e *emitter) fields(t *ir.Type) []*ir.Field {
	u, ok := e.variants[t]
	if !ok {
		return t.Fields
	}
	var fs []*ir.Field
	for _, f := range t.Fields {
		if f.JSONName != u.union.Discriminator {
			fs = append(fs, f)
		}
	}
	return fs
}

// encodedFields returns the fields of t that JSON carries (the runtime ones never are).
func (e *emitter) encodedFields(t *ir.Type) []*ir.Field {
	var fs []*ir.Field
	for _, f := range e.fields(t) {
		if !f.Runtime && f.Type.Kind != ir.Handle {
			fs = append(fs, f)
		}
	}
	return fs
}

// recordStruct renders `type T struct{...}` with doc comments and json tags.
func (e *emitter) recordStruct(t *ir.Type) jen.Code {
	text := t.Doc
	if t.Open {
		text += "\n\n" + t.Name + " is open: decoding ignores the fields it does not declare (they are not kept)."
	}
	return doc(text).Type().Id(t.Name).StructFunc(func(g *jen.Group) {
		for _, f := range e.fields(t) {
			for _, line := range docLines(goDoc(f.Doc, f.JSONName, f.GoName)) {
				g.Comment(line)
			}
			g.Id(f.GoName).Add(e.fieldType(f)).Tag(fieldTag(f))
		}
	})
}

// marshal renders MarshalJSON and the encodeJSON method it runs: the fields in spec order
// (a variant's kind first), optional ones only when set, absent nullable ones as null, other
// regular lists and maps as empty rather than null, written into a codec.Encoder.
func (e *emitter) marshal(t *ir.Type) []jen.Code {
	comment := "MarshalJSON encodes r with its fields in spec order"
	if u, ok := e.variants[t]; ok {
		comment += ` ("` + u.union.Discriminator + `" first)`
	}
	comment += ": absent optional fields are omitted, "
	if slices.ContainsFunc(e.encodedFields(t), func(f *ir.Field) bool { return f.Nullable && !f.Optional }) {
		comment += "absent nullable fields that are not optional encode as null, "
	}
	comment += "nil lists and maps that are not optional encode as empty. It does not validate r."
	marshal := doc(comment).Func().Params(jen.Id("r").Id(t.Name)).Id("MarshalJSON").Params().
		Params(jen.Index().Byte(), jen.Error()).Block(
		jen.Return(rt("Marshal").Call(jen.Id("r"), jen.Id(t.Name).Dot("encodeJSON"))),
	)

	enc := func(method string, args ...jen.Code) jen.Code { return jen.Id("enc").Dot(method).Call(args...) }
	// key is the encoder with the member name written, to write its value: enc.Key("id").
	key := func(name string) *jen.Statement { return jen.Id("enc").Dot("Key").Call(jen.Lit(name)) }
	body := []jen.Code{enc("BeginObject")}
	if u, ok := e.variants[t]; ok {
		kind := jen.Id(kindConst(t.Name))
		body = append(body, e.encodeValue(&ir.TypeRef{Kind: ir.String}, jen.String().Call(kind), false, key(u.union.Discriminator)))
	}
	for _, f := range e.encodedFields(t) {
		x := jen.Id("r").Dot(f.GoName)
		switch {
		case f.Optional:
			body = append(body, jen.If(e.isSet(f, x)).Block(e.encodeValue(f.Type, x.Clone(), absentable(f), key(f.JSONName))))
		case f.Nullable:
			body = append(body, jen.If(e.isSet(f, x)).Block(e.encodeValue(f.Type, x.Clone(), true, key(f.JSONName))).
				Else().Block(key(f.JSONName).Dot("Null").Call()))
		default:
			switch f.Type.Kind {
			case ir.List:
				x = rt("NonNilList").Call(x)
			case ir.Map:
				x = rt("NonNilMap").Call(x)
			}
			body = append(body, e.encodeValue(f.Type, x, false, key(f.JSONName)))
		}
	}
	body = append(body, enc("EndObject"))
	encode := doc("encodeJSON writes r to enc as MarshalJSON encodes it.").
		Func().Params(jen.Id("r").Id(t.Name)).Id("encodeJSON").Params(jen.Id("enc").Op("*").Add(rt("Encoder"))).Block(body...)
	return []jen.Code{marshal, encode}
}

// unmarshal renders the strict UnmarshalJSON: every field decoded in spec order, required
// ones required, regular ones defaulted, then unknown fields and exclusive groups checked.
func (e *emitter) unmarshal(t *ir.Type) jen.Code {
	comment := "UnmarshalJSON decodes " + article(t.Name) + " strictly (see DecodeError); absent regular " +
		"fields get their default."
	if t.Open {
		comment = "UnmarshalJSON decodes " + article(t.Name) + " (see DecodeError); absent regular fields get " +
			"their default. " + t.Name + " is open: fields it does not declare are ignored."
	}
	body := []jen.Code{
		jen.List(jen.Id("dec"), jen.Err()).Op(":=").Add(rt("NewObjectDecoder")).Call(jen.Lit(t.Name), jen.Id("data")),
		ifErrReturn(jen.Err()),
		jen.Var().Id("v").Id(t.Name),
	}
	if u, ok := e.variants[t]; ok {
		body = append(body, jen.Id("dec").Dot("Kind").Call(jen.Lit(u.union.Discriminator), jen.Lit(u.variant.Kind)))
	}
	for _, f := range e.encodedFields(t) {
		body = append(body, e.decodeField(f))
	}
	if t.Open {
		body = append(body, jen.Id("dec").Dot("SkipUnknown").Call())
	}
	body = append(body, jen.If(jen.Err().Op(":=").Id("dec").Dot("Finish").Call(), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())))
	if len(t.Exclusive) > 0 {
		body = append(body, jen.If(jen.Err().Op(":=").Id("v").Dot("checkExclusive").Call(), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())))
	}
	body = append(body, jen.Op("*").Id("r").Op("=").Id("v"), jen.Return(jen.Nil()))
	return doc(comment).Func().Params(jen.Id("r").Op("*").Id(t.Name)).Id("UnmarshalJSON").
		Params(jen.Id("data").Index().Byte()).Error().Block(body...)
}

// decodeField renders the statement decoding field f into v.
func (e *emitter) decodeField(f *ir.Field) jen.Code {
	args := []jen.Code{jen.Id("dec"), jen.Lit(f.JSONName), jen.Op("&").Id("v").Dot(f.GoName), e.fieldDecoder(f)}
	switch def := e.defaultOf(f); {
	case f.Required:
		return rt("Required").Call(args...)
	case def != "":
		return rt("Default").Call(append(args, rawString(def))...)
	}
	return rt("Optional").Call(args...)
}

// validate renders Validate: enum values, non-nil required unions (unless nullable) and
// exclusive groups, recursively through records, unions, lists and maps.
func (e *emitter) validate(t *ir.Type) jen.Code {
	comment := "Validate checks what the Go types cannot: enum values, non-nil unions and " +
		"exclusive groups, recursively. It returns the first violation as a *DecodeError."
	var body []jen.Code
	for _, f := range e.encodedFields(t) {
		if stmt := e.validateField(t, f); stmt != nil {
			body = append(body, stmt)
		}
	}
	if len(t.Exclusive) > 0 {
		body = append(body, jen.Return(jen.Id("r").Dot("checkExclusive").Call()))
	} else {
		body = append(body, jen.Return(jen.Nil()))
	}
	return doc(comment).Func().Params(jen.Id("r").Id(t.Name)).Id("Validate").Params().Error().Block(body...)
}

// validateField renders the check of one field, or nil when the field needs none.
func (e *emitter) validateField(t *ir.Type, f *ir.Field) jen.Code {
	x := jen.Id("r").Dot(f.GoName)
	call := e.check(f.Type, x.Clone())
	if call == nil {
		return nil
	}
	stmt := jen.If(jen.Err().Op(":=").Add(call), jen.Err().Op("!=").Nil()).Block(
		jen.Return(rt("FieldError").Call(jen.Lit(t.Name), jen.Lit(f.JSONName), jen.Err())),
	)
	if absentable(f) && f.Type.Kind != ir.List && f.Type.Kind != ir.Map {
		return jen.If(e.isSet(f, x)).Block(stmt)
	}
	return stmt
}

// checkExclusive renders the unexported method checking t's exclusive groups.
func (e *emitter) checkExclusive(t *ir.Type) jen.Code {
	var body []jen.Code
	for i, group := range t.Exclusive {
		call := e.exclusiveCall(t, group)
		if i == len(t.Exclusive)-1 {
			body = append(body, jen.Return(call))
		} else {
			body = append(body, jen.If(jen.Err().Op(":=").Add(call), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())))
		}
	}
	groups := make([]string, len(t.Exclusive))
	for i, g := range t.Exclusive {
		groups[i] = strings.Join(g, "|")
	}
	comment := "checkExclusive reports an ErrExclusive *DecodeError when more than one field of an " +
		"exclusive group is set (" + strings.Join(groups, "; ") + ")."
	return doc(comment).Func().Params(jen.Id("r").Id(t.Name)).Id("checkExclusive").Params().Error().Block(body...)
}

// exclusiveCall renders the call checking one exclusive group of t.
func (e *emitter) exclusiveCall(t *ir.Type, group []string) jen.Code {
	var names, set []jen.Code
	for _, name := range group {
		f := fieldByJSON(t, name)
		names = append(names, jen.Lit(name))
		set = append(set, e.isSet(f, jen.Id("r").Dot(f.GoName)))
	}
	args := append([]jen.Code{jen.Lit(t.Name), jen.Index().String().Values(names...)}, set...)
	return rt("Exclusive").Call(args...)
}

// rawString renders s as a Go string literal, raw (`...`) when it can be, so that a JSON
// default reads as written in the spec.
func rawString(s string) jen.Code {
	if strings.ContainsAny(s, "`\r") {
		return jen.Lit(s)
	}
	return jen.Op("`" + s + "`")
}

// ifErrReturn renders `if err != nil { return results... }`.
func ifErrReturn(results ...jen.Code) jen.Code {
	return jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(results...))
}
