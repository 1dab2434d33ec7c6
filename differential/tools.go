package differential

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// OfferedTools are the tools a side's main requests offered the model, by name, the union
// over the requests (Claude Code adds a deferred tool to its requests once ToolSearch
// loaded it, or once it withdrew ToolSearch; the first definition of a name counts): each
// as one line holding its description and input schema as canonical JSON (object keys
// sorted), whatever the wire writes them as (the Messages API's input_schema, the
// Responses API's parameters beside its type, Gemini's functionDeclarations with
// parametersJsonSchema or parameters; a Responses namespace with its functions), the tools
// named in skip left out. A side whose
// requests carry no tools array offers none (nil).
func OfferedTools(reqs []Request, skip []string) map[string]string {
	var out map[string]string
	for _, r := range reqs {
		if !r.Main {
			continue
		}
		var req struct {
			Tools []map[string]any `json:"tools"`
		}
		if json.Unmarshal(r.Body, &req) != nil || req.Tools == nil {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		add := func(t map[string]any) {
			name, _ := t["name"].(string)
			if name == "" {
				name, _ = t["type"].(string)
			}
			if _, seen := out[name]; seen || slices.Contains(skip, name) {
				return
			}
			schema := t["input_schema"]
			for _, k := range []string{"parametersJsonSchema", "parameters"} {
				if v, ok := t[k]; ok && schema == nil {
					schema = v
				}
			}
			line := map[string]any{"description": t["description"], "schema": schema}
			if typ, ok := t["type"]; ok {
				line["type"] = typ
			}
			if f, ok := t["format"]; ok { // a Responses custom (freeform) tool's grammar
				line["format"] = f
			}
			if fns, ok := t["tools"]; ok { // a Responses namespace's functions
				line["tools"] = fns
			}
			data, _ := json.Marshal(line)
			out[name] = string(data)
		}
		for _, t := range req.Tools {
			decls, ok := t["functionDeclarations"].([]any)
			if !ok {
				add(t)
				continue
			}
			for _, d := range decls {
				if dm, ok := d.(map[string]any); ok {
					add(dm)
				}
			}
		}
	}
	return out
}

// withToolset is o, a run under engine, as the tools aspect compares it: without the
// tools the dialect's toolset records as absent, and with those dsh may offer where the
// engine defers them (ToolsetRows).
func withToolset(o Observation, engine string) Observation {
	dialect, ok := toolsetDialects[engine]
	if !ok {
		o.Tools = nil
		return o
	}
	absent, deferred := ToolsetRows(dialect)
	if o.Tools != nil {
		o.Tools = maps.Clone(o.Tools)
		for _, name := range absent {
			delete(o.Tools, name)
		}
	}
	if o.ChildTools != nil {
		children := make(map[string][]string, len(o.ChildTools))
		for child, names := range o.ChildTools {
			children[child] = slices.DeleteFunc(slices.Clone(names), func(n string) bool { return slices.Contains(absent, n) })
		}
		o.ChildTools = children
	}
	o.MayDefer = deferred
	return o
}

// childToolsDiffs compares the names of the tools each child was offered (the aspect
// "tools"), as toolsDiffs compares the names: a tool only the engine's child was offered
// is one dsh's lacks, a tool only dsh's was offered one too many unless the engine defers
// it. Nothing is compared for a child only one side ran (other aspects report it).
func childToolsDiffs(engine, dsh Observation) []Diff {
	var out []Diff
	for _, child := range slices.Sorted(maps.Keys(engine.ChildTools)) {
		e := engine.ChildTools[child]
		d, ok := dsh.ChildTools[child]
		if !ok {
			continue
		}
		for _, n := range e {
			if !slices.Contains(d, n) {
				out = append(out, Diff{"tools", fmt.Sprintf("child %s: %s: the engine offered it, dsh did not", child, n)})
			}
		}
		for _, n := range d {
			if !slices.Contains(e, n) && !slices.Contains(dsh.MayDefer, n) {
				out = append(out, Diff{"tools", fmt.Sprintf("child %s: %s: dsh offered it, the engine did not", child, n)})
			}
		}
	}
	return out
}

// toolsetDialects are the dialects whose recorded toolset dsh offers, by engine: the
// tools aspect compares their requests' tools.
var toolsetDialects = map[string]string{"claude": "claude-code", "codex": "codex", "gemini": "gemini"}

// ToolsetRows are the tools of a dialect's recorded toolset (spec/toolsets) that dsh does
// not offer (rows with absent), which the tools aspect leaves out on both sides, and those
// the engine offers only behind its tool search (for the recording model or another),
// which dsh may offer where the engine's requests never showed them.
func ToolsetRows(dialect string) (absent, deferred []string) {
	all, err := builtin.Toolsets()
	if err != nil {
		return nil, nil
	}
	for _, ts := range all {
		if ts.Dialect != dialect {
			continue
		}
		for _, r := range ts.Tools {
			if r.Absent != "" {
				absent = append(absent, r.Name)
			}
			if r.Deferred {
				deferred = append(deferred, r.Name)
			}
		}
		for _, m := range ts.Models {
			deferred = append(deferred, m.Deferred...)
		}
	}
	return absent, deferred
}

// toolsDiffs compares the tools both sides offered (the aspect "tools"): a tool both
// offered must have the engine's description and schema; a tool only the engine offered is
// one dsh lacks; a tool only dsh offered is one too many, unless the engine defers it
// (Observation.MayDefer of dsh's side). Nothing is compared when a side recorded no
// tools.
func toolsDiffs(engine, dsh Observation) []Diff {
	if engine.Tools == nil || dsh.Tools == nil {
		return nil
	}
	var out []Diff
	for _, name := range slices.Sorted(maps.Keys(engine.Tools)) {
		d, ok := dsh.Tools[name]
		switch {
		case !ok:
			out = append(out, Diff{"tools", fmt.Sprintf("%s: the engine offered it, dsh did not", name)})
		case d != engine.Tools[name]:
			out = append(out, Diff{"tools", fmt.Sprintf("%s: the engine offered %s; dsh offered %s", name, engine.Tools[name], d)})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(dsh.Tools)) {
		if _, ok := engine.Tools[name]; !ok && !slices.Contains(dsh.MayDefer, name) {
			out = append(out, Diff{"tools", fmt.Sprintf("%s: dsh offered it, the engine did not", name)})
		}
	}
	return out
}
