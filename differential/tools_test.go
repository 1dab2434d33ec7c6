package differential

import (
	"reflect"
	"strings"
	"testing"
)

// TestOfferedTools: the declarations of a Gemini request, by name, with their schemas'
// keys sorted (parametersJsonSchema, else parameters), less the skipped names; the
// comparison reports a tools difference when a description or schema differs, and none
// when only the order or the key order does.
func TestOfferedTools(t *testing.T) {
	engine := []byte(`{"tools":[{"functionDeclarations":[
		{"name":"zeta","description":"Z.","parametersJsonSchema":{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"integer"}}}},
		{"name":"gone","description":"G.","parametersJsonSchema":{"type":"object"}},
		{"name":"alpha","description":"A.","parameters":{"type":"object","required":["x"]}}]}]}`)
	dsh := []byte(`{"tools":[{"functionDeclarations":[
		{"name":"alpha","description":"A.","parametersJsonSchema":{"required":["x"],"type":"object"}},
		{"name":"zeta","description":"Z.","parametersJsonSchema":{"properties":{"a":{"type":"integer"},"b":{"type":"string"}},"type":"object"}}]}]}`)
	skip := map[string]bool{"gone": true}
	e, d := OfferedTools(engine, skip), OfferedTools(dsh, skip)
	want := []string{`alpha: A.: {"required":["x"],"type":"object"}`, `zeta: Z.: {"properties":{"a":{"type":"integer"},"b":{"type":"string"}},"type":"object"}`}
	if !reflect.DeepEqual(e, want) || !reflect.DeepEqual(d, want) {
		t.Fatalf("OfferedTools:\nengine %q\ndsh    %q\nwant   %q", e, d, want)
	}
	if diffs := Compare(Observation{Tools: e}, Observation{Tools: d}, Normalizer{}, Normalizer{}); len(diffs) != 0 {
		t.Errorf("same tools: %v", diffs)
	}
	changed := OfferedTools([]byte(strings.Replace(string(dsh), `"type":"integer"`, `"type":"number"`, 1)), skip)
	diffs := Compare(Observation{Tools: e}, Observation{Tools: changed}, Normalizer{}, Normalizer{})
	if len(diffs) != 1 || diffs[0].Aspect != "tools" || !strings.Contains(diffs[0].Detail, "number") {
		t.Errorf("a changed schema: %v", diffs)
	}
	missing := OfferedTools(engine, map[string]bool{})
	if diffs := Compare(Observation{Tools: missing}, Observation{Tools: d}, Normalizer{}, Normalizer{}); len(diffs) != 1 || diffs[0].Aspect != "tools" {
		t.Errorf("a tool dsh does not offer: %v", diffs)
	}
	// Another wire records no tools: nothing is compared.
	if diffs := Compare(Observation{Tools: e}, Observation{}, Normalizer{}, Normalizer{}); len(diffs) != 0 {
		t.Errorf("no tools on one side: %v", diffs)
	}
}
