package differential

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// OfferedTools is the tools a request body offers the model, as the suite compares them:
// one line per tool holding its name, description and input schema (as canonical JSON:
// object keys sorted), whatever the wire writes them as (the Messages API's input_schema,
// the Responses API's parameters beside its type, Gemini's functionDeclarations with
// parametersJsonSchema or parameters), the tools named in skip left out, the lines
// sorted (dsh's registry offers its tools by name, an engine in an order of its own that
// the model is not told to read anything into); "(none)" for an empty tools array, ""
// when the body has none.
func OfferedTools(body []byte, skip []string) string {
	var req struct {
		Tools []map[string]any `json:"tools"`
	}
	if json.Unmarshal(body, &req) != nil || req.Tools == nil {
		return ""
	}
	var lines []string
	add := func(t map[string]any) {
		name, _ := t["name"].(string)
		if name == "" {
			name, _ = t["type"].(string)
		}
		if slices.Contains(skip, name) {
			return
		}
		schema := t["input_schema"]
		for _, k := range []string{"parametersJsonSchema", "parameters"} {
			if v, ok := t[k]; ok && schema == nil {
				schema = v
			}
		}
		line := map[string]any{"name": name, "description": t["description"], "schema": schema}
		if typ, ok := t["type"]; ok {
			line["type"] = typ
		}
		data, _ := json.Marshal(line)
		lines = append(lines, string(data))
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
	if len(lines) == 0 {
		return "(none)"
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// toolsetDialects are the dialects whose recorded toolset dsh offers, by engine: the
// tools aspect compares their first request's tools.
var toolsetDialects = map[string]string{"codex": "codex", "gemini": "gemini"}

// AbsentTools are the tools of a dialect's recorded toolset (spec/toolsets) that dsh does
// not offer (rows with absent): the engine's tools the comparison of the tools aspect
// leaves out.
func AbsentTools(dialect string) []string {
	all, err := builtin.Toolsets()
	if err != nil {
		return nil
	}
	var out []string
	for _, ts := range all {
		if ts.Dialect != dialect {
			continue
		}
		for _, r := range ts.Tools {
			if r.Absent != "" {
				out = append(out, r.Name)
			}
		}
	}
	return out
}

// toolsDiff compares the tools each side offered in its first main request
// (Observation.Tools): the first line that differs; nothing when a side recorded none.
func toolsDiff(engine, dsh string) (Diff, bool) {
	if engine == dsh || engine == "" || dsh == "" {
		return Diff{}, false
	}
	e, d := strings.Split(engine, "\n"), strings.Split(dsh, "\n")
	for i := 0; i < len(e) || i < len(d); i++ {
		a, b := "(none)", "(none)"
		if i < len(e) {
			a = e[i]
		}
		if i < len(d) {
			b = d[i]
		}
		if a != b {
			return Diff{"tools", "tool " + itoa(i+1) + ": engine offered " + a + "; dsh offered " + b}, true
		}
	}
	return Diff{}, false
}
