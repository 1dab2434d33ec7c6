package differential

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// OfferedTools is the tools array of a Responses request body as the suite compares it:
// one line per tool, in the request's order, holding its type, name, description and
// parameters (as canonical JSON: object keys sorted), the tools named in skip left out;
// "" when the body has no tools array.
func OfferedTools(body []byte, skip []string) string {
	var req struct {
		Tools []map[string]any `json:"tools"`
	}
	if json.Unmarshal(body, &req) != nil || req.Tools == nil {
		return ""
	}
	var lines []string
	for _, t := range req.Tools {
		name, _ := t["name"].(string)
		if name == "" {
			name, _ = t["type"].(string)
		}
		if slices.Contains(skip, name) {
			continue
		}
		data, _ := json.Marshal(map[string]any{"type": t["type"], "name": name, "description": t["description"], "parameters": t["parameters"]})
		lines = append(lines, string(data))
	}
	return strings.Join(lines, "\n")
}

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

// toolsDiff compares the tools each side offered in its first main request (Observation.Tools).
func toolsDiff(engine, dsh string) (Diff, bool) {
	if engine == dsh {
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
