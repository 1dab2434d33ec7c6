package provider

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

func respEvent(typ, rest string) [2]string {
	return [2]string{typ, `{"type":"` + typ + `"` + rest + `}`}
}

func respTextDelta(text string) [2]string {
	t, _ := json.Marshal(text)
	return respEvent("response.output_text.delta", `,"item_id":"msg_1","output_index":0,"content_index":0,"delta":`+string(t))
}

var respCompleted = respEvent("response.completed", `,"response":{"id":"resp_1","usage":{"input_tokens":40,"input_tokens_details":{"cached_tokens":32},"output_tokens":6,"output_tokens_details":{"reasoning_tokens":2},"total_tokens":46}}`)

func newResponsesTest(t *testing.T, baseURL string, timeout time.Duration) llm.Model {
	t.Helper()
	m, err := NewOpenAIResponses(OpenAIResponsesConfig{BaseURL: baseURL + "/v1", APIKey: "sk-test", Model: "gpt-5", Timeout: timeout, PromptCacheKey: "ses-1", Codex: true})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func init() {
	created := respEvent("response.created", `,"response":{"id":"resp_1"}`)
	fixtures = append(fixtures, providerFixture{
		name:         "openai",
		newModel:     newResponsesTest,
		text:         sse(created, respTextDelta("Hel"), respTextDelta("lo"), respCompleted),
		textPrefix:   sse(created, respTextDelta("Hel")),
		unknownEvent: sse(created, respTextDelta("Hel"), respEvent("response.future_thing", `,"x":1`), respTextDelta("lo"), respCompleted),
		badArgs: sse(created, respEvent("response.output_item.done", `,"output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"Bash","arguments":"{not json"}`),
			respCompleted),
		bigText:      func(text string) string { return sse(created, respTextDelta(text), respCompleted) },
		errorBody:    `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`,
		errorMessage: "Incorrect API key provided",
	})
}

// TestResponsesStream: reasoning with its encrypted content, an item done without
// deltas (as the differential mock sends it), parallel function calls and usage.
func TestResponsesStream(t *testing.T) {
	body := sse(
		respEvent("response.created", `,"response":{"id":"resp_1"}`),
		respEvent("response.reasoning_summary_text.delta", `,"item_id":"rs_1","delta":"need ls"`),
		respEvent("response.output_item.done", `,"item":{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"need ls"}],"encrypted_content":"ENC1"}`),
		respEvent("response.output_item.done", `,"item":{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"Looking."}]}`),
		respEvent("response.output_item.done", `,"item":{"type":"function_call","id":"fc_1","call_id":"call_a","name":"Bash","arguments":"{\"command\":\"ls\"}"}`),
		respEvent("response.output_item.done", `,"item":{"type":"function_call","id":"fc_2","call_id":"call_b","name":"Read","arguments":"{\"path\":\"a\"}"}`),
		respCompleted,
	)
	srv := serveSSE(t, 200, "text/event-stream", writeBody(body))
	got, err := drain(newResponsesTest(t, srv.URL, 0).Stream(context.Background(), simpleReq()))
	if err != nil {
		t.Fatal(err)
	}
	want := []dsh.AssistantChunk{
		dsh.ChunkReasoningDelta{Text: "need ls"},
		dsh.ChunkReasoningDelta{Signature: ptr("ENC1")},
		dsh.ChunkTextDelta{Text: "Looking."},
		dsh.ChunkToolCall{ID: "call_a", Name: "Bash", Arguments: `{"command":"ls"}`},
		dsh.ChunkToolCall{ID: "call_b", Name: "Read", Arguments: `{"path":"a"}`},
		dsh.ChunkFinish{Reason: dsh.FinishReasonToolCalls, Usage: &dsh.Usage{InputTokens: 40, OutputTokens: 6, CacheReadTokens: ptr(32)}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestResponsesRequest: the request as Codex sends it: store false, encrypted reasoning
// included and replayed, the session's prompt_cache_key, the system prompt as
// instructions, and the contexts after a tool result as developer messages before
// its function_call_output.
func TestResponsesRequest(t *testing.T) {
	srv := serveSSE(t, 200, "text/event-stream", writeBody(sse(respTextDelta("ok"), respCompleted)))
	m := newResponsesTest(t, srv.URL, 0)
	req := llm.Request{Config: dsh.LLMCallConfig{Model: "gpt-5"}, System: "Be brief.",
		Tools: []llm.ToolSpec{{Name: "Bash", Description: "run", InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)}},
		Messages: []llm.Message{
			userText("list"),
			{Role: llm.RoleAssistant, Content: []dsh.ContentBlock{
				dsh.ReasoningBlock{Text: "think", Signature: ptr("ENC")},
				dsh.ReasoningBlock{Text: "unsigned"},
				dsh.TextBlock{Text: "Looking."},
				dsh.ToolCallBlock{ID: "call_1", Name: "Bash", Arguments: `{"command":"ls"}`},
			}},
			{Role: llm.RoleUser, Content: []dsh.ContentBlock{dsh.ToolResultBlock{ToolCallID: "call_1", Content: []dsh.ContentBlock{dsh.TextBlock{Text: "a.txt"}}}}},
			{Role: llm.RoleUser, Source: dsh.SourcePlugin{}, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "pre context"}}},
		}}
	if _, err := llm.Collect(m.Stream(context.Background(), req)); err != nil {
		t.Fatal(err)
	}
	got := srv.body(t, 0)
	msg := func(role, typ, text string) any {
		return map[string]any{"type": "message", "role": role, "content": []any{map[string]any{"type": typ, "text": text}}}
	}
	want := map[string]any{
		"model": "gpt-5", "stream": true, "store": false, "include": []any{"reasoning.encrypted_content"},
		"reasoning": map[string]any{"summary": "auto"}, "prompt_cache_key": "ses-1", "instructions": "Be brief.", "tool_choice": "auto", "parallel_tool_calls": true,
		"tools": []any{map[string]any{"type": "function", "name": "Bash", "description": "run", "strict": false,
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}}}}},
		"input": []any{
			msg("user", "input_text", "list"),
			map[string]any{"type": "reasoning", "summary": []any{map[string]any{"type": "summary_text", "text": "think"}}, "encrypted_content": "ENC"},
			msg("assistant", "output_text", "Looking."),
			map[string]any{"type": "function_call", "name": "Bash", "arguments": `{"command":"ls"}`, "call_id": "call_1"},
			msg("developer", "input_text", "pre context"),
			map[string]any{"type": "function_call_output", "call_id": "call_1", "output": "a.txt"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
}

// TestResponsesFailures: response.failed over the context window, an error event, and
// max_output_tokens.
func TestResponsesFailures(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		want       dsh.ChunkFinish
	}{
		{"context window", sse(respEvent("response.failed", `,"response":{"id":"r","error":{"code":"context_length_exceeded","message":"Your input exceeds the context window of this model."}}`)),
			dsh.ChunkFinish{Reason: dsh.FinishReasonError, Error: &dsh.LLMFailure{Message: "Your input exceeds the context window of this model.", Code: llm.CodeContextWindowExceeded}}},
		{"error event", sse(respTextDelta("Hel"), respEvent("error", `,"code":"server_error","message":"boom"`)),
			dsh.ChunkFinish{Reason: dsh.FinishReasonError, Error: &dsh.LLMFailure{Message: "boom", Code: "server_error"}}},
		{"max output tokens", sse(respTextDelta("Hel"), respEvent("response.incomplete", `,"response":{"id":"r","incomplete_details":{"reason":"max_output_tokens"}}`)),
			dsh.ChunkFinish{Reason: dsh.FinishReasonMaxTokens}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := serveSSE(t, 200, "text/event-stream", writeBody(tt.body))
			resp, err := llm.Collect(newResponsesTest(t, srv.URL, 0).Stream(context.Background(), simpleReq()))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, resp.Finish); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
