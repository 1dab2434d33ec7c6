package dispatch

import (
	"reflect"
	"sync"
)

// Normalize returns v with every union variant held through a pointer inside it (a
// *TextBlock in a message's content, say) replaced by the value it points to, so that the
// runtime sees one dynamic type per variant. A value of a union (an interface with the
// marker method is<Name>) is rewritten when it holds a non-nil pointer to a struct whose
// value form implements the union too; a nil pointer is left as is, and so is every other
// interface and every field tagged json:"-". v is not modified: a struct, slice, map or pointer on the way to
// a rewritten value is copied, and anything without one is shared. The generated check of
// a decision union calls it for the variants whose records reach another union.
func Normalize[T any](v T) T {
	rv := reflect.ValueOf(&v).Elem()
	var w walker
	if out, changed := w.normalize(rv); changed {
		return out.Interface().(T)
	}
	return v
}

// walker normalizes one value. path holds the pointers (and slice and map data) being
// walked, so that a cyclic value (a block that contains itself) is walked once around
// and then left as is.
type walker struct {
	path map[uintptr]bool
}

// enter marks the pointer p as being walked; it returns false when it already is.
func (w *walker) enter(p reflect.Value) bool {
	if w.path == nil {
		w.path = make(map[uintptr]bool)
	}
	if w.path[p.Pointer()] {
		return false
	}
	w.path[p.Pointer()] = true
	return true
}

func (w *walker) leave(p reflect.Value) { delete(w.path, p.Pointer()) }

// normalize returns v normalized and whether that changed anything (when it did not, the
// returned value is v itself).
func (w *walker) normalize(v reflect.Value) (reflect.Value, bool) {
	if !mayHold(v.Type()) {
		return v, false
	}
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() || !isUnion(v.Type()) {
			return v, false
		}
		e := v.Elem()
		changed := false
		if e.Kind() == reflect.Pointer && !e.IsNil() && e.Elem().Kind() == reflect.Struct && e.Elem().Type().Implements(v.Type()) {
			if !w.enter(e) {
				return v, false
			}
			defer w.leave(e)
			e, changed = e.Elem(), true
		}
		ne, c := w.normalize(e)
		if !changed && !c {
			return v, false
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(ne)
		return out, true
	case reflect.Struct:
		var out reflect.Value
		for i := range v.NumField() {
			if !isData(v.Type().Field(i)) {
				continue
			}
			nf, c := w.normalize(v.Field(i))
			if !c {
				continue
			}
			if !out.IsValid() {
				out = reflect.New(v.Type()).Elem()
				out.Set(v)
			}
			out.Field(i).Set(nf)
		}
		if out.IsValid() {
			return out, true
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice {
			if v.IsNil() || v.Len() == 0 || !w.enter(v) {
				return v, false
			}
			defer w.leave(v)
		}
		var out reflect.Value
		for i := range v.Len() {
			ne, c := w.normalize(v.Index(i))
			if !c {
				continue
			}
			if !out.IsValid() {
				if v.Kind() == reflect.Slice {
					out = reflect.MakeSlice(v.Type(), v.Len(), v.Len())
					reflect.Copy(out, v)
				} else {
					out = reflect.New(v.Type()).Elem()
					out.Set(v)
				}
			}
			out.Index(i).Set(ne)
		}
		if out.IsValid() {
			return out, true
		}
	case reflect.Map:
		if v.IsNil() || !w.enter(v) {
			return v, false
		}
		defer w.leave(v)
		var out reflect.Value
		for it := v.MapRange(); it.Next(); {
			ne, c := w.normalize(it.Value())
			if !c {
				continue
			}
			if !out.IsValid() {
				out = reflect.MakeMapWithSize(v.Type(), v.Len())
				for jt := v.MapRange(); jt.Next(); {
					out.SetMapIndex(jt.Key(), jt.Value())
				}
			}
			out.SetMapIndex(it.Key(), ne)
		}
		if out.IsValid() {
			return out, true
		}
	case reflect.Pointer:
		if v.IsNil() {
			return v, false
		}
		if !w.enter(v) {
			return v, false
		}
		defer w.leave(v)
		ne, c := w.normalize(v.Elem())
		if !c {
			return v, false
		}
		out := reflect.New(v.Type().Elem())
		out.Elem().Set(ne)
		return out, true
	}
	return v, false
}

// holders memoizes mayHold, as encoding/json memoizes its encoders: a reflect.Type maps to
// whether its values can hold an interface value.
var holders sync.Map

// mayHold reports whether a value of type t can hold a union value (in a data field, an
// element or behind a pointer); normalize skips the values that cannot, such as a
// json.RawMessage.
func mayHold(t reflect.Type) bool {
	if b, ok := holders.Load(t); ok {
		return b.(bool)
	}
	b := mayHoldSeen(t, map[reflect.Type]bool{})
	holders.Store(t, b)
	return b
}

func mayHoldSeen(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Interface:
		return isUnion(t)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); isData(f) && mayHoldSeen(f.Type, seen) {
				return true
			}
		}
	case reflect.Slice, reflect.Array, reflect.Pointer, reflect.Map:
		return mayHoldSeen(t.Elem(), seen)
	}
	return false
}

// isUnion reports whether t is the interface of a generated union: it has the marker
// method is<Name> (PreToolDecision has isPreToolDecision). Other interfaces (the agent
// handle of a payload, say) are not data and are left alone.
func isUnion(t reflect.Type) bool {
	if t.Kind() != reflect.Interface || t.Name() == "" {
		return false
	}
	marker := "is" + t.Name()
	for i := range t.NumMethod() {
		if t.Method(i).Name == marker {
			return true
		}
	}
	return false
}

// isData reports whether field f is part of a record's data: exported and encoded (a
// field tagged json:"-", such as a payload's agent handle, is not).
func isData(f reflect.StructField) bool {
	return f.IsExported() && f.Tag.Get("json") != "-"
}

// HasPointerVariant reports whether v holds, anywhere inside it, a union value that is a
// pointer variant: whether Normalize would change it. It allocates nothing and walks only
// the parts of v that can hold a union (a plan per type, built once), so that the
// generated checks can call it on every decision and pay for Normalize only when a
// listener returned a pointer variant inside one.
func HasPointerVariant(v any) bool {
	if v == nil {
		return false
	}
	rv := reflect.ValueOf(v)
	p := planFor(rv.Type())
	if p == nil {
		return false
	}
	return p(0, rv)
}

// Plan is the walk HasPointerVariant makes of the values of one type, built once: a
// generated package keeps one per variant whose record reaches a union and asks it of
// every such decision, without a lookup by type.
type Plan struct{ f plan }

// PlanOf returns the Plan of the values of type T.
func PlanOf[T any]() Plan { return Plan{planFor(reflect.TypeFor[T]())} }

// Has reports whether v (a value of the Plan's type) holds a pointer variant, as
// HasPointerVariant does.
func (p Plan) Has(v any) bool {
	return p.f != nil && v != nil && p.f(0, reflect.ValueOf(v))
}

// plan reports whether a value of one type, depth levels deep, holds a pointer variant; a
// nil plan stands for a type that cannot hold a union.
type plan func(depth int, v reflect.Value) bool

// maxDepth bounds the walk of HasPointerVariant, so that a cyclic value ends it: what lies
// deeper is reported as holding a pointer variant, which sends the value to Normalize,
// which walks cycles once around.
const maxDepth = 1000

// plans memoizes planFor: a reflect.Type maps to a *plan.
var plans sync.Map

// planFor returns the plan of t, building it (and those of the types it reaches) once.
func planFor(t reflect.Type) plan {
	if p, ok := plans.Load(t); ok {
		return *p.(*plan)
	}
	building := map[reflect.Type]*plan{}
	p := buildPlan(t, building)
	for bt, slot := range building {
		plans.LoadOrStore(bt, slot)
	}
	return p
}

func buildPlan(t reflect.Type, building map[reflect.Type]*plan) plan {
	if p, ok := plans.Load(t); ok {
		return *p.(*plan)
	}
	if slot, ok := building[t]; ok { // a recursive type: call the plan once it is built
		return func(depth int, v reflect.Value) bool { return *slot != nil && (*slot)(depth, v) }
	}
	slot := new(plan)
	building[t] = slot
	var f plan
	switch t.Kind() {
	case reflect.Interface:
		if isUnion(t) {
			f = func(depth int, v reflect.Value) bool {
				if v.IsNil() {
					return false
				}
				e := v.Elem()
				if e.Kind() == reflect.Pointer && !e.IsNil() && e.Elem().Kind() == reflect.Struct && e.Elem().Type().Implements(t) {
					return true
				}
				p := planFor(e.Type())
				return p != nil && p(depth+1, e)
			}
		}
	case reflect.Struct:
		var idx []int
		var sub []plan
		for i := range t.NumField() {
			if fl := t.Field(i); isData(fl) {
				if p := buildPlan(fl.Type, building); p != nil {
					idx, sub = append(idx, i), append(sub, p)
				}
			}
		}
		if len(idx) > 0 {
			f = func(depth int, v reflect.Value) bool {
				for j, i := range idx {
					if sub[j](depth+1, v.Field(i)) {
						return true
					}
				}
				return false
			}
		}
	case reflect.Slice, reflect.Array:
		if ep := buildPlan(t.Elem(), building); ep != nil {
			f = func(depth int, v reflect.Value) bool {
				if depth > maxDepth {
					return true
				}
				for i := range v.Len() {
					if ep(depth+1, v.Index(i)) {
						return true
					}
				}
				return false
			}
		}
	case reflect.Map:
		if ep := buildPlan(t.Elem(), building); ep != nil {
			f = func(depth int, v reflect.Value) bool {
				if depth > maxDepth {
					return true
				}
				for it := v.MapRange(); it.Next(); {
					if ep(depth+1, it.Value()) {
						return true
					}
				}
				return false
			}
		}
	case reflect.Pointer:
		if ep := buildPlan(t.Elem(), building); ep != nil {
			f = func(depth int, v reflect.Value) bool {
				if v.IsNil() {
					return false
				}
				if depth > maxDepth {
					return true
				}
				return ep(depth+1, v.Elem())
			}
		}
	}
	*slot = f
	return f
}
