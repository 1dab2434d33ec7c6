package codex_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshkit/dsh/bridges/codex"
	ht "github.com/dshkit/dsh/bridges/internal/hooktest"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
)

// PermissionRequest as the real engine (differential suite): allow allows, deny denies
// with the message ("PermissionRequest hook denied approval" without one), exit 2 denies
// with stderr, interrupt and updatedInput make the hook failed (no answer), and of an
// allow and a deny the deny wins. A denial reads as the engine's shell failure.
func TestPermissionRequest(t *testing.T) {
	pr := func(dec string) string {
		return `printf '%s\n' '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":` + dec + `}}'`
	}
	const pass = "Error: permission to use tool \"Bash\" was requested, but it has not been granted (no one can answer here)"
	for _, tc := range []struct {
		name    string
		scripts []string
		text    string
	}{
		{"allow", []string{pr(`{"behavior":"allow"}`)}, "out"},
		{"deny", []string{pr(`{"behavior":"deny","message":"no way"}`)}, `exec_command failed: CreateProcess { message: "Rejected(\"no way\")" }`},
		{"deny-nomessage", []string{pr(`{"behavior":"deny"}`)}, `exec_command failed: CreateProcess { message: "Rejected(\"PermissionRequest hook denied approval\")" }`},
		{"exit2", []string{`echo 'no via exit 2' >&2; exit 2`}, `exec_command failed: CreateProcess { message: "Rejected(\"no via exit 2\")" }`},
		{"interrupt", []string{pr(`{"behavior":"deny","message":"stop","interrupt":true}`)}, pass},
		{"updated-input", []string{pr(`{"behavior":"allow","updatedInput":{"command":"ls"}}`)}, pass},
		{"allow-and-deny", []string{pr(`{"behavior":"allow"}`), pr(`{"behavior":"deny","message":"second no"}`)}, `exec_command failed: CreateProcess { message: "Rejected(\"second no\")" }`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			capture := filepath.Join(dir, "stdin")
			var groups []ht.Group
			for _, s := range tc.scripts {
				groups = append(groups, ht.G("PermissionRequest", "Bash", "cat > "+capture+"; "+s))
			}
			h, _ := setupIn(t, t.TempDir(), codex.Config{Files: []string{ht.Config(t, t.TempDir(), "hooks.json", groups...)}})
			reg := tools.NewRegistry()
			if _, err := reg.Register(tools.Definition{Name: "Bash", Output: &tools.Output{Schema: json.RawMessage(`{"type":"string"}`)},
				Run: func(ctx context.Context, rc *tools.RunContext) (any, error) { return "out", nil }}); err != nil {
				t.Fatal(err)
			}
			h.Reg.Plugin("policy").OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
				return dsh.PreToolAsk{}, nil
			})
			r := tools.New(reg, h.Reg).Execute(context.Background(), tools.Input{CallID: "call-1", Name: "Bash", AgentID: "agent-1",
				Arguments: json.RawMessage(`{"command":"touch x","description":"need it"}`)})
			var text string
			switch o := r.Outcome.(type) {
			case dsh.ToolSuccess:
				text = o.Content[0].(dsh.TextBlock).Text
			case dsh.ToolFailure:
				text = o.Content[0].(dsh.TextBlock).Text
			}
			if text != tc.text || r.Halt != nil {
				t.Errorf("text %q, halt %+v; want %q", text, r.Halt, tc.text)
			}
			data, err := os.ReadFile(capture)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), `"tool_input":{"command":"touch x","description":"need it"}`) || !strings.Contains(string(data), `"hook_event_name":"PermissionRequest"`) {
				t.Errorf("stdin %s", data)
			}
		})
	}
}
