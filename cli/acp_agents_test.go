package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestACPAgentDefinitions: under dsh acp as under dsh run, a project's agent definition is
// an agent type (its body the child's system prompt, its tools the child's), its
// frontmatter hooks run in a trusted project, and the child's log is a file beside the
// session's.
func TestACPAgentDefinitions(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", filepath.Join(dir, "home"))
	ws := filepath.Join(dir, "ws")
	files := map[string]string{
		"ws/.claude/agents/reviewer.md": "---\nname: reviewer\ndescription: Reviews things.\ntools: Bash\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: touch hooked\n---\nYou review.\n",
		"hooks.json":                    `{"hooks": {}}`,
		"agent.json": `{"responses": [
  {"toolCalls": [{"id": "c1", "name": "Agent", "arguments": {"description": "review", "prompt": "touch child_ran", "subagent_type": "reviewer", "run_in_background": false}}]},
  {"toolCalls": [{"id": "c2", "name": "Bash", "arguments": {"command": "touch child_ran"}}]},
  {"text": "child answer"},
  {"text": "parent done"}
]}`,
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sessions := filepath.Join(dir, "sessions")
	a := startACP(t, "--dialect", "claude-code", "--model", "scripted:"+filepath.Join(dir, "agent.json"),
		"--hooks", filepath.Join(dir, "hooks.json"), "--sessions", sessions, "--trust")
	a.call("initialize", map[string]any{"protocolVersion": 1})
	res := a.call("session/new", map[string]any{"cwd": ws, "mcpServers": []any{}})
	id, _ := res["result"].(map[string]any)["sessionId"].(string)
	if id == "" {
		t.Fatalf("session/new: %v", res)
	}
	res = a.call("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "delegate"}}})
	if res["result"] == nil {
		t.Fatalf("session/prompt: %v", res)
	}
	if code := a.close(); code != 0 {
		t.Fatalf("dsh acp: exit %d", code)
	}
	// session/load on another dsh acp shows the child's call again, from its log.
	b := startACP(t, "--dialect", "claude-code", "--model", "scripted:"+filepath.Join(dir, "agent.json"),
		"--hooks", filepath.Join(dir, "hooks.json"), "--sessions", sessions, "--trust")
	b.call("initialize", map[string]any{"protocolVersion": 1})
	var replayed bool
	b.onFrame = func(f map[string]any) {
		params, _ := f["params"].(map[string]any)
		u, _ := params["update"].(map[string]any)
		if id, _ := u["toolCallId"].(string); strings.HasSuffix(id, "/c2") && u["sessionUpdate"] == "tool_call" {
			replayed = true
		}
	}
	if res := b.call("session/load", map[string]any{"sessionId": id, "cwd": ws, "mcpServers": []any{}}); res["error"] != nil {
		t.Fatalf("session/load: %v", res)
	}
	if code := b.close(); code != 0 {
		t.Fatalf("second dsh acp: exit %d", code)
	}
	if !replayed {
		t.Error("session/load did not show the child's Bash call again")
	}
	for _, f := range []string{"child_ran", "hooked"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err != nil {
			t.Errorf("%s: %v (the reviewer's child, or its frontmatter PreToolUse hook, did not run)", f, err)
		}
	}
	children, _ := filepath.Glob(filepath.Join(sessions, id, "subagents", "ses_*.jsonl"))
	if len(children) != 1 {
		entries, _ := filepath.Glob(filepath.Join(sessions, "*", "*"))
		t.Fatalf("child logs: %v, want one beside the session's log (the sessions hold %v)", children, entries)
	}
	data, err := os.ReadFile(children[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"agentType":"reviewer"`, "You review.", `"parentCallId":"c1"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the child's log lacks %s:\n%s", want, data)
		}
	}
}
