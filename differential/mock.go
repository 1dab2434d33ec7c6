// Package differential runs Claude Code and Codex hook configurations under the real
// engines and under dsh run on the same scripted model turns, and compares what the hooks
// saw and what the model was sent next. See README.md in this directory.
package differential

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
)

// Turn is one scripted assistant turn: some text, then the shell commands it asks to run
// (each one tool call of the engine's shell tool).
type Turn struct {
	// Text is the assistant's text.
	Text string `json:"text,omitempty"`
	// Bash are the shell commands of the turn's tool calls, in order.
	Bash []string `json:"bash,omitempty"`
	// Calls are other tool calls (Claude Code's tools: Read, Write, Edit), after Bash;
	// "{{ws}}" in their string inputs is the workspace (see Turn.In).
	Calls []Call `json:"calls,omitempty"`
}

// Call is a tool call by name with its input.
type Call struct {
	Name  string         `json:"name"`
	Input map[string]any `json:"input"`
}

// In returns turns with "{{ws}}" in the calls' string inputs replaced by ws.
func In(turns []Turn, ws string) []Turn {
	out := make([]Turn, len(turns))
	for i, t := range turns {
		out[i] = t
		out[i].Calls = nil
		for _, c := range t.Calls {
			in := map[string]any{}
			for k, v := range c.Input {
				if s, ok := v.(string); ok {
					v = strings.ReplaceAll(s, "{{ws}}", ws)
				}
				in[k] = v
			}
			out[i].Calls = append(out[i].Calls, Call{Name: c.Name, Input: in})
		}
	}
	return out
}

// Protocol is a model wire protocol the mock serves.
type Protocol string

// The protocols.
const (
	Anthropic Protocol = "anthropic" // POST /v1/messages, streaming SSE (Claude Code)
	Responses Protocol = "responses" // POST /v1/responses, streaming SSE (Codex)
	Chat      Protocol = "chat"      // POST /v1/chat/completions, streaming SSE (dsh run --model openai)
)

// Request is one recorded request.
type Request struct {
	Method, Path string
	Body         json.RawMessage
	// Main says the request was a turn of the agent loop (it consumed a scripted turn).
	Main bool
}

// Mock is a model server on 127.0.0.1 that replays scripted turns: every main request
// (one that offers tools) consumes the next turn; once they are used up it answers the
// text "done". Every request is recorded; anything that is not a model API call is a
// stray request (the suite fails on strays: nothing may leave the machine).
type Mock struct {
	proto Protocol
	turns []Turn

	srv *http.Server
	ln  net.Listener

	mu       sync.Mutex
	next     int
	calls    int
	requests []Request
	strays   []string
}

// NewMock starts a mock for proto on a free port of 127.0.0.1.
func NewMock(proto Protocol, turns []Turn) (*Mock, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &Mock{proto: proto, turns: turns, ln: ln}
	m.srv = &http.Server{Handler: m}
	go func() { _ = m.srv.Serve(ln) }()
	return m, nil
}

// URL is the mock's base URL (http://127.0.0.1:PORT).
func (m *Mock) URL() string { return "http://" + m.ln.Addr().String() }

// Close stops the mock.
func (m *Mock) Close() { _ = m.srv.Close() }

// Requests returns the recorded requests.
func (m *Mock) Requests() []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Request(nil), m.requests...)
}

// Strays returns the requests that were not model API calls.
func (m *Mock) Strays() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.strays...)
}

// ServeHTTP answers one request.
func (m *Mock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	path := r.URL.Path
	var api bool
	switch m.proto {
	case Anthropic:
		api = r.Method == http.MethodPost && strings.HasSuffix(path, "/v1/messages")
	case Responses:
		api = r.Method == http.MethodPost && strings.HasSuffix(path, "/responses")
	case Chat:
		api = r.Method == http.MethodPost && strings.HasSuffix(path, "/chat/completions")
	}
	if !api {
		m.mu.Lock()
		m.strays = append(m.strays, r.Method+" "+r.Host+r.URL.String())
		m.mu.Unlock()
		if r.Method == http.MethodConnect {
			http.Error(w, "no traffic leaves 127.0.0.1", http.StatusForbidden)
			return
		}
		if strings.Contains(path, "count_tokens") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"input_tokens":10}`)
			return
		}
		http.NotFound(w, r)
		return
	}
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	tools, _ := req["tools"].([]any)
	main := len(tools) > 0
	m.mu.Lock()
	turn := Turn{Text: "done"}
	if main {
		if m.next < len(m.turns) {
			turn = m.turns[m.next]
		}
		m.next++
	}
	m.calls++
	n := m.calls
	m.requests = append(m.requests, Request{Method: r.Method, Path: path, Body: body, Main: main})
	m.mu.Unlock()
	if !main {
		// A side request (a title, a summary): answer briefly.
		turn = Turn{Text: "ok"}
	}
	stream, _ := req["stream"].(bool)
	switch m.proto {
	case Anthropic:
		m.anthropic(w, req, turn, n, stream)
	case Responses:
		m.responses(w, req, turn, n)
	case Chat:
		m.chat(w, turn, n)
	}
}

func sse(w io.Writer, event string, v any) {
	data, _ := json.Marshal(v)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", data)
}

// callID is the id of the i-th tool call of the n-th response.
func callID(prefix string, n, i int) string { return fmt.Sprintf("%s%03d_%d", prefix, n, i) }

func (m *Mock) anthropic(w http.ResponseWriter, req map[string]any, t Turn, n int, stream bool) {
	model, _ := req["model"].(string)
	var content []map[string]any
	if t.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": t.Text})
	}
	for i, c := range t.Bash {
		content = append(content, map[string]any{"type": "tool_use", "id": callID("toolu_", n, i), "name": "Bash",
			"input": map[string]any{"command": c, "description": "run"}})
	}
	for i, c := range t.Calls {
		content = append(content, map[string]any{"type": "tool_use", "id": callID("toolu_", n, len(t.Bash)+i), "name": c.Name, "input": c.Input})
	}
	stop := "end_turn"
	if len(t.Bash)+len(t.Calls) > 0 {
		stop = "tool_use"
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	msgID := fmt.Sprintf("msg_%03d", n)
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	var b bytes.Buffer
	sse(&b, "message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": msgID, "type": "message",
		"role": "assistant", "model": model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	for i, c := range content {
		switch c["type"] {
		case "text":
			sse(&b, "content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			sse(&b, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": c["text"]}})
		case "tool_use":
			sse(&b, "content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": c["id"], "name": c["name"], "input": map[string]any{}}})
			in, _ := json.Marshal(c["input"])
			sse(&b, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}})
		}
		sse(&b, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	sse(&b, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
	sse(&b, "message_stop", map[string]any{"type": "message_stop"})
	_, _ = w.Write(b.Bytes())
}

// codexShell renders a command as the shell tool the Codex request offers.
func codexShell(req map[string]any, cmd string) (string, string) {
	tools, _ := req["tools"].([]any)
	names := map[string]bool{}
	for _, t := range tools {
		if tm, ok := t.(map[string]any); ok {
			if s, ok := tm["name"].(string); ok {
				names[s] = true
			}
		}
	}
	switch {
	case names["shell_command"]:
		a, _ := json.Marshal(map[string]any{"command": cmd})
		return "shell_command", string(a)
	case names["exec_command"]:
		a, _ := json.Marshal(map[string]any{"cmd": cmd})
		return "exec_command", string(a)
	default:
		a, _ := json.Marshal(map[string]any{"command": []string{"bash", "-lc", cmd}})
		return "shell", string(a)
	}
}

func (m *Mock) responses(w http.ResponseWriter, req map[string]any, t Turn, n int) {
	w.Header().Set("Content-Type", "text/event-stream")
	var b bytes.Buffer
	respID := fmt.Sprintf("resp_%03d", n)
	sse(&b, "response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": respID}})
	if t.Text != "" {
		item := map[string]any{"type": "message", "role": "assistant", "id": fmt.Sprintf("msg_%03d", n),
			"content": []any{map[string]any{"type": "output_text", "text": t.Text}}}
		sse(&b, "response.output_item.done", map[string]any{"type": "response.output_item.done", "item": item})
	}
	for i, c := range t.Bash {
		name, args := codexShell(req, c)
		item := map[string]any{"type": "function_call", "id": callID("fc_", n, i), "call_id": callID("call_", n, i), "name": name, "arguments": args}
		sse(&b, "response.output_item.done", map[string]any{"type": "response.output_item.done", "item": item})
	}
	sse(&b, "response.completed", map[string]any{"type": "response.completed", "response": map[string]any{"id": respID,
		"usage": map[string]any{"input_tokens": 10, "input_tokens_details": nil, "output_tokens": 5, "output_tokens_details": nil, "total_tokens": 15}}})
	_, _ = w.Write(b.Bytes())
}

func (m *Mock) chat(w http.ResponseWriter, t Turn, n int) {
	w.Header().Set("Content-Type", "text/event-stream")
	var b bytes.Buffer
	id := fmt.Sprintf("chatcmpl_%03d", n)
	if t.Text != "" {
		sse(&b, "", map[string]any{"id": id, "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": t.Text}}}})
	}
	for i, c := range t.Bash {
		args, _ := json.Marshal(map[string]any{"command": c, "description": "run"})
		sse(&b, "", map[string]any{"id": id, "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"tool_calls": []any{
			map[string]any{"index": i, "id": callID("call_", n, i), "type": "function", "function": map[string]any{"name": "Bash", "arguments": string(args)}}}}}}})
	}
	for j, c := range t.Calls {
		i := len(t.Bash) + j
		args, _ := json.Marshal(c.Input)
		sse(&b, "", map[string]any{"id": id, "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"tool_calls": []any{
			map[string]any{"index": i, "id": callID("call_", n, i), "type": "function", "function": map[string]any{"name": c.Name, "arguments": string(args)}}}}}}})
	}
	finish := "stop"
	if len(t.Bash)+len(t.Calls) > 0 {
		finish = "tool_calls"
	}
	sse(&b, "", map[string]any{"id": id, "choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish}}})
	fmt.Fprint(&b, "data: [DONE]\n\n")
	_, _ = w.Write(b.Bytes())
}
