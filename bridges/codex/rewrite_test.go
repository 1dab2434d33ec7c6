package codex_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dshkit/dsh/bridges/codex"
	ht "github.com/dshkit/dsh/bridges/internal/hooktest"
	"github.com/dshkit/dsh/runtime/tools"
)

// updatedInput as the real engine: applied only with allow, mapped back onto the shell
// tool's arguments (its command replaced, the rest kept); deny with updatedInput makes the
// hook failed and the call runs as the model gave it; without allow it is ignored.
func TestRewrite(t *testing.T) {
	pre := func(fields string) string {
		return `printf '%s\n' '{"hookSpecificOutput":{"hookEventName":"PreToolUse",` + fields + `}}'`
	}
	for _, tc := range []struct{ name, script, ran string }{
		{"allow", pre(`"permissionDecision":"allow","updatedInput":{"command":"rtk git status"}`), `{"command":"rtk git status","description":"run"}`},
		{"alone", pre(`"updatedInput":{"command":"rtk git status"}`), `{"command":"git status","description":"run"}`},
		{"deny", pre(`"permissionDecision":"deny","permissionDecisionReason":"no","updatedInput":{"command":"rtk git status"}`), `{"command":"git status","description":"run"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := setupIn(t, t.TempDir(), codex.Config{Files: []string{ht.Config(t, t.TempDir(), "hooks.json", ht.G("PreToolUse", "", tc.script))}})
			var ran []string
			reg := tools.NewRegistry()
			if _, err := reg.Register(tools.Definition{Name: "Bash", Output: &tools.Output{Schema: json.RawMessage(`{"type":"string"}`)},
				Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
					ran = append(ran, string(rc.Arguments()))
					return "out", nil
				}}); err != nil {
				t.Fatal(err)
			}
			tools.New(reg, h.Reg, tools.WithRewriteDeadline(0)).Execute(context.Background(), tools.Input{CallID: "call-1", Name: "Bash",
				AgentID: "agent-1", Arguments: json.RawMessage(`{"command":"git status","description":"run"}`)})
			if len(ran) != 1 || ran[0] != tc.ran {
				t.Errorf("ran %q, want %s", ran, tc.ran)
			}
		})
	}
}

// MapRewrite: {command} maps onto a string command, exec_command's cmd, or an argv; an MCP
// tool takes the object as given.
func TestMapRewrite(t *testing.T) {
	for _, tc := range []struct{ tool, args, updated, want string }{
		{"Bash", `{"command":"a","timeout":5}`, `{"command":"b"}`, `{"command":"b","timeout":5}`},
		{"exec_command", `{"cmd":"a"}`, `{"command":"b"}`, `{"cmd":"b"}`},
		{"shell", `{"command":["bash","-lc","a"]}`, `{"command":"b"}`, `{"command":["bash","-lc","b"]}`},
		{"mcp__memory__write", `{"key":"a"}`, `{"key":"b","v":1}`, `{"key":"b","v":1}`},
		{"Bash", `{"command":"a"}`, `{"cmd":"b"}`, `{"cmd":"b"}`},
	} {
		if got := string(codex.MapRewrite(tc.tool, json.RawMessage(tc.args), json.RawMessage(tc.updated))); got != tc.want {
			t.Errorf("%s %s + %s = %s, want %s", tc.tool, tc.args, tc.updated, got, tc.want)
		}
	}
}
