package differential

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
)

// ToolDefs are the tool definitions a side's main Anthropic requests offered, by name:
// each one's description and input schema (parsed, so that key order and spacing do not
// count), the union over the requests (Claude Code adds a deferred tool to its requests
// once ToolSearch loaded it, or once it withdrew ToolSearch). Other protocols give none.
func ToolDefs(reqs []Request) map[string]any {
	out := map[string]any{}
	for _, r := range reqs {
		if !r.Main {
			continue
		}
		var body struct {
			Tools []struct {
				Name        string `json:"name"`
				Description string `json:"description"`
				InputSchema any    `json:"input_schema"`
			} `json:"tools"`
			Messages json.RawMessage `json:"messages"`
		}
		if json.Unmarshal(r.Body, &body) != nil || body.Messages == nil {
			continue
		}
		for _, t := range body.Tools {
			out[t.Name] = map[string]any{"description": t.Description, "input_schema": t.InputSchema}
		}
	}
	return out
}

// toolsDiffs compares the tools both sides offered (the aspect "tools"): every tool dsh
// offers that the engine offered too must have the engine's description and schema. A
// tool only one side offers is not compared here: the dialect's toolset file
// (spec/toolsets) says which of the engine's tools dsh does not offer and why, and a
// deferred tool the engine never loaded in the case is absent from its requests.
func toolsDiffs(engine, dsh map[string]any) []Diff {
	var out []Diff
	for _, name := range slices.Sorted(maps.Keys(dsh)) {
		e, ok := engine[name]
		if ok && !reflect.DeepEqual(e, dsh[name]) {
			out = append(out, Diff{"tools", fmt.Sprintf("%s: dsh's definition is not the engine's", name)})
		}
	}
	return out
}
