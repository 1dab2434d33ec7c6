package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

// wireShapes are the pieces of each provider's event stream the cap tests repeat without
// end: what comes first, a text delta, a tool call's opening and one of its argument
// deltas (empty where the wire sends a call's arguments whole), a call whose arguments
// are args, whole, and the i-th of a series of complete tool calls.
type wireShapes struct {
	spec                  string // --model value
	prefix, text          string
	argsOpen, argsDelta   string
	wholeCall             func(args string) string
	call                  func(i int, args string) string
	keyHeader, keyPresent string // the header carrying the API key, and its value
}

func shapes() []wireShapes {
	bigArgs := func(args string) string { b, _ := json.Marshal(args); return string(b) }
	return []wireShapes{
		{
			spec: "anthropic:claude-test",
			prefix: sse([2]string{"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}`},
				[2]string{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`}),
			text:      sse([2]string{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"0123456789abcdef"}}`}),
			argsOpen:  sse([2]string{"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}}`}),
			argsDelta: sse([2]string{"content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"aaaaaaaaaaaaaaaaaaaa"}}`}),
			wholeCall: func(args string) string {
				return sse(append(anthropicTool(1, "toolu_1", "Bash", args),
					[2]string{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":7}}`},
					[2]string{"message_stop", `{"type":"message_stop"}`})...)
			},
			call: func(i int, args string) string {
				return sse(anthropicTool(1+i%9, fmt.Sprintf("toolu_%d", i), "Bash", args)...) // a one-digit index, reused
			},
			keyHeader: "X-Api-Key", keyPresent: "sk-ant-test",
		},
		{
			spec:      "openai-chat:test-model",
			text:      sse([2]string{"", chatDelta("0123456789abcdef")}),
			argsOpen:  sse([2]string{"", `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"Bash","arguments":""}}]}}]}`}),
			argsDelta: sse([2]string{"", `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"aaaaaaaaaaaaaaaaaaaa"}}]}}]}`}),
			wholeCall: func(args string) string {
				return sse([2]string{"", `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"Bash","arguments":` + bigArgs(args) + `}}]}}]}`},
					[2]string{"", `{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`})
			},
			call: func(i int, args string) string {
				return sse([2]string{"", fmt.Sprintf(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":%d,"id":"call_%d","type":"function","function":{"name":"Bash","arguments":%s}}]}}]}`, i, i, bigArgs(args))})
			},
			keyHeader: "Authorization", keyPresent: "Bearer sk-test",
		},
		{
			spec:   "openai:gpt-5",
			prefix: sse(respEvent("response.created", `,"response":{"id":"resp_1"}`)),
			text:   sse(respTextDelta("0123456789abcdef")),
			wholeCall: func(args string) string {
				return sse(respEvent("response.output_item.done", `,"output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"Bash","arguments":`+bigArgs(args)+`}`), respCompleted)
			},
			call: func(i int, args string) string {
				return sse(respEvent("response.output_item.done", fmt.Sprintf(`,"output_index":%d,"item":{"type":"function_call","id":"fc_%d","call_id":"call_%d","name":"Bash","arguments":%s}`, i, i, i, bigArgs(args))))
			},
			keyHeader: "Authorization", keyPresent: "Bearer sk-test",
		},
		{
			spec: "gemini:gemini-test",
			text: sse(gemText("0123456789abcdef", "")),
			wholeCall: func(args string) string {
				return sse([2]string{"", `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"Bash","args":{"command":` + bigArgs(args) + `}}}]},"finishReason":"STOP","index":0}]}`})
			},
			call: func(i int, args string) string {
				return sse([2]string{"", fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"call_%d","name":"Bash","args":{"command":%s}}}]},"index":0}]}`, i, bigArgs(args))})
			},
			keyHeader: "X-Goog-Api-Key", keyPresent: "gem-test",
		},
	}
}

// capEnv points every provider at base.
func capEnv(base string) func(string) string {
	return envOf(map[string]string{EnvAnthropicAPIKey: "sk-ant-test", EnvAnthropicBaseURL: base,
		EnvOpenAIAPIKey: "sk-test", EnvOpenAIBaseURL: base + "/v1", EnvGeminiAPIKey: "gem-test", EnvGeminiBaseURL: base})
}

// endless serves head, then body repeated until the client goes away or bound bytes were
// written; it counts what it wrote.
func endless(head, body string, bound int64, wrote *atomic.Int64) http.HandlerFunc {
	return endlessSeq(head, func(int) string { return body }, bound, wrote)
}

// endlessSeq is endless with a body that changes: next(1), next(2), ...
func endlessSeq(head string, next func(i int) string, bound int64, wrote *atomic.Int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		n, err := io.WriteString(w, head)
		wrote.Add(int64(n))
		for i := 1; err == nil && wrote.Load() < bound; {
			var chunk strings.Builder
			for ; chunk.Len() < 64<<10; i++ {
				chunk.WriteString(next(i))
			}
			n, err = io.WriteString(w, chunk.String())
			wrote.Add(int64(n))
		}
	}
}

// TestResponseCaps: a response that never ends, in each of the ways a server can send
// one, fails its call with RESPONSE_TOO_LARGE once it crosses its cap, having read little
// more than the cap, for every provider; no goroutine is left behind.
func TestResponseCaps(t *testing.T) {
	const bound = 1 << 30 // what the server would send: far past every cap
	limits := Limits{ResponseBytes: 4 << 20, EventBytes: 1 << 20, ToolArgumentBytes: 256 << 10}
	for _, sh := range shapes() {
		cases := map[string]struct {
			head, body string
			want       string // what the message names
		}{
			"endless text deltas": {sh.prefix, sh.text, "response exceeded"},
			"one endless event":   {sh.prefix + "data: {", strings.Repeat("x", 1000) + "\ndata: ", "event exceeded"},
		}
		if sh.argsDelta != "" {
			cases["endless argument deltas"] = struct{ head, body, want string }{sh.prefix + sh.argsOpen, sh.argsDelta, "tool call arguments exceeded"}
		}
		for name, tc := range cases {
			t.Run(sh.spec+"/"+name, func(t *testing.T) {
				before := runtime.NumGoroutine()
				var wrote atomic.Int64
				srv := httptest.NewServer(endless(tc.head, tc.body, bound, &wrote))
				resp := capCall(t, sh.spec, srv.URL, limits)
				srv.Close()
				wantCapped(t, resp, tc.want)
				// The server's writes are buffered by the kernel and the client: a few MB
				// past the cap, never the gigabyte it would send.
				if w := wrote.Load(); w > 64<<20 {
					t.Errorf("the server wrote %d bytes before the call ended", w)
				}
				checkNoLeak(t, before)
			})
		}
		// Tool calls without end, each well under its own cap: what dsh holds of them, or
		// their number, ends the call.
		for name, tc := range map[string]struct {
			args   string
			limits Limits
			want   string
		}{
			"endless tool calls":            {`{}`, Limits{Blocks: 100}, "more than 100 content blocks and tool calls"},
			"endless tool calls' arguments": {`{"command":"` + strings.Repeat("a", 4096) + `"}`, Limits{ContentBytes: 1 << 20}, "text, reasoning and tool calls exceeded 1048576 bytes"},
		} {
			t.Run(sh.spec+"/"+name, func(t *testing.T) {
				before := runtime.NumGoroutine()
				var wrote atomic.Int64
				srv := httptest.NewServer(endlessSeq(sh.prefix, func(i int) string { return sh.call(i, tc.args) }, bound, &wrote))
				resp := capCall(t, sh.spec, srv.URL, tc.limits)
				srv.Close()
				wantCapped(t, resp, tc.want)
				// The server's writes are buffered by the kernel and the client: a few MB
				// past the cap, never the gigabyte it would send.
				if w := wrote.Load(); w > 64<<20 {
					t.Errorf("the server wrote %d bytes before the call ended", w)
				}
				checkNoLeak(t, before)
			})
		}
		t.Run(sh.spec+"/an endless error body", func(t *testing.T) {
			var wrote atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusInternalServerError)
				endless(`{"error":{"message":"`, strings.Repeat("x", 4096), bound, &wrote)(w, r)
			}))
			resp := capCall(t, sh.spec, srv.URL, limits)
			srv.Close()
			wantCapped(t, resp, "exceeded")
			if w := wrote.Load(); w > 64<<20 {
				t.Errorf("the server wrote %d bytes before the call ended", w)
			}
		})
		t.Run(sh.spec+"/one call's arguments over the cap", func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, sh.prefix+sh.wholeCall(strings.Repeat("a", 300<<10)))
			}))
			defer srv.Close()
			wantCapped(t, capCall(t, sh.spec, srv.URL, limits), "tool call arguments exceeded")
		})
		t.Run(sh.spec+"/under the caps", func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, sh.prefix+sh.wholeCall(strings.Repeat("a", 200<<10)))
			}))
			defer srv.Close()
			resp := capCall(t, sh.spec, srv.URL, limits)
			if len(resp.ToolCalls) != 1 || resp.Finish.Reason == dsh.FinishReasonError {
				t.Errorf("calls %d, finish %+v", len(resp.ToolCalls), resp.Finish)
			}
		})
	}
}

func capCall(t *testing.T, spec, base string, limits Limits) llm.Response {
	t.Helper()
	m, _, err := Builtin().Open(spec, Options{Getenv: capEnv(base), Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := llm.Collect(m.Stream(context.Background(), simpleReq()))
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	return resp
}

func wantCapped(t *testing.T, resp llm.Response, msg string) {
	t.Helper()
	if resp.Finish.Reason != dsh.FinishReasonError || resp.Finish.Error == nil {
		t.Fatalf("finish %+v, want an error", resp.Finish)
	}
	if f := resp.Finish.Error; f.Code != llm.CodeResponseTooLarge || !strings.Contains(f.Message, msg) {
		t.Errorf("failure %s %q, want %s naming %q", f.Code, f.Message, llm.CodeResponseTooLarge, msg)
	}
	if llm.Retryable(*resp.Finish.Error) {
		t.Error("a capped response is retried")
	}
}

// TestRedirectKeepsCredentials: an endpoint that redirects to another origin gets no
// request from dsh at the other origin, whatever the provider: the call fails with
// REDIRECT_REFUSED naming both; a redirect within the endpoint's origin is followed.
func TestRedirectKeepsCredentials(t *testing.T) {
	for _, sh := range shapes() {
		t.Run(sh.spec, func(t *testing.T) {
			var elsewhere atomic.Int32
			var leaked atomic.Value
			other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				elsewhere.Add(1)
				leaked.Store(r.Header.Get(sh.keyHeader))
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, sh.prefix+sh.wholeCall(`{"command":"ls"}`))
			}))
			defer other.Close()
			var sameOrigin atomic.Int32
			endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.URL.Query().Get("moved") != "":
					sameOrigin.Add(1)
					if got := r.Header.Get(sh.keyHeader); got != sh.keyPresent {
						t.Errorf("same-origin hop: %s = %q", sh.keyHeader, got)
					}
					w.Header().Set("Content-Type", "text/event-stream")
					_, _ = io.WriteString(w, sh.prefix+sh.wholeCall(`{"command":"ls"}`))
				default:
					http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
				}
			}))
			defer endpoint.Close()
			resp := capCall(t, sh.spec, endpoint.URL, Limits{})
			if n := elsewhere.Load(); n != 0 {
				t.Errorf("the other origin got %d requests (%s: %v)", n, sh.keyHeader, leaked.Load())
			}
			if f := resp.Finish.Error; f == nil || f.Code != llm.CodeRedirectRefused || !strings.Contains(f.Message, other.URL) || !strings.Contains(f.Message, endpoint.URL) {
				t.Errorf("finish %+v, want %s naming both origins", resp.Finish, llm.CodeRedirectRefused)
			}

			same := httptest.NewServer(nil)
			same.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Query().Get("moved") == "" {
					http.Redirect(w, r, r.URL.Path+"?moved=1", http.StatusTemporaryRedirect)
					return
				}
				endpoint.Config.Handler.ServeHTTP(w, r)
			})
			defer same.Close()
			resp = capCall(t, sh.spec, same.URL, Limits{})
			if resp.Finish.Reason == dsh.FinishReasonError || sameOrigin.Load() != 1 {
				t.Errorf("same-origin redirect: finish %+v, hops %d", resp.Finish, sameOrigin.Load())
			}
		})
	}
}

// TestSameOriginRedirects checks the redirect rule alone: origins compare scheme, host and
// port (a default port written out is the same origin), and the client's own check still
// applies within an origin.
func TestSameOriginRedirects(t *testing.T) {
	req := func(u string) *http.Request { r, _ := http.NewRequest("GET", u, nil); return r }
	check := sameOriginRedirects(nil)
	for _, tc := range []struct {
		from, to string
		ok       bool
	}{
		{"https://api.example/v1", "https://api.example/v2", true},
		{"https://api.example/v1", "https://API.example:443/v2", true},
		{"https://api.example/v1", "http://api.example/v1", false},
		{"https://api.example/v1", "https://api.example:8443/v1", false},
		{"https://api.example/v1", "https://evil.example/v1?key=1", false},
	} {
		err := check(req(tc.to), []*http.Request{req(tc.from)})
		var re *RedirectError
		if tc.ok != (err == nil) || (!tc.ok && !errors.As(err, &re)) {
			t.Errorf("%s → %s: %v", tc.from, tc.to, err)
		}
		if re != nil && strings.Contains(re.Error(), "key=1") {
			t.Errorf("the error shows the query: %v", re)
		}
	}
	stop := errors.New("stop")
	if err := sameOriginRedirects(func(*http.Request, []*http.Request) error { return stop })(req("https://a/x"), []*http.Request{req("https://a/")}); !errors.Is(err, stop) {
		t.Errorf("the client's own check is not applied: %v", err)
	}
}
