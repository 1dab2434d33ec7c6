package builtin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// HookInput is how an engine writes one tool's input to its hooks: Keys in this order
// (its schema's properties), Defaults (a key's default as JSON) filled in for the keys
// the model left out; keys the schema does not list follow in the model's order.
type HookInput struct {
	Keys     []string
	Defaults map[string]string
}

// HookInputs returns, for a style whose toolset's hook_input is "schema", every tool's
// HookInput from its recorded input schema (properties in order, their defaults); nil for
// any other style.
func HookInputs(style Style) (map[string]HookInput, error) {
	all, err := Toolsets()
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(all, func(ts Toolset) bool { return ts.Style == style })
	if i < 0 || all[i].HookInput != "schema" {
		return nil, nil
	}
	out := map[string]HookInput{}
	for _, r := range all[i].Tools {
		if len(r.InputSchema) == 0 {
			continue
		}
		hi, err := schemaOrder(r.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("builtin: the %s toolset's %s: input_schema: %w", all[i].Dialect, r.Name, err)
		}
		if len(hi.Keys) > 0 {
			out[r.Name] = hi
		}
	}
	return out, nil
}

// schemaOrder reads an object schema's property names in the order the JSON has them,
// and their defaults.
func schemaOrder(schema json.RawMessage) (HookInput, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(schema, &top); err != nil {
		return HookInput{}, err
	}
	props := top["properties"]
	if len(props) == 0 {
		return HookInput{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(props))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return HookInput{}, fmt.Errorf("properties is not an object")
	}
	var hi HookInput
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return HookInput{}, err
		}
		key, _ := tok.(string)
		var prop struct {
			Default json.RawMessage `json:"default"`
		}
		if err := dec.Decode(&prop); err != nil {
			return HookInput{}, fmt.Errorf("properties.%s: %w", key, err)
		}
		hi.Keys = append(hi.Keys, key)
		if len(prop.Default) > 0 {
			var buf bytes.Buffer
			if err := json.Compact(&buf, prop.Default); err != nil {
				return HookInput{}, err
			}
			if hi.Defaults == nil {
				hi.Defaults = map[string]string{}
			}
			hi.Defaults[key] = buf.String()
		}
	}
	return hi, nil
}
