package hookbridge

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/dshkit/dsh/generated/hookmap"
)

// EngineToolInput is the tool_input the dialect's engine writes to a hook for a call of
// tool with the model's arguments args: for a tool of the engine's own that inputs
// describes (its table's ToolInputs, and more), the keys in the engine's order, with its defaults filled in for
// absent keys, and the keys it does not list after them in the model's order; otherwise
// args as they are. Absent arguments are {}. Arguments that are not a JSON object are
// returned as they are.
func EngineToolInput(inputs map[string]hookmap.ToolInput, tool string, args json.RawMessage) json.RawMessage {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	ti, ok := inputs[tool]
	if !ok {
		return args
	}
	keys, vals, ok := objectFields(args)
	if !ok {
		return args
	}
	out := []byte{'{'}
	add := func(k string, v []byte) {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = appendPlainString(out, k)
		out = append(out, ':')
		out = append(out, v...)
	}
	for _, k := range ti.Keys {
		if v, ok := vals[k]; ok {
			add(k, v)
		} else if d, ok := ti.Defaults[k]; ok {
			add(k, []byte(d))
		}
	}
	for _, k := range keys {
		if !slices.Contains(ti.Keys, k) {
			add(k, vals[k])
		}
	}
	return append(out, '}')
}

// objectFields reads a JSON object's keys in the order they first appear and each key's
// value (the last one, as JSON.parse keeps it), compacted; ok is false when data is not
// one JSON object.
func objectFields(data []byte) (keys []string, vals map[string][]byte, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, false
	}
	vals = map[string][]byte{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, false
		}
		k, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, false
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return nil, nil, false
		}
		if _, seen := vals[k]; !seen {
			keys = append(keys, k)
		}
		vals[k] = buf.Bytes()
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, false
	}
	if _, err := dec.Token(); err == nil {
		return nil, nil, false // more after the object
	}
	return keys, vals, true
}
