package gotests

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/dshkit/dsh/gen/ir"
)

// This file builds the deterministic sample values of the generated test, as jennifer code.
//
// Every field is filled with a value of its type: strings "text-<field>", ints 1, numbers
// 1.5, bools true, durations one millisecond, any JSON {"k":"v"} (compact, because a
// json.RawMessage compares as bytes), enums their first value, lists one element, maps one
// key "k", records and unions recursively (a union takes its first variant). Runtime and
// handle fields are never set, a variant's discriminator is its Go type, and of each
// exclusive group only the first field is set. Nullable fields are set like the others
// (pointers for scalars and records); the "nulls" sample of a record leaves its own
// nullable fields absent instead, so that they encode as null or not at all.
//
// Recursion is capped: a record nested deeper than maxDepth leaves its optional fields
// absent and its lists and maps empty, and a union that deep takes the variant whose finite
// value is the least nested (see finiteRanks). A type with no finite value (a cycle of
// required records) is an error.

// maxDepth is the deepest nesting at which a record's optional fields are set and its
// lists and maps filled; the sampled type itself is at depth 0.
const maxDepth = 2

// sampler renders sample values of one spec.
type sampler struct {
	spec *ir.Spec
	// pkg is the import path of the generated package the samples' types live in.
	pkg string
	// variantOf maps each variant record to its union.
	variantOf map[*ir.Type]*ir.Type
	// rank holds the types that have a finite value once optional fields are absent and
	// lists and maps empty, with the round of finiteRanks that found them.
	rank map[*ir.Type]int
	// limit is the depth past which the sampler gives up: no finite value.
	limit int
}

// newSampler returns the sampler of s, whose Go package has the import path pkg.
func newSampler(s *ir.Spec, pkg string) *sampler {
	b := &sampler{spec: s, pkg: pkg, variantOf: map[*ir.Type]*ir.Type{}, limit: maxDepth + len(s.Types) + 1}
	for _, u := range s.Types {
		for _, v := range u.Variants {
			b.variantOf[v.Type] = u
		}
	}
	b.rank = finiteRanks(s)
	return b
}

// finiteRanks computes, round by round, the types whose minimal value (required and
// regular fields only, lists and maps empty) is finite, and the round in which each became
// so: a record's required record and union fields have lower ranks than the record, and a
// union has a variant of lower rank than itself, so that following the lowest-ranked
// variant always ends.
func finiteRanks(s *ir.Spec) map[*ir.Type]int {
	rank := map[*ir.Type]int{}
	for round := 1; ; round++ {
		var found []*ir.Type
		for _, t := range s.Types {
			if _, done := rank[t]; done {
				continue
			}
			ok := false
			switch t.Kind {
			case ir.Enum:
				ok = len(t.Values) > 0
			case ir.Union:
				for _, v := range t.Variants {
					_, finite := rank[v.Type]
					ok = ok || finite
				}
			case ir.Record:
				ok = true
				for _, f := range t.Fields {
					if f.Optional || f.Runtime || f.Type.Kind != ir.Named {
						continue
					}
					if nt := named(s, f.Type); nt == nil {
						ok = false
					} else if _, finite := rank[nt]; !finite {
						ok = false
					}
				}
			}
			if ok {
				found = append(found, t)
			}
		}
		if len(found) == 0 {
			return rank
		}
		for _, t := range found {
			rank[t] = round
		}
	}
}

// named returns the type a Named reference designates (linked, or looked up), or nil.
func named(s *ir.Spec, r *ir.TypeRef) *ir.Type {
	if r.Type != nil {
		return r.Type
	}
	return s.Lookup(r.Name)
}

// top renders the sample of record t at depth 0.
func (b *sampler) top(t *ir.Type) (jen.Code, error) {
	return b.recordWith(t, 0, false)
}

// topNulls renders the sample of record t at depth 0 with its nullable fields absent (nil).
func (b *sampler) topNulls(t *ir.Type) (jen.Code, error) {
	return b.recordWith(t, 0, true)
}

// variant renders the sample of variant v of union u at depth 0.
func (b *sampler) variant(u *ir.Type, v *ir.Variant) (jen.Code, error) {
	if v.Type == nil {
		return nil, fmt.Errorf("gotests: %s: variant %q of %s has no record", u.Pos, v.Kind, u.Name)
	}
	return b.record(v.Type, 0)
}

// record renders a composite literal of record t, nested at depth.
func (b *sampler) record(t *ir.Type, depth int) (jen.Code, error) {
	return b.recordWith(t, depth, false)
}

// recordWith renders a composite literal of record t, nested at depth; nulls leaves t's
// nullable fields absent.
func (b *sampler) recordWith(t *ir.Type, depth int, nulls bool) (jen.Code, error) {
	if depth > b.limit {
		return nil, fmt.Errorf("gotests: %s: %s has no finite sample value (a cycle of required fields?)", t.Pos, t.Name)
	}
	limited := depth > maxDepth
	skip := map[string]bool{}
	for _, group := range t.Exclusive {
		for _, name := range group[min(1, len(group)):] {
			skip[name] = true
		}
	}
	disc := ""
	if u := b.variantOf[t]; u != nil {
		disc = discriminator(u)
	}
	var fields []jen.Code
	for _, f := range t.Fields {
		switch {
		case f.Runtime, f.Type.Kind == ir.Handle, f.JSONName == disc, skip[f.JSONName], f.Optional && limited, f.Nullable && nulls:
			continue
		}
		v, err := b.value(f.Type, f.JSONName, f.Optional || f.Nullable, depth, limited)
		if err != nil {
			return nil, err
		}
		fields = append(fields, jen.Id(f.GoName).Op(":").Add(v))
	}
	if len(fields) == 0 {
		return b.qual(t.Name).Values(), nil
	}
	return b.qual(t.Name).Custom(multiline, fields...), nil
}

// multiline lays out a composite literal's elements one per line.
var multiline = jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}

// qual is name qualified by the generated package.
func (b *sampler) qual(name string) *jen.Statement { return jen.Qual(b.pkg, name) }

// value renders a value of type r for the field (or element of the field) name of a record
// at depth; optional says the field is optional or nullable (scalars and records are then
// pointers), limited that lists and maps stay empty.
func (b *sampler) value(r *ir.TypeRef, name string, optional bool, depth int, limited bool) (jen.Code, error) {
	ptr := func(v jen.Code) jen.Code {
		if optional {
			return jen.Id("ptr").Call(v)
		}
		return v
	}
	switch r.Kind {
	case ir.String:
		return ptr(jen.Lit("text-" + name)), nil
	case ir.Int:
		return ptr(jen.Lit(1)), nil
	case ir.Float:
		return ptr(jen.Lit(1.5)), nil
	case ir.Bool:
		return ptr(jen.True()), nil
	case ir.Duration:
		return ptr(jen.Qual("time", "Millisecond")), nil
	case ir.JSON:
		return jen.Qual("encoding/json", "RawMessage").Call(jen.Lit(`{"k":"v"}`)), nil
	case ir.List, ir.Map:
		typ, err := b.goType(r)
		if err != nil {
			return nil, err
		}
		if limited {
			return jen.Add(typ).Values(), nil
		}
		elem, err := b.value(r.Elem, name, false, depth, false)
		if err != nil {
			return nil, err
		}
		if r.Kind == ir.List {
			return jen.Add(typ).Custom(multiline, elem), nil
		}
		return jen.Add(typ).Custom(multiline, jen.Lit("k").Op(":").Add(elem)), nil
	case ir.Named:
		t := named(b.spec, r)
		if t == nil {
			return nil, fmt.Errorf("gotests: reference to undeclared type %q", r.Name)
		}
		switch t.Kind {
		case ir.Enum:
			if len(t.Values) == 0 {
				return nil, fmt.Errorf("gotests: %s: enum %s has no values", t.Pos, t.Name)
			}
			return b.qual(t.Values[0].GoName), nil
		case ir.Record:
			v, err := b.record(t, depth+1)
			if err != nil || !optional {
				return v, err
			}
			return jen.Op("&").Add(v), nil
		case ir.Union:
			if len(t.Variants) == 0 {
				return nil, fmt.Errorf("gotests: %s: union %s has no variants", t.Pos, t.Name)
			}
			v := t.Variants[0]
			if depth+1 > maxDepth {
				best := 0
				for _, c := range t.Variants {
					if r, ok := b.rank[c.Type]; ok && (best == 0 || r < best) {
						v, best = c, r
					}
				}
			}
			return b.record(v.Type, depth+1)
		}
		return nil, fmt.Errorf("gotests: %s: type %s has unknown kind %s", t.Pos, t.Name, t.Kind)
	}
	return nil, fmt.Errorf("gotests: no sample value for a %s", r)
}

// goType renders the Go type of a list or map element type (never a pointer).
func (b *sampler) goType(r *ir.TypeRef) (*jen.Statement, error) {
	switch r.Kind {
	case ir.String:
		return jen.String(), nil
	case ir.Int:
		return jen.Int(), nil
	case ir.Float:
		return jen.Float64(), nil
	case ir.Bool:
		return jen.Bool(), nil
	case ir.JSON:
		return jen.Qual("encoding/json", "RawMessage"), nil
	case ir.Duration:
		return jen.Qual("time", "Duration"), nil
	case ir.Named, ir.Handle:
		return b.qual(r.Name), nil
	case ir.List, ir.Map:
		elem, err := b.goType(r.Elem)
		if err != nil {
			return nil, err
		}
		if r.Kind == ir.List {
			return jen.Index().Add(elem), nil
		}
		return jen.Map(jen.String()).Add(elem), nil
	}
	return nil, fmt.Errorf("gotests: no Go type for a %s", r)
}
