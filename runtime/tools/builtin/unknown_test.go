package builtin

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dshkit/dsh/runtime/tools"
)

// TestUnknownToolWords: each dialect's words for a call of a tool its engine does not
// have, as the engines answered the differential suite's tools/unknown,
// gemini/tools/unknown and codex/legacy-shell (Gemini CLI names the three offered tools
// nearest the name, ties in its order; an MCP server's tool comes after its own in a tie).
func TestUnknownToolWords(t *testing.T) {
	for _, tc := range []struct {
		style      Style
		name, want string
	}{
		{StyleClaudeCode, "exec_command", "<tool_use_error>Error: No such tool available: exec_command</tool_use_error>"},
		{StyleCodex, "shell", "unsupported call: shell"},
		{StyleGemini, "exec_command", `Tool "exec_command" not found. Did you mean one of: "run_shell_command", "grep_search", "replace"?`},
		{StyleGemini, "no_such_tool", `Tool "no_such_tool" not found. Did you mean one of: "write_todos", "update_topic", "list_directory"?`},
		// blob (an MCP server's, registered below) ties with glob: glob, the engine's own,
		// comes first although blob sorts before it by name.
		{StyleGemini, "xlob", `Tool "xlob" not found. Did you mean one of: "glob", "blob", "replace"?`},
	} {
		reg := tools.NewRegistry()
		if _, err := Register(reg, Options{Workspace: t.TempDir(), Style: tc.style}); err != nil {
			t.Fatal(err)
		}
		if tc.name == "xlob" {
			if _, err := reg.Register(tools.Definition{Name: "blob", InputSchema: json.RawMessage(`{"type":"object"}`),
				Run: func(context.Context, *tools.RunContext) (any, error) { return "", nil }}); err != nil {
				t.Fatal(err)
			}
		}
		text, err := UnknownToolText(tc.style, reg)
		if err != nil || text == nil {
			t.Fatalf("%s: %v, text %v", tc.style, err, text != nil)
		}
		if got := text("", tc.name); got != tc.want {
			t.Errorf("%s %s:\n got %q\nwant %q", tc.style, tc.name, got, tc.want)
		}
	}
	// dsh's own style has no toolset: its unknown tools keep dsh's words.
	if text, err := UnknownToolText(StyleDSH, tools.NewRegistry()); err != nil || text != nil {
		t.Errorf("StyleDSH: %v, text %v; want none", err, text != nil)
	}
}

// TestSuggestion: one name, none offered, the order of ties, Max.
func TestSuggestion(t *testing.T) {
	u := &UnknownTool{Text: "no {tool}.{suggestion}", Suggest: &Suggestion{Max: 2, One: " one {names}", Many: " many {names}", Name: "<{name}>", Separator: "|"}}
	for _, tc := range []struct {
		offered []string
		want    string
	}{
		{nil, "no abc."},
		{[]string{"xyz"}, "no abc. one <xyz>"},
		{[]string{"abd", "abx", "ab"}, "no abc. many <abd>|<abx>"},
		{[]string{"zzz", "abc"}, "no abc. many <abc>|<zzz>"},
	} {
		if got := u.Words("abc", tc.offered); got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.offered, got, tc.want)
		}
	}
	if got := (&UnknownTool{Text: "{tool}{suggestion}"}).Words("a", []string{"b"}); got != "a" {
		t.Errorf("no Suggest: %q", got)
	}
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"kitten", "sitting", 3}, {"abc", "", 3}, {"", "ab", 2}, {"flaw", "lawn", 2}} {
		if got := levenshtein(tc.a, tc.b); got != tc.d {
			t.Errorf("levenshtein(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}
