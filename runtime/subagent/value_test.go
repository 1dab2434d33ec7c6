package subagent_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"sync"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/subagent"
	"github.com/dshkit/dsh/runtime/tools"
)

// TestValueFigures: a completed child's value carries its task, model, last usage and its
// calls counted by the configured kinds (an edit's lines from its input), read from the
// child's log.
func TestValueFigures(t *testing.T) {
	model := llm.NewScripted(
		llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{ID: "call_a", Name: "Agent",
			Arguments: args(map[string]any{"prompt": "edit it", "subagent_type": "general-purpose"})}}},
		llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{
			{ID: "call_1", Name: "Echo", Arguments: args(map[string]any{})},
			{ID: "call_2", Name: "Edit", Arguments: args(map[string]any{"old_string": "a\nb", "new_string": "x\ny\nz"})},
			{ID: "call_3", Name: "Plain", Arguments: args(map[string]any{})},
			{ID: "call_4", Name: "Echo", Arguments: args(map[string]any{})}}},
		llm.ScriptedResponse{Text: "child answer", Usage: &dsh.Usage{InputTokens: 30, OutputTokens: 7, CacheReadTokens: ptr(12), CacheWriteTokens: ptr(8)}},
		llm.ScriptedResponse{Text: "parent done"},
	)
	log, _ := session.Open(context.Background(), session.NewMemory())
	h := newHarness(t, log, model, false, func(c *subagent.Config) {
		c.ToolKinds = map[string]subagent.ToolKind{"Echo": {Kind: "read"}, "Edit": {Kind: "edit", Added: []string{"new_string"}, Removed: []string{"old_string"}},
			"Agent": {Kind: "none"}}
	})
	for _, name := range []string{"Edit", "Plain"} {
		if _, err := h.reg.Register(tools.Definition{Name: name, Run: func(context.Context, *tools.RunContext) (any, error) { return "ok", nil }}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var value json.RawMessage
	h.hooks.Plugin("probe-value").OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		if s, ok := p.Result.(dsh.ToolSuccess); ok && p.Exec.Name == "Agent" {
			mu.Lock()
			value = s.Value
			mu.Unlock()
		}
		return next.Call(ctx)
	})
	h.prompt(t, "delegate")
	v, err := subagent.DecodeValue(value)
	if err != nil {
		t.Fatalf("the Agent call's value %s: %v", value, err)
	}
	if v.Task != "edit it" || v.Model != "m" || v.Answer != "child answer" || v.ToolUses != 4 ||
		!reflect.DeepEqual(v.ToolsUsed, []string{"Echo", "Edit", "Plain"}) {
		t.Errorf("value = %+v", v)
	}
	if v.Usage == nil || v.Usage.InputTokens != 30 || v.Usage.OutputTokens != 7 || *v.Usage.CacheReadTokens != 12 {
		t.Errorf("usage = %+v, want the child's last response's", v.Usage)
	}
	want := subagent.ToolStats{Read: 2, Edit: 1, LinesAdded: 3, LinesRemoved: 2, Other: 1}
	if v.ToolStats == nil || *v.ToolStats != want {
		t.Errorf("toolStats = %+v, want %+v", v.ToolStats, want)
	}
}

func ptr(n int) *int { return &n }

// TestWire renders the template's placeholders in the template's key order, leaves out the
// members whose placeholder has no value and the containers left empty, and keeps
// constants as they are.
func TestWire(t *testing.T) {
	tmpl := subagent.Templates{
		Completed: json.RawMessage(`{"z": "{task}", "a": "{toolsUsed}", "n": "{notes}", "h": "{contentHash}", "c": "{content}", "m": "{model}",
			"u": {"in": "{usage.inputTokens}", "k": 0}, "s": {"r": "{toolStats.read}", "e": "{toolStats.edit}"}, "e": [], "x": null, "b": true, "lit": "<{task}>"}`),
		Async:         json.RawMessage(`{"async": true, "o": "{outputFile}", "d": "{description}"}`),
		ToolsUsedNote: "<used>{tools}</used>\n",
	}
	for _, tc := range []struct {
		name string
		v    subagent.Value
		want string
	}{
		{"bare", subagent.Value{Task: "t", Answer: "ä"},
			`{"z":"t","n":0,"h":"` + subagent.ContentHash([]string{"ä"}) + `","c":[{"type":"text","text":"ä"}],"u":{"k":0},"e":[],"x":null,"b":true,"lit":"<{task}>"}`},
		{"full", subagent.Value{Task: "t", Answer: "ans", ToolsUsed: []string{"Bash", "Read"}, Model: "m",
			Usage:     &dsh.Usage{InputTokens: 30, OutputTokens: 7, CacheReadTokens: ptr(12), CacheWriteTokens: ptr(8)},
			ToolStats: &subagent.ToolStats{Read: 1}},
			`{"z":"t","a":["Bash","Read"],"n":1,"h":"` + subagent.ContentHash([]string{"<used>Bash, Read</used>\n", "ans"}) +
				`","c":[{"type":"text","text":"<used>Bash, Read</used>\n"},{"type":"text","text":"ans"}],"m":"m","u":{"in":10,"k":0},"s":{"r":1,"e":0},"e":[],"x":null,"b":true,"lit":"<{task}>"}`},
		{"async", subagent.Value{Async: true, Description: "d"}, `{"async":true,"d":"d"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.v.Wire(tmpl)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("Wire:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
	if _, err := (subagent.Value{}).Wire(subagent.Templates{Completed: json.RawMessage(`{"a": 1} {}`)}); err == nil {
		t.Error("a template of two values rendered without an error")
	}
	if got, err := (subagent.Value{}).Wire(subagent.Templates{}); got != nil || err != nil {
		t.Errorf("no template: %s, %v; want nothing", got, err)
	}
}

// TestContentHash is Claude Code's harnessSectionHash of measured values, and counts
// lengths in UTF-16 code units (an astral character is two).
func TestContentHash(t *testing.T) {
	for texts, want := range map[string]string{
		"child b answer": "01e77aaae674ff4a",
		"child a answer": "d027e3c3b0012d31",
	} {
		if got := subagent.ContentHash([]string{texts}); got != want {
			t.Errorf("ContentHash(%q) = %s, want %s", texts, got, want)
		}
	}
	if got := subagent.ContentHash([]string{"<tools-used-before-summary>Bash</tools-used-before-summary>\n", "child answer"}); got != "7d087e1088039e0e" {
		t.Errorf("ContentHash of two blocks = %s", got)
	}
	sum := sha256.Sum256([]byte("1:2:😀")) // one block of two UTF-16 code units
	if got, want := subagent.ContentHash([]string{"😀"}), hex.EncodeToString(sum[:])[:16]; got != want {
		t.Errorf("ContentHash of an astral character = %s, want %s", got, want)
	}
}

// TestWireTurnLimit: a child that stopped at its limit of model steps leads its answer
// with the limit's note after the tools-used one, and the fingerprint of the three blocks
// is the one Claude Code 2.1.328 gave (case subagent/frontmatter-maxturns).
func TestWireTurnLimit(t *testing.T) {
	const note = "NOTE: this agent stopped at its {turns}-turn limit before finishing. The text below is PARTIAL output; treat it as incomplete. Send the agent a message (SendMessage) to let it continue from where it stopped.\n"
	v := subagent.Value{Answer: "child running", ToolsUsed: []string{"Bash"}, TurnLimit: 1}
	got, err := v.Wire(subagent.Templates{Completed: json.RawMessage(`{"n": "{notes}", "h": "{contentHash}", "c": "{content}"}`),
		ToolsUsedNote: "<tools-used-before-summary>{tools}</tools-used-before-summary>\n", TurnLimitNote: note})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"n":2,"h":"712b80d1e4064fb2","c":[{"type":"text","text":"<tools-used-before-summary>Bash</tools-used-before-summary>\n"},` +
		`{"type":"text","text":"NOTE: this agent stopped at its 1-turn limit before finishing. The text below is PARTIAL output; treat it as incomplete. Send the agent a message (SendMessage) to let it continue from where it stopped.\n"},` +
		`{"type":"text","text":"child running"}]}`
	if string(got) != want {
		t.Errorf("Wire:\n got %s\nwant %s", got, want)
	}
}
