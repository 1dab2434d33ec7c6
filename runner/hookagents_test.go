package runner_test

import (
	"context"
	"encoding/json"
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
	s, err := runner.New(context.Background(), runner.Config{Workspace: ws, SessionID: "ses_test", Log: log,
		Hooks: runner.Hooks{Dialect: "claude-code", File: hooks, Trust: true},
		OpenModel: func(string, runner.ContextPlacement) (llm.Model, dsh.LLMCallConfig, error) {
			return model, dsh.LLMCallConfig{Provider: "scripted", Model: "test"}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
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
			if name == "not met" && !strings.Contains(lastUserText(reqs[2]), "don't ask mode") {
				t.Errorf("the verifier's Write was not denied as dontAsk denies it: %q", lastUserText(reqs[2]))
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
