package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runner"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/session"
)

// TestPrompts: a new session of the claude-code dialect gets the workspace's CLAUDE.md as
// an instructions message before its prompt, a trusted project's slash command expands
// the prompt in place (same message), and the system prompt takes the appended text.
func TestPrompts(t *testing.T) {
	ctx := context.Background()
	ws, home := t.TempDir(), t.TempDir()
	for name, text := range map[string]string{"CLAUDE.md": "rule ALPHA\n", ".claude/commands/greet.md": "Hello $0.\n"} {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	log, err := session.Open(ctx, session.NewMemory())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	open := func(string, runner.ContextPlacement) (llm.Model, dsh.LLMCallConfig, error) {
		return llm.NewScripted(llm.ScriptedResponse{Text: "ok"}), dsh.LLMCallConfig{Provider: "scripted", Model: "test"}, nil
	}
	s, err := runner.New(ctx, runner.Config{Workspace: ws, SessionID: "ses_test", Log: log, OpenModel: open,
		Hooks:   runner.Hooks{Dialect: "claude-code", Trust: true},
		Prompts: runner.Prompts{AppendSystemPrompt: "APPENDED", Home: home}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if !strings.HasSuffix(s.System, "be brief.\n\nAPPENDED") {
		t.Errorf("system prompt %q", s.System)
	}
	turn(t, s, "/greet bob")
	var texts []string
	for m, err := range session.Of[dsh.UserMessageLogged](log.Events()) {
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range m.Message.Content {
			if tb, ok := b.(dsh.TextBlock); ok {
				texts = append(texts, string(m.Message.Source.Kind())+": "+tb.Text)
			}
		}
	}
	if len(texts) != 3 || !strings.HasPrefix(texts[0], "plugin: <system-reminder>\nCodebase") || !strings.Contains(texts[0], "rule ALPHA") ||
		texts[1] != "user: <command-message>greet</command-message>\n<command-name>/greet</command-name>\n<command-args>bob</command-args>\n" ||
		texts[2] != "user: Hello bob.\n" {
		t.Errorf("logged user messages:\n%s", strings.Join(texts, "\n---\n"))
	}
}

// TestPromptsOff: NoInstructions reads no file, and an untrusted project's command is not
// expanded.
func TestPromptsOff(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	_ = os.MkdirAll(filepath.Join(ws, ".claude", "commands"), 0o755)
	_ = os.WriteFile(filepath.Join(ws, "CLAUDE.md"), []byte("rule ALPHA\n"), 0o644)
	_ = os.WriteFile(filepath.Join(ws, ".claude", "commands", "greet.md"), []byte("Hello.\n"), 0o644)
	log, err := session.Open(ctx, session.NewMemory())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	open := func(string, runner.ContextPlacement) (llm.Model, dsh.LLMCallConfig, error) {
		return llm.NewScripted(llm.ScriptedResponse{Text: "ok"}), dsh.LLMCallConfig{Provider: "scripted", Model: "test"}, nil
	}
	s, err := runner.New(ctx, runner.Config{Workspace: ws, SessionID: "ses_test", Log: log, OpenModel: open,
		Hooks: runner.Hooks{Dialect: "claude-code"}, Prompts: runner.Prompts{NoInstructions: true, Home: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	turn(t, s, "/greet")
	var texts []string
	for m, err := range session.Of[dsh.UserMessageLogged](log.Events()) {
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range m.Message.Content {
			if tb, ok := b.(dsh.TextBlock); ok {
				texts = append(texts, tb.Text)
			}
		}
	}
	if len(texts) != 1 || texts[0] != "/greet" {
		t.Errorf("logged user messages: %q", texts)
	}
}
