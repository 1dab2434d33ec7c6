package codex_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshkit/dsh/bridges/codex"
	ht "github.com/dshkit/dsh/bridges/internal/hooktest"
	"github.com/dshkit/dsh/generated/dsh"
)

// TestSubagentHooks: SubagentStart and SubagentStop fire for a child matched on its agent
// type, with Codex 0.169.0's stdin (codex/subagent-spawn, codex/subagent-hooks): the
// child's identity after the common fields, the child's rollout beside the parent's; a
// SubagentStart context reaches the child, a SubagentStop block continues it with the
// engine's hook_prompt; a tool event inside the child names it after turn_id.
func TestSubagentHooks(t *testing.T) {
	dir, ws := t.TempDir(), t.TempDir()
	cfg := ht.Config(t, dir, "hooks.json",
		ht.G("SubagentStart", "default", `cat > "`+dir+`/start.json"; echo '{"hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":"CTX"}}'`),
		ht.G("SubagentStart", "explorer", `touch "`+dir+`/explorer"`),
		ht.G("SubagentStop", "default", `cat > "`+dir+`/stop.json"; echo 'keep going' >&2; exit 2`),
		ht.G("PreToolUse", "", `cat > "`+dir+`/pre.json"`))
	h, _ := setupIn(t, ws, codex.Config{Files: []string{cfg}})
	h.Transcript = "/s/rollout-2026-01-01T00-00-00-session-1.jsonl"
	child := "01a24ab8-2e91-7101-9816-2fa08a2a7b32"
	if err := h.SubagentStart(ctx, child, "default", "call_s"); err != nil {
		t.Fatal(err)
	}
	if err := h.SubagentStop(ctx, child, "default", "call_s", "child answer", 0); err != nil {
		t.Fatal(err)
	}
	ex := h.Exec("exec_command", `{"cmd":"ls"}`)
	ex.Lineage = &dsh.Lineage{ParentAgentID: "agent-1", ParentCallID: "call_s", AgentType: "default", Depth: 1}
	ex.AgentID = &child
	h.PreTool(ctx, ex)

	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	rollout := `"/s/rollout-2026-01-01T00-00-00-` + child + `.jsonl"`
	if got, want := read("start.json"), `{"session_id":"session-1","turn_id":"1","transcript_path":`+rollout+`,"cwd":"`+ws+
		`","hook_event_name":"SubagentStart","model":"test-model","permission_mode":"default","agent_id":"`+child+`","agent_type":"default"}`; got != want {
		t.Errorf("SubagentStart stdin:\n%s\nwant\n%s", got, want)
	}
	if got, want := read("stop.json"), `{"session_id":"session-1","turn_id":"1","transcript_path":"`+h.Transcript+`","agent_transcript_path":`+rollout+
		`,"cwd":"`+ws+`","hook_event_name":"SubagentStop","model":"test-model","permission_mode":"default","stop_hook_active":false,"agent_id":"`+child+
		`","agent_type":"default","last_assistant_message":"child answer"}`; got != want {
		t.Errorf("SubagentStop stdin:\n%s\nwant\n%s", got, want)
	}
	if got := read("pre.json"); !strings.HasPrefix(got, `{"session_id":"session-1","turn_id":"1","agent_id":"`+child+`","agent_type":"default","transcript_path"`) {
		t.Errorf("PreToolUse inside the child: %s", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "explorer")); err == nil {
		t.Error("the explorer group ran for a default child")
	}
	if inj := h.Agent.Injected(); len(inj) != 1 || ht.Texts(inj[0])[0] != "CTX" {
		t.Errorf("injected %+v, want the SubagentStart context", inj)
	}
	steered := h.Agent.Steered()
	if len(steered) != 1 || !strings.HasPrefix(ht.Texts(steered[0])[0], `<hook_prompt hook_run_id="subagent-stop:0:`) ||
		!strings.HasSuffix(ht.Texts(steered[0])[0], `">keep going</hook_prompt>`) {
		t.Errorf("steered %+v, want the SubagentStop continuation", steered)
	}
}

// TestAgentFunctionNames: the multi_agent_v1 functions' hooks see the engine's tool_name
// (the namespace and the name run together, but spawn_agent), and their output as text.
func TestAgentFunctionNames(t *testing.T) {
	for tool, want := range map[string]string{"spawn_agent": "spawn_agent", "wait_agent": "multi_agent_v1wait_agent",
		"close_agent": "multi_agent_v1close_agent", "exec_command": "Bash", "view_image": "view_image"} {
		if got := codex.HookToolName(tool); got != want {
			t.Errorf("HookToolName(%s) = %s, want %s", tool, got, want)
		}
	}
	got := codex.ToolResponse("spawn_agent", json.RawMessage(`{"agent_id": "a", "nickname": "Kuhn"}`))
	if string(got) != `"{\"agent_id\":\"a\",\"nickname\":\"Kuhn\"}"` {
		t.Errorf("spawn_agent's tool_response = %s", got)
	}
	if got := codex.ToolResponse("mcp__x__y", json.RawMessage(`{"a":1}`)); string(got) != `{"a":1}` {
		t.Errorf("another tool's tool_response = %s", got)
	}
}
