package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

// A providerFixture is what the shared provider tests need of one provider: a model
// pointed at a loopback server, and recorded response streams in its wire format.
type providerFixture struct {
	name string
	// newModel returns a model sending to baseURL, each call bounded by timeout.
	newModel func(t *testing.T, baseURL string, timeout time.Duration) llm.Model
	// text is a whole stream answering the text "Hello".
	text string
	// textPrefix is a stream cut after the text "Hel" (no terminal event).
	textPrefix string
	// unknownEvent is text "Hello" with an event of a type the provider does not know in
	// the middle.
	unknownEvent string
	// badArgs is a whole stream with one tool call "Bash" whose arguments are "{not json".
	badArgs string
	// badArgsFails says the wire cannot carry such arguments: the response is then
	// malformed (an error finish) instead.
	badArgsFails bool
	// bigText is a whole stream with one text delta of text.
	bigText func(text string) string
	// errorBody is a JSON error body (sent with status 200).
	errorBody, errorMessage string
}

// sseServer serves body as an event stream and records the request bodies.
type sseServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
}

func serveSSE(t *testing.T, status int, contentType string, body func(w http.ResponseWriter, r *http.Request)) *sseServer {
	t.Helper()
	s := &sseServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.bodies = append(s.bodies, data)
		s.mu.Unlock()
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		body(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func writeBody(text string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, text) }
}

func (s *sseServer) body(t *testing.T, i int) map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= len(s.bodies) {
		t.Fatalf("request %d not received (%d)", i, len(s.bodies))
	}
	var m map[string]any
	if err := json.Unmarshal(s.bodies[i], &m); err != nil {
		t.Fatalf("request body: %v", err)
	}
	return m
}

// sse renders events as an event stream: each is [event type, data] (an empty type
// writes no event line).
func sse(events ...[2]string) string {
	var b strings.Builder
	for _, e := range events {
		if e[0] != "" {
			fmt.Fprintf(&b, "event: %s\n", e[0])
		}
		fmt.Fprintf(&b, "data: %s\n\n", e[1])
	}
	return b.String()
}

// checkNoLeak fails t if goroutines started during the test are still running after the
// servers closed (polled for a while: closing connections takes a moment).
func checkNoLeak(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= before {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			buf = buf[:runtime.Stack(buf, true)]
			t.Errorf("goroutines: %d before, %d after\n%s", before, n, buf)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var fixtures []providerFixture

func simpleReq() llm.Request {
	return llm.Request{Config: dsh.LLMCallConfig{Model: "test-model"}, System: "Be brief.", Messages: []llm.Message{userText("hi")}}
}

// TestProvidersBadInput: every provider turns each bad response into a normalized,
// recorded outcome (a finish whose failure has a code, or complete chunks), and leaks no
// goroutine.
func TestProvidersBadInput(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			run := func(t *testing.T, status int, ctype string, body func(http.ResponseWriter, *http.Request), timeout time.Duration) llm.Response {
				t.Helper()
				srv := serveSSE(t, status, ctype, body)
				m := fx.newModel(t, srv.URL, timeout)
				resp, err := llm.Collect(m.Stream(context.Background(), simpleReq()))
				if err != nil {
					t.Fatalf("stream: %v", err)
				}
				return resp
			}
			wantFailure := func(t *testing.T, resp llm.Response, code string) {
				t.Helper()
				if resp.Finish.Reason != dsh.FinishReasonError || resp.Finish.Error == nil {
					t.Fatalf("finish = %+v, want an error", resp.Finish)
				}
				if code != "" && resp.Finish.Error.Code != code {
					t.Errorf("code = %q (%s), want %q", resp.Finish.Error.Code, resp.Finish.Error.Message, code)
				}
			}
			before := runtime.NumGoroutine()
			t.Run("text", func(t *testing.T) {
				resp := run(t, 200, "text/event-stream", writeBody(fx.text), 0)
				if resp.Text != "Hello" || resp.Finish.Reason != dsh.FinishReasonStop {
					t.Errorf("got %q, finish %+v", resp.Text, resp.Finish)
				}
			})
			t.Run("malformed SSE", func(t *testing.T) {
				resp := run(t, 200, "text/event-stream", writeBody(fx.textPrefix+"data: {not json\n\n"), 0)
				wantFailure(t, resp, "")
				if c := resp.Finish.Error.Code; c != llm.CodeBadResponse && c != llm.CodeStreamInterrupted {
					t.Errorf("code %q", c)
				}
			})
			t.Run("truncated stream", func(t *testing.T) {
				resp := run(t, 200, "text/event-stream", writeBody(fx.textPrefix), 0)
				wantFailure(t, resp, llm.CodeStreamInterrupted)
				if resp.Text != "Hel" {
					t.Errorf("text before the cut = %q", resp.Text)
				}
			})
			t.Run("unknown event type", func(t *testing.T) {
				resp := run(t, 200, "text/event-stream", writeBody(fx.unknownEvent), 0)
				if resp.Text != "Hello" || resp.Finish.Reason != dsh.FinishReasonStop {
					t.Errorf("got %q, finish %+v", resp.Text, resp.Finish)
				}
			})
			t.Run("tool arguments not JSON", func(t *testing.T) {
				resp := run(t, 200, "text/event-stream", writeBody(fx.badArgs), 0)
				if fx.badArgsFails {
					wantFailure(t, resp, llm.CodeBadResponse)
					return
				}
				if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Arguments != "{not json" || resp.Finish.Reason != dsh.FinishReasonToolCalls {
					t.Errorf("calls %+v, finish %+v", resp.ToolCalls, resp.Finish)
				}
			})
			t.Run("200 with an error body", func(t *testing.T) {
				resp := run(t, 200, "application/json", writeBody(fx.errorBody), 0)
				wantFailure(t, resp, "")
				if !strings.Contains(resp.Finish.Error.Message, fx.errorMessage) {
					t.Errorf("message %q, want %q in it", resp.Finish.Error.Message, fx.errorMessage)
				}
			})
			t.Run("10 MB text delta", func(t *testing.T) {
				big := strings.Repeat("abcdefghij", 1<<20)
				resp := run(t, 200, "text/event-stream", writeBody(fx.bigText(big)), 0)
				if resp.Text != big || resp.Finish.Reason != dsh.FinishReasonStop {
					t.Errorf("got %d bytes, finish %+v", len(resp.Text), resp.Finish)
				}
			})
			t.Run("server never answers", func(t *testing.T) {
				release := make(chan struct{})
				defer close(release)
				start := time.Now()
				resp := run(t, 200, "text/event-stream", func(w http.ResponseWriter, r *http.Request) {
					select {
					case <-release:
					case <-r.Context().Done():
					}
				}, 300*time.Millisecond)
				wantFailure(t, resp, llm.CodeTimeout)
				if d := time.Since(start); d > 5*time.Second {
					t.Errorf("took %v", d)
				}
			})
			t.Run("cancel mid-stream", func(t *testing.T) {
				closed := make(chan time.Time, 1)
				srv := serveSSE(t, 200, "text/event-stream", func(w http.ResponseWriter, r *http.Request) {
					_, _ = io.WriteString(w, fx.textPrefix)
					w.(http.Flusher).Flush()
					<-r.Context().Done()
					closed <- time.Now()
				})
				m := fx.newModel(t, srv.URL, 0)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var resp llm.Response
				var asm llm.Assembler
				var cancelled time.Time
				for c, err := range m.Stream(ctx, simpleReq()) {
					if err != nil {
						t.Fatal(err)
					}
					_ = asm.Add(c)
					if d, ok := c.(dsh.ChunkTextDelta); ok && d.Text != "" && cancelled.IsZero() {
						cancelled = time.Now()
						cancel()
					}
				}
				resp = asm.Response()
				if resp.Finish.Reason != dsh.FinishReasonAborted {
					t.Errorf("finish %+v, want aborted", resp.Finish)
				}
				select {
				case at := <-closed:
					if d := at.Sub(cancelled); d > 100*time.Millisecond {
						t.Errorf("the server saw the stream closed %v after the cancel", d)
					}
				case <-time.After(2 * time.Second):
					t.Error("the server never saw the stream closed")
				}
			})
			checkNoLeak(t, before)
		})
	}
}

// TestProvidersPointerVariants: a request holding pointer variants (content blocks at any
// depth, message sources) sends every provider the same body, byte for byte, as the same
// request in value forms. The adapters switch over value forms only: the clone each one
// streams (llm.Request.Clone) is where pointer variants become values.
func TestProvidersPointerVariants(t *testing.T) {
	sig := "sig"
	values := llm.Request{Config: dsh.LLMCallConfig{Model: "test-model"}, System: "Be brief.", Messages: []llm.Message{
		{Role: llm.RoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "list files"}}, Source: dsh.SourceUser{}},
		{Role: llm.RoleAssistant, Content: []dsh.ContentBlock{
			dsh.ReasoningBlock{Text: "use bash", Signature: &sig},
			dsh.TextBlock{Text: "Let me check."},
			dsh.ToolCallBlock{ID: "call_1", Name: "Bash", Arguments: `{"command":"ls"}`},
		}, Source: dsh.SourceModel{Provider: "p", Model: "m"}},
		{Role: llm.RoleUser, Content: []dsh.ContentBlock{
			dsh.ToolResultBlock{ToolCallID: "call_1", Content: []dsh.ContentBlock{dsh.TextBlock{Text: "a.txt"}, dsh.ImageBlock{MediaType: "image/png", Data: "AAAA"}}},
		}, Source: dsh.SourceTool{CallID: "call_1"}},
		{Role: llm.RoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "a context"}}, Source: dsh.SourcePlugin{Plugin: "p"}},
		{Role: llm.RoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "what is this?"}, dsh.ImageBlock{MediaType: "image/jpeg", Data: "/9j/"}}},
	}}
	pointers := llm.Request{Config: values.Config, System: values.System, Messages: []llm.Message{
		{Role: llm.RoleUser, Content: []dsh.ContentBlock{&dsh.TextBlock{Text: "list files"}}, Source: &dsh.SourceUser{}},
		{Role: llm.RoleAssistant, Content: []dsh.ContentBlock{
			&dsh.ReasoningBlock{Text: "use bash", Signature: &sig},
			&dsh.TextBlock{Text: "Let me check."},
			&dsh.ToolCallBlock{ID: "call_1", Name: "Bash", Arguments: `{"command":"ls"}`},
		}, Source: &dsh.SourceModel{Provider: "p", Model: "m"}},
		{Role: llm.RoleUser, Content: []dsh.ContentBlock{
			&dsh.ToolResultBlock{ToolCallID: "call_1", Content: []dsh.ContentBlock{&dsh.TextBlock{Text: "a.txt"}, &dsh.ImageBlock{MediaType: "image/png", Data: "AAAA"}}},
		}, Source: &dsh.SourceTool{CallID: "call_1"}},
		{Role: llm.RoleUser, Content: []dsh.ContentBlock{&dsh.TextBlock{Text: "a context"}}, Source: &dsh.SourcePlugin{Plugin: "p"}},
		{Role: llm.RoleUser, Content: []dsh.ContentBlock{&dsh.TextBlock{Text: "what is this?"}, &dsh.ImageBlock{MediaType: "image/jpeg", Data: "/9j/"}}},
	}}
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			srv := serveSSE(t, http.StatusOK, "text/event-stream", writeBody(fx.text))
			m := fx.newModel(t, srv.URL, 10*time.Second)
			for _, req := range []llm.Request{values, pointers} {
				if _, err := llm.Collect(m.Stream(context.Background(), req)); err != nil {
					t.Fatal(err)
				}
			}
			srv.mu.Lock()
			defer srv.mu.Unlock()
			if len(srv.bodies) != 2 {
				t.Fatalf("%d requests, want 2", len(srv.bodies))
			}
			if v, p := string(srv.bodies[0]), string(srv.bodies[1]); v != p || !strings.Contains(v, "a.txt") {
				t.Errorf("body of pointer variants\n got: %s\nwant: %s", p, v)
			}
		})
	}
}
