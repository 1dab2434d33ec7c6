package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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
