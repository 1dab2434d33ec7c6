package load

import (
	"maps"
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
//
// A record the engine writes in an order of its own is a row of the hidden _keyOrders map
// (record name without "#" to its list), which replaces _keyOrder for that record.
func (w *walker) keyOrder() {
	own := w.recordKeyOrders()
	v := w.root.LookupPath(cue.MakePath(cue.Hid("_keyOrder", w.importPath)))
	if !v.Exists() {
		if len(own) > 0 {
			w.errorf(own[0].pos, "_keyOrders: a package with per-record key orders needs a _keyOrder")
		}
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
	byName := map[string]recordOrder{}
	for _, o := range own {
		byName[o.record] = o
	}
	for _, t := range w.spec.Types {
		if t.Kind != ir.Record {
			continue
		}
		if o, ok := byName[t.Name]; ok {
			delete(byName, t.Name)
			w.orderRecord(t, o)
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
	for _, o := range own {
		if _, left := byName[o.record]; left {
			w.errorf(o.pos, "_keyOrders: %q is not a record of the package", o.record)
		}
	}
}

// recordOrder is one row of _keyOrders.
type recordOrder struct {
	record string
	keys   []string
	pos    ir.Pos
}

// recordKeyOrders reads the package's hidden _keyOrders map, in the order CUE gives it.
func (w *walker) recordKeyOrders() []recordOrder {
	v := w.root.LookupPath(cue.MakePath(cue.Hid("_keyOrders", w.importPath)))
	if !v.Exists() {
		return nil
	}
	it, err := v.Fields()
	if err != nil {
		w.errorf(position(v.Pos()), "_keyOrders: a map from record names to lists of JSON field names: %v", err)
		return nil
	}
	var out []recordOrder
	for it.Next() {
		o := recordOrder{record: it.Selector().Unquoted(), pos: position(it.Value().Pos())}
		if err := it.Value().Decode(&o.keys); err != nil {
			w.errorf(o.pos, "_keyOrders: %s: a list of JSON field names: %v", o.record, err)
			continue
		}
		out = append(out, o)
	}
	return out
}

// orderRecord puts t's fields in o's order: every field of t must be listed, once.
func (w *walker) orderRecord(t *ir.Type, o recordOrder) {
	rank := map[string]int{}
	for i, k := range o.keys {
		if _, dup := rank[k]; dup {
			w.errorf(o.pos, "_keyOrders: %s: %q is listed twice", o.record, k)
		}
		rank[k] = i
	}
	for _, f := range t.Fields {
		if _, ok := rank[f.JSONName]; !ok {
			w.errorf(o.pos, "_keyOrders: %s: its field %q is not listed", o.record, f.JSONName)
			return
		}
		delete(rank, f.JSONName)
	}
	for _, k := range slices.Sorted(maps.Keys(rank)) {
		w.errorf(o.pos, "_keyOrders: %s: %q is not one of its fields", o.record, k)
	}
	slices.SortStableFunc(t.Fields, func(a, b *ir.Field) int {
		return slices.Index(o.keys, a.JSONName) - slices.Index(o.keys, b.JSONName)
	})
}
