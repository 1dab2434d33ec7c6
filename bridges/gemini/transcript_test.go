package gemini_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshkit/dsh/bridges/gemini"
	"github.com/dshkit/dsh/generated/dsh"
)

// TestChat: the header line, then one line per user or model message (and a $set after
// each), in the engine's shapes; tool results are not messages.
func TestChat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chats", "session.jsonl")
	c, err := gemini.NewChat(path, "sess", "/ws")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []dsh.SessionEventData{
		dsh.UserMessageLogged{Message: dsh.UserMessage{Role: dsh.UserMessageRoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "go"}}}},
		dsh.AssistantMessageLogged{Message: dsh.AssistantMessage{Role: dsh.AssistantMessageRoleAssistant, Content: []dsh.ContentBlock{
			dsh.TextBlock{Text: "running"}, dsh.ToolCallBlock{ID: "c1", Name: "run_shell_command", Arguments: `{"command":"ls"}`}}}},
		dsh.ToolResultLogged{Message: dsh.UserMessage{Role: dsh.UserMessageRoleUser, Content: []dsh.ContentBlock{
			dsh.ToolResultBlock{ToolCallID: "c1", Content: []dsh.ContentBlock{dsh.TextBlock{Text: "a"}}}}}},
	} {
		if err := c.Observe(d); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines:\n%s", len(lines), data)
	}
	var head struct{ SessionID, Kind, ProjectHash string }
	var user, model struct {
		Type      string
		Content   any
		ToolCalls []struct{ ID, Name string }
	}
	_ = json.Unmarshal([]byte(lines[0]), &head)
	_ = json.Unmarshal([]byte(lines[1]), &user)
	_ = json.Unmarshal([]byte(lines[3]), &model)
	if head.SessionID != "sess" || head.Kind != "main" || len(head.ProjectHash) != 64 {
		t.Errorf("header %s", lines[0])
	}
	if user.Type != "user" || !strings.Contains(lines[1], `"content":[{"text":"go"}]`) {
		t.Errorf("user %s", lines[1])
	}
	if model.Type != "gemini" || model.Content != "running" || len(model.ToolCalls) != 1 || model.ToolCalls[0].Name != "run_shell_command" {
		t.Errorf("model %s", lines[3])
	}
	if !strings.HasPrefix(lines[2], `{"$set":{"lastUpdated":`) {
		t.Errorf("no $set after the message: %s", lines[2])
	}
}
