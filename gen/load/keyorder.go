package load

import (
	"slices"

	"cuelang.org/go/cue"

	"github.com/dshkit/dsh/gen/ir"
)

// keyOrder applies the package's hidden _keyOrder list, when it has one: the order in
// which an engine writes its JSON objects' keys (a hook's stdin, in spec/wire). Every
// record's fields named in the list come first, in the list's order; its other fields
// follow in the order CUE gives them (a record's own fields as declared). The order of a record's fields is the order its
// MarshalJSON writes them, so the list is what makes dsh write a stdin key for key as
// the engine does; CUE alone orders the fields of an embedded definition (#Common) among
// the embedding record's own.
func (w *walker) keyOrder() {
	v := w.root.LookupPath(cue.MakePath(cue.Hid("_keyOrder", w.importPath)))
	if !v.Exists() {
		return
	}
	pos := position(v.Pos())
	var order []string
	if err := v.Decode(&order); err != nil {
		w.errorf(pos, "_keyOrder: a list of JSON field names: %v", err)
		return
	}
	rank := map[string]int{}
	for i, k := range order {
		if _, dup := rank[k]; dup {
			w.errorf(pos, "_keyOrder: %q is listed twice", k)
		}
		rank[k] = i
	}
	used := map[string]bool{}
	for _, t := range w.spec.Types {
		if t.Kind != ir.Record {
			continue
		}
		var first, rest []*ir.Field
		for _, f := range t.Fields {
			if _, ok := rank[f.JSONName]; ok {
				first = append(first, f)
				used[f.JSONName] = true
			} else {
				rest = append(rest, f)
			}
		}
		slices.SortStableFunc(first, func(a, b *ir.Field) int { return rank[a.JSONName] - rank[b.JSONName] })
		t.Fields = append(first, rest...)
	}
	for _, k := range order {
		if !used[k] {
			w.errorf(pos, "_keyOrder: %q is not a field of any record", k)
		}
	}
}
