package provider

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

// TestResponsesFreeform: a tool whose schema has llm.FreeformKey is a custom tool with that
// format; a custom_tool_call arrives as a call whose argument "input" is its text; a
// replayed call of it and its result are custom_tool_call and custom_tool_call_output
// (Codex 0.169.0's apply_patch, as it sends it for gpt-5.5).
func TestResponsesFreeform(t *testing.T) {
	body := sse(
		respEvent("response.created", `,"response":{"id":"resp_1"}`),
		respEvent("response.output_item.done", `,"item":{"type":"custom_tool_call","id":"ctc_1","call_id":"call_p","name":"apply_patch","input":"*** Begin Patch\n*** End Patch"}`),
		respCompleted,
	)
	srv := serveSSE(t, 200, "text/event-stream", writeBody(body))
	m := newResponsesTest(t, srv.URL, 0)
	format := `{"type":"grammar","syntax":"lark","definition":"start: x"}`
	req := llm.Request{Config: dsh.LLMCallConfig{Model: "gpt-5"},
		Tools: []llm.ToolSpec{{Name: "apply_patch", Description: "patch", InputSchema: json.RawMessage(`{"type":"object","properties":{"input":{"type":"string"}},"` + llm.FreeformKey + `":` + format + `}`)}},
		Messages: []llm.Message{
			userText("edit"),
			{Role: llm.RoleAssistant, Content: []dsh.ContentBlock{dsh.ToolCallBlock{ID: "call_0", Name: "apply_patch", Arguments: `{"input":"*** Begin Patch\n*** Add File: a\n+a\n*** End Patch"}`}}},
			{Role: llm.RoleUser, Content: []dsh.ContentBlock{dsh.ToolResultBlock{ToolCallID: "call_0", Content: []dsh.ContentBlock{dsh.TextBlock{Text: "Success."}}}}},
		}}
	got, err := drain(m.Stream(context.Background(), req))
	if err != nil {
		t.Fatal(err)
	}
	call := dsh.ChunkToolCall{ID: "call_p", Name: "apply_patch", Arguments: `{"input":"*** Begin Patch\n*** End Patch"}`}
	if len(got) < 1 || !cmp.Equal(got[0], dsh.AssistantChunk(call)) {
		t.Fatalf("chunks %v, want %v first", got, call)
	}
	sent := srv.body(t, 0)
	var f any
	_ = json.Unmarshal([]byte(format), &f)
	wantTools := []any{map[string]any{"type": "custom", "name": "apply_patch", "description": "patch", "format": f}}
	if diff := cmp.Diff(wantTools, sent["tools"]); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	wantInput := []any{
		map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "edit"}}},
		map[string]any{"type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin Patch\n*** Add File: a\n+a\n*** End Patch", "call_id": "call_0"},
		map[string]any{"type": "custom_tool_call_output", "call_id": "call_0", "output": "Success."},
	}
	if diff := cmp.Diff(wantInput, sent["input"]); diff != "" {
		t.Errorf("input (-want +got):\n%s", diff)
	}
}
