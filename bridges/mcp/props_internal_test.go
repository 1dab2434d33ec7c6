package mcp

import (
	"encoding/json"
	"testing"
)

// TestWithProperties: added to an object schema's properties (replacing a server's of
// the same name, created when it has none); any other schema is kept as it is.
func TestWithProperties(t *testing.T) {
	add := json.RawMessage(`{"w":{"type":"boolean"}}`)
	for in, want := range map[string]string{
		`{"type":"object"}`:                                   `{"properties":{"w":{"type":"boolean"}},"type":"object"}`,
		`{"type":"object","properties":{"a":{}}}`:             `{"properties":{"a":{},"w":{"type":"boolean"}},"type":"object"}`,
		`{"type":"object","properties":{"w":{"type":"int"}}}`: `{"properties":{"w":{"type":"boolean"}},"type":"object"}`,
		`{"type":"string"}`:                                   `{"type":"string"}`,
		`{"properties":{"a":{}}}`:                             `{"properties":{"a":{}}}`,
		`{"type":"object","properties":[1]}`:                  `{"type":"object","properties":[1]}`,
		`true`:                                                `true`,
	} {
		if got := string(withProperties(json.RawMessage(in), add)); got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
}
