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

// TestApplyPatchHooks: Codex's freeform apply_patch reaches the hooks by its own name with
// the patch as {command} and its output as tool_response; an apply_patch, Edit or Write
// matcher fires for it (not Bash); a patch that does not parse fires no PreToolUse; a
// rewrite of {command} goes back as the call's text (measured on 0.169.0: differential
// codex/apply-patch, codex/apply-patch-bad, codex/apply-patch-matchers).
func TestApplyPatchHooks(t *testing.T) {
	dir := t.TempDir()
	logFor := func(name string) string {
		f := filepath.Join(dir, name)
		return `printf '%s ' ` + name + ` >> "` + f + `"; cat >> "` + f + `"; echo >> "` + f + `"`
	}
	h := setup(t, ht.G("PreToolUse", "^apply_patch$", logFor("log")), ht.G("PreToolUse", "^Edit$", logFor("edit")),
		ht.G("PreToolUse", "^Write$", logFor("write")), ht.G("PreToolUse", "^Bash$", logFor("bash")),
		ht.G("PostToolUse", "apply_patch", logFor("log")))
	patch := "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch"
	args, _ := json.Marshal(map[string]string{"input": patch})
	call := h.Exec("apply_patch", string(args))
	h.PreTool(ctx, call)
	h.PostTool(ctx, call, ht.Success(`"Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nA a.txt\n"`))
	bad, _ := json.Marshal(map[string]string{"input": "*** Begin Patch\n*** Frobnicate File: x\n*** End Patch"})
	h.PreTool(ctx, h.Exec("apply_patch", string(bad)))
	read := func(name string) []string {
		data, _ := os.ReadFile(filepath.Join(dir, name))
		var out []string
		for _, line := range slices.DeleteFunc(strings.Split(string(data), "\n"), func(s string) bool { return s == "" }) {
			tag, js, _ := strings.Cut(line, " ")
			var in map[string]json.RawMessage
			if err := json.Unmarshal([]byte(js), &in); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			out = append(out, tag+" "+string(in["hook_event_name"])+" "+string(in["tool_name"])+" "+string(in["tool_input"])+" "+string(in["tool_response"]))
		}
		return out
	}
	cmd, _ := json.Marshal(map[string]string{"command": patch})
	want := []string{
		`log "PreToolUse" "apply_patch" ` + string(cmd) + ` `,
		`log "PostToolUse" "apply_patch" ` + string(cmd) + ` "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nA a.txt\n"`,
	}
	if got := read("log"); !slices.Equal(got, want) {
		t.Errorf("hook runs:\n%q\nwant\n%q", got, want)
	}
	if n := len(read("edit")) + len(read("write")); n != 2 {
		t.Errorf("Edit and Write matchers fired %d times, want once each", n)
	}
	if got := read("bash"); len(got) != 0 {
		t.Errorf("a Bash matcher fired: %q", got)
	}
	if got := string(codex.MapRewrite("apply_patch", args, json.RawMessage(`{"command":"*** Begin Patch\n*** Delete File: b\n*** End Patch"}`))); got != `{"input":"*** Begin Patch\n*** Delete File: b\n*** End Patch"}` {
		t.Errorf("MapRewrite = %s", got)
	}
}
