// Tests of the OpenAI Chat Completions model's failures: rate limits, server errors,
// errors inside the stream, disconnects, cancellation and invalid requests.

package provider

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

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
