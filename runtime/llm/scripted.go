package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/duration"
)

// CodeInvalidScript is the failure code of a scripted response that is not valid (see
// [ParseScript] for the rules); it can only occur with [NewScripted], since [ParseScript]
// rejects such a script up front.
const CodeInvalidScript = "INVALID_SCRIPT"

// ExhaustedText is what a [Scripted] model answers once its responses are used up.
const ExhaustedText = "done"

// ScriptedResponse is one scripted model response. Its JSON form is the element of a
// script file's "responses" list.
//
// A call streams, in this order: a delay of DelayMS; Reasoning and then Text, each as a
// few deltas split after spaces; if Hang, nothing more until the context is cancelled;
// ToolCalls, one chunk each; then, if TransportError is set, that Go error, otherwise the
// finish. Cancellation at any point ends the call with an aborted finish.
type ScriptedResponse struct {
	// Text is the response text.
	Text string `json:"text,omitempty"`
	// Reasoning is the response's reasoning text, streamed before Text.
	Reasoning string `json:"reasoning,omitempty"`
	// ToolCalls are the tool calls, streamed after the text.
	ToolCalls []ScriptedToolCall `json:"toolCalls,omitempty"`
	// Finish is the finish reason; empty means "tool-calls" when there are tool calls and
	// "stop" otherwise, and "error" when Error is set.
	Finish dsh.FinishReason `json:"finish,omitempty"`
	// Error makes the finish an error finish with this failure.
	Error *ScriptedError `json:"error,omitempty"`
	// TransportError, when set, ends the call with a Go error with this text instead of a
	// finish (a transport-level failure). It excludes Finish and Error.
	TransportError string `json:"transportError,omitempty"`
	// Usage is the finish's usage; nil means none reported.
	Usage *dsh.Usage `json:"usage,omitempty"`
	// DelayMS delays the first chunk by this many milliseconds.
	DelayMS int `json:"delayMs,omitempty"`
	// Hang blocks the call after the text until its context is cancelled.
	Hang bool `json:"hang,omitempty"`
}

// ScriptedToolCall is one scripted tool call.
type ScriptedToolCall struct {
	// ID is the call id; empty means "call_<n>", n being the 1-based position of the call
	// among all the script's tool calls.
	ID string `json:"id,omitempty"`
	// Name is the tool name; it is required.
	Name string `json:"name"`
	// Arguments is the arguments: a JSON string is used verbatim as the raw argument
	// string (so a test can script invalid JSON or ""); any other JSON value is used in
	// its compact encoding; absent means "{}".
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// ScriptedError is the failure of a scripted error finish.
type ScriptedError struct {
	// Message is the failure message; empty means "scripted error".
	Message string `json:"message,omitempty"`
	// Code is the failure code; empty means [CodeUnknown].
	Code string `json:"code,omitempty"`
	// Status is the HTTP status to report.
	Status *int `json:"status,omitempty"`
	// RetryAfterMS is the providerRetryAfterMs to report.
	RetryAfterMS *int `json:"retryAfterMs,omitempty"`
	// RequestID is the requestId to report.
	RequestID *string `json:"requestId,omitempty"`
}

// scriptedCall is a validated response with its tool-call ids and argument strings
// resolved.
type scriptedCall struct {
	resp    ScriptedResponse
	calls   []dsh.ChunkToolCall
	finish  dsh.ChunkFinish
	invalid error
}

// Scripted is a [Model] that plays a script: each call consumes the next response, in
// order; once they are used up every call answers the text [ExhaustedText]. After
// [Scripted.RecordRequests] it records every request it receives (tests inspect them with
// [Scripted.Requests]); by default it keeps none, so that a long session does not keep a
// copy of its history per step. It is safe for concurrent use.
type Scripted struct {
	mu        sync.Mutex
	responses []scriptedCall
	next      int
	record    bool
	requests  []Request
	window    int // the context window, in estimated tokens; 0: none
}

// WithContextWindow gives the model a context window of n tokens, as [EstimateRequest]
// measures them, and returns the model. A request larger than n then fails at once with an
// error finish of code [CodeContextWindowExceeded], consuming no scripted response (a
// provider rejects it before generating); every other call reports its usage, when its
// response scripts none, as the estimated input and output tokens. n <= 0 removes the
// window.
func (s *Scripted) WithContextWindow(n int) *Scripted {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.window = max(n, 0)
	return s
}

// RecordRequests makes the model record a deep copy of every request it receives from
// then on, for [Scripted.Requests], and returns the model. Recording costs a copy of the
// whole request (history included) per call and keeps every copy: use it in tests, not
// in long sessions.
func (s *Scripted) RecordRequests() *Scripted {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.record = true
	return s
}

// NewScripted returns a model that plays responses in order. A response that breaks the
// rules of [ParseScript] is not rejected here; its call ends with an error finish with
// code [CodeInvalidScript] naming the problem.
func NewScripted(responses ...ScriptedResponse) *Scripted {
	s := &Scripted{responses: make([]scriptedCall, len(responses))}
	n := 0
	for i, r := range responses {
		s.responses[i] = resolveResponse(r, &n)
		if err := s.responses[i].invalid; err != nil {
			s.responses[i].invalid = fmt.Errorf("responses[%d]: %w", i, err)
		}
	}
	return s
}

// LoadScript reads a script file (see [ParseScript]). Errors name the path.
func LoadScript(path string) (*Scripted, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("llm: load script: %w", err)
	}
	s, err := ParseScript(data)
	if err != nil {
		return nil, fmt.Errorf("llm: load script %s: %w", path, err)
	}
	return s, nil
}

// ParseScript decodes a script:
//
//	{"responses": [
//	  {"text": "Let me look."},
//	  {"reasoning": "...", "toolCalls": [{"name": "Bash", "arguments": {"command": "ls"}}]},
//	  {"text": "partial", "finish": "max-tokens"},
//	  {"error": {"message": "slow down", "code": "rate_limit", "status": 429, "retryAfterMs": 1000}},
//	  {"delayMs": 50, "text": "late"},
//	  {"text": "then silence", "hang": true}
//	]}
//
// The fields are those of [ScriptedResponse], [ScriptedToolCall] and [ScriptedError];
// "usage" is {"inputTokens", "outputTokens"}. Decoding is strict: an unknown field is an
// error naming it. A response is invalid when its finish is not a finish reason, its
// finish is "error" without an error (or an error comes with another finish), it has a
// transportError together with a finish or an error, a tool call has no name, or delayMs
// is negative.
func ParseScript(data []byte) (*Scripted, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var file struct {
		Responses []ScriptedResponse `json:"responses"`
	}
	if err := dec.Decode(&file); err != nil {
		return nil, fmt.Errorf("llm: parse script: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("llm: parse script: data after the top-level object")
	}
	// encoding/json matches field names without regard to case ("toolcalls" would fill
	// toolCalls): check every name against the exact spelling.
	if err := exactFields(data, reflect.TypeOf(file), ""); err != nil {
		return nil, fmt.Errorf("llm: parse script: %w", err)
	}
	n := 0
	for i, r := range file.Responses {
		if err := resolveResponse(r, &n).invalid; err != nil {
			return nil, fmt.Errorf("llm: parse script: responses[%d]: %w", i, err)
		}
	}
	return NewScripted(file.Responses...), nil
}

// exactFields checks that every object key of data, decoded as a value of type t, is the
// exact JSON name of one of t's fields (recursively through structs, pointers and slices;
// a type with its own UnmarshalJSON, and json.RawMessage, check themselves). path names
// the value in the error, e.g. "responses[0].toolCalls[1]".
func exactFields(data json.RawMessage, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[json.RawMessage]() || reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice:
		var items []json.RawMessage
		if json.Unmarshal(data, &items) != nil {
			return nil // not a list: the decoder has said so already
		}
		for i, item := range items {
			if err := exactFields(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if json.Unmarshal(data, &obj) != nil {
			return nil
		}
		fields := map[string]reflect.Type{}
		for f := range t.Fields() {
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
				fields[name] = f.Type
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			ft, ok := fields[k]
			if !ok {
				at := ""
				if path != "" {
					at = path + ": "
				}
				for name := range fields {
					if strings.EqualFold(name, k) {
						return fmt.Errorf("%sunknown field %q (did you mean %q?)", at, k, name)
					}
				}
				return fmt.Errorf("%sunknown field %q", at, k)
			}
			sub := k
			if path != "" {
				sub = path + "." + k
			}
			if err := exactFields(obj[k], ft, sub); err != nil {
				return err
			}
		}
	}
	return nil
}

// resolveResponse validates r and resolves its tool calls and finish; *n counts the tool
// calls seen so far, for default ids.
func resolveResponse(r ScriptedResponse, n *int) scriptedCall {
	sc := scriptedCall{resp: r}
	fail := func(format string, args ...any) scriptedCall {
		sc.invalid = fmt.Errorf(format, args...)
		return sc
	}
	for i, tc := range r.ToolCalls {
		*n++
		id := tc.ID
		if id == "" {
			id = "call_" + strconv.Itoa(*n)
		}
		args, err := scriptedArguments(tc.Arguments)
		if err != nil {
			return fail("toolCalls[%d]: %v", i, err)
		}
		if tc.Name == "" {
			return fail("toolCalls[%d]: missing name", i)
		}
		sc.calls = append(sc.calls, dsh.ChunkToolCall{ID: id, Name: tc.Name, Arguments: args})
	}
	if r.DelayMS < 0 {
		return fail("negative delayMs %d", r.DelayMS)
	}
	if r.Finish != "" && !r.Finish.Valid() {
		return fail("finish %q is not one of %v", r.Finish, dsh.FinishReasonValues)
	}
	if r.TransportError != "" && (r.Finish != "" || r.Error != nil) {
		return fail("transportError excludes finish and error")
	}
	switch {
	case r.Error != nil && r.Finish != "" && r.Finish != dsh.FinishReasonError:
		return fail("error with finish %q", r.Finish)
	case r.Error == nil && r.Finish == dsh.FinishReasonError:
		return fail(`finish "error" without an error`)
	case r.Error != nil:
		f := dsh.LLMFailure{
			Message:              r.Error.Message,
			Code:                 r.Error.Code,
			Status:               clonePtr(r.Error.Status),
			ProviderRetryAfterMS: clonePtr(r.Error.RetryAfterMS),
			RequestID:            clonePtr(r.Error.RequestID),
		}
		if f.Message == "" {
			f.Message = "scripted error"
		}
		if f.Code == "" {
			f.Code = CodeUnknown
		}
		sc.finish = ErrorFinish(f, nil)
	case r.Finish == dsh.FinishReasonAborted:
		sc.finish = dsh.ChunkFinish{Reason: dsh.FinishReasonAborted, Error: &dsh.LLMFailure{Message: "scripted abort", Code: CodeAborted}}
	case r.Finish != "":
		sc.finish = dsh.ChunkFinish{Reason: r.Finish}
	case len(sc.calls) > 0:
		sc.finish = dsh.ChunkFinish{Reason: dsh.FinishReasonToolCalls}
	default:
		sc.finish = dsh.ChunkFinish{Reason: dsh.FinishReasonStop}
	}
	sc.finish.Usage = clonePtr(r.Usage)
	return sc
}

// scriptedArguments turns a scripted arguments value into the raw argument string.
func scriptedArguments(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "{}", nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("arguments: %w", err)
		}
		return s, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return "", fmt.Errorf("arguments: %w", err)
	}
	return buf.String(), nil
}

// Stream plays the next scripted response (see [ScriptedResponse] for the order of a
// call). Each iteration of the returned sequence is one call: it consumes one response and,
// when the model records requests, records a deep copy of req (as it was when Stream was
// called).
func (s *Scripted) Stream(ctx context.Context, req Request) iter.Seq2[dsh.AssistantChunk, error] {
	var frozen *Request
	if s.recording() {
		c := req.Clone()
		frozen = &c
	}
	s.mu.Lock()
	window := s.window
	s.mu.Unlock()
	input := 0
	if window > 0 {
		input = EstimateRequest(req)
	}
	return func(yield func(dsh.AssistantChunk, error) bool) {
		if window > 0 && input > window {
			s.mu.Lock()
			if frozen != nil {
				s.requests = append(s.requests, *frozen)
			}
			s.mu.Unlock()
			yield(ErrorFinish(dsh.LLMFailure{
				Message: fmt.Sprintf("the request holds %d tokens, more than the context window of %d", input, window),
				Code:    CodeContextWindowExceeded,
			}, nil), nil)
			return
		}
		sc := s.take(frozen)
		if window > 0 && sc.invalid == nil && sc.finish.Usage == nil {
			sc.finish.Usage = &dsh.Usage{InputTokens: input, OutputTokens: estimateResponse(sc.resp, sc.calls)}
		}
		if sc.invalid != nil {
			yield(ErrorFinish(dsh.LLMFailure{Message: sc.invalid.Error(), Code: CodeInvalidScript}, nil), nil)
			return
		}
		r := sc.resp
		// emit yields c unless ctx is done, in which case it yields the aborted finish;
		// it reports whether the call goes on.
		emit := func(c dsh.AssistantChunk) bool {
			if ctx.Err() != nil {
				yield(AbortedFinish(ctx, clonePtr(sc.finish.Usage)), nil)
				return false
			}
			return yield(c, nil)
		}
		if r.DelayMS > 0 && !sleep(ctx, duration.Millis(r.DelayMS)) {
			yield(AbortedFinish(ctx, clonePtr(sc.finish.Usage)), nil)
			return
		}
		for _, d := range splitDeltas(r.Reasoning) {
			if !emit(dsh.ChunkReasoningDelta{Text: d}) {
				return
			}
		}
		for _, d := range splitDeltas(r.Text) {
			if !emit(dsh.ChunkTextDelta{Text: d}) {
				return
			}
		}
		if r.Hang {
			<-ctx.Done()
			yield(AbortedFinish(ctx, clonePtr(sc.finish.Usage)), nil)
			return
		}
		for _, c := range sc.calls {
			if !emit(c) {
				return
			}
		}
		if r.TransportError != "" {
			if ctx.Err() != nil {
				yield(AbortedFinish(ctx, nil), nil)
				return
			}
			yield(nil, errors.New(r.TransportError))
			return
		}
		f := sc.finish
		f.Usage = clonePtr(f.Usage)
		if f.Error != nil {
			e := *f.Error
			f.Error = &e
		}
		emit(f)
	}
}

// recording reports whether the model records requests.
func (s *Scripted) recording() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.record
}

// take records req, unless it is nil, and returns the next response to play.
func (s *Scripted) take(req *Request) scriptedCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	if req != nil {
		s.requests = append(s.requests, *req)
	}
	if s.next >= len(s.responses) {
		return scriptedCall{
			resp:   ScriptedResponse{Text: ExhaustedText},
			finish: dsh.ChunkFinish{Reason: dsh.FinishReasonStop},
		}
	}
	sc := s.responses[s.next]
	s.next++
	return sc
}

// Requests returns deep copies of every request the model recorded, in call order: every
// request it received since [Scripted.RecordRequests]; none without it.
func (s *Scripted) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		out[i] = r.Clone()
	}
	return out
}

// Remaining returns how many scripted responses have not been played yet.
func (s *Scripted) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.responses) - s.next
}

// splitDeltas splits s after each space into the deltas a stream would carry; their
// concatenation is s.
func splitDeltas(s string) []string {
	parts := strings.SplitAfter(s, " ")
	out := parts[:0]
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// sleep waits for d or until ctx is done; it reports whether the full delay passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
