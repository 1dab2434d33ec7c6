package codex_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshkit/dsh/bridges/codex"
	"github.com/dshkit/dsh/generated/dsh"
)

// TestRollout: the rollout starts with session_meta and has one response_item per message,
// tool call and tool output, in the engine's shapes; "<" is written as is.
func TestRollout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rollout.jsonl")
	r, err := codex.NewRollout(path, "sess", "/ws")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []dsh.SessionEventData{
		dsh.UserMessageLogged{Message: dsh.UserMessage{Role: dsh.UserMessageRoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "go"}}}},
		dsh.AssistantMessageLogged{Message: dsh.AssistantMessage{Role: dsh.AssistantMessageRoleAssistant, Content: []dsh.ContentBlock{
			dsh.TextBlock{Text: "<b>on it</b>"}, dsh.ToolCallBlock{ID: "c1", Name: "Bash", Arguments: `{"command":"ls"}`}}}},
		dsh.ToolResultLogged{Message: dsh.UserMessage{Role: dsh.UserMessageRoleUser, Content: []dsh.ContentBlock{
			dsh.ToolResultBlock{ToolCallID: "c1", Content: []dsh.ContentBlock{dsh.TextBlock{Text: "a"}}}}}},
		dsh.TurnEnd{Turn: 1},
	} {
		if err := r.Observe(d); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var got []string
	for i, l := range lines {
		var x struct {
			Ordinal int            `json:"ordinal"`
			Type    string         `json:"type"`
			Payload map[string]any `json:"payload"`
		}
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatal(err)
		}
		if x.Ordinal != i {
			t.Errorf("line %d: ordinal %d", i, x.Ordinal)
		}
		kind := x.Type
		if p, ok := x.Payload["type"].(string); ok {
			kind += "/" + p
		}
		if role, ok := x.Payload["role"].(string); ok {
			kind += "/" + role
		}
		got = append(got, kind)
	}
	want := "session_meta response_item/message/user response_item/message/assistant response_item/function_call response_item/function_call_output"
	if strings.Join(got, " ") != want {
		t.Errorf("got %v\nwant %s", got, want)
	}
	if !strings.Contains(lines[2], `"text":"<b>on it</b>"`) || !strings.Contains(lines[3], `"call_id":"c1"`) || !strings.Contains(lines[4], `"output":"a"`) {
		t.Errorf("%s", data)
	}
}
