package provider

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

// anthropicSSE renders a Messages stream: message_start, the given content events,
// message_delta with stop, message_stop.
func anthropicSSE(stop string, content ...[2]string) string {
	events := [][2]string{{"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1,"cache_creation_input_tokens":3,"cache_read_input_tokens":20}}}`}}
	events = append(events, content...)
	events = append(events,
		[2]string{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"` + stop + `","stop_sequence":null},"usage":{"output_tokens":7}}`},
		[2]string{"message_stop", `{"type":"message_stop"}`})
	return sse(events...)
}

func anthropicText(i int, text string) [][2]string {
	idx := strings.Repeat("", 0) + string(rune('0'+i))
	t, _ := json.Marshal(text)
	return [][2]string{
		{"content_block_start", `{"type":"content_block_start","index":` + idx + `,"content_block":{"type":"text","text":""}}`},
		{"content_block_delta", `{"type":"content_block_delta","index":` + idx + `,"delta":{"type":"text_delta","text":` + string(t) + `}}`},
		{"content_block_stop", `{"type":"content_block_stop","index":` + idx + `}`},
	}
}

func anthropicTool(i int, id, name, args string) [][2]string {
	idx := string(rune('0' + i))
	a, _ := json.Marshal(args)
	return [][2]string{
		{"content_block_start", `{"type":"content_block_start","index":` + idx + `,"content_block":{"type":"tool_use","id":"` + id + `","name":"` + name + `","input":{}}}`},
		{"content_block_delta", `{"type":"content_block_delta","index":` + idx + `,"delta":{"type":"input_json_delta","partial_json":` + string(a) + `}}`},
		{"content_block_stop", `{"type":"content_block_stop","index":` + idx + `}`},
	}
}

func newAnthropicTest(t *testing.T, baseURL string, timeout time.Duration) llm.Model {
	t.Helper()
	m, err := NewAnthropic(AnthropicConfig{BaseURL: baseURL, APIKey: "sk-ant-test", Model: "claude-test", Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func init() {
	fixtures = append(fixtures, providerFixture{
		name:     "anthropic",
		newModel: newAnthropicTest,
		text:     anthropicSSE("end_turn", anthropicText(0, "Hello")...),
		textPrefix: sse(append([][2]string{{"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}`}},
			anthropicText(0, "Hel")[:2]...)...),
		unknownEvent: anthropicSSE("end_turn", append([][2]string{{"future_event", `{"type":"future_event","x":1}`}}, anthropicText(0, "Hello")...)...),
		badArgs:      anthropicSSE("tool_use", anthropicTool(0, "toolu_1", "Bash", "{not json")...),
		bigText:      func(text string) string { return anthropicSSE("end_turn", anthropicText(0, text)...) },
		errorBody:    `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		errorMessage: "Overloaded",
	})
}

// TestAnthropicStream: text, thinking with its signature, parallel tool calls and usage
// in the provider's terms.
func TestAnthropicStream(t *testing.T) {
	var content [][2]string
	content = append(content,
		[2]string{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`},
		[2]string{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"need ls"}}`},
		[2]string{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"SIG1"}}`},
		[2]string{"content_block_stop", `{"type":"content_block_stop","index":0}`},
		[2]string{"ping", `{"type":"ping"}`},
	)
	content = append(content, anthropicText(1, "Looking.")...)
	content = append(content, anthropicTool(2, "toolu_a", "Bash", `{"command":"ls"}`)...)
	content = append(content, anthropicTool(3, "toolu_b", "Read", `{"path":"a"}`)...)
	srv := serveSSE(t, 200, "text/event-stream", writeBody(anthropicSSE("tool_use", content...)))
	got, err := drain(newAnthropicTest(t, srv.URL, 0).Stream(context.Background(), simpleReq()))
	if err != nil {
		t.Fatal(err)
	}
	want := []dsh.AssistantChunk{
		dsh.ChunkReasoningDelta{Text: "need ls"},
		dsh.ChunkReasoningDelta{Signature: ptr("SIG1")},
		dsh.ChunkTextDelta{Text: "Looking."},
		dsh.ChunkToolCall{ID: "toolu_a", Name: "Bash", Arguments: `{"command":"ls"}`},
		dsh.ChunkToolCall{ID: "toolu_b", Name: "Read", Arguments: `{"path":"a"}`},
		dsh.ChunkFinish{Reason: dsh.FinishReasonToolCalls, Usage: &dsh.Usage{InputTokens: 33, OutputTokens: 7, CacheReadTokens: ptr(20), CacheWriteTokens: ptr(3)}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	var asm llm.Assembler
	for _, c := range got {
		_ = asm.Add(c)
	}
	if r := asm.Response(); len(r.Content) != 4 || r.Content[0] != (dsh.ReasoningBlock{Text: "need ls", Signature: r.Content[0].(dsh.ReasoningBlock).Signature}) || *r.Content[0].(dsh.ReasoningBlock).Signature != "SIG1" {
		t.Errorf("assembled %+v", r.Content)
	}
}

// TestAnthropicRequest: the request as Claude Code sends it: the system block and the
// last content block with cache_control, one user message for a step's tool results and
// the contexts after them, signed thinking replayed, unsigned dropped.
func TestAnthropicRequest(t *testing.T) {
	srv := serveSSE(t, 200, "text/event-stream", writeBody(anthropicSSE("end_turn", anthropicText(0, "ok")...)))
	m := newAnthropicTest(t, srv.URL, 0)
	isErr := true
	req := llm.Request{Config: dsh.LLMCallConfig{Model: "claude-sonnet-4-5", Extra: map[string]json.RawMessage{"thinking": json.RawMessage(`{"type":"enabled","budget_tokens":1024}`)}},
		System: "Be brief.",
		Tools:  []llm.ToolSpec{{Name: "Bash", Description: "run", InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false}`)}},
		Messages: []llm.Message{
			userText("list"),
			{Role: llm.RoleAssistant, Content: []dsh.ContentBlock{
				dsh.ReasoningBlock{Text: "think", Signature: ptr("S1")},
				dsh.ReasoningBlock{Text: "unsigned"},
				dsh.ReasoningBlock{Signature: ptr("DATA"), Redacted: ptr(true)},
				dsh.TextBlock{Text: "Looking."},
				dsh.ToolCallBlock{ID: "toolu_1", Name: "Bash", Arguments: `{"command":"ls"}`},
			}},
			{Role: llm.RoleUser, Content: []dsh.ContentBlock{dsh.ToolResultBlock{ToolCallID: "toolu_1", Content: []dsh.ContentBlock{dsh.TextBlock{Text: "a.txt"}}, IsError: isErr}}},
			{Role: llm.RoleUser, Source: dsh.SourcePlugin{}, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "<system-reminder>\nPreToolUse:Bash hook additional context: ctx\n</system-reminder>"}}},
		}}
	if _, err := llm.Collect(m.Stream(context.Background(), req)); err != nil {
		t.Fatal(err)
	}
	got := srv.body(t, 0)
	want := map[string]any{
		"model": "claude-sonnet-4-5", "max_tokens": float64(32000), "stream": true,
		"thinking": map[string]any{"type": "enabled", "budget_tokens": float64(1024)},
		"system":   []any{map[string]any{"type": "text", "text": "Be brief.", "cache_control": map[string]any{"type": "ephemeral"}}},
		"tools": []any{map[string]any{"name": "Bash", "description": "run", "input_schema": map[string]any{
			"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}}, "required": []any{"command"}, "additionalProperties": false}}},
		"messages": []any{
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "list"}}},
			map[string]any{"role": "assistant", "content": []any{
				map[string]any{"type": "thinking", "thinking": "think", "signature": "S1"},
				map[string]any{"type": "redacted_thinking", "data": "DATA"},
				map[string]any{"type": "text", "text": "Looking."},
				map[string]any{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": map[string]any{"command": "ls"}},
			}},
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "is_error": true, "content": []any{map[string]any{"type": "text", "text": "a.txt"}}},
				map[string]any{"type": "text", "text": "<system-reminder>\nPreToolUse:Bash hook additional context: ctx\n</system-reminder>", "cache_control": map[string]any{"type": "ephemeral"}},
			}},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
}

// TestAnthropicToolReferences: a tool offered behind the tool search is declared with
// defer_loading, and a tool result's tool references (text blocks with toolReference) are
// tool_reference blocks, its other text text blocks, as Claude Code 2.1.328 sends them.
func TestAnthropicToolReferences(t *testing.T) {
	srv := serveSSE(t, 200, "text/event-stream", writeBody(anthropicSSE("end_turn", anthropicText(0, "ok")...)))
	m := newAnthropicTest(t, srv.URL, 0)
	schema := json.RawMessage(`{"type":"object","properties":{}}`)
	req := llm.Request{Config: dsh.LLMCallConfig{Model: "claude-sonnet-4-5"},
		Tools: []llm.ToolSpec{{Name: "Late", Description: "late", InputSchema: schema, DeferLoading: true}, {Name: "Search", Description: "search", InputSchema: schema}},
		Messages: []llm.Message{
			userText("go"),
			{Role: llm.RoleAssistant, Content: []dsh.ContentBlock{dsh.ToolCallBlock{ID: "toolu_1", Name: "Search", Arguments: `{}`}}},
			{Role: llm.RoleUser, Content: []dsh.ContentBlock{dsh.ToolResultBlock{ToolCallID: "toolu_1", Content: []dsh.ContentBlock{
				dsh.TextBlock{Text: "Tool Late loaded.", ToolReference: ptr("Late")}, dsh.TextBlock{Text: "more"}}}}},
		}}
	if _, err := llm.Collect(m.Stream(context.Background(), req)); err != nil {
		t.Fatal(err)
	}
	got := srv.body(t, 0)
	tools := []any{
		map[string]any{"name": "Late", "description": "late", "defer_loading": true, "input_schema": map[string]any{"type": "object", "properties": map[string]any{}}},
		map[string]any{"name": "Search", "description": "search", "input_schema": map[string]any{"type": "object", "properties": map[string]any{}}},
	}
	if diff := cmp.Diff(tools, got["tools"]); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	msgs, _ := got["messages"].([]any)
	last, _ := msgs[len(msgs)-1].(map[string]any)
	result := map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "cache_control": map[string]any{"type": "ephemeral"}, "content": []any{
		map[string]any{"type": "tool_reference", "tool_name": "Late"}, map[string]any{"type": "text", "text": "more"}}}
	if diff := cmp.Diff([]any{result}, last["content"]); diff != "" {
		t.Errorf("tool result (-want +got):\n%s", diff)
	}
}

// TestAnthropicFailures: an overloaded 529 with Retry-After, a prompt over the window, an
// error event inside the stream, and a bad key naming the variable.
func TestAnthropicFailures(t *testing.T) {
	for _, tt := range []struct {
		name   string
		status int
		header map[string]string
		body   string
		want   dsh.LLMFailure
	}{
		{"overloaded", 529, map[string]string{"Retry-After": "2", "Request-Id": "req_1"}, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			dsh.LLMFailure{Message: "Overloaded", Code: "overloaded_error", Status: ptr(529), ProviderRetryAfterMS: ptr(2000), RequestID: ptr("req_1")}},
		{"context window", 400, nil, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`,
			dsh.LLMFailure{Message: "prompt is too long: 210000 tokens > 200000 maximum", Code: llm.CodeContextWindowExceeded, Status: ptr(400)}},
		{"bad key", 401, nil, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`,
			dsh.LLMFailure{Message: "anthropic: authentication failed (401): invalid x-api-key; check ANTHROPIC_API_KEY", Code: "authentication_error", Status: ptr(401)}},
		{"error event", 200, nil, sse(append(anthropicText(0, "Hel")[:2], [2]string{"error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`})...),
			dsh.LLMFailure{Message: "Overloaded", Code: "overloaded_error"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctype := "application/json"
			if tt.status == 200 {
				ctype = "text/event-stream"
			}
			srv := serveSSE(t, tt.status, ctype, writeBody(tt.body))
			srv.Config.Handler = withHeaders(tt.header, srv.Config.Handler)
			resp, err := llm.Collect(newAnthropicTest(t, srv.URL, 0).Stream(context.Background(), simpleReq()))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Finish.Error == nil {
				t.Fatalf("finish %+v", resp.Finish)
			}
			if diff := cmp.Diff(tt.want, *resp.Finish.Error); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func withHeaders(h map[string]string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range h {
			w.Header().Set(k, v)
		}
		next.ServeHTTP(w, r)
	})
}

// TestAnthropicSystemContexts: for a model of SystemContextModels, the <system-reminder>
// texts of plugin messages leave their user message and follow it as one "system"
// message of their bare texts, which carries the cache breakpoint when last; a plugin's
// other text and a user's own reminder stay user text; another model keeps them all.
func TestAnthropicSystemContexts(t *testing.T) {
	msgs := []llm.Message{
		userText("<system-reminder>\nmine\n</system-reminder>"),
		{Role: llm.RoleAssistant, Content: []dsh.ContentBlock{dsh.ToolCallBlock{ID: "toolu_1", Name: "Bash", Arguments: `{"command":"ls"}`}}},
		{Role: llm.RoleUser, Content: []dsh.ContentBlock{dsh.ToolResultBlock{ToolCallID: "toolu_1", Content: []dsh.ContentBlock{dsh.TextBlock{Text: "a.txt"}}}}},
		{Role: llm.RoleUser, Source: dsh.SourcePlugin{}, Content: []dsh.ContentBlock{
			dsh.TextBlock{Text: "<system-reminder>\nfirst\n</system-reminder>\n<system-reminder>\nsecond\n</system-reminder>"},
			dsh.TextBlock{Text: "Stop hook feedback:\nno"},
			dsh.TextBlock{Text: "<system-reminder>\nthird\n</system-reminder>"},
		}},
	}
	for _, tt := range []struct {
		model string
		last  []any
	}{
		{"claude-opus-5-5", []any{
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": []any{map[string]any{"type": "text", "text": "a.txt"}}},
				map[string]any{"type": "text", "text": "Stop hook feedback:\nno"},
			}},
			map[string]any{"role": "system", "content": []any{map[string]any{"type": "text", "text": "first\n\nsecond\n\nthird", "cache_control": map[string]any{"type": "ephemeral"}}}},
		}},
		{"claude-sonnet-4-5", []any{
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": []any{map[string]any{"type": "text", "text": "a.txt"}}},
				map[string]any{"type": "text", "text": "<system-reminder>\nfirst\n</system-reminder>\n<system-reminder>\nsecond\n</system-reminder>"},
				map[string]any{"type": "text", "text": "Stop hook feedback:\nno"},
				map[string]any{"type": "text", "text": "<system-reminder>\nthird\n</system-reminder>", "cache_control": map[string]any{"type": "ephemeral"}},
			}},
		}},
	} {
		t.Run(tt.model, func(t *testing.T) {
			srv := serveSSE(t, 200, "text/event-stream", writeBody(anthropicSSE("end_turn", anthropicText(0, "ok")...)))
			m, err := NewAnthropic(AnthropicConfig{BaseURL: srv.URL, APIKey: "sk-ant-test", Model: tt.model, SystemContextModels: []string{"claude-opus-5-5*"}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := llm.Collect(m.Stream(context.Background(), llm.Request{Messages: msgs})); err != nil {
				t.Fatal(err)
			}
			got, _ := srv.body(t, 0)["messages"].([]any)
			if len(got) < 2 {
				t.Fatalf("messages: %v", got)
			}
			if first := got[0].(map[string]any); first["role"] != "user" {
				t.Errorf("the user's own reminder left its message: %v", first)
			}
			if diff := cmp.Diff(tt.last, got[2:]); diff != "" {
				t.Errorf("messages after the call (-want +got):\n%s", diff)
			}
		})
	}
}
