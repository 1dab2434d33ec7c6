package differential

import (
	"encoding/json"
	"strings"
	"testing"
)

func toolsReq(body string) Request { return Request{Main: true, Body: json.RawMessage(body)} }

// TestOfferedTools: each wire's tools (the Messages API's input_schema, the Responses API's
// parameters, Gemini's functionDeclarations with parametersJsonSchema or parameters) read
// by name, schema keys sorted, the union over the main requests, the skipped names left
// out; a side without a tools array offers none.
func TestOfferedTools(t *testing.T) {
	engine := OfferedTools([]Request{toolsReq(`{"tools":[{"functionDeclarations":[
		{"name":"zeta","description":"Z.","parametersJsonSchema":{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"integer"}}}},
		{"name":"gone","description":"G.","parametersJsonSchema":{"type":"object"}},
		{"name":"alpha","description":"A.","parameters":{"type":"object","required":["x"]}}]}]}`)}, []string{"gone"})
	dsh := OfferedTools([]Request{toolsReq(`{"tools":[{"functionDeclarations":[
		{"name":"alpha","description":"A.","parametersJsonSchema":{"required":["x"],"type":"object"}},
		{"name":"zeta","description":"Z.","parametersJsonSchema":{"properties":{"a":{"type":"integer"},"b":{"type":"string"}},"type":"object"}}]}]}`)}, nil)
	want := map[string]string{"alpha": `{"description":"A.","schema":{"required":["x"],"type":"object"}}`,
		"zeta": `{"description":"Z.","schema":{"properties":{"a":{"type":"integer"},"b":{"type":"string"}},"type":"object"}}`}
	for name, w := range want {
		if engine[name] != w || dsh[name] != w {
			t.Errorf("%s: engine %q, dsh %q, want %q", name, engine[name], dsh[name], w)
		}
	}
	if len(engine) != 2 {
		t.Errorf("engine tools %v: the skipped one kept", engine)
	}
	// The Messages API, over two requests (a tool loaded later counts), and the Responses API.
	msgs := OfferedTools([]Request{toolsReq(`{"tools":[{"name":"Bash","description":"d","input_schema":{"type":"object"}}]}`),
		toolsReq(`{"tools":[{"name":"WebFetch","description":"w","input_schema":{}}]}`), {Body: json.RawMessage(`{"tools":[{"name":"Summarizer"}]}`)}}, nil)
	if len(msgs) != 2 || msgs["Bash"] != `{"description":"d","schema":{"type":"object"}}` {
		t.Errorf("messages: %v", msgs)
	}
	resp := OfferedTools([]Request{toolsReq(`{"tools":[{"type":"function","name":"exec_command","description":"d","parameters":{}},{"type":"web_search"}]}`)}, []string{"web_search"})
	if len(resp) != 1 || resp["exec_command"] != `{"description":"d","schema":{},"type":"function"}` {
		t.Errorf("responses: %v", resp)
	}
	if got := OfferedTools([]Request{toolsReq(`{"input":[]}`)}, nil); got != nil {
		t.Errorf("no tools array: %v", got)
	}
}

// TestToolsDiffs: a tool both sides offer must be the engine's; a tool only the engine
// offers, and one only dsh offers, differ, unless the engine defers the latter; a side
// that recorded no tools compares nothing.
func TestToolsDiffs(t *testing.T) {
	engine := Observation{Tools: map[string]string{"Bash": "b", "Read": "r"}}
	for name, tc := range map[string]struct {
		dsh  Observation
		want []string
	}{
		"same":       {Observation{Tools: map[string]string{"Bash": "b", "Read": "r"}}, nil},
		"changed":    {Observation{Tools: map[string]string{"Bash": "b2", "Read": "r"}}, []string{"Bash: the engine offered b; dsh offered b2"}},
		"lacking":    {Observation{Tools: map[string]string{"Bash": "b"}}, []string{"Read: the engine offered it, dsh did not"}},
		"extra":      {Observation{Tools: map[string]string{"Bash": "b", "Read": "r", "Own": "o"}}, []string{"Own: dsh offered it, the engine did not"}},
		"deferred":   {Observation{Tools: map[string]string{"Bash": "b", "Read": "r", "WebFetch": "w"}, MayDefer: []string{"WebFetch"}}, nil},
		"unrecorded": {Observation{}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, d := range Compare(engine, tc.dsh, Normalizer{}, Normalizer{}) {
				if d.Aspect != "tools" {
					t.Fatalf("aspect %s", d.Aspect)
				}
				got = append(got, d.Detail)
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestChildToolsDiffs: the tools each child was offered are compared by name, with the
// toolset's absent tools left out on both sides and dsh's deferred extras allowed; a child
// only one side ran is not compared here.
func TestChildToolsDiffs(t *testing.T) {
	engine := Observation{Tools: map[string]string{}, ChildTools: map[string][]string{"CHILD-A": {"Bash", "Read"}}}
	for name, tc := range map[string]struct {
		dsh  Observation
		want []string
	}{
		"same":     {Observation{ChildTools: map[string][]string{"CHILD-A": {"Bash", "Read"}}}, nil},
		"lacking":  {Observation{ChildTools: map[string][]string{"CHILD-A": {"Read"}}}, []string{"child CHILD-A: Bash: the engine offered it, dsh did not"}},
		"extra":    {Observation{ChildTools: map[string][]string{"CHILD-A": {"Bash", "Read", "Write"}}}, []string{"child CHILD-A: Write: dsh offered it, the engine did not"}},
		"deferred": {Observation{ChildTools: map[string][]string{"CHILD-A": {"Bash", "Read", "WebFetch"}}, MayDefer: []string{"WebFetch"}}, nil},
		"no child": {Observation{ChildTools: map[string][]string{"CHILD-B": {"Write"}}}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, d := range childToolsDiffs(engine, tc.dsh) {
				got = append(got, d.Detail)
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	// The toolset's absent tools (rows dsh does not offer) leave both sides.
	absent, _ := ToolsetRows("claude-code")
	if len(absent) == 0 {
		t.Fatal("the claude-code toolset records no absent tool")
	}
	o := withToolset(Observation{ChildTools: map[string][]string{"CHILD-A": {absent[0], "Bash"}}}, "claude")
	if got := o.ChildTools["CHILD-A"]; len(got) != 1 || got[0] != "Bash" {
		t.Errorf("withToolset left %v", got)
	}
}
