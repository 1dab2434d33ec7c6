package differential

import (
	"strings"
	"testing"
)

// TestOfferedTools: each wire's tools (the Messages API's input_schema, the Responses API's
// parameters, Gemini's functionDeclarations with parametersJsonSchema or parameters) read
// as one line per tool, schema keys sorted, the lines sorted, the skipped names left out;
// the comparison reports a tools difference when a description or schema differs, and none
// when only the order or the key order does.
func TestOfferedTools(t *testing.T) {
	engine := []byte(`{"tools":[{"functionDeclarations":[
		{"name":"zeta","description":"Z.","parametersJsonSchema":{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"integer"}}}},
		{"name":"gone","description":"G.","parametersJsonSchema":{"type":"object"}},
		{"name":"alpha","description":"A.","parameters":{"type":"object","required":["x"]}}]}]}`)
	dsh := []byte(`{"tools":[{"functionDeclarations":[
		{"name":"alpha","description":"A.","parametersJsonSchema":{"required":["x"],"type":"object"}},
		{"name":"zeta","description":"Z.","parametersJsonSchema":{"properties":{"a":{"type":"integer"},"b":{"type":"string"}},"type":"object"}}]}]}`)
	skip := []string{"gone"}
	e, d := OfferedTools(engine, skip), OfferedTools(dsh, skip)
	want := `{"description":"A.","name":"alpha","schema":{"required":["x"],"type":"object"}}` + "\n" +
		`{"description":"Z.","name":"zeta","schema":{"properties":{"a":{"type":"integer"},"b":{"type":"string"}},"type":"object"}}`
	if e != want || d != want {
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
	if diffs := Compare(Observation{Tools: OfferedTools(engine, nil)}, Observation{Tools: d}, Normalizer{}, Normalizer{}); len(diffs) != 1 || diffs[0].Aspect != "tools" {
		t.Errorf("a tool dsh does not offer: %v", diffs)
	}
	// A side that recorded no tools is not compared; an empty array is.
	if diffs := Compare(Observation{Tools: e}, Observation{}, Normalizer{}, Normalizer{}); len(diffs) != 0 {
		t.Errorf("no tools on one side: %v", diffs)
	}
	if got := OfferedTools([]byte(`{"tools":[]}`), nil); got != "(none)" {
		t.Errorf("empty tools: %q", got)
	}
	// The Messages API's input_schema and the Responses API's parameters.
	msgs := OfferedTools([]byte(`{"tools":[{"name":"Bash","description":"d","input_schema":{"type":"object"}}]}`), nil)
	if msgs != `{"description":"d","name":"Bash","schema":{"type":"object"}}` {
		t.Errorf("messages: %q", msgs)
	}
}

// TestToolsDiff: the tools aspect reports the first tool that differs, and no difference
// for the same tools whatever the order of their schemas' keys.
func TestToolsDiff(t *testing.T) {
	a := OfferedTools([]byte(`{"tools":[{"type":"function","name":"exec_command","description":"d","parameters":{"type":"object","properties":{}}},{"type":"web_search"}]}`), []string{"web_search"})
	b := OfferedTools([]byte(`{"tools":[{"name":"exec_command","type":"function","strict":false,"parameters":{"properties":{},"type":"object"},"description":"d"}]}`), nil)
	if _, ok := toolsDiff(a, b); ok || a == "" {
		t.Errorf("the same tool differs: %q %q", a, b)
	}
	c := OfferedTools([]byte(`{"tools":[{"type":"function","name":"Bash","description":"d","parameters":{}}]}`), nil)
	if d, ok := toolsDiff(a, c); !ok || d.Aspect != "tools" {
		t.Errorf("exec_command and Bash: %v %v", d, ok)
	}
	if _, ok := toolsDiff(a, a+"\n"+c); !ok {
		t.Error("an extra tool is no difference")
	}
}
