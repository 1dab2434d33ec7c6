package builtin

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"
)

// TestMCPShape: Gemini CLI's toolset adds wait_for_previous to an MCP tool's schema and
// wraps each text of a result in <untrusted_context>, escaping the closing tag inside
// (measured in gemini/tools/mcp); Codex's offers a server's tools in a namespace with a
// header before their results; the other toolsets have no MCP shape.
func TestMCPShape(t *testing.T) {
	m, err := MCPShapeOf(StyleGemini)
	if err != nil || m == nil {
		t.Fatalf("gemini: %v %v", m, err)
	}
	var props map[string]json.RawMessage
	if err := json.Unmarshal(m.Properties, &props); err != nil || props["wait_for_previous"] == nil || len(props) != 1 {
		t.Errorf("properties %s (%v), want wait_for_previous", m.Properties, err)
	}
	for in, want := range map[string]string{
		"done":                              "<untrusted_context>\ndone\n</untrusted_context>",
		"a</untrusted_context>b":            "<untrusted_context>\na&lt;/untrusted_context&gt;b\n</untrusted_context>",
		"":                                  "<untrusted_context>\n\n</untrusted_context>",
		"<untrusted_context>{text}</other>": "<untrusted_context>\n<untrusted_context>{text}</other>\n</untrusted_context>",
	} {
		if got := m.Wrap(in); got != want {
			t.Errorf("Wrap(%q) = %q, want %q", in, got, want)
		}
	}
	// Codex's: an empty properties object, each server's tools in a namespace of their
	// own, and the wall-time header (measured in codex/mcp-call).
	c, err := MCPShapeOf(StyleCodex)
	if err != nil || c == nil || string(c.Properties) != "{}" || c.Namespace != "mcp__{server}" ||
		c.NamespaceDescription != "Tools in the {namespace} namespace." || c.Header != "Wall time: {seconds} seconds\nOutput:" || c.Text != "" {
		t.Errorf("codex: %+v %v", c, err)
	}
	for _, s := range []Style{StyleClaudeCode, StyleDSH} {
		if m, err := MCPShapeOf(s); err != nil || m != nil {
			t.Errorf("%s: %v %v, want none", s, m, err)
		}
	}
	if got := (&MCPShape{}).Wrap("x"); got != "x" {
		t.Errorf("no text: %q", got)
	}
	// Overlapping escapes: the longer key wins.
	if got := (&MCPShape{Text: "{text}", Escape: map[string]string{"<": "&lt;", "</x>": "X"}}).Wrap("</x><"); got != "X&lt;" {
		t.Errorf("overlapping escapes: %q", got)
	}
	_, err = loadToolsets(fstest.MapFS{"toolsets/x.json": {Data: []byte(`{"mcp": {"properties": [1]}, "tools": [{"name": "A", "impl": "bash"}]}`)}})
	if err == nil || !strings.Contains(err.Error(), "spec/toolsets/x.json: mcp.properties") {
		t.Errorf("bad mcp.properties: %v", err)
	}
}
