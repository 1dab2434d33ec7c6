package gotypes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/dave/jennifer/jen"

	"github.com/dshkit/dsh/gen/ir"
)

// This file maps a field's type reference to the Go snippets every generated method needs:
// its Go type, its decoder, its encoded value, its "is set" test and its validator.

const (
	jsonPkg = "encoding/json"
	timePkg = "time"
	// codecPkg is the runtime of the generated code (see the codec package).
	codecPkg = "github.com/dshkit/dsh/codec"
)

// rt refers to name in the codec runtime.
func rt(name string) *jen.Statement { return jen.Qual(codecPkg, name) }

// namedKind returns the kind of the type a Named reference designates, or 0 for any other
// reference.
func (e *emitter) namedKind(r *ir.TypeRef) ir.TypeKind {
	if r.Kind != ir.Named {
		return 0
	}
	return e.named(r).Kind
}

// pointerWhenOptional reports whether an optional field of type r is a pointer: scalars,
// durations and records are; enums, unions, lists, maps and JSON have their own absent value.
func (e *emitter) pointerWhenOptional(r *ir.TypeRef) bool {
	switch r.Kind {
	case ir.String, ir.Int, ir.Float, ir.Bool, ir.Duration:
		return true
	case ir.Named:
		return e.namedKind(r) == ir.Record
	}
	return false
}

// goType is the Go type of a value of type r (a required or regular field, or an element).
func (e *emitter) goType(r *ir.TypeRef) jen.Code {
	switch r.Kind {
	case ir.String:
		return jen.String()
	case ir.Int:
		return jen.Int()
	case ir.Float:
		return jen.Float64()
	case ir.Bool:
		return jen.Bool()
	case ir.JSON:
		return jen.Qual(jsonPkg, "RawMessage")
	case ir.Duration:
		return jen.Qual(timePkg, "Duration")
	case ir.List:
		return jen.Index().Add(e.goType(r.Elem))
	case ir.Map:
		return jen.Map(jen.String()).Add(e.goType(r.Elem))
	}
	return jen.Id(r.Name) // Named and Handle
}

// absentable reports whether field f has an absent (nil) value: it is optional, or nullable
// (null decodes as absent, and a nil required or regular field encodes as null).
func absentable(f *ir.Field) bool {
	return (f.Optional || f.Nullable) && !f.Runtime
}

// fieldType is the Go type of field f: a pointer for an optional or nullable scalar,
// duration or record.
func (e *emitter) fieldType(f *ir.Field) jen.Code {
	if absentable(f) && e.pointerWhenOptional(f.Type) {
		return jen.Op("*").Add(e.goType(f.Type))
	}
	return e.goType(f.Type)
}

// fieldTag is the struct tag of field f.
func fieldTag(f *ir.Field) map[string]string {
	switch {
	case f.Runtime || f.Type.Kind == ir.Handle:
		return map[string]string{"json": "-"}
	case f.Optional:
		return map[string]string{"json": f.JSONName + ",omitempty"}
	}
	return map[string]string{"json": f.JSONName}
}

// fieldDecoder is the decoder of field f: the strict decoder of its type, into a pointer
// when the field is one, and wrapped so that null decodes as absent when it is nullable.
func (e *emitter) fieldDecoder(f *ir.Field) jen.Code {
	dec := e.decoder(f.Type, absentable(f))
	if f.Nullable && f.Type.Kind != ir.JSON {
		return rt("Nullable").Call(dec)
	}
	return dec
}

// decoder is an expression of type func([]byte, *T) error that strictly decodes a value
// of type r into T (the field's Go type when pointer says so).
func (e *emitter) decoder(r *ir.TypeRef, pointer bool) jen.Code {
	ptr := pointer && e.pointerWhenOptional(r)
	switch r.Kind {
	case ir.JSON:
		return rt("Raw")
	case ir.Duration:
		if ptr {
			return rt("PtrOf").Call(rt("Duration"))
		}
		return rt("Duration")
	case ir.List:
		return rt("ListOf").Call(e.decoder(r.Elem, false))
	case ir.Map:
		return rt("MapOf").Call(e.decoder(r.Elem, false))
	case ir.Named:
		if e.namedKind(r) == ir.Union {
			return rt("UnionOf").Call(jen.Id("Unmarshal" + r.Name))
		}
	}
	t := e.goType(r)
	if ptr {
		t = jen.Op("*").Add(t)
	} else if e.namedKind(r) == ir.Record {
		// The raw value comes from an object member or a list element, which the decoder
		// has already scanned: the record's UnmarshalJSON need not wait for another scan.
		return rt("Checked").Types(t)
	}
	return rt("Value").Types(t)
}

// encodeValue is the statement writing x, a value of type r, to to, an expression of type
// *codec.Encoder (the encoder enc, or enc.Key(name) for an object member): scalars and enums
// directly (through x's pointer when pointer says the field is one), durations as
// milliseconds, records through their encodeJSON method, unions through their encode
// function, lists and maps element by element.
func (e *emitter) encodeValue(r *ir.TypeRef, x *jen.Statement, pointer bool, to *jen.Statement) jen.Code {
	val := jen.Code(x)
	if pointer && e.pointerWhenOptional(r) {
		val = jen.Op("*").Add(x.Clone())
	}
	switch r.Kind {
	case ir.String:
		return to.Dot("String").Call(val)
	case ir.Int:
		return to.Dot("Int").Call(val)
	case ir.Float:
		return to.Dot("Float").Call(val)
	case ir.Bool:
		return to.Dot("Bool").Call(val)
	case ir.JSON:
		return to.Dot("Raw").Call(x)
	case ir.Duration:
		return to.Dot("Int64").Call(x.Clone().Dot("Milliseconds").Call())
	case ir.List, ir.Map:
		fn := "EncodeList"
		if r.Kind == ir.Map {
			fn = "EncodeMap"
		}
		return rt(fn).Call(to, x, e.elemEncoder(r.Elem))
	case ir.Named:
		switch e.namedKind(r) {
		case ir.Enum:
			return to.Dot("String").Call(jen.String().Call(x))
		case ir.Union:
			return jen.Id(unionEncoder(r.Name)).Call(to, x)
		}
		return x.Clone().Dot("encodeJSON").Call(to)
	}
	return to.Dot("Value").Call(x) // a handle is never encoded; kept for completeness
}

// elemEncoder is an expression of type func(*codec.Encoder, T) writing a list or map
// element of type r: an Encoder method, a union's encode function, or a function literal.
func (e *emitter) elemEncoder(r *ir.TypeRef) jen.Code {
	method := map[ir.RefKind]string{ir.String: "String", ir.Int: "Int", ir.Float: "Float", ir.Bool: "Bool", ir.JSON: "Raw"}[r.Kind]
	switch {
	case method != "":
		return jen.Parens(jen.Op("*").Add(rt("Encoder"))).Dot(method)
	case e.namedKind(r) == ir.Union:
		return jen.Id(unionEncoder(r.Name))
	}
	return jen.Func().Params(jen.Id("enc").Op("*").Add(rt("Encoder")), jen.Id("v").Add(e.goType(r))).
		Block(e.encodeValue(r, jen.Id("v"), false, jen.Id("enc")))
}

// isSet is the condition under which optional or nullable field f, read from x, is present
// (not null).
func (e *emitter) isSet(f *ir.Field, x *jen.Statement) jen.Code {
	switch {
	case f.Type.Kind == ir.JSON:
		return jen.Len(x).Op("!=").Lit(0)
	case e.namedKind(f.Type) == ir.Enum:
		return x.Clone().Op("!=").Lit("")
	}
	return x.Clone().Op("!=").Nil()
}

// checker is an expression of type func(T) error validating one value of type r, or nil
// when such values need no check (they hold no enum, record or union).
func (e *emitter) checker(r *ir.TypeRef) jen.Code {
	switch r.Kind {
	case ir.List, ir.Map:
		elem := e.checker(r.Elem)
		if elem == nil {
			return nil
		}
		if r.Kind == ir.List {
			return rt("ListChecker").Call(elem)
		}
		return rt("MapChecker").Call(elem)
	case ir.Named:
		switch e.namedKind(r) {
		case ir.Enum:
			return rt("CheckEnum").Types(jen.Id(r.Name))
		case ir.Record:
			return jen.Id(r.Name).Dot("Validate")
		case ir.Union:
			return jen.Id(unionValidator(r.Name))
		}
	}
	return nil
}

// check is a call validating x, a value of type r, or nil when it needs no check. Records
// call their Validate method, so that x may be a pointer.
func (e *emitter) check(r *ir.TypeRef, x *jen.Statement) jen.Code {
	switch r.Kind {
	case ir.List, ir.Map:
		elem := e.checker(r.Elem)
		if elem == nil {
			return nil
		}
		if r.Kind == ir.List {
			return rt("CheckList").Call(x, elem)
		}
		return rt("CheckMap").Call(x, elem)
	case ir.Named:
		switch e.namedKind(r) {
		case ir.Enum:
			return rt("CheckEnum").Call(x)
		case ir.Record:
			return x.Clone().Dot("Validate").Call()
		case ir.Union:
			return jen.Id(unionValidator(r.Name)).Call(x)
		}
	}
	return nil
}

// defaultOf returns the JSON literal a regular field f gets when absent: its own default,
// else its enum's default, else "" (the Go zero value).
func (e *emitter) defaultOf(f *ir.Field) string {
	if f.Required || f.Optional || f.Runtime {
		return ""
	}
	if f.Default != "" {
		return f.Default
	}
	if e.namedKind(f.Type) == ir.Enum {
		if def := e.named(f.Type).Default; def != "" {
			lit, _ := json.Marshal(def)
			return string(lit)
		}
	}
	return ""
}

// checkDefault rejects a default the generated decoder could not apply.
func (e *emitter) checkDefault(f *ir.Field) error {
	lit := e.defaultOf(f)
	if f.Nullable && lit == "null" {
		return nil
	}
	if lit == "" {
		if f.Default != "" {
			return fmt.Errorf("gotypes: %s: field %s has a default but is not a regular field", f.Pos, f.JSONName)
		}
		return nil
	}
	if err := e.checkLiteral(f.Type, []byte(lit)); err != nil {
		return fmt.Errorf("gotypes: %s: default %s of field %s: %w", f.Pos, lit, f.JSONName, err)
	}
	return nil
}

// checkLiteral checks that lit is a JSON value of type r.
func (e *emitter) checkLiteral(r *ir.TypeRef, lit []byte) error {
	dec := json.NewDecoder(bytes.NewReader(lit))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return fmt.Errorf("not one JSON value")
	}
	ok := true
	switch r.Kind {
	case ir.String:
		_, ok = v.(string)
	case ir.Int, ir.Duration:
		n, isNum := v.(json.Number)
		_, err := n.Int64()
		ok = isNum && err == nil
	case ir.Float:
		_, ok = v.(json.Number)
	case ir.Bool:
		_, ok = v.(bool)
	case ir.List:
		_, ok = v.([]any)
	case ir.Map:
		_, ok = v.(map[string]any)
	case ir.Named:
		t := e.named(r)
		switch t.Kind {
		case ir.Enum:
			s, isStr := v.(string)
			ok = isStr && slices.ContainsFunc(t.Values, func(ev *ir.EnumValue) bool { return ev.Value == s })
		default:
			_, ok = v.(map[string]any)
		}
	case ir.Handle:
		ok = false
	}
	if !ok {
		return fmt.Errorf("not a valid %s", r)
	}
	return nil
}

// unionEncoder is the name of the unexported function encoding a union's value.
func unionEncoder(union string) string {
	return "encode" + union
}

// unionValidator is the name of the unexported function validating a union's value.
func unionValidator(union string) string {
	return "validate" + union
}
