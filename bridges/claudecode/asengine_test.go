package claudecode_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshkit/dsh/bridges/claudecode"
	ht "github.com/dshkit/dsh/bridges/internal/hooktest"
	"github.com/dshkit/dsh/generated/dsh"
)

// setupEngine is setup with the default (engine) behaviour: the real engine's wording and behaviour.
func setupEngine(t *testing.T, groups ...ht.Group) *ht.Harness {
	t.Helper()
	h, _ := setupIn(t, t.TempDir(), claudecode.Config{Files: []string{ht.Config(t, t.TempDir(), "settings.json", groups...)}})
	return h
}

func texts(blocks []dsh.ContentBlock) []string {
	var out []string
	for _, b := range blocks {
		if tb, ok := b.(dsh.TextBlock); ok {
			out = append(out, tb.Text)
		}
	}
	return out
}

// TestAsEngine checks the Claude Code wording and behaviour the differential suite found
// in the real engine (differential/testdata/differences.md).
func TestAsEngine(t *testing.T) {
	t.Run("deny text replaces the result", func(t *testing.T) {
		h := setupEngine(t, ht.G("PreToolUse", "", `echo "not allowed" >&2; exit 2`))
		ex := h.Exec("Bash", `{"command":"ls"}`)
		if d, _ := h.PreTool(ctx, ex); ht.Describe(d) != "deny: not allowed" {
			t.Fatalf("%s", ht.Describe(d))
		}
		d, _ := h.PostTool(ctx, ex, dsh.ToolFailure{Error: dsh.ToolError{Message: "not allowed"}, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "Error: not allowed"}}})
		acc, ok := d.(dsh.PostToolAccept)
		if !ok || len(texts(acc.Content)) != 1 || !strings.HasPrefix(texts(acc.Content)[0], "PreToolUse:Bash hook error: [") ||
			!strings.HasSuffix(texts(acc.Content)[0], "]: not allowed") {
			t.Fatalf("%#v", d)
		}
	})
	t.Run("deny without reason", func(t *testing.T) {
		h := setupEngine(t, ht.G("PreToolUse", "", `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"}}'`))
		ex := h.Exec("Bash", `{"command":"ls"}`)
		h.PreTool(ctx, ex)
		d, _ := h.PostTool(ctx, ex, dsh.ToolFailure{Error: dsh.ToolError{Message: "x"}})
		if acc, ok := d.(dsh.PostToolAccept); !ok || texts(acc.Content)[0] != "PreToolUse:Bash hook error: Blocked by hook" {
			t.Fatalf("%#v", d)
		}
	})
	t.Run("post block keeps the result", func(t *testing.T) {
		h := setupEngine(t, ht.G("PostToolUse", "", `echo '{"decision":"block","reason":"looks wrong"}'`))
		d, _ := h.PostTool(ctx, h.Exec("Bash", `{}`), ht.Success(`"ok"`))
		acc, ok := d.(dsh.PostToolAccept)
		if !ok || acc.Content != nil || len(acc.AdditionalContexts) != 1 {
			t.Fatalf("%#v", d)
		}
		got := ht.Texts(acc.AdditionalContexts[0])
		if len(got) != 1 || !strings.Contains(got[0], "PostToolUse:Bash hook blocking error from command: ") || !strings.HasSuffix(got[0], ": looks wrong\n</system-reminder>") {
			t.Errorf("%q", got)
		}
	})
	t.Run("contexts as reminders", func(t *testing.T) {
		h := setupEngine(t, ht.G("PostToolUse", "", `echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"note"}}'`))
		d, _ := h.PostTool(ctx, h.Exec("Bash", `{}`), ht.Success(`"ok"`))
		acc := d.(dsh.PostToolAccept)
		if got := ht.Texts(acc.AdditionalContexts[0]); len(got) != 1 || got[0] != "<system-reminder>\nPostToolUse:Bash hook additional context: note\n</system-reminder>" {
			t.Errorf("%q", got)
		}
	})
	t.Run("stop context continues", func(t *testing.T) {
		h := setupEngine(t, ht.G("Stop", "", `echo '{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"one more thing"}}'`))
		if err := h.Stop(ctx, 0); err != nil {
			t.Fatal(err)
		}
		s := h.Agent.Steered()
		if len(s) != 1 || ht.Texts(s[0])[0] != "<system-reminder>\nStop hook additional context: one more thing\n</system-reminder>" {
			t.Fatalf("%+v", s)
		}
	})
	t.Run("stop block feedback", func(t *testing.T) {
		h := setupEngine(t, ht.G("Stop", "", `echo '{"decision":"block"}'`))
		h.Stop(ctx, 0)
		s := h.Agent.Steered()
		if len(s) != 1 {
			t.Fatalf("%+v", s)
		}
		got := ht.Texts(s[0])
		if len(got) != 2 || !strings.HasPrefix(got[0], "<system-reminder>\nStop hook blocking error from command: ") || got[1] != "Stop hook feedback:\nBlocked by hook" {
			t.Errorf("%q", got)
		}
	})
	t.Run("continue false at PreToolUse runs the call, then halts", func(t *testing.T) {
		h := setupEngine(t, ht.G("PreToolUse", "", `echo '{"continue":false,"stopReason":"enough"}'`))
		ex := h.Exec("Bash", `{}`)
		if d, _ := h.PreTool(ctx, ex); ht.Describe(d) != "allow" {
			t.Fatalf("%s", ht.Describe(d))
		}
		if d, _ := h.PostTool(ctx, ex, ht.Success(`"ok"`)); ht.Describe(d) != "halt: enough" {
			t.Fatalf("%s", ht.Describe(d))
		}
	})
}

// TestTranscript: the transcript is Claude Code's JSONL, chained by parentUuid, with the
// prompt as a string and blocks otherwise; "<" is written as is; a tool search's tool
// references are tool_reference blocks.
func TestTranscript(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	tr, err := claudecode.NewTranscript(path, "sess", "/ws")
	if err != nil {
		t.Fatal(err)
	}
	late := "Late"
	for _, d := range []dsh.SessionEventData{
		dsh.UserMessageLogged{Message: dsh.UserMessage{Role: dsh.UserMessageRoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "go"}}}},
		dsh.AssistantMessageLogged{Message: dsh.AssistantMessage{Role: dsh.AssistantMessageRoleAssistant, Content: []dsh.ContentBlock{
			dsh.TextBlock{Text: "<promise>DONE</promise>"}, dsh.ToolCallBlock{ID: "c1", Name: "Bash", Arguments: `{"command":"ls"}`}}}},
		dsh.ToolResultLogged{Message: dsh.UserMessage{Role: dsh.UserMessageRoleUser, Content: []dsh.ContentBlock{
			dsh.ToolResultBlock{ToolCallID: "c1", Content: []dsh.ContentBlock{dsh.TextBlock{Text: "a\nb"}}}}}},
		dsh.ToolResultLogged{Message: dsh.UserMessage{Role: dsh.UserMessageRoleUser, Content: []dsh.ContentBlock{
			dsh.ToolResultBlock{ToolCallID: "c2", Content: []dsh.ContentBlock{dsh.TextBlock{Text: "Tool Late loaded.", ToolReference: &late}}}}}},
		dsh.TurnEnd{Turn: 1},
	} {
		if err := tr.Observe(d); err != nil {
			t.Fatal(err)
		}
	}
	tr.Close()
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 4 || !strings.Contains(lines[1], "<promise>DONE</promise>") {
		t.Fatalf("%s", data)
	}
	type entry struct {
		Type       string  `json:"type"`
		UUID       string  `json:"uuid"`
		ParentUUID *string `json:"parentUuid"`
		SessionID  string  `json:"sessionId"`
		CWD        string  `json:"cwd"`
		Message    struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	var entries []entry
	for _, l := range lines {
		var x entry
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatal(err)
		}
		entries = append(entries, x)
	}
	if entries[0].ParentUUID != nil || *entries[1].ParentUUID != entries[0].UUID || *entries[2].ParentUUID != entries[1].UUID {
		t.Errorf("parent chain broken: %s", data)
	}
	if entries[0].Type != "user" || string(entries[0].Message.Content) != `"go"` || entries[1].Type != "assistant" || entries[0].SessionID != "sess" || entries[0].CWD != "/ws" {
		t.Errorf("%s", data)
	}
	if !strings.Contains(string(entries[1].Message.Content), `{"id":"c1","input":{"command":"ls"},"name":"Bash","type":"tool_use"}`) ||
		!strings.Contains(string(entries[2].Message.Content), `"type":"tool_result"`) {
		t.Errorf("%s", data)
	}
	// A tool search's answer is written as the engine writes it: tool_reference blocks.
	if !strings.Contains(string(entries[3].Message.Content), `"content":[{"tool_name":"Late","type":"tool_reference"}]`) {
		t.Errorf("tool references: %s", entries[3].Message.Content)
	}
}
