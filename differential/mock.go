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
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Turn is one scripted assistant turn: some text, then the shell commands it asks to run
// (each one tool call of the engine's shell tool).
type Turn struct {
	// Text is the assistant's text.
	Text string `json:"text,omitempty"`
	// Bash are the shell commands of the turn's tool calls, in order.
	Bash []string `json:"bash,omitempty"`
	// Calls are other tool calls (Claude Code's tools: Read, Write, Edit; on the Responses
	// API a raw Codex call such as exec_command or write_stdin), after Bash;
	// "{{ws}}" in their string inputs is the workspace (see Turn.In).
	Calls []Call `json:"calls,omitempty"`
	// InputTokens is the input token count the response reports (0: 10), so that a case
	// can make an engine think its context window is nearly full (automatic compaction).
	InputTokens int `json:"inputTokens,omitempty"`
	// Overflow answers the request with the protocol's context-window error instead (the
	// turn is consumed; the engine's recovery gets the next one).
	Overflow bool `json:"overflow,omitempty"`
	// Fail answers the request with the protocol's error for a bad request (HTTP 400), and
	// every later request of the loop too (the turn is never consumed: an engine that
	// retries gets the error again), so that the turn ends on a model error (StopFailure).
	Fail bool `json:"fail,omitempty"`
	// FailStatus is the HTTP status of Fail's error (0: 400, a bad request).
	FailStatus int `json:"failStatus,omitempty"`
	// Escalate makes the turn's shell calls ask Codex for unsandboxed execution
	// (exec_command's sandbox_permissions "require_escalated", justification "run"): under
	// --approve-for-me Codex then asks for approval, and PermissionRequest fires. The other
	// protocols ignore it (their shell calls carry the description "run").
	Escalate bool `json:"escalate,omitempty"`
}

// inputTokens is the usage a response to t reports.
func (t Turn) inputTokens() int {
	if t.InputTokens > 0 {
		return t.InputTokens
	}
	return 10
}

// Call is a tool call by name with its input.
type Call struct {
	Name  string         `json:"name"`
	Input map[string]any `json:"input"`
	// Unoffered makes the Gemini mock call the tool even when the request does not offer
	// it (a model's made-up call); it leaves such a call out otherwise.
	Unoffered bool `json:"unoffered,omitempty"`
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
			out[i].Calls = append(out[i].Calls, Call{Name: c.Name, Input: in, Unoffered: c.Unoffered})
		}
	}
	return out
}

// children returns scripts with "{{ws}}" in their calls' string inputs replaced by ws.
func children(scripts []Child, ws string) []Child {
	out := make([]Child, len(scripts))
	for i, c := range scripts {
		out[i] = Child{Match: c.Match, Turns: In(c.Turns, ws)}
	}
	return out
}

// Protocol is a model wire protocol the mock serves.
type Protocol string

// The protocols.
const (
	Anthropic Protocol = "anthropic" // POST /v1/messages, streaming SSE (Claude Code, dsh run --model anthropic:…)
	Responses Protocol = "responses" // POST /v1/responses, streaming SSE (Codex, dsh run --model openai:…)
	Chat      Protocol = "chat"      // POST /v1/chat/completions, streaming SSE (dsh run --model openai-chat:…)
	// Gemini is POST /v1beta/models/<model>:streamGenerateContent?alt=sse (Gemini CLI, dsh
	// run --model gemini:…); :generateContent is answered too (without streaming).
	Gemini Protocol = "gemini"
)

// Request is one recorded request.
type Request struct {
	Method, Path string
	Body         json.RawMessage
	// Main says the request was a turn of the agent loop (it consumed a scripted turn).
	Main bool
	// Summarize says the request asked for a compaction summary (see SummaryDirectives);
	// it is answered with Summary and consumes no scripted turn.
	Summarize bool
	// Run is the 0-based number of the engine run that made the request (see Mock.NextRun).
	Run int
	// HookEval says the request was a prompt hook's (see PromptHookMarkers); it is
	// answered with the case's HookModel and consumes no scripted turn.
	HookEval bool
	// Child names the subagent script the request consumed a turn of (see
	// SubagentMarkers and Mock.Children): its Match, "?" for a child no script matches;
	// empty for the parent's requests.
	Child string
}

// SubagentMarkers are the phrases of a subagent's system prompt that make a request a
// child agent's rather than its parent's: Claude Code 2.1.328's general-purpose agent,
// the notes the engine ends every child's system prompt with, after a defined or
// built-in type's own prompt, and an agent hook's verifier (its two intros; dsh sends the
// same). A child and its parent run concurrently, so the mock scripts them apart
// (Mock.Children).
var SubagentMarkers = []string{"You are an agent for Claude Code, Anthropic's official CLI for Claude.",
	"\n\nMessages from the agent that launched you — your task and any mid-task course corrections — direct your work.",
	" hook in Claude Code. Your task is to evaluate the condition described in the user message.",
	"You are verifying a stop condition in Claude Code. Your task is to verify that the agent completed the given plan."}

// SubagentHeaders are the request headers that make a request a child agent's: Codex
// 0.169.0 sends a child's requests with the instructions and developer messages of its
// parent's, and marks them with x-openai-subagent (and x-codex-parent-thread-id); dsh
// sends the same.
var SubagentHeaders = []string{"X-Openai-Subagent"}

// SubagentTools are the tools whose offer makes a request a child agent's: Gemini CLI
// 0.61.0 offers its subagents complete_task (and its main agent never).
var SubagentTools = []string{"complete_task"}

// Child is the script of the subagents whose task holds Match: every request of such a
// child consumes the next of Turns (the text "done" once they are used up). A script is
// shared by every child that matches it, in arrival order.
type Child struct {
	// Match is a phrase of the child's task (the text of its first user message).
	Match string `json:"match"`
	// Turns are the child's scripted turns.
	Turns []Turn `json:"turns"`
}

// PromptHookMarkers are the phrases of a prompt hook's system prompt that make a request
// a hook evaluation: Claude Code 2.1.328's (dsh sends the same), the second its
// stop-condition evaluator's, which judges the conversation.
var PromptHookMarkers = []string{"You are evaluating a hook in Claude Code.", stopConditionMarker}

const stopConditionMarker = "You are evaluating a stop-condition hook in Claude Code."

// HookModel sets what the mock answers a prompt hook's request with: the text, after
// delay, or the protocol's error when fail is set.
func (m *Mock) HookModel(text string, delay time.Duration, fail bool) {
	m.mu.Lock()
	m.hookText, m.hookDelay, m.hookFail = text, delay, fail
	m.mu.Unlock()
}

// PromptHookRuns are the prompt hooks' requests among reqs as hook runs named
// prompt-N, in order: their stdin the request's system prompt, its messages' texts, its
// model and any output schema, so that the suite compares what each side asked. A
// stop-condition evaluation sends the conversation before its condition, with the
// engine's own reminders: its messages are the condition's text and "conversation",
// which says whether what precedes it is the last main request's messages and an
// answer.
func PromptHookRuns(reqs []Request) []HookRun {
	var runs []HookRun
	for i, r := range reqs {
		if !r.HookEval {
			continue
		}
		var req map[string]any
		_ = json.Unmarshal(r.Body, &req)
		var texts []string
		msgs, _ := req["messages"].([]any)
		conversation := ""
		if strings.Contains(contentText(req["system"]), stopConditionMarker) && len(msgs) > 0 {
			conversation = conversationOf(reqs[:i], msgs[:len(msgs)-1])
			msgs = msgs[len(msgs)-1:]
		}
		for _, msg := range msgs {
			mm, _ := msg.(map[string]any)
			texts = append(texts, fmt.Sprint(mm["role"])+": "+contentText(mm["content"]))
		}
		// The system prompt from the evaluator's words on: Claude Code puts its billing
		// header and SDK preamble before every request's; transcript_path differs by the
		// engine's layout, as the command hooks' stdin comparison allows.
		system := contentText(req["system"])
		for _, mk := range PromptHookMarkers {
			if i := strings.Index(system, mk); i >= 0 {
				system = system[i:]
			}
		}
		for i, t := range texts {
			texts[i] = transcriptField.ReplaceAllString(t, `"transcript_path":"<transcript>"`)
		}
		rec := map[string]any{"system": system, "messages": texts, "model": req["model"]}
		if conversation != "" {
			rec["conversation"] = conversation
		}
		if of, ok := req["output_config"]; ok {
			rec["output_config"] = of
		}
		raw, _ := json.Marshal(rec)
		var stdin map[string]any
		_ = json.Unmarshal(raw, &stdin)
		runs = append(runs, HookRun{Name: fmt.Sprintf("prompt-%d", len(runs)+1), Raw: string(raw), Stdin: stdin, Exit: "0", Env: map[string]string{}})
	}
	return runs
}

// transcriptField is a transcript_path inside a JSON text inside a message.
var transcriptField = regexp.MustCompile(`"transcript_path":"[^"]*"`)

// conversationOf says how the messages before a stop-condition's condition relate to the
// last main request among earlier: "the last main request's messages, then an answer",
// or where they differ.
func conversationOf(earlier []Request, msgs []any) string {
	var main map[string]any
	for _, r := range slices.Backward(earlier) {
		if r.Main {
			_ = json.Unmarshal(r.Body, &main)
			break
		}
	}
	if main == nil {
		return fmt.Sprintf("%d messages, no main request before", len(msgs))
	}
	prev, _ := main["messages"].([]any)
	if len(msgs) != len(prev)+1 {
		return fmt.Sprintf("%d messages where the last main request had %d", len(msgs), len(prev))
	}
	for j := range prev {
		a, b := stripCacheControl(prev[j]), stripCacheControl(msgs[j])
		if !reflect.DeepEqual(a, b) {
			return fmt.Sprintf("message %d differs from the last main request's", j)
		}
	}
	if m, _ := msgs[len(prev)].(map[string]any); m["role"] != "assistant" {
		return "no answer after the last main request's messages"
	}
	return "the last main request's messages, then an answer"
}

// stripCacheControl is v without its cache_control keys, which the engine moves to the
// last message of each request, and with a message's string content as the one text
// block it stands for (the engine writes the last message's content as blocks, to mark
// it, and others as it keeps them).
func stripCacheControl(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if s, ok := e.(string); ok && k == "content" {
				e = []any{map[string]any{"type": "text", "text": s}}
			}
			if k != "cache_control" {
				out[k] = stripCacheControl(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = stripCacheControl(e)
		}
		return out
	}
	return v
}

// contentText joins the texts of an Anthropic content value (a string, or blocks).
func contentText(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, b := range c {
			bm, _ := b.(map[string]any)
			if t, ok := bm["text"].(string); ok {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

// Summary is the text the mock answers every summarization request with, inside the
// <summary> tags Claude Code asks for; the checkpoint message each engine builds from it
// is recognized by it (Item kind "checkpoint").
const Summary = "CHECKPOINT: the task ran one command."

// SummaryDirectives are the phrases that make a request a compaction summarization: the
// trailing directive of Claude Code's, Codex's and dsh's summarizer requests.
var SummaryDirectives = []string{
	"Your task is to create a detailed summary of the conversation so far", // Claude Code 2.1.328
	"You are performing a CONTEXT CHECKPOINT COMPACTION",                   // Codex 0.169.0
	"Your context window is being compacted",                               // dsh
}

// Mock is a model server on 127.0.0.1 that replays scripted turns: every main request
// (one that offers tools; under Gemini, every streamed request) consumes the next turn; once they are used up it answers the
// text "done". Every request is recorded; anything that is not a model API call is a
// stray request (the suite fails on strays: nothing may leave the machine).
type Mock struct {
	proto Protocol
	turns []Turn

	srv *http.Server
	ln  net.Listener

	mu       sync.Mutex
	run      int
	next     int
	calls    int
	requests []Request
	strays   []string

	hookText  string
	hookDelay time.Duration
	hookFail  bool

	children  []Child
	nextChild []int
}

// Children sets the scripts of the subagents' requests (see Child).
func (m *Mock) Children(scripts []Child) {
	m.mu.Lock()
	m.children, m.nextChild = scripts, make([]int, len(scripts))
	m.mu.Unlock()
}

// childScript says whether req is a subagent's and, if so, the index of the script among
// m.children it follows (its first user message holds the script's Match; -1: none, and
// the child's requests are answered "done"). m.mu is held.
func (m *Mock) childScript(req map[string]any, header http.Header) (bool, int) {
	system := contentText(req["system"])
	if !slices.ContainsFunc(SubagentMarkers, func(p string) bool { return strings.Contains(system, p) }) &&
		!slices.ContainsFunc(SubagentHeaders, func(h string) bool { return header.Get(h) != "" }) &&
		!slices.ContainsFunc(SubagentTools, func(t string) bool { return geminiTools(req)[t] }) {
		return false, -1
	}
	first := ""
	if msgs, _ := req["messages"].([]any); len(msgs) > 0 {
		mm, _ := msgs[0].(map[string]any)
		first = contentText(mm["content"])
	}
	// A Gemini request: the task is one of its user contents.
	contents, _ := req["contents"].([]any)
	for _, c := range contents {
		if cm, _ := c.(map[string]any); cm["role"] == "user" {
			first += "\n" + blockText(cm["parts"])
		}
	}
	// A Responses request: the task is one of the user messages of its input (after the
	// engine's environment context).
	items, _ := req["input"].([]any)
	for _, it := range items {
		if im, _ := it.(map[string]any); im["type"] == "message" && im["role"] == "user" {
			first += "\n" + contentText(im["content"])
		}
	}
	for i, c := range m.children {
		if strings.Contains(first, c.Match) {
			return true, i
		}
	}
	return true, -1
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

// NextRun marks the requests that follow as made by the next engine run (a continued
// session).
func (m *Mock) NextRun() {
	m.mu.Lock()
	m.run++
	m.mu.Unlock()
}

// CompactWords are the probe words cases give as compaction instructions (/compact
// instructions, PreCompact output); DirectiveWords reports which reached a summarizer.
var CompactWords = []string{"HERON", "OSPREY"}

// DirectiveWords returns the CompactWords the last message of a summarization request
// holds, joined by "+" ("-" for none).
func DirectiveWords(body []byte) string {
	var req map[string]any
	if json.Unmarshal(body, &req) != nil {
		return "-"
	}
	var words []string
	text := lastText(req)
	for _, w := range CompactWords {
		if strings.Contains(text, w) {
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return "-"
	}
	return strings.Join(words, "+")
}

// lastText is the text of a request's last message (or input item).
func lastText(req map[string]any) string {
	var last any
	for _, k := range []string{"messages", "input", "contents"} {
		if l, ok := req[k].([]any); ok && len(l) > 0 {
			last = l[len(l)-1]
		}
	}
	lm, _ := last.(map[string]any)
	if parts, ok := lm["parts"]; ok {
		return blockText(parts)
	}
	return blockText(lm["content"])
}

// summarizes says whether a request body asks for a compaction summary: its last message
// (or input item) holds one of SummaryDirectives.
func summarizes(req map[string]any) bool {
	text := lastText(req)
	for _, d := range SummaryDirectives {
		if strings.Contains(text, d) {
			return true
		}
	}
	return false
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
	case Gemini:
		api = r.Method == http.MethodPost && strings.Contains(path, "/models/") &&
			(strings.HasSuffix(path, ":streamGenerateContent") || strings.HasSuffix(path, ":generateContent"))
		if r.Method == http.MethodPost && strings.HasSuffix(path, ":countTokens") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"totalTokens":10}`)
			return
		}
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
	summarize := summarizes(req)
	hookEval := m.proto == Anthropic && slices.ContainsFunc(PromptHookMarkers, func(p string) bool { return bytes.Contains(body, []byte(p)) })
	main := len(tools) > 0 && !summarize && !hookEval
	if m.proto == Gemini {
		// A hook may take every tool away from a request (BeforeToolSelection NONE): a
		// streamed request is a turn of the loop; side requests do not stream.
		main = strings.HasSuffix(path, ":streamGenerateContent") && !summarize
	}
	m.mu.Lock()
	turn := Turn{Text: "done"}
	child := ""
	if isChild, ci := m.childScript(req, r.Header); main && isChild {
		// A subagent's request follows its own script, never the parent's.
		child = "?"
		if ci >= 0 {
			child = m.children[ci].Match
			if k := m.nextChild[ci]; k < len(m.children[ci].Turns) {
				turn = m.children[ci].Turns[k]
			}
			if !turn.Fail {
				m.nextChild[ci]++
			}
		}
	} else if main {
		if m.next < len(m.turns) {
			turn = m.turns[m.next]
		}
		if !turn.Fail {
			m.next++
		}
	}
	m.calls++
	n := m.calls
	m.requests = append(m.requests, Request{Method: r.Method, Path: path, Body: body, Main: main, Summarize: summarize, Run: m.run, HookEval: hookEval, Child: child})
	hookText, hookDelay, hookFail := m.hookText, m.hookDelay, m.hookFail
	m.mu.Unlock()
	switch {
	case hookEval:
		if hookDelay > 0 {
			select {
			case <-time.After(hookDelay):
			case <-r.Context().Done():
				return
			}
		}
		if hookFail {
			m.fail(w, 0)
			return
		}
		turn = Turn{Text: hookText}
	case summarize:
		turn = Turn{Text: "<summary>\n" + Summary + "\n</summary>"}
	case !main:
		// A side request (a title): answer briefly.
		turn = Turn{Text: "ok"}
	}
	stream, _ := req["stream"].(bool)
	if turn.Overflow {
		m.overflow(w)
		return
	}
	if turn.Fail {
		m.fail(w, turn.FailStatus)
		return
	}
	switch m.proto {
	case Anthropic:
		m.anthropic(w, req, turn, n, stream)
	case Responses:
		m.responses(w, req, turn, n)
	case Chat:
		m.chat(w, turn, n)
	case Gemini:
		m.gemini(w, r, req, turn)
	}
}

// overflow answers with the protocol's error for a request over the context window.
func (m *Mock) overflow(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	switch m.proto {
	case Anthropic:
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`)
	case Responses:
		w.Header().Set("Content-Type", "text/event-stream")
		var b bytes.Buffer
		sse(&b, "response.failed", map[string]any{"type": "response.failed", "response": map[string]any{"id": "resp_overflow",
			"error": map[string]any{"code": "context_length_exceeded", "message": "Your input exceeds the context window of this model. Please adjust your input and try again."}}})
		_, _ = w.Write(b.Bytes())
	case Chat:
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":{"message":"This model's maximum context length is 200000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`)
	case Gemini:
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":{"code":400,"message":"The input token count (1048577) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`)
	}
}

// fail answers with the protocol's error for a bad request, under status (0: HTTP 400).
func (m *Mock) fail(w http.ResponseWriter, status int) {
	if status == 0 {
		status = http.StatusBadRequest
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	switch m.proto {
	case Anthropic:
		_, _ = io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad request for test"}}`)
	case Responses, Chat:
		_, _ = io.WriteString(w, `{"error":{"message":"bad request for test","type":"invalid_request_error","code":"invalid_request"}}`)
	case Gemini:
		_, _ = io.WriteString(w, `{"error":{"code":400,"message":"bad request for test","status":"INVALID_ARGUMENT"}}`)
	}
}
