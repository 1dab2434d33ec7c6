package gen

import (
	"fmt"
	"path"
	"strings"

	"github.com/dshkit/dsh/gen/emit"
	"github.com/dshkit/dsh/gen/emit/hookmap"
	"github.com/dshkit/dsh/gen/ir"
	"github.com/dshkit/dsh/gen/load"
)

// CheckBridges cross-checks bridge tables against the specs they name: the wire package,
// its input and output records, every output path and matcher field, and the extension
// point of every event. All problems are reported, each at its table position.
func CheckBridges(bs []*ir.Bridge, units []Unit, display string) error {
	specs := map[string]*ir.Spec{}
	for _, u := range units {
		specs[u.Spec.Package] = u.Spec
	}
	points := map[string]bool{}
	if len(units) > 0 {
		for _, e := range units[0].Spec.Events {
			points[e.Name] = true
		}
	}
	e := &load.Error{Dir: display}
	bad := func(pos ir.Pos, format string, args ...any) {
		e.Problems = append(e.Problems, load.Problem{Pos: pos, Msg: fmt.Sprintf(format, args...)})
	}
	for _, b := range bs {
		wire := specs[b.Wire]
		if wire == nil {
			bad(b.Pos, "bridge %q: no wire package %q in spec/wire", b.Dialect, b.Wire)
			continue
		}
		for _, ev := range b.Events {
			where := fmt.Sprintf("bridge %q event %q", b.Dialect, ev.Event)
			if !points[ev.Point] {
				bad(ev.Pos, "%s: unknown extension point %q", where, ev.Point)
			}
			if ev.Results != "" && ev.Point != "tools/post-execute" {
				bad(ev.Pos, "%s: results %q at %s: only an event at tools/post-execute has results", where, ev.Results, ev.Point)
			}
			for _, a := range ev.Also {
				if !points[a.Point] {
					bad(ev.Pos, "%s: also: unknown extension point %q", where, a.Point)
				}
				if a.Point == "compaction/post-compact" && ev.Point != "agent/session-start" {
					bad(ev.Pos, "%s: also at %s: only an event at agent/session-start fires there", where, a.Point)
				}
				if a.Before != "" && !mapsTo(b, a.Before, a.Point) {
					bad(ev.Pos, "%s: also: before %q is not an event of the table at %s", where, a.Before, a.Point)
				}
			}
			in, out := wire.Lookup(ev.Input), wire.Lookup(ev.Output)
			if in == nil || in.Kind != ir.Record {
				bad(ev.Pos, "%s: input %q is not a record of wire package %s", where, ev.Input, b.Wire)
			} else if ev.Matcher != "" && resolve(in, ev.Matcher) == nil {
				bad(ev.Pos, "%s: matcher field %q is not a field of %s", where, ev.Matcher, ev.Input)
			} else if po := ev.PassOn; po != nil && (strings.Contains(po.Stdin, ".") || resolve(in, po.Stdin) == nil) {
				bad(ev.Pos, "%s: passOn stdin %q is not a top-level field of %s", where, po.Stdin, ev.Input)
			}
			if out == nil || out.Kind != ir.Record {
				bad(ev.Pos, "%s: output %q is not a record of wire package %s", where, ev.Output, b.Wire)
				continue
			}
			paths := append([]string{}, ev.Contexts...)
			if ev.Scope != "" {
				paths = append(paths, ev.Scope)
			}
			for _, r := range ev.Rules {
				paths = append(paths, r.When)
				if r.Reason != "" {
					paths = append(paths, r.Reason)
				}
			}
			for _, n := range ev.Notices {
				paths = append(paths, n.When)
			}
			for _, r := range ev.Rules {
				if r.Unless != "" {
					paths = append(paths, r.Unless)
				}
			}
			if ev.PassOn != nil {
				paths = append(paths, ev.PassOn.Output)
			}
			if rw := ev.Rewrite; rw != nil {
				for _, p := range []string{rw.Input, rw.Mode, rw.Requires} {
					if p != "" {
						paths = append(paths, p)
					}
				}
			}
			for _, p := range paths {
				if resolve(out, p) == nil {
					bad(ev.Pos, "%s: %q is not a field path of %s", where, p, ev.Output)
				}
			}
		}
	}
	if len(e.Problems) > 0 {
		return e
	}
	return nil
}

// mapsTo reports whether b maps event to point.
func mapsTo(b *ir.Bridge, event, point string) bool {
	for _, ev := range b.Events {
		if ev.Event == event {
			return ev.Point == point
		}
	}
	return false
}

// resolve follows a dotted JSON path through records and returns the last field.
func resolve(t *ir.Type, p string) *ir.Field {
	var f *ir.Field
	for i, part := range strings.Split(p, ".") {
		if i > 0 {
			if f == nil || f.Type.Kind != ir.Named || f.Type.Type == nil || f.Type.Type.Kind != ir.Record {
				return nil
			}
			t = f.Type.Type
		}
		f = nil
		for _, c := range t.Fields {
			if c.JSONName == part {
				f = c
			}
		}
		if f == nil {
			return nil
		}
	}
	return f
}

// BridgeFiles emits generated/hookmap for the tables, next to the Go of layout l, and the
// page of hook events beside its catalog.
func BridgeFiles(bs []*ir.Bridge, l Layout) ([]emit.File, error) {
	base := path.Dir(l.GoDir)
	files, err := hookmap.Emit(bs, path.Join(base, "hookmap"), func(pkg string) string {
		return Module + "/" + path.Join(base, WireDir, pkg)
	})
	if err != nil || len(bs) == 0 || l.DocsFile == "" {
		return files, err
	}
	return append(files, hookmap.Coverage(bs, path.Join(path.Dir(l.DocsFile), HookEventsFile))), nil
}

// HookEventsFile is the name of the page, beside the catalog, that lists every hook event
// of each engine and whether dsh fires it.
const HookEventsFile = "hook-events.md"
