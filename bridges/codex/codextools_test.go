package codex_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshkit/dsh/bridges/codex"
	ht "github.com/dshkit/dsh/bridges/internal/hooktest"
)

// TestExecCommandHooks: Codex's own shell tool reaches the hooks as "Bash" with
// {command} (a "Bash" matcher fires for it); write_stdin fires no hook of its own, and a
// command exec_command left running reaches PostToolUse only when a write_stdin sees it
// end, as the exec_command call's, with that chunk's output (measured on 0.169.0:
// differential all/exit0 and codex/write-stdin-*).
func TestExecCommandHooks(t *testing.T) {
	dir := t.TempDir()
	log := `cat >> "` + filepath.Join(dir, "log") + `"; echo >> "` + filepath.Join(dir, "log") + `"`
	h := setup(t, ht.G("PreToolUse", "^Bash$", log), ht.G("PostToolUse", "^Bash$", log))
	exec := h.Exec("exec_command", `{"cmd":"sleep 1; echo b","yield_time_ms":250}`)
	h.PreTool(ctx, exec)
	h.PostTool(ctx, exec, ht.Success(`{"stdout":"a\n","sessionId":4242,"wallTime":0.25}`))
	stdin := h.Exec("write_stdin", `{"session_id":4242,"chars":""}`)
	h.PreTool(ctx, stdin)
	h.PostTool(ctx, stdin, ht.Success(`{"stdout":"","sessionId":4242,"wallTime":5}`))
	h.PostTool(ctx, stdin, ht.Success(`{"stdout":"b\n","exitCode":0,"wallTime":1,"command":"sleep 1; echo b","callId":"call-exec_command"}`))
	data, _ := os.ReadFile(filepath.Join(dir, "log"))
	var got []string
	for _, line := range slices.DeleteFunc(strings.Split(string(data), "\n"), func(s string) bool { return s == "" }) {
		var in map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &in); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		got = append(got, string(in["hook_event_name"])+" "+string(in["tool_name"])+" "+string(in["tool_input"])+" "+string(in["tool_use_id"])+" "+string(in["tool_response"]))
	}
	want := []string{
		`"PreToolUse" "Bash" {"command":"sleep 1; echo b"} "call-exec_command" `,
		`"PostToolUse" "Bash" {"command":"sleep 1; echo b"} "call-exec_command" "b\n"`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("hook runs:\n%q\nwant\n%q", got, want)
	}
	if codex.HookToolName("apply_patch") != "apply_patch" || codex.HookToolName("mcp__fs__read") != "mcp__fs__read" {
		t.Error("other tools keep their names")
	}
}
