package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dshkit/dsh/bridges/mcp"
	"github.com/dshkit/dsh/generated/dsh"
)

// TestEngineShape: Options.Properties adds properties to each tool's object schema after
// the server's own, and Options.WrapText rewrites each text block of a result for the
// model (Gemini CLI's wait_for_previous and <untrusted_context>); the value the hooks
// get keeps the server's text. Origin names a tool's server and the server's name of it.
func TestEngineShape(t *testing.T) {
	o := mcp.Options{Properties: json.RawMessage(`{"wait_for_previous":{"type":"boolean"}}`),
		WrapText: func(s string) string { return "<w>" + s + "</w>" }}
	rt, set, errs := mount(t, o, fakeConfig(t, "fake"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, d := range set.Definitions() {
		if d.Name != "mcp__fake__echo" && d.Name != "mcp__fake__fail" {
			continue
		}
		var s struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(d.InputSchema, &s); err != nil || string(s.Properties["wait_for_previous"]) != `{"type":"boolean"}` {
			t.Errorf("%s schema %s: no wait_for_previous", d.Name, d.InputSchema)
		}
		if d.Name == "mcp__fake__echo" && s.Properties["text"] == nil {
			t.Errorf("echo schema %s lost the server's property", d.InputSchema)
		}
	}
	r := call(t, rt, "mcp__fake__echo", `{"text":"hi"}`)
	if r.IsError() || text(r) != "<w>echo: hi</w>" {
		t.Fatalf("echo: error %v, %q; want the wrapped text", r.IsError(), text(r))
	}
	var v mcp.Value
	if err := json.Unmarshal(r.Outcome.(dsh.ToolSuccess).Value, &v); err != nil || !strings.Contains(string(v.Content[0]), `"echo: hi"`) {
		t.Errorf("value %s (%v): want the server's text", r.Outcome.(dsh.ToolSuccess).Value, err)
	}
	cfg, tool, ok := set.Origin("mcp__fake__echo")
	if !ok || cfg.Name != "fake" || tool != "echo" || cfg.Command == "" {
		t.Errorf("Origin: %+v %q %v", cfg, tool, ok)
	}
	if _, _, ok := set.Origin("Bash"); ok {
		t.Error("Origin of a tool no server has")
	}
	var none *mcp.Set
	if _, _, ok := none.Origin("x"); ok {
		t.Error("Origin of a nil set")
	}

	// Without the options, the schema and the text are the server's.
	rt, set, _ = mount(t, mcp.Options{}, fakeConfig(t, "fake"))
	for _, d := range set.Definitions() {
		if strings.Contains(string(d.InputSchema), "wait_for_previous") {
			t.Errorf("%s: %s", d.Name, d.InputSchema)
		}
	}
	if r := call(t, rt, "mcp__fake__echo", `{"text":"hi"}`); text(r) != "echo: hi" {
		t.Errorf("plain echo %q", text(r))
	}
}

// TestParseConfigEmptyArgs: an empty args list stays a given, empty list (Gemini CLI
// writes it in mcp_context); no args stays none.
func TestParseConfigEmptyArgs(t *testing.T) {
	servers, errs := mcp.Parse([]byte(`{"mcpServers": {"a": {"command": "x", "args": []}, "b": {"command": "y"}}}`), "f.json", nil)
	if len(errs) > 0 || len(servers) != 2 {
		t.Fatalf("%v %v", servers, errs)
	}
	if servers[0].Args == nil || len(servers[0].Args) != 0 || servers[1].Args != nil {
		t.Errorf("args %#v and %#v; want [] and nil", servers[0].Args, servers[1].Args)
	}
}
