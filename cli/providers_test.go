package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// anthropicText is a whole Messages stream answering text.
func anthropicText(text string) string {
	return "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":9,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		fmt.Sprintf("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":%q}}\n\n", text) +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":3}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
}

// TestRunAnthropic: dsh run --model anthropic:… against a local Messages mock: an
// overloaded answer (529) is retried by the default agent/request-error listener, which
// stderr says, and the turn completes with the text (exit 0); a stream cut mid-way ends the turn in error
// (exit 1, a model failure) with its chunks logged but no assistant message.
func TestRunAnthropic(t *testing.T) {
	for _, tt := range []struct {
		name        string
		serve       func(n int32, w http.ResponseWriter)
		wantCalls   int32
		wantMessage bool
		wantLog     string
		wantExit    int
	}{
		{"overloaded then text", func(n int32, w http.ResponseWriter) {
			if n == 1 {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(529)
				io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, anthropicText("Hello from the mock"))
		}, 2, true, "Hello from the mock", 0},
		{"cut mid-stream", func(n int32, w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			full := anthropicText("Hello from the mock")
			io.WriteString(w, full[:strings.Index(full, "event: content_block_stop")])
		}, 1, false, "STREAM_INTERRUPTED", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !strings.HasSuffix(r.URL.Path, "/v1/messages") || r.Header.Get("X-Api-Key") != "sk-test" {
					http.Error(w, "unexpected "+r.URL.Path, 404)
					return
				}
				tt.serve(calls.Add(1), w)
			}))
			defer srv.Close()
			t.Setenv("ANTHROPIC_API_KEY", "sk-test")
			t.Setenv("ANTHROPIC_AUTH_TOKEN", "")
			t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
			dir := t.TempDir()
			logFile := filepath.Join(dir, "s.jsonl")
			var stdout, stderr bytes.Buffer
			code := Run(context.Background(), []string{"run", "--model", "anthropic:claude-test", "--workspace", dir, "--log", logFile, "hi"}, nil, &stdout, &stderr)
			if code != tt.wantExit {
				t.Fatalf("exit %d, want %d: %s", code, tt.wantExit, stderr.String())
			}
			// A retry is said on stderr, with its delay and the failure.
			const notice = "dsh run: retrying in 0 s (attempt 2): 529 overloaded_error: Overloaded\n"
			if retried := strings.Contains(stderr.String(), notice); retried != (tt.wantCalls > 1) || strings.Count(stderr.String(), "retrying") > 1 {
				t.Errorf("retry notice %q on stderr: %v, want %v\n%s", notice, retried, tt.wantCalls > 1, stderr.String())
			}
			if got := calls.Load(); got != tt.wantCalls {
				t.Errorf("%d calls, want %d", got, tt.wantCalls)
			}
			data, err := os.ReadFile(logFile)
			if err != nil {
				t.Fatal(err)
			}
			log := string(data)
			if got := strings.Contains(log, `"assistant/message"`); got != tt.wantMessage {
				t.Errorf("assistant/message logged: %v, want %v\n%s", got, tt.wantMessage, log)
			}
			if !strings.Contains(log, tt.wantLog) || !strings.Contains(log, `"assistant/chunk"`) {
				t.Errorf("log lacks %q or its chunks:\n%s", tt.wantLog, log)
			}
		})
	}
}

// TestRunGemini: one dsh run --model gemini:… session against a local Gemini API mock:
// the model calls Bash, the call runs in the workspace, its result goes back as a
// functionResponse with the call's thought signature, and the model answers.
func TestRunGemini(t *testing.T) {
	var calls atomic.Int32
	var second []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/models/gemini-test:streamGenerateContent") || r.Header.Get("X-Goog-Api-Key") != "gem-key" {
			http.Error(w, "unexpected "+r.URL.Path, 404)
			return
		}
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		if calls.Add(1) == 1 {
			io.WriteString(w, `data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"c1","name":"Bash","args":{"command":"echo made > made.txt","description":"make a file"}},"thoughtSignature":"U0lH"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":50,"candidatesTokenCount":8}}`+"\n\n")
			return
		}
		second = body
		io.WriteString(w, `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Made the file."}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":70,"candidatesTokenCount":4}}`+"\n\n")
	}))
	defer srv.Close()
	t.Setenv("GEMINI_API_KEY", "gem-key")
	t.Setenv("GOOGLE_GEMINI_BASE_URL", srv.URL)
	dir := t.TempDir()
	logFile := filepath.Join(dir, "s.jsonl")
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), []string{"run", "--model", "gemini:gemini-test", "--workspace", dir, "--log", logFile, "make a file"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if data, err := os.ReadFile(filepath.Join(dir, "made.txt")); err != nil || string(data) != "made\n" {
		t.Errorf("made.txt: %q, %v", data, err)
	}
	if calls.Load() != 2 {
		t.Errorf("%d calls, want 2", calls.Load())
	}
	for _, want := range []string{`"functionResponse":{"id":"c1","name":"Bash","response":{"output":"(no output)"}}`, `"thoughtSignature":"U0lH"`} {
		if !strings.Contains(string(second), want) {
			t.Errorf("second request lacks %s:\n%s", want, second)
		}
	}
	log, _ := os.ReadFile(logFile)
	if !strings.Contains(string(log), "Made the file.") || !strings.Contains(string(log), `"tool/result"`) {
		t.Errorf("log:\n%s", log)
	}
}

// TestRunOpenAIAlias: the bare --model openai is chat completions with the model of
// OPENAI_MODEL, and a local server needs no key.
func TestRunOpenAIAlias(t *testing.T) {
	var model, auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.Error(w, "unexpected "+r.URL.Path, 404)
			return
		}
		var body struct {
			Model string `json:"model"`
		}
		data, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(data, &body)
		model, auth = body.Model, r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"chat says hi\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_MODEL", "llama-local")
	t.Setenv("OPENAI_API_KEY", "")
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), []string{"run", "--model", "openai", "--workspace", dir, "hi"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if model != "llama-local" || auth != "" || !strings.Contains(stderr.String(), "chat says hi") {
		t.Errorf("model %q, authorization %q, transcript:\n%s", model, auth, stderr.String())
	}
}
