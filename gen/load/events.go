package load

import (
	"strings"

	"cuelang.org/go/cue"

	"github.com/dshkit/dsh/gen/ir"
)

// registry returns the entries of a hidden registry field (_events, _sessionEvents).
func (w *walker) registry(name string) []def {
	v := w.root.LookupPath(cue.MakePath(cue.Hid(name, w.importPath)))
	if !v.Exists() || v.Err() != nil {
		return nil
	}
	it, err := v.Fields()
	if err != nil {
		w.errorf(position(v.Pos()), "%s: %v", name, err)
		return nil
	}
	var out []def
	for it.Next() {
		out = append(out, def{name: it.Selector().Unquoted(), v: it.Value()})
	}
	return out
}

// entryPos is the position of a registry entry in the file that declares it (not that of
// the meta.cue pattern it is unified with).
func entryPos(v cue.Value) ir.Pos {
	if op, args := v.Expr(); op == cue.AndOp {
		for _, a := range args {
			if p := position(a.Pos()); p.File != "" && p.File != metaFile {
				return p
			}
		}
	}
	return position(v.Pos())
}

func str(v cue.Value, field string) string {
	s, _ := v.LookupPath(cue.ParsePath(field)).String()
	return s
}

// refType resolves a field of a registry entry that must refer to a declared definition.
func (w *walker) refType(entry def, field string, pos ir.Pos) *ir.Type {
	fv := entry.v.LookupPath(cue.ParsePath(field))
	if !fv.Exists() {
		return nil
	}
	n := refName(fv)
	t := w.byName[n]
	if t == nil {
		w.errorf(pos, "%q: %s must refer to a declared definition (e.g. #Name)", entry.name, field)
	}
	return t
}

func (w *walker) events() {
	for _, e := range w.registry("_events") {
		pos := entryPos(e.v)
		ev := &ir.Event{Name: e.name, GoName: str(e.v, "go"), Doc: doc(e.v), File: pos.File, Pos: pos,
			Domain: ir.Domain(str(e.v, "domain")), Default: str(e.v, "default")}
		if ev.Doc == "" {
			w.errorf(pos, "event %q: missing doc comment", e.name)
		}
		ev.Payload = w.refType(e, "payload", pos)
		ev.Decision = w.refType(e, "decision", pos)
		if ev.Payload == nil {
			continue
		}
		if ev.Payload.Kind != ir.Record {
			w.errorf(pos, "event %q: payload #%s must be a record", e.name, ev.Payload.Name)
			continue
		}
		switch ev.Domain {
		case ir.Waterfall, ir.Guard, ir.Vote, ir.Fold:
			if ev.Decision == nil || ev.Decision.Kind != ir.Union {
				w.errorf(pos, "event %q: a %s's decision must be a union", e.name, ev.Domain)
				continue
			}
			if ev.Default == "" {
				w.errorf(pos, "event %q: a %s needs a default variant (default: \"<kind>\")", e.name, ev.Domain)
			} else if !hasKind(ev.Decision, ev.Default) {
				w.errorf(pos, "event %q: default %q is not a kind of #%s", e.name, ev.Default, ev.Decision.Name)
			}
		case ir.Wrapper:
			if ev.Decision == nil || ev.Decision.Kind == ir.Enum {
				w.errorf(pos, "event %q: a wrapper's result must be a record or a union", e.name)
				continue
			}
		}
		if subj := str(e.v, "subject"); subj != "" {
			ev.Subject = w.subject(ev, subj)
		}
		w.spec.Events = append(w.spec.Events, ev)
	}
}

func hasKind(u *ir.Type, kind string) bool {
	for _, v := range u.Variants {
		if v.Kind == kind {
			return true
		}
	}
	return false
}

// subject maps a dotted JSON path in the payload to the Go field path of a string field.
func (w *walker) subject(ev *ir.Event, path string) []string {
	t := ev.Payload
	var goPath []string
	parts := strings.Split(path, ".")
	for i, p := range parts {
		var f *ir.Field
		if t != nil {
			for _, c := range t.Fields {
				if c.JSONName == p {
					f = c
				}
			}
		}
		if f == nil {
			w.errorf(ev.Pos, "event %q: subject %q: no field %q", ev.Name, path, p)
			return nil
		}
		goPath = append(goPath, f.GoName)
		last := i == len(parts)-1
		switch {
		case last && f.Type.Kind != ir.String:
			w.errorf(f.Pos, "event %q: subject %q must be a string field", ev.Name, path)
			return nil
		case !last && (f.Type.Kind != ir.Named || f.Type.Type.Kind != ir.Record || f.Optional):
			w.errorf(f.Pos, "event %q: subject %q: %q must be a required record field", ev.Name, path, p)
			return nil
		case !last:
			t = f.Type.Type
		}
	}
	return goPath
}

func (w *walker) sessionEvents() {
	owners := map[*ir.Type]string{}
	for _, e := range w.registry("_sessionEvents") {
		pos := entryPos(e.v)
		se := &ir.SessionEvent{Type: e.name, GoName: str(e.v, "go"), Doc: doc(e.v), File: pos.File, Pos: pos, Owner: str(e.v, "owner")}
		if se.Doc == "" {
			w.errorf(pos, "session event %q: missing doc comment", e.name)
		}
		se.Data = w.refType(e, "data", pos)
		if se.Data == nil {
			continue
		}
		if se.Data.Kind != ir.Record {
			w.errorf(pos, "session event %q: data #%s must be a record", e.name, se.Data.Name)
			continue
		}
		if prev, dup := owners[se.Data]; dup {
			w.errorf(pos, "session event %q: data #%s is already the data of %q; each session event needs its own record", e.name, se.Data.Name, prev)
			continue
		}
		owners[se.Data] = e.name
		for _, f := range se.Data.Fields {
			if f.Runtime {
				w.errorf(f.Pos, "session event %q: data #%s has the runtime-only field %q, which a durable event cannot carry", e.name, se.Data.Name, f.JSONName)
			}
		}
		w.spec.SessionEvents = append(w.spec.SessionEvents, se)
	}
}

// checkNames rejects two spec items that would map to one Go identifier in the generated
// package. It covers the names every emitter derives from the IR (see docs/generated-api.md).
func (w *walker) checkNames() {
	owner := map[string]string{}
	at := map[string]ir.Pos{}
	claim := func(name, what string, pos ir.Pos) {
		if prev, dup := owner[name]; dup && prev != what {
			w.errorf(pos, "%s maps to the Go name %s, which %s (%s) already has", what, name, prev, at[name])
			return
		}
		owner[name], at[name] = what, pos
	}
	for _, t := range w.spec.Types {
		claim(t.Name, "#"+t.Name, t.Pos)
	}
	for _, t := range w.spec.Types {
		switch t.Kind {
		case ir.Enum:
			for _, v := range t.Values {
				claim(v.GoName, "enum value #"+t.Name+" "+v.Value, t.Pos)
			}
		case ir.Union:
			claim(t.Name+"Kind", "the kind type of #"+t.Name, t.Pos)
			for _, v := range t.Variants {
				claim(v.Type.Name+"Kind", "the kind constant of #"+v.Type.Name, v.Type.Pos)
				claim("New"+v.Type.Name, "the constructor of #"+v.Type.Name, v.Type.Pos)
			}
		}
	}
	for _, ev := range w.spec.Events {
		what := "event " + ev.Name
		claim(ev.GoName+"Listener", what, ev.Pos)
		if ev.Domain == ir.Waterfall || ev.Domain == ir.Wrapper {
			claim(ev.GoName+"Next", what, ev.Pos)
		}
	}
	for _, se := range w.spec.SessionEvents {
		claim(se.GoName+"Type", "session event "+se.Type, se.Pos)
	}
}

// scenarios collects the conformance scenarios of the _scenarios registry as JSON.
func (w *walker) scenarios() {
	for _, e := range w.registry("_scenarios") {
		pos := entryPos(e.v)
		sc := &ir.Scenario{ID: e.name, Doc: doc(e.v), File: pos.File, Pos: pos}
		if sc.Doc == "" {
			w.errorf(pos, "scenario %q: missing doc comment (say what it checks)", e.name)
		}
		if err := e.v.Validate(cue.Concrete(true)); err != nil {
			w.errorf(pos, "scenario %q: %v", e.name, err)
			continue
		}
		data, err := e.v.MarshalJSON()
		if err != nil {
			w.errorf(pos, "scenario %q: %v", e.name, err)
			continue
		}
		sc.Data = data
		w.spec.Scenarios = append(w.spec.Scenarios, sc)
	}
}
