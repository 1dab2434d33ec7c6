// Package variant is the one place where the runtime turns a union variant held through a
// pointer into its value form.
//
// A generated union's variants have value receivers, so both T and *T satisfy the union:
// a tool, a plugin or a caller of the llm package may hand the runtime a *dsh.TextBlock
// where it expects a dsh.ContentBlock. Decisions are normalized by the dispatch engine
// (codec/dispatch.Normalize); the other places where union values enter the runtime (a
// tool's content and context messages, a request a model is asked to stream, the blocks
// an estimate or a check walks) call [Value], so that the code after them switches over
// value forms only, with one arm per variant.
package variant

import "reflect"

// Value returns u in its value form when u holds a pointer variant: a pointer to a struct
// whose value also satisfies the interface U. A non-nil one becomes the value it points
// to (a copy); a nil one becomes the zero U, nil. Anything else is returned as it is. A
// type switch over the result needs one arm per variant, and its nil arm catches a nil
// pointer variant too. Value does not allocate for a value form.
func Value[U any](u U) U {
	t := reflect.TypeOf(any(u))
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return u
	}
	if ut := reflect.TypeFor[U](); ut.Kind() != reflect.Interface || !t.Elem().Implements(ut) {
		return u
	}
	p := reflect.ValueOf(any(u))
	if p.IsNil() {
		var zero U
		return zero
	}
	return p.Elem().Interface().(U)
}
