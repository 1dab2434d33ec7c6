package load

import (
	"encoding/json"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"sort"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/load"

	"github.com/dshkit/dsh/gen/ir"
)

// Bridges loads the bridge tables of directory dir (spec/bridges). Cross-checks against
// the canonical and wire specs are the caller's (gen.CheckBridges), which has them all.
func Bridges(dir, display string) ([]*ir.Bridge, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	return bridges(abs, display, nil)
}

// BridgesFS is Bridges over directory dir of fsys (e.g. the embedded spec).
func BridgesFS(fsys fs.FS, dir, display string) ([]*ir.Bridge, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.cue"))
	if err != nil {
		return nil, err
	}
	root := filepath.Join(string(filepath.Separator), "dsh-embedded-bridges")
	overlay := map[string]load.Source{}
	for _, n := range names {
		data, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		overlay[filepath.Join(root, path.Base(n))] = load.FromBytes(data)
	}
	return bridges(root, display, overlay)
}

func bridges(dir, display string, overlay map[string]load.Source) ([]*ir.Bridge, error) {
	insts := load.Instances([]string{"."}, &load.Config{Dir: dir, Overlay: overlay})
	if len(insts) != 1 {
		return nil, &Error{Dir: display, Problems: []Problem{{Msg: "expected one CUE package"}}}
	}
	if insts[0].Err != nil {
		return nil, cueError(display, insts[0].Err)
	}
	v := cuecontext.New().BuildInstance(insts[0])
	if err := v.Validate(cue.Concrete(true)); err != nil {
		return nil, cueError(display, err)
	}
	w := &walker{root: v, importPath: insts[0].ImportPath}
	var out []*ir.Bridge
	for _, e := range w.registry("_bridges") {
		b := &ir.Bridge{Dialect: e.name, GoName: ir.GoName(e.name), Doc: doc(e.v), Pos: entryPos(e.v)}
		b.File = b.Pos.File
		if b.Doc == "" {
			w.errorf(b.Pos, "bridge %q: missing doc comment", e.name)
		}
		if err := e.v.Decode(b); err != nil {
			w.errorf(b.Pos, "bridge %q: %v", e.name, err)
			continue
		}
		it, err := e.v.LookupPath(cue.ParsePath("events")).Fields()
		if err != nil {
			w.errorf(b.Pos, "bridge %q: events: %v", e.name, err)
			continue
		}
		for it.Next() {
			ev := &ir.BridgeEvent{Event: it.Selector().Unquoted(), Doc: doc(it.Value()), Pos: entryPos(it.Value())}
			if ev.Doc == "" {
				w.errorf(ev.Pos, "bridge %q event %q: missing doc comment", e.name, ev.Event)
			}
			if err := it.Value().Decode(ev); err != nil {
				w.errorf(ev.Pos, "bridge %q event %q: %v", e.name, ev.Event, err)
				continue
			}
			rules := it.Value().LookupPath(cue.ParsePath("rules"))
			for i, r := range ev.Rules {
				is := rules.LookupPath(cue.MakePath(cue.Index(i), cue.Str("is").Optional()))
				if is.Exists() && is.Err() == nil {
					var lit any
					if err := is.Decode(&lit); err == nil && lit != nil {
						data, _ := json.Marshal(lit)
						r.Is = string(data)
					}
				}
			}
			b.Events = append(b.Events, ev)
		}
		sort.Slice(b.Events, func(i, j int) bool { return b.Events[i].Event < b.Events[j].Event })
		for ev := range b.Pending {
			if _, ok := b.Unfired[ev]; ok {
				w.errorf(b.Pos, "bridge %q event %q: both pending and unfired", e.name, ev)
			}
		}
		for tool, ti := range b.ToolInputs {
			for k := range ti.Defaults {
				if !slices.Contains(ti.Keys, k) {
					w.errorf(b.Pos, "bridge %q toolInputs %q: default %q is not one of its keys", e.name, tool, k)
				}
			}
		}
		for _, ev := range b.Events {
			if _, ok := b.Unfired[ev.Event]; ok {
				w.errorf(ev.Pos, "bridge %q event %q: also in unfired (an event is fired or not)", e.name, ev.Event)
			}
			if _, ok := b.Pending[ev.Event]; ok {
				w.errorf(ev.Pos, "bridge %q event %q: also in pending (an event is fired or not)", e.name, ev.Event)
			}
		}
		out = append(out, b)
	}
	if len(w.problems) > 0 {
		return nil, w.err(display)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dialect < out[j].Dialect })
	return out, nil
}
