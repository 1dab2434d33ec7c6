package runner_test

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runner"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/session"
)

// agentHookSession is a claude-code session whose PreToolUse[Bash] is an agent hook, over
// the scripted model rs (recording its requests).
func agentHookSession(t *testing.T, ws string, rs ...llm.ScriptedResponse) (*runner.Session, *llm.Scripted) {
	t.Helper()
	hooks := filepath.Join(t.TempDir(), "settings.json")
	cfg := `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"agent","prompt":"Is it harmless? $ARGUMENTS"}]}]}}`
	if err := os.WriteFile(hooks, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	log, err := session.Open(context.Background(), session.NewMemory())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	model := llm.NewScripted(rs...).RecordRequests()
	s := claudeSession(t, ws, hooks, log, model, "test")
	return s, model
}

func call(name string, in map[string]any) llm.ScriptedToolCall {
	raw, _ := json.Marshal(in)
	return llm.ScriptedToolCall{Name: name, Arguments: raw}
}

// An agent hook's verifier runs on the session's model with the table's system prompt,
// the session's tools but Agent plus StructuredOutput, read-only (its Write is denied as
// dontAsk denies it); its ok:false blocks the command with the engine's words, its
// ok:true lets it run, and a verifier that never answers (asked once more) blocks it.
func TestAgentHookVerifier(t *testing.T) {
	ws := t.TempDir()
	bash := llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{call("Bash", map[string]any{"command": "touch made", "description": "d"})}}
	for name, tc := range map[string]struct {
		verifier []llm.ScriptedResponse
		made     bool
		result   string
	}{
		"not met": {[]llm.ScriptedResponse{
			{ToolCalls: []llm.ScriptedToolCall{call("Write", map[string]any{"file_path": filepath.Join(ws, "written"), "content": "x"})}},
			{ToolCalls: []llm.ScriptedToolCall{call("StructuredOutput", map[string]any{"ok": false, "reason": "it writes"})}}},
			false, "PreToolUse:Bash hook error: Agent hook condition was not met: it writes"},
		"met": {[]llm.ScriptedResponse{{ToolCalls: []llm.ScriptedToolCall{call("StructuredOutput", map[string]any{"ok": true})}}},
			true, ""},
		"no verdict": {[]llm.ScriptedResponse{{Text: "looks fine"}, {Text: "still fine"}},
			false, "gave no verdict (dsh fails closed"},
	} {
		t.Run(name, func(t *testing.T) {
			_ = os.Remove(filepath.Join(ws, "made"))
			script := append(append([]llm.ScriptedResponse{bash}, tc.verifier...), llm.ScriptedResponse{Text: "done"})
			s, model := agentHookSession(t, ws, script...)
			turn(t, s, "go")
			if _, err := os.Stat(filepath.Join(ws, "made")); (err == nil) != tc.made {
				t.Errorf("the command ran: %v, want %v", err == nil, tc.made)
			}
			if _, err := os.Stat(filepath.Join(ws, "written")); err == nil {
				t.Error("the verifier wrote a file")
			}
			reqs := model.Requests()
			if len(reqs) != len(script) {
				t.Fatalf("%d model requests, want %d", len(reqs), len(script))
			}
			v := reqs[1]
			var names []string
			for _, tl := range v.Tools {
				names = append(names, tl.Name)
			}
			if !strings.HasPrefix(v.System, "You are evaluating a PreToolUse hook in Claude Code.") ||
				!slices.Contains(names, "StructuredOutput") || slices.Contains(names, "Agent") || !slices.Contains(names, "Read") {
				t.Errorf("the verifier's request: system %q, tools %v", v.System, names)
			}
			if name == "not met" && !strings.Contains(allText(reqs[2]), "don't ask mode") {
				t.Errorf("the verifier's Write was not denied as dontAsk denies it: %q", allText(reqs[2]))
			}
			if name == "no verdict" && !strings.Contains(lastUserText(reqs[2]), "[structured-output-enforce] You MUST call the StructuredOutput tool") {
				t.Errorf("the verifier was not asked again: %q", lastUserText(reqs[2]))
			}
			last := lastUserText(reqs[len(reqs)-1])
			if tc.result != "" && !strings.Contains(last, tc.result) {
				t.Errorf("the command's result %q, want it to hold %q", last, tc.result)
			}
		})
	}
}

// lastUserText is the text of the last message of req: its text and tool result blocks.
func lastUserText(req llm.Request) string {
	if len(req.Messages) == 0 {
		return ""
	}
	var b strings.Builder
	for _, c := range req.Messages[len(req.Messages)-1].Content {
		switch x := c.(type) {
		case dsh.TextBlock:
			b.WriteString(x.Text)
		case dsh.ToolResultBlock:
			for _, y := range x.Content {
				if tb, ok := y.(dsh.TextBlock); ok {
					b.WriteString(tb.Text)
				}
			}
		default:
			// Images, reasoning and tool calls hold no text the test reads.
		}
	}
	return b.String()
}

// The session's hooks fire for an agent hook's verifier's own calls, as Claude Code
// 2.1.328 fires them (differential case subagent/agent-hook-tools): PreToolUse for each,
// PostToolUse for those that ran, with the verifier's agent id ("hook-agent-<uuid>"), no
// agent type and the dontAsk mode; a call that dontAsk denies gets no PostToolUse. The
// agent hook at PreToolUse[Bash] does not start a verifier of the verifier's Bash call:
// the script has no response for one, and the requests are counted.
func TestAgentHookVerifierFiresSessionHooks(t *testing.T) {
	ws, dir := t.TempDir(), t.TempDir()
	pre, post := filepath.Join(dir, "pre.log"), filepath.Join(dir, "post.log")
	hooks := filepath.Join(dir, "settings.json")
	cfg, _ := json.Marshal(map[string]any{"hooks": map[string]any{
		"PreToolUse": []any{
			map[string]any{"matcher": "Bash", "hooks": []any{map[string]any{"type": "agent", "prompt": "Is it harmless? $ARGUMENTS"}}},
			map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "cat >> " + pre}}}},
		"PostToolUse": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "cat >> " + post}}}}}})
	if err := os.WriteFile(hooks, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	log, err := session.Open(context.Background(), session.NewMemory())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	model := llm.NewScripted(
		llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{call("Bash", map[string]any{"command": "touch made", "description": "d"})}},
		llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{call("Bash", map[string]any{"command": "touch verifier_made", "description": "v"})}},
		llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{call("StructuredOutput", map[string]any{"ok": true, "reason": "fine"})}},
		llm.ScriptedResponse{Text: "done"},
	).RecordRequests()
	s := claudeSession(t, ws, hooks, log, model, "test")
	turn(t, s, "go")
	if n := len(model.Requests()); n != 4 {
		t.Fatalf("%d model requests, want 4 (a verifier of the verifier's Bash call ran?)", n)
	}
	if _, err := os.Stat(filepath.Join(ws, "made")); err != nil {
		t.Error("the command did not run after ok:true")
	}
	if _, err := os.Stat(filepath.Join(ws, "verifier_made")); err == nil {
		t.Error("the verifier's Bash ran under dontAsk")
	}
	type input struct {
		Tool      string  `json:"tool_name"`
		Mode      string  `json:"permission_mode"`
		AgentID   *string `json:"agent_id"`
		AgentType *string `json:"agent_type"`
	}
	read := func(path string) map[string]input {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]input{}
		for line := range strings.Lines(string(data)) {
			var in input
			if err := json.Unmarshal([]byte(line), &in); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			key := in.Tool
			if in.AgentID != nil {
				key = "verifier " + key
			}
			if _, dup := out[key]; dup {
				t.Errorf("%s: %s fired twice", path, key)
			}
			out[key] = in
		}
		return out
	}
	pres, posts := read(pre), read(post)
	if got := slices.Sorted(maps.Keys(pres)); !slices.Equal(got, []string{"Bash", "verifier Bash", "verifier StructuredOutput"}) {
		t.Errorf("PreToolUse fired for %v", got)
	}
	if got := slices.Sorted(maps.Keys(posts)); !slices.Equal(got, []string{"Bash", "verifier StructuredOutput"}) {
		t.Errorf("PostToolUse fired for %v", got)
	}
	for key, in := range pres {
		if !strings.HasPrefix(key, "verifier") {
			if in.Mode == "dontAsk" {
				t.Errorf("the session's own %s call's hook sees the verifier's mode", key)
			}
			continue
		}
		if !strings.HasPrefix(*in.AgentID, "hook-agent-") || len(*in.AgentID) != len("hook-agent-")+36 || in.AgentType != nil || in.Mode != "dontAsk" {
			t.Errorf("%s: agent_id %q, agent_type %v, permission_mode %q", key, *in.AgentID, in.AgentType, in.Mode)
		}
	}
}

// allText is the text of every message of req (lastUserText's, message by message).
func allText(req llm.Request) string {
	var b strings.Builder
	for i := range req.Messages {
		b.WriteString(lastUserText(llm.Request{Messages: req.Messages[:i+1]}))
		b.WriteString("\n")
	}
	return b.String()
}

// An agent hook's verifier gets the session reminders that the main session's first
// request carries (spec/toolsets/claude-code.json's session_reminders: the environment,
// the model), once, in the request after the results of its first calls, as Claude Code
// 2.1.328 sends them (differential case subagent/agent-hook-tools): not in its first
// request, not again after its next calls.
func TestAgentHookVerifierSessionReminders(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("a note\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	read := llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{call("Read", map[string]any{"file_path": filepath.Join(ws, "notes.txt")})}}
	s, model := agentHookSession(t, ws,
		llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{call("Bash", map[string]any{"command": "true", "description": "d"})}},
		read, read,
		llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{call("StructuredOutput", map[string]any{"ok": true})}},
		llm.ScriptedResponse{Text: "done"})
	turn(t, s, "go")
	reqs := model.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d model requests, want 5", len(reqs))
	}
	env := "<system-reminder>\n# Environment\nYou have been invoked in the following environment: \n - Primary working directory: " + ws + "\n"
	modelText := "<system-reminder>\nYou are powered by the model test.\n</system-reminder>"
	if got := allText(reqs[0]); !strings.Contains(got, env) || !strings.Contains(got, modelText) {
		t.Errorf("the session's first request lacks the session reminders: %q", got)
	}
	if got := allText(reqs[1]); strings.Contains(got, "# Environment") {
		t.Errorf("the verifier's first request carries the session reminders: %q", got)
	}
	got := allText(reqs[2])
	if strings.Count(got, env) != 1 || strings.Count(got, modelText) != 1 {
		t.Errorf("the verifier's request after its first results: %q", got)
	}
	if i, j := strings.Index(got, "1\ta note"), strings.Index(got, env); i < 0 || j < i {
		t.Errorf("the session reminders are not after the verifier's first results: %q", got)
	}
	if got := allText(reqs[3]); strings.Count(got, env) != 1 {
		t.Errorf("the verifier's reminders came %d times by its third request, want once", strings.Count(got, env))
	}
}
