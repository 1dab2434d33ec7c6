// Tests of what the OpenAI Chat Completions model sends: the request body, its
// configuration and the role of plugin context.

package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

func TestOpenAIRequestBody(t *testing.T) {
	var (
		mu      sync.Mutex
		bodies  []map[string]any
		headers []http.Header
		paths   []string
	)
	m := newOpenAITest(t, func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("decode request: %v", err)
		}
		mu.Lock()
		bodies = append(bodies, body)
		headers = append(headers, r.Header.Clone())
		paths = append(paths, r.Method+" "+r.URL.Path)
		mu.Unlock()
		streamHeaders(w)
		writeSSE(w, `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, doneEvent)
	})
	req := llm.Request{
		Config: dsh.LLMCallConfig{
			Provider: "openai", Model: "gpt-x", MaxTokens: ptr(256), Temperature: ptr(0.2),
			System: ptr("ignored: Request.System wins"),
			Extra:  map[string]json.RawMessage{"top_p": json.RawMessage(`0.9`), "max_tokens": json.RawMessage(`1`), "seed": json.RawMessage(`7`)},
		},
		System: "You are terse.",
		Messages: []llm.Message{
			userText("list files"),
			{Role: llm.RoleAssistant, Content: []dsh.ContentBlock{
				dsh.ReasoningBlock{Text: "use bash"},
				dsh.TextBlock{Text: "Let me "},
				dsh.TextBlock{Text: "check."},
				dsh.ToolCallBlock{ID: "call_1", Name: "Bash", Arguments: `{"command":"ls"}`},
				&dsh.ToolCallBlock{ID: "call_2", Name: "Read", Arguments: ""},
			}},
			{Role: llm.RoleUser, Content: []dsh.ContentBlock{dsh.ToolResultBlock{ToolCallID: "call_1", Content: []dsh.ContentBlock{dsh.TextBlock{Text: "a.txt"}, dsh.TextBlock{Text: "b.txt"}}}}},
			{Role: llm.RoleUser, Content: []dsh.ContentBlock{&dsh.ToolResultBlock{ToolCallID: "call_2", IsError: true, Content: []dsh.ContentBlock{
				dsh.TextBlock{Text: "denied"}, dsh.ImageBlock{MediaType: "image/png", Data: "AAAA"},
			}}}},
			{Role: llm.RoleAssistant, Content: []dsh.ContentBlock{dsh.ToolCallBlock{ID: "call_3", Name: "Bash", Arguments: `{}`}}},
			{Role: llm.RoleUser, Content: []dsh.ContentBlock{
				dsh.ToolResultBlock{ToolCallID: "call_3", Content: []dsh.ContentBlock{dsh.TextBlock{Text: "ok"}}},
				dsh.TextBlock{Text: "context after the result"},
			}},
			{Role: llm.RoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "what is this?"}, dsh.ImageBlock{MediaType: "image/jpeg", Data: "/9j/"}}},
			{Role: llm.RoleAssistant},
		},
		Tools: []llm.ToolSpec{
			{Name: "Bash", Description: "Run a shell command.", InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)},
			{Name: "Read"},
		},
	}
	if _, err := llm.Collect(m.Stream(context.Background(), req)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	wantJSON := `{
	  "model": "gpt-x",
	  "stream": true,
	  "stream_options": {"include_usage": true},
	  "max_tokens": 256,
	  "temperature": 0.2,
	  "top_p": 0.9,
	  "seed": 7,
	  "messages": [
	    {"role": "system", "content": "You are terse."},
	    {"role": "user", "content": "list files"},
	    {"role": "assistant", "content": "Let me check.", "tool_calls": [
	      {"id": "call_1", "type": "function", "function": {"name": "Bash", "arguments": "{\"command\":\"ls\"}"}},
	      {"id": "call_2", "type": "function", "function": {"name": "Read", "arguments": "{}"}}
	    ]},
	    {"role": "tool", "tool_call_id": "call_1", "content": "a.txt\nb.txt"},
	    {"role": "tool", "tool_call_id": "call_2", "content": "denied\n[image omitted: image/png]"},
	    {"role": "assistant", "tool_calls": [
	      {"id": "call_3", "type": "function", "function": {"name": "Bash", "arguments": "{}"}}
	    ]},
	    {"role": "tool", "tool_call_id": "call_3", "content": "ok"},
	    {"role": "user", "content": "context after the result"},
	    {"role": "user", "content": [
	      {"type": "text", "text": "what is this?"},
	      {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/"}}
	    ]},
	    {"role": "assistant", "content": ""}
	  ],
	  "tools": [
	    {"type": "function", "function": {"name": "Bash", "description": "Run a shell command.",
	      "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}},
	    {"type": "function", "function": {"name": "Read", "parameters": {"type": "object", "properties": {}}}}
	  ]
	}`
	var want map[string]any
	if err := json.Unmarshal([]byte(wantJSON), &want); err != nil {
		t.Fatal(err)
	}
	if len(bodies) != 1 {
		t.Fatalf("%d requests", len(bodies))
	}
	if diff := cmp.Diff(want, bodies[0]); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
	if paths[0] != "POST /v1/chat/completions" {
		t.Errorf("request line = %q", paths[0])
	}
	for k, v := range map[string]string{"Authorization": "Bearer sk-test", "Content-Type": "application/json", "Accept": "text/event-stream"} {
		if got := headers[0].Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}

	// Config.System and the adapter's model are the fallbacks; ReplayReasoning sends the
	// reasoning back; no tools means no "tools" key.
	m.replayReasoning = true
	req2 := llm.Request{
		Config: dsh.LLMCallConfig{System: ptr("from config")},
		Messages: []llm.Message{
			userText("q"),
			{Role: llm.RoleAssistant, Content: []dsh.ContentBlock{dsh.ReasoningBlock{Text: "hmm"}, dsh.TextBlock{Text: "a"}}},
		},
	}
	mu.Unlock()
	_, err := llm.Collect(m.Stream(context.Background(), req2))
	mu.Lock()
	if err != nil {
		t.Fatal(err)
	}
	want2 := map[string]any{
		"model":          "test-model",
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
		"messages": []any{
			map[string]any{"role": "system", "content": "from config"},
			map[string]any{"role": "user", "content": "q"},
			map[string]any{"role": "assistant", "content": "a", "reasoning_content": "hmm"},
		},
	}
	if diff := cmp.Diff(want2, bodies[1]); diff != "" {
		t.Errorf("second request body (-want +got):\n%s", diff)
	}
}

func TestOpenAIConfig(t *testing.T) {
	env := map[string]string{EnvOpenAIBaseURL: "https://llm.internal.example/v1", EnvOpenAIModel: "m-7", EnvOpenAIAPIKey: "sk-env"}
	cfg := OpenAIChatConfigFromEnv(func(k string) string { return env[k] })
	if diff := cmp.Diff(OpenAIChatConfig{BaseURL: "https://llm.internal.example/v1", Model: "m-7", APIKey: "sk-env"}, cfg); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := NewOpenAIChat(cfg); err != nil {
		t.Fatal(err)
	}
	for _, base := range []string{"ftp://host/v1", "/v1", "http://", "http://bad host/"} {
		if _, err := NewOpenAIChat(OpenAIChatConfig{BaseURL: base, Model: "m"}); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("NewOpenAIChat(%q) err = %v, want ErrInvalidConfig", base, err)
		}
	}
	// The trailing slash of a base URL does not double.
	var path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.Path
		streamHeaders(w)
		writeSSE(w, `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, doneEvent)
	}))
	defer srv.Close()
	m, err := NewOpenAIChat(OpenAIChatConfig{BaseURL: srv.URL + "/v1/", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drain(m.Stream(context.Background(), simpleRequest())); err != nil || path != "/v1/chat/completions" {
		t.Errorf("path = %q, err = %v", path, err)
	}
}

func TestTruncateAndRetryAfterBounds(t *testing.T) {
	if got := truncate("héllo", 2); got != "h…" {
		t.Errorf("truncate = %q", got)
	}
	if got := truncate("abc", 3); got != "abc" {
		t.Errorf("truncate = %q", got)
	}
	for _, v := range []string{"-1", "1e12"} {
		h := http.Header{"Retry-After": {v}}
		if ms, ok := retryAfterMS(h, time.Now()); ok {
			t.Errorf("retry-after %q accepted as %d", v, ms)
		}
	}
}

// Both models satisfy the seam.
var _ llm.Model = (*OpenAIChat)(nil)
var _ llm.Model = (*llm.Scripted)(nil)

// TestOpenAIPluginContextRole: with PluginContextRole, each block of a plain plugin
// context is a message of that role; user messages, plugin messages with a form and
// tool results keep their mapping; Request.Clone keeps the source.
func TestOpenAIPluginContextRole(t *testing.T) {
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewDecoder(r.Body).Decode(&body)
		streamHeaders(w)
		writeSSE(w, `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, doneEvent)
	}))
	t.Cleanup(srv.Close)
	m, err := NewOpenAIChat(OpenAIChatConfig{BaseURL: srv.URL + "/v1", Model: "m", HTTPClient: srv.Client(), PluginContextRole: "system"})
	if err != nil {
		t.Fatal(err)
	}
	req := llm.Request{Messages: []llm.Message{
		{Role: llm.RoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "go"}}, Source: dsh.SourceUser{}},
		{Role: llm.RoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "ctx 1"}, dsh.TextBlock{Text: "ctx 2"}}, Source: dsh.SourcePlugin{Plugin: "hooks"}},
		{Role: llm.RoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "note"}}, Source: &dsh.SourcePlugin{Plugin: "p", Form: dsh.PluginFormInstructions}},
	}}
	if _, err := llm.Collect(m.Stream(context.Background(), req.Clone())); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, msg := range body.Messages {
		got = append(got, msg.Role+":"+fmt.Sprint(msg.Content))
	}
	want := []string{"user:go", "system:ctx 1", "system:ctx 2", "user:note"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}
