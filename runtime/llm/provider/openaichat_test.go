package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// writeSSE writes each payload as one "data:" event and flushes it.
func writeSSE(w http.ResponseWriter, payloads ...string) {
	for _, p := range payloads {
		fmt.Fprintf(w, "data: %s\n\n", p)
	}
	w.(http.Flusher).Flush()
}

func streamHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

// newOpenAITest starts a loopback server with handler and an adapter pointed at it.
func newOpenAITest(t *testing.T, handler http.HandlerFunc) *OpenAIChat {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	m, err := NewOpenAIChat(OpenAIChatConfig{BaseURL: srv.URL + "/v1", Model: "test-model", APIKey: "sk-test", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func simpleRequest() llm.Request {
	return llm.Request{Messages: []llm.Message{userText("hi")}}
}

const (
	usageEvent = `{"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17}}`
	doneEvent  = `[DONE]`
)

func TestOpenAIPlainText(t *testing.T) {
	m := newOpenAITest(t, func(w http.ResponseWriter, r *http.Request) {
		streamHeaders(w)
		writeSSE(w,
			`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"test-model","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
			`{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}`,
			`{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"lo!"},"finish_reason":null}]}`,
			`{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}`,
			usageEvent,
			doneEvent,
		)
	})
	got, err := drain(m.Stream(context.Background(), simpleRequest()))
	if err != nil {
		t.Fatal(err)
	}
	want := []dsh.AssistantChunk{
		dsh.ChunkTextDelta{Text: "Hel"},
		dsh.ChunkTextDelta{Text: "lo!"},
		dsh.ChunkFinish{Reason: dsh.FinishReasonStop, Usage: &dsh.Usage{InputTokens: 12, OutputTokens: 5}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestOpenAIInterleavedToolCalls(t *testing.T) {
	m := newOpenAITest(t, func(w http.ResponseWriter, r *http.Request) {
		streamHeaders(w)
		writeSSE(w,
			`{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":"Two "},"finish_reason":null}]}`,
			`{"choices":[{"index":0,"delta":{"reasoning_content":"tools."},"finish_reason":null}]}`,
			`{"choices":[{"index":0,"delta":{"content":"Checking."},"finish_reason":null}]}`,
			// The second call opens first; calls are still yielded in index order.
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"Read","arguments":""}}]},"finish_reason":null}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"Bash","arguments":""}}]},"finish_reason":null}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"comm"}}]},"finish_reason":null}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"path\":"}}]},"finish_reason":null}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"and\":\"ls -l\"}"}}]},"finish_reason":null}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"a.txt\"}"}}]},"finish_reason":null}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			usageEvent,
			doneEvent,
		)
	})
	got, err := drain(m.Stream(context.Background(), simpleRequest()))
	if err != nil {
		t.Fatal(err)
	}
	want := []dsh.AssistantChunk{
		dsh.ChunkReasoningDelta{Text: "Two "},
		dsh.ChunkReasoningDelta{Text: "tools."},
		dsh.ChunkTextDelta{Text: "Checking."},
		dsh.ChunkToolCall{ID: "call_a", Name: "Bash", Arguments: `{"command":"ls -l"}`},
		dsh.ChunkToolCall{ID: "call_b", Name: "Read", Arguments: `{"path":"a.txt"}`},
		dsh.ChunkFinish{Reason: dsh.FinishReasonToolCalls, Usage: &dsh.Usage{InputTokens: 12, OutputTokens: 5}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestOpenAIFinishReasons(t *testing.T) {
	toolStart := `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","type":"function","function":{"name":"Bash","arguments":"{\"a\":"}}]}}]}`
	tests := []struct {
		name   string
		events []string
		want   []dsh.AssistantChunk
	}{
		{
			name:   "length drops the truncated tool call",
			events: []string{`{"choices":[{"index":0,"delta":{"content":"x"}}]}`, toolStart, `{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`, doneEvent},
			want:   []dsh.AssistantChunk{dsh.ChunkTextDelta{Text: "x"}, dsh.ChunkFinish{Reason: dsh.FinishReasonMaxTokens}},
		},
		{
			name:   "content_filter is stop",
			events: []string{`{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"content_filter"}]}`, doneEvent},
			want:   []dsh.AssistantChunk{dsh.ChunkTextDelta{Text: "x"}, dsh.ChunkFinish{Reason: dsh.FinishReasonStop}},
		},
		{
			name: "stop with tool calls is tool-calls",
			events: []string{toolStart, `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, doneEvent},
			want: []dsh.AssistantChunk{dsh.ChunkToolCall{ID: "c", Name: "Bash", Arguments: `{"a":1}`}, dsh.ChunkFinish{Reason: dsh.FinishReasonToolCalls}},
		},
		{
			name:   "tool_calls without calls is stop",
			events: []string{`{"choices":[{"index":0,"delta":{"content":"hm"},"finish_reason":"tool_calls"}]}`, doneEvent},
			want:   []dsh.AssistantChunk{dsh.ChunkTextDelta{Text: "hm"}, dsh.ChunkFinish{Reason: dsh.FinishReasonStop}},
		},
		{
			name:   "end of body after finish_reason without [DONE]",
			events: []string{`{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop","usage":null}]}`},
			want:   []dsh.AssistantChunk{dsh.ChunkTextDelta{Text: "ok"}, dsh.ChunkFinish{Reason: dsh.FinishReasonStop}},
		},
		{
			name:   "[DONE] without finish_reason",
			events: []string{`{"choices":[{"index":0,"delta":{"content":"ok"}}]}`, doneEvent},
			want:   []dsh.AssistantChunk{dsh.ChunkTextDelta{Text: "ok"}, dsh.ChunkFinish{Reason: dsh.FinishReasonStop}},
		},
		{
			name: "tool call deltas without index",
			events: []string{
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"c1","function":{"name":"A","arguments":"{}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"c2","function":{"name":"B","arguments":"{\"x\""}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":":1}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, doneEvent,
			},
			want: []dsh.AssistantChunk{
				dsh.ChunkToolCall{ID: "c1", Name: "A", Arguments: `{}`},
				dsh.ChunkToolCall{ID: "c2", Name: "B", Arguments: `{"x":1}`},
				dsh.ChunkFinish{Reason: dsh.FinishReasonToolCalls},
			},
		},
		{
			name:   "[DONE] without finish_reason yields the calls it has",
			events: []string{toolStart, `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"2}"}}]}}]}`, doneEvent},
			want:   []dsh.AssistantChunk{dsh.ChunkToolCall{ID: "c", Name: "Bash", Arguments: `{"a":2}`}, dsh.ChunkFinish{Reason: dsh.FinishReasonToolCalls}},
		},
		{
			name:   "unknown finish_reason is stop",
			events: []string{`{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"eos"}]}`, doneEvent},
			want:   []dsh.AssistantChunk{dsh.ChunkTextDelta{Text: "x"}, dsh.ChunkFinish{Reason: dsh.FinishReasonStop}},
		},
		{
			name: "tool call without id gets one",
			events: []string{`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":3,"function":{"name":"A","arguments":"{}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, doneEvent},
			want: []dsh.AssistantChunk{dsh.ChunkToolCall{ID: "call_3", Name: "A", Arguments: `{}`}, dsh.ChunkFinish{Reason: dsh.FinishReasonToolCalls}},
		},
		{
			name:   "string reasoning field",
			events: []string{`{"choices":[{"index":0,"delta":{"reasoning":"r","content":"t"},"finish_reason":"stop"}]}`, doneEvent},
			want:   []dsh.AssistantChunk{dsh.ChunkReasoningDelta{Text: "r"}, dsh.ChunkTextDelta{Text: "t"}, dsh.ChunkFinish{Reason: dsh.FinishReasonStop}},
		},
		{
			name:   "other choices are ignored",
			events: []string{`{"choices":[{"index":1,"delta":{"content":"other"}},{"index":0,"delta":{"content":"mine"},"finish_reason":"stop"}]}`, doneEvent},
			want:   []dsh.AssistantChunk{dsh.ChunkTextDelta{Text: "mine"}, dsh.ChunkFinish{Reason: dsh.FinishReasonStop}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newOpenAITest(t, func(w http.ResponseWriter, r *http.Request) {
				streamHeaders(w)
				writeSSE(w, tt.events...)
			})
			got, err := drain(m.Stream(context.Background(), simpleRequest()))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestOpenAISSEFraming(t *testing.T) {
	m := newOpenAITest(t, func(w http.ResponseWriter, r *http.Request) {
		streamHeaders(w)
		io.WriteString(w, ": keep-alive\r\n\r\n")
		io.WriteString(w, "event: message\r\ndata:{\"choices\":[{\"index\":0,\r\ndata: \"delta\":{\"content\":\"a\"}}]}\r\n\r\n")
		io.WriteString(w, "retry: 100\n\n")
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"},\"finish_reason\":\"stop\"}]}\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
	})
	resp, err := llm.Collect(m.Stream(context.Background(), simpleRequest()))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "ab" || resp.Finish.Reason != dsh.FinishReasonStop {
		t.Errorf("got %+v", resp)
	}
}

func TestOpenAIRateLimited(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		wantMS *int
	}{
		{"seconds", map[string]string{"Retry-After": "2"}, ptr(2000)},
		{"fractional seconds", map[string]string{"Retry-After": "0.25"}, ptr(250)},
		{"http date", map[string]string{"Retry-After": now.Add(3 * time.Second).Format(http.TimeFormat)}, ptr(3000)},
		{"past http date", map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, ptr(0)},
		{"retry-after-ms wins", map[string]string{"Retry-After-Ms": "1234", "Retry-After": "9"}, ptr(1234)},
		{"garbage", map[string]string{"Retry-After": "soon"}, nil},
		{"absent", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newOpenAITest(t, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				w.Header().Set("X-Request-Id", "req_abc123")
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusTooManyRequests)
				io.WriteString(w, `{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`)
			})
			m.now = func() time.Time { return now }
			got, err := drain(m.Stream(context.Background(), simpleRequest()))
			if err != nil {
				t.Fatal(err)
			}
			want := []dsh.AssistantChunk{dsh.ChunkFinish{Reason: dsh.FinishReasonError, Error: &dsh.LLMFailure{
				Message:              "Rate limit reached for requests",
				Code:                 "rate_limit_exceeded",
				Status:               ptr(429),
				ProviderRetryAfterMS: tt.wantMS,
				RequestID:            ptr("req_abc123"),
			}}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestOpenAIServerErrors(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		contentType string
		body        string
		want        dsh.LLMFailure
	}{
		{
			name: "500 with a JSON error body", status: 500, contentType: "application/json",
			body: `{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}`,
			want: dsh.LLMFailure{Message: "The server had an error while processing your request.", Code: "server_error", Status: ptr(500)},
		},
		{
			name: "400 with a numeric code", status: 400, contentType: "application/json",
			body: `{"error":{"message":"bad tools","code":40001}}`,
			want: dsh.LLMFailure{Message: "bad tools", Code: "40001", Status: ptr(400)},
		},
		{
			name: "400 context length exceeded", status: 400, contentType: "application/json",
			body: `{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
			want: dsh.LLMFailure{Message: "This model's maximum context length is 8192 tokens.", Code: llm.CodeContextWindowExceeded, Status: ptr(400)},
		},
		{
			name: "string error", status: 401, contentType: "application/json",
			body: `{"error":"invalid api key"}`,
			want: dsh.LLMFailure{Message: "openai-chat: authentication failed (401): invalid api key; check OPENAI_API_KEY", Code: "HTTP_401", Status: ptr(401)},
		},
		{
			name: "502 with an HTML body", status: 502, contentType: "text/html",
			body: "<html>Bad Gateway</html>\n",
			want: dsh.LLMFailure{Message: "<html>Bad Gateway</html>", Code: "HTTP_502", Status: ptr(502)},
		},
		{
			name: "503 with no body but retry-after", status: 503,
			want: dsh.LLMFailure{Message: "503 Service Unavailable", Code: "HTTP_503", Status: ptr(503), ProviderRetryAfterMS: ptr(5000)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newOpenAITest(t, func(w http.ResponseWriter, r *http.Request) {
				if tt.contentType != "" {
					w.Header().Set("Content-Type", tt.contentType)
				}
				if tt.status == 503 {
					w.Header().Set("Retry-After", "5")
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			})
			resp, err := llm.Collect(m.Stream(context.Background(), simpleRequest()))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Finish.Reason != dsh.FinishReasonError {
				t.Fatalf("finish = %+v", resp.Finish)
			}
			if diff := cmp.Diff(tt.want, *resp.Finish.Error); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestOpenAIErrorInsideStream(t *testing.T) {
	tests := []struct {
		name   string
		raw    string
		reason dsh.FinishReason
		want   dsh.LLMFailure
	}{
		{"error object", "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"pa\"}}]}\n\ndata: {\"error\":{\"message\":\"overloaded\",\"code\":\"overloaded_error\"}}\n\n",
			dsh.FinishReasonError, dsh.LLMFailure{Message: "overloaded", Code: "overloaded_error", RequestID: ptr("rid")}},
		{"error event", "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"pa\"}}]}\n\nevent: error\ndata: {\"message\":\"quota\",\"type\":\"insufficient_quota\"}\n\n",
			dsh.FinishReasonError, dsh.LLMFailure{Message: "quota", Code: "insufficient_quota", RequestID: ptr("rid")}},
		{"undecodable event", "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"pa\"}}]}\n\ndata: {not json}\n\n",
			dsh.FinishReasonError, dsh.LLMFailure{Code: llm.CodeBadResponse, RequestID: ptr("rid")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newOpenAITest(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Request-Id", "rid")
				streamHeaders(w)
				io.WriteString(w, tt.raw)
			})
			resp, err := llm.Collect(m.Stream(context.Background(), simpleRequest()))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != "pa" || resp.Finish.Reason != tt.reason {
				t.Fatalf("got %+v", resp)
			}
			got := *resp.Finish.Error
			if tt.want.Message == "" {
				got.Message = ""
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestOpenAIJSONBodyWhereStreamExpected(t *testing.T) {
	m := newOpenAITest(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		io.WriteString(w, `{"id":"x","choices":[{"message":{"content":"hi"}}]}`)
	})
	resp, err := llm.Collect(m.Stream(context.Background(), simpleRequest()))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Finish.Reason != dsh.FinishReasonError || resp.Finish.Error.Code != llm.CodeBadResponse {
		t.Errorf("finish = %+v", resp.Finish)
	}
}

func TestOpenAIMidStreamDisconnect(t *testing.T) {
	partial := []string{
		`{"choices":[{"index":0,"delta":{"content":"Running it."}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"Bash","arguments":"{\"command\":"}}]}}]}`,
	}
	tests := []struct {
		name  string
		abort bool
	}{
		{"connection aborted", true},
		{"body ended cleanly", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newOpenAITest(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Request-Id", "req_mid")
				streamHeaders(w)
				writeSSE(w, partial...)
				io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"argu`)
				w.(http.Flusher).Flush()
				if tt.abort {
					panic(http.ErrAbortHandler)
				}
			})
			got, err := drain(m.Stream(context.Background(), simpleRequest()))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 {
				t.Fatalf("got %d chunks: %+v", len(got), got)
			}
			if diff := cmp.Diff(dsh.AssistantChunk(dsh.ChunkTextDelta{Text: "Running it."}), got[0]); diff != "" {
				t.Errorf("first chunk (-want +got):\n%s", diff)
			}
			f, ok := got[1].(dsh.ChunkFinish)
			if !ok || f.Reason != dsh.FinishReasonError || f.Error == nil {
				t.Fatalf("last chunk = %+v", got[1])
			}
			if f.Error.Code != llm.CodeStreamInterrupted || f.Error.Status != nil || f.Error.RequestID == nil || *f.Error.RequestID != "req_mid" {
				t.Errorf("failure = %+v", *f.Error)
			}
		})
	}
}

func TestOpenAICancelDuringSlowStream(t *testing.T) {
	handlerDone := make(chan struct{})
	m := newOpenAITest(t, func(w http.ResponseWriter, r *http.Request) {
		defer close(handlerDone)
		streamHeaders(w)
		writeSSE(w, `{"choices":[{"index":0,"delta":{"content":"slow "}}]}`)
		// Then nothing until the client goes away.
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []dsh.AssistantChunk
	var cancelledAt time.Time
	for c, err := range m.Stream(ctx, simpleRequest()) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, c)
		if len(got) == 1 {
			cancelledAt = time.Now()
			cancel()
		}
	}
	if d := time.Since(cancelledAt); d > 2*time.Second {
		t.Errorf("stream took %v to end after cancel", d)
	}
	want := []dsh.AssistantChunk{
		dsh.ChunkTextDelta{Text: "slow "},
		dsh.ChunkFinish{Reason: dsh.FinishReasonAborted, Error: &dsh.LLMFailure{Message: "context canceled", Code: llm.CodeAborted}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	select {
	case <-handlerDone:
	case <-time.After(5 * time.Second):
		t.Error("server never saw the client go away")
	}
}

func TestOpenAICancelBeforeResponse(t *testing.T) {
	m := newOpenAITest(t, func(w http.ResponseWriter, r *http.Request) {
		// The server notices a closed connection only once the body has been read.
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	resp, err := llm.Collect(m.Stream(ctx, simpleRequest()))
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
	want := dsh.ChunkFinish{Reason: dsh.FinishReasonAborted, Error: &dsh.LLMFailure{Message: "context deadline exceeded", Code: llm.CodeAborted}}
	if diff := cmp.Diff(want, resp.Finish); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestOpenAIConsumerBreakClosesTheResponse(t *testing.T) {
	gone := make(chan struct{})
	m := newOpenAITest(t, func(w http.ResponseWriter, r *http.Request) {
		streamHeaders(w)
		writeSSE(w, `{"choices":[{"index":0,"delta":{"content":"a"}}]}`)
		select {
		case <-r.Context().Done():
			close(gone)
		case <-time.After(30 * time.Second):
		}
	})
	for range m.Stream(context.Background(), simpleRequest()) {
		break
	}
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Error("response body was not closed after the consumer stopped")
	}
}

func TestOpenAITransportError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL
	srv.Close()
	m, err := NewOpenAIChat(OpenAIChatConfig{BaseURL: base, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	chunks, err := drain(m.Stream(context.Background(), simpleRequest()))
	if err == nil || len(chunks) != 0 {
		t.Fatalf("chunks %+v, err %v", chunks, err)
	}
	if f := llm.AsFailure(err); f.Code != llm.CodeNetwork {
		t.Errorf("AsFailure = %+v", f)
	}
}

func TestOpenAIInvalidRequest(t *testing.T) {
	m, err := NewOpenAIChat(OpenAIChatConfig{BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	for name, req := range map[string]llm.Request{
		"no model":  simpleRequest(),
		"bad extra": {Config: dsh.LLMCallConfig{Model: "m", Extra: map[string]json.RawMessage{"x": json.RawMessage(`{`)}}},
		"bad role":  {Config: dsh.LLMCallConfig{Model: "m"}, Messages: []llm.Message{{Role: "system"}}},
	} {
		t.Run(name, func(t *testing.T) {
			chunks, err := drain(m.Stream(context.Background(), req))
			var fe *llm.FailureError
			if len(chunks) != 0 || !errors.As(err, &fe) || llm.AsFailure(err).Code != llm.CodeInvalidRequest {
				t.Errorf("chunks %+v, err %v", chunks, err)
			}
		})
	}
}

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

func chatDelta(content string) string {
	c, _ := json.Marshal(content)
	return `{"choices":[{"index":0,"delta":{"content":` + string(c) + `},"finish_reason":null}]}`
}

func init() {
	stop := `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
	fixtures = append(fixtures, providerFixture{
		name: "openai-chat",
		newModel: func(t *testing.T, baseURL string, timeout time.Duration) llm.Model {
			m, err := NewOpenAIChat(OpenAIChatConfig{BaseURL: baseURL + "/v1", Model: "test-model", APIKey: "sk-test", Timeout: timeout})
			if err != nil {
				t.Fatal(err)
			}
			return m
		},
		text:         sse([2]string{"", chatDelta("Hello")}, [2]string{"", stop}, [2]string{"", "[DONE]"}),
		textPrefix:   sse([2]string{"", chatDelta("Hel")}),
		unknownEvent: sse([2]string{"", chatDelta("Hel")}, [2]string{"future", `{"object":"future.thing","x":1}`}, [2]string{"", chatDelta("lo")}, [2]string{"", stop}, [2]string{"", "[DONE]"}),
		badArgs: sse([2]string{"", `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"Bash","arguments":"{not json"}}]}}]}`},
			[2]string{"", `{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`}, [2]string{"", "[DONE]"}),
		bigText: func(text string) string {
			return sse([2]string{"", chatDelta(text)}, [2]string{"", stop}, [2]string{"", "[DONE]"})
		},
		errorBody:    `{"error":{"message":"The server had an error","type":"server_error"}}`,
		errorMessage: "The server had an error",
	})
}
