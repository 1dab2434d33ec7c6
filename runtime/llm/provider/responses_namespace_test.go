package provider

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

// TestResponsesNamespace: the tools whose schemas name a namespace (llm.NamespaceKey) are
// one namespace entry, where the first of them is, holding them as functions (without the
// key); a namespaced call arrives under its function's name; a replayed call of it names
// its namespace (Codex 0.169.0's multi_agent_v1, as it sends it).
func TestResponsesNamespace(t *testing.T) {
	body := sse(
		respEvent("response.created", `,"response":{"id":"resp_1"}`),
		respEvent("response.output_item.done", `,"item":{"type":"function_call","id":"fc_1","call_id":"call_w","name":"wait_agent","namespace":"multi_agent_v1","arguments":"{\"targets\":[\"a\"]}"}`),
		respCompleted,
	)
	srv := serveSSE(t, 200, "text/event-stream", writeBody(body))
	m := newResponsesTest(t, srv.URL, 0)
	ns := llm.Namespace{Name: "multi_agent_v1", Description: "Tools for spawning and managing sub-agents."}
	mark := func(schema string) json.RawMessage {
		out, err := ns.Mark(json.RawMessage(schema))
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	req := llm.Request{Config: dsh.LLMCallConfig{Model: "gpt-5"},
		Tools: []llm.ToolSpec{
			{Name: "exec_command", Description: "run", InputSchema: json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"}}}`)},
			{Name: "spawn_agent", Description: "spawn", InputSchema: mark(`{"type":"object","properties":{"message":{"type":"string"}}}`)},
			{Name: "view_image", Description: "view", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)},
			{Name: "wait_agent", Description: "wait", InputSchema: mark(`{"type":"object","properties":{"targets":{"type":"array"}}}`)},
		},
		Messages: []llm.Message{
			userText("delegate"),
			{Role: llm.RoleAssistant, Content: []dsh.ContentBlock{dsh.ToolCallBlock{ID: "call_0", Name: "spawn_agent", Arguments: `{"message":"hi"}`}}},
			{Role: llm.RoleUser, Content: []dsh.ContentBlock{dsh.ToolResultBlock{ToolCallID: "call_0", Content: []dsh.ContentBlock{dsh.TextBlock{Text: `{"agent_id":"a"}`}}}}},
		}}
	got, err := drain(m.Stream(context.Background(), req))
	if err != nil {
		t.Fatal(err)
	}
	call := dsh.ChunkToolCall{ID: "call_w", Name: "wait_agent", Arguments: `{"targets":["a"]}`}
	if len(got) < 1 || !cmp.Equal(got[0], dsh.AssistantChunk(call)) {
		t.Fatalf("chunks %v, want %v first", got, call)
	}
	sent := srv.body(t, 0)
	fn := func(name, desc string, props map[string]any) map[string]any {
		return map[string]any{"type": "function", "name": name, "description": desc, "strict": false,
			"parameters": map[string]any{"type": "object", "properties": props}}
	}
	wantTools := []any{
		fn("exec_command", "run", map[string]any{"cmd": map[string]any{"type": "string"}}),
		map[string]any{"type": "namespace", "name": "multi_agent_v1", "description": ns.Description, "tools": []any{
			fn("spawn_agent", "spawn", map[string]any{"message": map[string]any{"type": "string"}}),
			fn("wait_agent", "wait", map[string]any{"targets": map[string]any{"type": "array"}}),
		}},
		fn("view_image", "view", map[string]any{}),
	}
	if diff := cmp.Diff(wantTools, sent["tools"]); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	wantInput := []any{
		map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "delegate"}}},
		map[string]any{"type": "function_call", "name": "spawn_agent", "namespace": "multi_agent_v1", "arguments": `{"message":"hi"}`, "call_id": "call_0"},
		map[string]any{"type": "function_call_output", "call_id": "call_0", "output": `{"agent_id":"a"}`},
	}
	if diff := cmp.Diff(wantInput, sent["input"]); diff != "" {
		t.Errorf("input (-want +got):\n%s", diff)
	}
}

// TestResponsesNamespaceFunction: a tool whose namespace names its function otherwise
// (an MCP tool mcp__hk__hook, the function hook of mcp__hk) is offered under the
// function's name; the model's call of that function in that namespace arrives as the
// tool's own name, and replays as the function in its namespace; a result of several
// blocks is sent as content items, as Codex sends an MCP result (codex/mcp-call).
func TestResponsesNamespaceFunction(t *testing.T) {
	body := sse(
		respEvent("response.created", `,"response":{"id":"resp_1"}`),
		respEvent("response.output_item.done", `,"item":{"type":"function_call","id":"fc_1","call_id":"call_h","name":"hook","namespace":"mcp__hk","arguments":"{}"}`),
		respCompleted,
	)
	srv := serveSSE(t, 200, "text/event-stream", writeBody(body))
	m := newResponsesTest(t, srv.URL, 0)
	schema, err := llm.Namespace{Name: "mcp__hk", Description: "Tools in the mcp__hk namespace.", Function: "hook"}.Mark(json.RawMessage(`{"type":"object","properties":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	req := llm.Request{Config: dsh.LLMCallConfig{Model: "gpt-5"},
		Tools: []llm.ToolSpec{{Name: "mcp__hk__hook", Description: "records", InputSchema: schema}},
		Messages: []llm.Message{
			userText("call it"),
			{Role: llm.RoleAssistant, Content: []dsh.ContentBlock{dsh.ToolCallBlock{ID: "call_0", Name: "mcp__hk__hook", Arguments: `{}`}}},
			{Role: llm.RoleUser, Content: []dsh.ContentBlock{dsh.ToolResultBlock{ToolCallID: "call_0", Content: []dsh.ContentBlock{
				dsh.TextBlock{Text: "Wall time: 0.0100 seconds\nOutput:"}, dsh.TextBlock{Text: "answer"}}}}},
		}}
	got, err := drain(m.Stream(context.Background(), req))
	if err != nil {
		t.Fatal(err)
	}
	call := dsh.ChunkToolCall{ID: "call_h", Name: "mcp__hk__hook", Arguments: `{}`}
	if len(got) < 1 || !cmp.Equal(got[0], dsh.AssistantChunk(call)) {
		t.Fatalf("chunks %v, want %v first", got, call)
	}
	sent := srv.body(t, 0)
	wantTools := []any{map[string]any{"type": "namespace", "name": "mcp__hk", "description": "Tools in the mcp__hk namespace.", "tools": []any{
		map[string]any{"type": "function", "name": "hook", "description": "records", "strict": false, "parameters": map[string]any{"type": "object", "properties": map[string]any{}}},
	}}}
	if diff := cmp.Diff(wantTools, sent["tools"]); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	wantInput := []any{
		map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "call it"}}},
		map[string]any{"type": "function_call", "name": "hook", "namespace": "mcp__hk", "arguments": `{}`, "call_id": "call_0"},
		map[string]any{"type": "function_call_output", "call_id": "call_0", "output": []any{
			map[string]any{"type": "input_text", "text": "Wall time: 0.0100 seconds\nOutput:"}, map[string]any{"type": "input_text", "text": "answer"}}},
	}
	if diff := cmp.Diff(wantInput, sent["input"]); diff != "" {
		t.Errorf("input (-want +got):\n%s", diff)
	}
}

// TestUnofferedProperties: the properties a schema names under llm.UnofferedKey are left
// out of the schema offered, with the keyword (Codex's spawn_agent takes agent_type that
// its schema does not list).
func TestUnofferedProperties(t *testing.T) {
	m, err := schemaMap(llm.ToolSpec{Name: "spawn_agent", InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"},"agent_type":{"type":"string"}},"additionalProperties":false,"x-unoffered":["agent_type"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"type": "object", "properties": map[string]any{"message": map[string]any{"type": "string"}}, "additionalProperties": false}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("offered schema (-want +got):\n%s", diff)
	}
}
