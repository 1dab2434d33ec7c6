package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

// This file holds what the SDK-based providers share: the HTTP facts of a call (status,
// headers, an error body) captured under the SDK, the normalization of failures, and the
// driver that turns a provider's event loop into the stream contract.

// maxErrorBody bounds the error body a call keeps.
const maxErrorBody = 64 << 10

// httpFacts are what one call's HTTP response said, captured by [captureTransport].
type httpFacts struct {
	mu     sync.Mutex
	got    bool
	status int
	header http.Header
	// body is the first bytes of an error body (status not 2xx) or of a 2xx JSON body
	// where an event stream was expected.
	body []byte
	json bool
	// limits are the call's caps; capped is the one its response crossed, if any.
	limits Limits
	capped *CapError
}

// cap is the cap the response crossed, or nil.
func (f *httpFacts) cap() *CapError {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.capped
}

func (f *httpFacts) snapshot() (got bool, status int, header http.Header, body []byte, isJSON bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.got, f.status, f.header, f.body, f.json
}

type factsKey struct{}

// captureTransport records the status, headers and (for an error or a JSON body) the body
// of each response into the [httpFacts] of its request's context, and bounds every body
// ([boundedBody]). The body it reads is given back to the SDK unchanged.
type captureTransport struct{ base http.RoundTripper }

func (t captureTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	f, _ := req.Context().Value(factsKey{}).(*httpFacts)
	if err != nil || f == nil {
		return resp, err
	}
	// Every body is bounded, an error body too: the SDKs read one whole.
	resp.Body = &boundedBody{rc: resp.Body, facts: f, limits: f.limits}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	isJSON := mt == "application/json"
	var data []byte
	if resp.StatusCode/100 != 2 || isJSON {
		data, _ = io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		rest := resp.Body
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(data), rest), rest}
	}
	f.mu.Lock()
	f.got, f.status, f.header, f.json, f.body = true, resp.StatusCode, resp.Header, isJSON, data
	f.mu.Unlock()
	return resp, nil
}

// capturingClient returns a copy of c whose transport records [httpFacts] and bounds the
// response ([boundedBody]), and which follows a redirect only within the endpoint's origin
// ([RedirectError]).
func capturingClient(c *http.Client) *http.Client {
	cc := *c
	cc.Transport = captureTransport{base: c.Transport}
	cc.CheckRedirect = sameOriginRedirects(c.CheckRedirect)
	return &cc
}

// call is one model call in progress: the caller's context, the call's own (bounded by
// the timeout), the captured HTTP facts and the consumer.
type call struct {
	provider string
	keyVars  []string // the credential variables, named by an authentication failure
	parent   context.Context
	ctx      context.Context
	cancel   context.CancelFunc
	timeout  time.Duration
	facts    *httpFacts
	yield    func(dsh.AssistantChunk, error) bool
	usage    *dsh.Usage
	now      func() time.Time
	// done is set once the call yielded its last item (a finish, an error, or the
	// consumer stopped).
	done bool
	// held counts the bytes of text, reasoning, arguments and signatures yielded so far
	// (Limits.ContentBytes); blocks counts the content blocks and tool calls the wire
	// opened (Limits.Blocks).
	held, blocks int
}

// adapterDefaults fills an adapter's logger (discard) and call timeout
// (DefaultCallTimeout) when its configuration leaves them unset.
func adapterDefaults(log *slog.Logger, timeout time.Duration) (*slog.Logger, time.Duration) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if timeout <= 0 {
		timeout = DefaultCallTimeout
	}
	return log, timeout
}

// mayStart reports whether a Stream goes on to its HTTP request. A request the adapter
// could not build (err) fails the call as CodeInvalidRequest, and a context already done
// ends it aborted; either way the outcome is yielded and mayStart returns false.
func mayStart(ctx context.Context, err error, yield func(dsh.AssistantChunk, error) bool) bool {
	if err != nil {
		yield(nil, &llm.FailureError{Failure: dsh.LLMFailure{Message: err.Error(), Code: llm.CodeInvalidRequest}, Err: err})
		return false
	}
	if ctx.Err() != nil {
		yield(llm.AbortedFinish(ctx, nil), nil)
		return false
	}
	return true
}

func newCall(parent context.Context, provider string, timeout time.Duration, limits Limits, yield func(dsh.AssistantChunk, error) bool, keyVars ...string) *call {
	facts := &httpFacts{limits: limits.withDefaults()}
	ctx, cancel := context.WithTimeout(context.WithValue(parent, factsKey{}, facts), timeout)
	return &call{provider: provider, keyVars: keyVars, parent: parent, ctx: ctx, cancel: cancel, timeout: timeout, facts: facts, yield: yield, now: time.Now}
}

// emit yields a chunk; it reports whether the stream goes on. A cancelled caller gets the
// aborted finish instead.
func (c *call) emit(chunk dsh.AssistantChunk) bool {
	if c.done {
		return false
	}
	if c.parent.Err() != nil {
		c.abort()
		return false
	}
	//dshvet:partial only the chunks that carry text or arguments count against a cap
	switch ch := chunk.(type) {
	case dsh.ChunkToolCall:
		if len(ch.Arguments) > c.facts.limits.ToolArgumentBytes {
			c.argumentsCapped()
			return false
		}
		if !c.hold(len(ch.Arguments) + signatureLen(ch.Signature)) {
			return false
		}
	case dsh.ChunkTextDelta:
		if !c.hold(len(ch.Text)) {
			return false
		}
	case dsh.ChunkReasoningDelta:
		if !c.hold(len(ch.Text) + signatureLen(ch.Signature)) {
			return false
		}
	}
	if !c.yield(chunk, nil) {
		c.done = true
		return false
	}
	return true
}

// argumentsCapped fails the call whose tool call's arguments crossed their cap.
func (c *call) argumentsCapped() {
	e := &CapError{What: "tool call arguments", Limit: int64(c.facts.limits.ToolArgumentBytes)}
	c.fail(dsh.LLMFailure{Message: c.provider + ": " + e.Error(), Code: llm.CodeResponseTooLarge})
}

// signatureLen is the length of an optional signature.
func signatureLen(s *string) int {
	if s == nil {
		return 0
	}
	return len(*s)
}

// hold counts n more bytes yielded of the response's text, reasoning, arguments or
// signatures against Limits.ContentBytes; it fails the call and reports false once they
// are over it.
func (c *call) hold(n int) bool {
	c.held += n
	return !c.contentOver(0)
}

// contentOver reports whether what was yielded and pending bytes more, which a provider
// accumulates before it yields them (a call's argument deltas), are over
// Limits.ContentBytes, failing the call if so: before they grow further.
func (c *call) contentOver(pending int) bool {
	if c.held+pending <= c.facts.limits.ContentBytes {
		return false
	}
	e := &CapError{What: "text, reasoning and tool calls", Limit: int64(c.facts.limits.ContentBytes)}
	c.fail(dsh.LLMFailure{Message: c.provider + ": " + e.Error(), Code: llm.CodeResponseTooLarge})
	return true
}

// block counts one more content block, output item or tool call of the response against
// Limits.Blocks; it fails the call and reports false once they are over it.
func (c *call) block() bool {
	if c.blocks++; c.blocks <= c.facts.limits.Blocks {
		return true
	}
	e := &CapError{What: "content blocks and tool calls", Limit: int64(c.facts.limits.Blocks), Blocks: true}
	c.fail(dsh.LLMFailure{Message: c.provider + ": " + e.Error(), Code: llm.CodeResponseTooLarge})
	return false
}

// argumentsOver reports whether arguments of n bytes are over the cap, failing the call if
// so: for a provider that accumulates a call's argument deltas, before they grow further.
func (c *call) argumentsOver(n int) bool {
	if n <= c.facts.limits.ToolArgumentBytes {
		return false
	}
	c.argumentsCapped()
	return true
}

// finish yields the finish of a stream that ended normally.
func (c *call) finish(reason dsh.FinishReason) {
	if c.emit(dsh.ChunkFinish{Reason: reason, Usage: c.usage}) {
		c.done = true
	}
}

func (c *call) abort() {
	if c.done {
		return
	}
	c.done = true
	c.yield(llm.AbortedFinish(c.parent, c.usage), nil)
}

// fail yields an error finish.
func (c *call) fail(f dsh.LLMFailure) {
	if c.done {
		return
	}
	c.done = true
	if f.RequestID == nil {
		if _, _, h, _, _ := c.facts.snapshot(); h != nil {
			f.RequestID = headerRequestID(h)
		}
	}
	c.yield(llm.ErrorFinish(f, c.usage), nil)
}

// interrupted is the failure of a stream that ended or broke before its terminal event.
func (c *call) interrupted(err error) {
	msg := "response stream ended before its finish"
	if err != nil {
		msg = "response stream broke before its finish: " + err.Error()
	}
	c.fail(dsh.LLMFailure{Message: msg, Code: llm.CodeStreamInterrupted})
}

// end settles a call whose SDK stream stopped with err (nil: the stream ended without its
// terminal event): a cancellation is aborted, the timeout a [llm.CodeTimeout] failure, an HTTP
// error status the provider's failure, a JSON body where a stream was expected its error,
// a transport error with no response at all the Go error, anything else an interrupted
// stream. isDecode says err is a malformed event ([llm.CodeBadResponse]).
func (c *call) end(err error, isDecode bool) {
	if c.done {
		return
	}
	got, status, header, body, isJSON := c.facts.snapshot()
	var redirect *RedirectError
	switch {
	case c.parent.Err() != nil:
		c.abort()
	case c.facts.cap() != nil:
		c.fail(dsh.LLMFailure{Message: c.provider + ": " + c.facts.cap().Error(), Code: llm.CodeResponseTooLarge})
	case errors.As(err, &redirect):
		c.fail(dsh.LLMFailure{Message: c.provider + ": " + redirect.Error(), Code: llm.CodeRedirectRefused})
	case c.ctx.Err() != nil && errors.Is(context.Cause(c.ctx), context.DeadlineExceeded):
		c.fail(dsh.LLMFailure{Message: fmt.Sprintf("%s: no complete answer within %s", c.provider, c.timeout), Code: llm.CodeTimeout})
	case got && status/100 != 2:
		c.fail(c.httpFailure(status, header, body))
	case got && isJSON:
		msg, code := parseAPIErrorBody(body)
		if msg == "" {
			msg, code = "expected an event stream, got an application/json response", llm.CodeBadResponse
		}
		if code == "" {
			code = llm.CodeUnknown
		}
		c.fail(dsh.LLMFailure{Message: msg, Code: normalizeCode(code, msg)})
	case !got && err != nil:
		c.done = true
		c.yield(nil, err)
	case isDecode:
		c.fail(dsh.LLMFailure{Message: "undecodable stream event: " + err.Error(), Code: llm.CodeBadResponse})
	default:
		c.interrupted(err)
	}
}

// httpFailure is the failure of a response with an error status: the provider's message
// and code from its body (else the body's text and HTTP_<status>), the request id, and
// Retry-After; an authentication failure names the credential variable.
func (c *call) httpFailure(status int, header http.Header, body []byte) dsh.LLMFailure {
	msg, code := parseAPIErrorBody(body)
	if msg == "" {
		msg = truncate(strings.TrimSpace(string(body)), 512)
	}
	if msg == "" {
		msg = strconv.Itoa(status) + " " + http.StatusText(status)
	}
	if code == "" {
		code = "HTTP_" + strconv.Itoa(status)
	}
	if (status == http.StatusUnauthorized || status == http.StatusForbidden) && len(c.keyVars) > 0 {
		msg = fmt.Sprintf("%s: authentication failed (%d): %s; check %s", c.provider, status, strings.Join(strings.Fields(msg), " "), strings.Join(c.keyVars, " or "))
	}
	f := dsh.LLMFailure{Message: msg, Code: normalizeCode(code, msg), Status: &status, RequestID: headerRequestID(header)}
	if ms, ok := retryAfterMS(header, c.now()); ok {
		f.ProviderRetryAfterMS = &ms
	}
	return f
}

// normalizeCode maps the providers' ways of saying "over the context window" to
// [llm.CodeContextWindowExceeded] and leaves other codes as they are.
func normalizeCode(code, msg string) string {
	lower := strings.ToLower(msg)
	switch {
	case code == "context_length_exceeded",
		strings.Contains(lower, "prompt is too long"),                   // Anthropic
		strings.Contains(lower, "exceeds the context window"),           // OpenAI Responses
		strings.Contains(lower, "maximum context length"),               // OpenAI chat
		strings.Contains(lower, "exceeds the maximum number of tokens"), // Gemini
		strings.Contains(lower, "input token count") && strings.Contains(lower, "exceeds"):
		return llm.CodeContextWindowExceeded
	}
	return code
}

// parseAPIErrorBody reads the message and code of an error body: {"error": {...}},
// {"error": "text"} or a bare {"message", "code"} object.
func parseAPIErrorBody(body []byte) (msg, code string) {
	var top struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &top) != nil {
		return "", ""
	}
	if len(top.Error) > 0 && string(top.Error) != "null" {
		return parseAPIError(top.Error)
	}
	return parseAPIError(body)
}

// parseAPIError reads an error value: a string, or an object with message and code (a
// string, or a number with a string status beside it as Gemini sends), falling back to
// type for the code.
func parseAPIError(raw json.RawMessage) (msg, code string) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, ""
	}
	var e struct {
		Message string          `json:"message"`
		Code    json.RawMessage `json:"code"`
		Type    string          `json:"type"`
		Status  string          `json:"status"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return "", ""
	}
	var cs string
	if json.Unmarshal(e.Code, &cs) == nil {
		code = cs
	} else if n := bytes.TrimSpace(e.Code); len(n) > 0 && string(n) != "null" {
		var num json.Number
		if json.Unmarshal(n, &num) == nil {
			code = num.String()
		}
		if e.Status != "" {
			code = e.Status
		}
	}
	if code == "" {
		code = e.Type
	}
	return e.Message, normalizeCode(code, e.Message)
}

// isDecodeError reports whether err is a JSON decoding failure of a stream event.
func isDecodeError(err error) bool {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	return errors.As(err, &syn) || errors.As(err, &typ)
}

// intPtr returns a pointer to n, or nil when n is zero.
func intPtr(n int64) *int {
	if n == 0 {
		return nil
	}
	v := int(n)
	return &v
}

// headerRequestID returns the provider's request id header, if any.
func headerRequestID(h http.Header) *string {
	for _, k := range []string{"X-Request-Id", "Request-Id"} {
		if v := strings.TrimSpace(h.Get(k)); v != "" {
			return &v
		}
	}
	return nil
}

// retryAfterMS reads retry-after-ms, else retry-after (delta seconds, possibly
// fractional, or an HTTP date relative to now), in milliseconds.
func retryAfterMS(h http.Header, now time.Time) (int, bool) {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 && f < math.MaxInt32 {
			return int(math.Ceil(f)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if f < 0 || f*1000 >= math.MaxInt32 {
			return 0, false
		}
		return int(math.Ceil(f * 1000)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		if d < 0 {
			d = 0
		}
		if d.Milliseconds() >= math.MaxInt32 {
			return 0, false
		}
		return int(d.Milliseconds()), true
	}
	return 0, false
}

// truncate cuts s to at most n bytes, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// sseWatch is the SDK's event-stream decoder, watched: it counts the events and notes a
// "[DONE]" event (which the SDK's stream ends at like at the end of the body).
type sseWatch struct {
	ssestream.Decoder
	events int
	done   bool
	// errData is the data of an "error" event, which ends the stream.
	errData []byte
}

// watchSSE returns the watched decoder of resp (nil for a nil response).
func watchSSE(resp *http.Response) *sseWatch {
	w := &sseWatch{}
	if resp != nil {
		w.Decoder = ssestream.NewDecoder(resp)
	}
	return w
}

func (w *sseWatch) Next() bool {
	if w.Decoder == nil {
		return false
	}
	if !w.Decoder.Next() {
		return false
	}
	w.events++
	ev := w.Event()
	if ev.Type == "error" {
		w.errData = ev.Data
		return false
	}
	if bytes.HasPrefix(ev.Data, []byte("[DONE]")) {
		w.done = true
	}
	return true
}

func (w *sseWatch) Err() error {
	if w.Decoder == nil {
		return nil
	}
	return w.Decoder.Err()
}

func (w *sseWatch) Close() error {
	if w.Decoder == nil {
		return nil
	}
	return w.Decoder.Close()
}

// sawDone reports whether the stream held a "[DONE]" event.
func (w *sseWatch) sawDone() bool { return w.done }

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func containsString(list []string, s string) bool { return slices.Contains(list, s) }
