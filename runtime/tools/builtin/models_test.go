package builtin

import "testing"

// TestAgentModels: the claude-code toolset's agent models, as Claude Code 2.1.328 read
// an agent definition's model field (case subagent/model-alias, under the parents
// claude-sonnet-4-5 and claude-haiku-4-5): an alias of the parent's family keeps the
// parent's model, the other aliases their model, whatever their case and "[1m]"; the
// legacy Opus ids run on the current Opus; a full id of another model as written; no
// model and inherit the parent's ("").
func TestAgentModels(t *testing.T) {
	row, ok, err := AgentRow(StyleClaudeCode)
	if err != nil || !ok {
		t.Fatalf("AgentRow: %v %v", ok, err)
	}
	m := row.Agent.Models
	if m == nil {
		t.Fatal("the claude-code agent row has no models")
	}
	for _, tc := range []struct{ name, parent, want string }{
		{"haiku", "claude-sonnet-4-5", "claude-haiku-5-5"},
		{"HAIKU", "claude-sonnet-4-5", "claude-haiku-5-5"},
		{"haiku", "claude-haiku-4-5", ""},
		{"sonnet", "claude-sonnet-4-5", ""},
		{"sonnet", "claude-haiku-4-5", "claude-sonnet-5-5"},
		{"Sonnet[1m]", "claude-haiku-4-5", "claude-sonnet-5-5"},
		{"opus", "claude-sonnet-4-5", "claude-opus-5-5"},
		{"opusplan", "claude-sonnet-4-5", "claude-sonnet-5-5"},
		{"claude-opus-4-1", "claude-sonnet-4-5", "claude-opus-5-5"},
		{"claude-opus-4-0", "claude-haiku-4-5", "claude-opus-5-5"},
		{"claude-sonnet-4-0", "claude-haiku-4-5", "claude-sonnet-4-0"},
		{"nonsense-model", "claude-sonnet-4-5", "nonsense-model"},
		{"inherit", "claude-sonnet-4-5", ""},
		{"  ", "claude-sonnet-4-5", ""},
		{"haiku", "mock-model", "claude-haiku-5-5"},
	} {
		got, err := m.Resolve(tc.name, tc.parent)
		if err != nil || got != tc.want {
			t.Errorf("Resolve(%q, %q) = %q, %v; want %q", tc.name, tc.parent, got, err, tc.want)
		}
	}
	// Without a models row: as written, inherit and none the parent's.
	var none *ModelShape
	for name, want := range map[string]string{"haiku": "haiku", "inherit": "", "": ""} {
		if got, _ := none.Resolve(name, "p"); got != want {
			t.Errorf("nil Resolve(%q) = %q, want %q", name, got, want)
		}
	}
	bad := &ModelShape{Family: "(", Aliases: []ModelAlias{{Name: "x", Model: "y", Family: "f"}}}
	if _, err := bad.Resolve("x", "p"); err == nil {
		t.Error("a family that does not compile resolved")
	}
}
