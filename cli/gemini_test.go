package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestRunGeminiHooks: a Gemini CLI hooks setup (settings.json) under dsh run --dialect
// gemini against a local Gemini API mock, end to end: SessionStart's context reaches the
// model, BeforeModel sees every request (and its $GEMINI_CWD), a JSON deny printed on
// stderr with exit 0 stops the model's rm, and an AfterAgent deny sends the model round
// once more with its reason as the prompt.
func TestRunGeminiHooks(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/models/gemini-test:streamGenerateContent") {
			http.Error(w, "unexpected "+r.URL.Path, 404)
			return
		}
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(body))
		n := len(bodies)
		mu.Unlock()
		shell := "Bash"
		if strings.Contains(string(body), `"run_shell_command"`) {
			shell = "run_shell_command"
		}
		w.Header().Set("Content-Type", "text/event-stream")
		switch n {
		case 1:
			io.WriteString(w, `data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"c1","name":"`+shell+`","args":{"command":"rm -rf important"}}}]},"finishReason":"STOP"}]}`+"\n\n")
		case 2:
			io.WriteString(w, `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"done"}]},"finishReason":"STOP"}]}`+"\n\n")
		default:
			io.WriteString(w, `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"checked"}]},"finishReason":"STOP"}]}`+"\n\n")
		}
	}))
	defer srv.Close()
	t.Setenv("GEMINI_API_KEY", "dummy")
	t.Setenv("GOOGLE_GEMINI_BASE_URL", srv.URL)
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ws, "important"), []byte("keep"), 0o644)
	settings := filepath.Join(dir, "settings.json")
	os.WriteFile(settings, []byte(`{"hooks": {
  "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo '{\"hookSpecificOutput\":{\"additionalContext\":\"ctx-start\"}}'"}]}],
  "BeforeModel": [{"hooks": [{"type": "command", "command": "cat >> $GEMINI_CWD/../bm.log; echo >> \"$GEMINI_CWD/../bm.log\""}]}],
  "BeforeTool": [{"matcher": "shell|Bash", "hooks": [{"type": "command", "timeout": 5000,
    "command": "grep -q 'rm -rf' && echo '{\"decision\":\"deny\",\"reason\":\"no rm\"}' >&2; exit 0"}]}],
  "AfterAgent": [{"hooks": [{"type": "command",
    "command": "test -f ../again || { touch ../again; echo '{\"decision\":\"deny\",\"reason\":\"check again\"}'; }"}]}]
}}`), 0o644)
	logFile := filepath.Join(dir, "s.jsonl")
	var stdout, stderr bytes.Buffer
	args := []string{"run", "--model", "gemini:gemini-test", "--dialect", "gemini", "--hooks", settings, "--canonical",
		"--workspace", ws, "--log", logFile, "clean up"}
	if code := Run(context.Background(), args, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if data, err := os.ReadFile(filepath.Join(ws, "important")); err != nil || string(data) != "keep" {
		t.Errorf("the denied rm ran: %q, %v", data, err)
	}
	if len(bodies) != 3 {
		t.Fatalf("%d requests, want 3 (tool call, answer, the AfterAgent deny's round):\n%s", len(bodies), strings.Join(bodies, "\n"))
	}
	for i, want := range []string{"ctx-start", "no rm", "check again"} {
		if !strings.Contains(bodies[i], want) {
			t.Errorf("request %d lacks %q:\n%s", i+1, want, bodies[i])
		}
	}
	bm, _ := os.ReadFile(filepath.Join(dir, "bm.log"))
	if lines := strings.Split(strings.TrimSpace(string(bm)), "\n"); len(lines) != 3 ||
		!strings.HasPrefix(lines[0], `{"session_id":"`) || !strings.Contains(lines[0], `"hook_event_name":"BeforeModel"`) ||
		!strings.Contains(lines[0], `"llm_request":{"model":"gemini-test","messages":[`) {
		t.Errorf("BeforeModel stdin:\n%s", bm)
	}
	// transcript_path is the chat transcript, in the engine's shape.
	var first struct {
		TranscriptPath string `json:"transcript_path"`
	}
	_ = json.Unmarshal([]byte(strings.SplitN(string(bm), "\n", 2)[0]), &first)
	chat, err := os.ReadFile(first.TranscriptPath)
	if err != nil || !strings.Contains(strings.SplitN(string(chat), "\n", 2)[0], `"kind":"main"`) || !strings.Contains(string(chat), `"type":"gemini"`) {
		t.Errorf("transcript %q: %v\n%s", first.TranscriptPath, err, chat)
	}
	log, _ := os.ReadFile(logFile)
	if !strings.Contains(string(log), `"dialect":"gemini"`) || !strings.Contains(string(log), `"handlerId":"gemini:BeforeTool:`) {
		t.Errorf("log lacks the gemini hook records:\n%s", log)
	}
	if !strings.Contains(stdout.String(), "checked") {
		t.Errorf("stdout %q", stdout.String())
	}
}
