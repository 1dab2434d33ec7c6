package provider

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/dshkit/dsh/internal/httporigin"
	"github.com/dshkit/dsh/internal/ssemeter"
)

// This file holds what bounds a model call beyond its timeout: the size of the response
// (its body, one server-sent event, one tool call's arguments) and where the request may
// be redirected to.

// Default caps of a model response ([Limits]). No real response comes near them: the
// largest answers the vendors allow (128k output tokens) are some 10 MB of event stream
// and 0.5 MB of text, the Responses API's closing event repeats that text once more, and
// a response holds tens of content blocks and tool calls, not thousands. Each default
// keeps dsh under 200 MB of memory against a server that sends without end
// (TestSoakEndlessModelStream).
const (
	// DefaultResponseBytes caps the bytes of one response body.
	DefaultResponseBytes = 64 << 20
	// DefaultEventBytes caps one server-sent event: its lines up to the blank line that
	// ends it.
	DefaultEventBytes = 16 << 20
	// DefaultToolArgumentBytes caps the arguments of one tool call.
	DefaultToolArgumentBytes = 16 << 20
	// DefaultContentBytes caps what dsh holds of one response until it ends (its text,
	// reasoning and tool calls' arguments, together): some 30 times the text of 128k
	// output tokens.
	DefaultContentBytes = 16 << 20
	// DefaultBlocks caps the content blocks and tool calls of one response.
	DefaultBlocks = 10_000
)

// Limits cap what one model response may make dsh read and hold, so that a server sending
// without end (text deltas, argument deltas, tool calls, content blocks, one endless
// event) ends the call with a failure instead of exhausting memory. Zero fields mean the
// defaults.
type Limits struct {
	// ResponseBytes caps the bytes of one response body; zero means
	// [DefaultResponseBytes].
	ResponseBytes int64
	// EventBytes caps one server-sent event; zero means [DefaultEventBytes].
	EventBytes int64
	// ToolArgumentBytes caps the arguments of one tool call; zero means
	// [DefaultToolArgumentBytes].
	ToolArgumentBytes int
	// ContentBytes caps what dsh holds of one response until it ends: its text, its
	// reasoning and its tool calls' arguments (and the signatures that come with them),
	// together; zero means [DefaultContentBytes].
	ContentBytes int
	// Blocks caps the parts of one response dsh keeps track of: its content blocks,
	// output items and tool calls, as its wire divides it; zero means [DefaultBlocks].
	Blocks int
}

func (l Limits) withDefaults() Limits {
	if l.ResponseBytes <= 0 {
		l.ResponseBytes = DefaultResponseBytes
	}
	if l.EventBytes <= 0 {
		l.EventBytes = DefaultEventBytes
	}
	if l.ToolArgumentBytes <= 0 {
		l.ToolArgumentBytes = DefaultToolArgumentBytes
	}
	if l.ContentBytes <= 0 {
		l.ContentBytes = DefaultContentBytes
	}
	if l.Blocks <= 0 {
		l.Blocks = DefaultBlocks
	}
	return l
}

// CapError is a response that crossed one of its [Limits]: what was capped and the cap.
type CapError struct {
	// What is "response", "event", "tool call arguments", "text, reasoning and tool
	// calls" or "content blocks and tool calls".
	What string
	// Limit is the cap: bytes, or a count of blocks where Blocks is set.
	Limit int64
	// Blocks says Limit counts blocks ([Limits.Blocks]), not bytes.
	Blocks bool
}

// Error says which cap the response crossed.
func (e *CapError) Error() string {
	if e.Blocks {
		return fmt.Sprintf("the model's response has more than %d %s (the provider's cap; the rest was not read)", e.Limit, e.What)
	}
	return fmt.Sprintf("the model's %s exceeded %d bytes (the provider's cap; the rest was not read)", e.What, e.Limit)
}

// errResponseCapped is what the bounded body returns once a cap is crossed; the call's
// failure says which one (httpFacts.capped).
var errResponseCapped = errors.New("model response capped")

// boundedBody reads a 2xx response body for the SDK and ends it with an error once the
// body, or one event of it, is over its cap. The cap it crossed is recorded in the call's
// facts, so that the call fails with [llm.CodeResponseTooLarge] whatever error the SDK
// makes of the read.
type boundedBody struct {
	rc     io.ReadCloser
	facts  *httpFacts
	limits Limits
	total  int64
	event  ssemeter.Meter
	err    error
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.rc.Read(p)
	for i := 0; i < n; i++ {
		if b.event.Add(p[i]) > b.limits.EventBytes {
			return b.capped(i, &CapError{What: "event", Limit: b.limits.EventBytes})
		}
	}
	b.total += int64(n)
	if b.total > b.limits.ResponseBytes {
		return b.capped(n-int(b.total-b.limits.ResponseBytes), &CapError{What: "response", Limit: b.limits.ResponseBytes})
	}
	return n, err
}

// capped records the cap crossed, hands the SDK the n bytes read before it and fails every
// later read.
func (b *boundedBody) capped(n int, e *CapError) (int, error) {
	b.facts.mu.Lock()
	if b.facts.capped == nil {
		b.facts.capped = e
	}
	b.facts.mu.Unlock()
	b.err = errResponseCapped
	return max(n, 0), b.err
}

func (b *boundedBody) Close() error { return b.rc.Close() }

// RedirectError is a redirect from the configured endpoint to another origin (scheme,
// host and port), which the providers refuse: the request carries the API key, in headers
// (x-api-key, x-goog-api-key) the Go client would forward to any host.
type RedirectError struct {
	// From and To are the request's URL and the redirect's target, without their query.
	From, To string
}

// Error names both origins.
func (e *RedirectError) Error() string {
	return fmt.Sprintf("the model endpoint %s redirected to another origin, %s: not followed, so that the API key stays with its endpoint", e.From, e.To)
}

// origin is a URL's origin ([httporigin.Of]).
func origin(u *url.URL) string { return httporigin.Of(u) }

// redact is a URL without its query and user info, for an error message.
func redact(u *url.URL) string { return httporigin.Redact(u) }

// sameOriginRedirects returns a CheckRedirect that follows a redirect only within the
// first request's origin, then applies next (the client's own check, or Go's default of
// ten redirects).
func sameOriginRedirects(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 && origin(req.URL) != origin(via[0].URL) {
			return &RedirectError{From: redact(via[0].URL), To: redact(req.URL)}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
}
