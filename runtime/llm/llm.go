package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net"
	"slices"
	"strings"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/internal/variant"
)

// Model streams one model response per call. See the package documentation for the
// stream contract every implementation keeps.
type Model interface {
	// Stream returns the response to req as a lazy sequence of chunks; each iteration of
	// the sequence is one model call. The sequence ends with exactly one
	// [dsh.ChunkFinish], or with a non-nil error for a transport-level failure.
	Stream(ctx context.Context, req Request) iter.Seq2[dsh.AssistantChunk, error]
}

// Request is one frozen model request: the call configuration, the system prompt, the
// history derived from the session log, and the tools in canonical order.
type Request struct {
	// Config is the call configuration agent/request produced (provider, model,
	// maxTokens, temperature, extra).
	Config dsh.LLMCallConfig
	// System is the assembled system prompt. When it is empty, adapters fall back to
	// Config.System.
	System string
	// Messages is the conversation, oldest first.
	Messages []Message
	// Tools are the tools the model may call, in canonical order.
	Tools []ToolSpec
}

// Role is the side of the conversation a [Message] is on.
type Role string

const (
	// RoleUser is a user-side message: a prompt, a context, or a tool result.
	RoleUser Role = "user"
	// RoleAssistant is a model response replayed into a later request.
	RoleAssistant Role = "assistant"
)

// Message is one message of a request. A tool result is a user message with one
// [dsh.ToolResultBlock]; a tool call is a [dsh.ToolCallBlock] in an assistant message.
type Message struct {
	// Role is RoleUser or RoleAssistant.
	Role Role
	// Content is the message's blocks, in order.
	Content []dsh.ContentBlock
	// Source is where a user message came from (nil when unknown); an adapter may render
	// plugin contexts differently (see OpenAIConfig.PluginContextRole).
	Source dsh.MessageSource
}

// FreeformKey is the input-schema keyword that makes a tool freeform where the wire has
// such tools (the Responses API's custom tools): its value is the tool's format (Codex's
// apply_patch: {"type": "grammar", "syntax": "lark", "definition": …}), and the tool is
// offered as a custom tool with that format instead of a function. The model's call is
// the text it wrote, which the tool receives as its argument "input"; the rest of the
// schema ({input: string}) is what the arguments are checked against. A wire without
// freeform tools offers the schema as it is.
const FreeformKey = "x-freeform"

// NamespaceKey is the input-schema keyword that puts a tool in a namespace where the wire
// has them (the Responses API's namespace tools): its value is a [Namespace], and the
// tool is offered as a function of that namespace's entry (with the namespace's other
// tools) instead of on its own; the model's call names the function. A wire without
// namespaces offers the schema as it is.
const NamespaceKey = "x-namespace"

// UnofferedKey is the input-schema keyword that names properties (a list of names) the
// schema accepts but the model is not told of: every provider leaves them and the keyword
// out of the schema it offers, while the tool still validates a call against the whole
// schema (Codex's spawn_agent takes agent_type when its schema lists no role).
const UnofferedKey = "x-unoffered"

// Namespace is a group of tools the model is offered as one entry (Codex's
// multi_agent_v1, and an MCP server's tools, mcp__<server>).
type Namespace struct {
	// Name is the namespace's name, Description what it holds.
	Name        string `json:"name"`
	Description string `json:"description"`
	// Function, when set, is the name the tool has in the namespace, which the model's
	// call names, when it is not the tool's own (an MCP tool mcp__hk__hook is the
	// function hook of the namespace mcp__hk).
	Function string `json:"function,omitempty"`
}

// FunctionOf is the name the tool name has in n (Function, else name).
func (n Namespace) FunctionOf(name string) string {
	if n.Function != "" {
		return n.Function
	}
	return name
}

// Mark returns schema (a JSON object) with n under NamespaceKey.
func (n Namespace) Mark(schema json.RawMessage) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(schema, &m); err != nil {
		return nil, fmt.Errorf("llm: a namespaced tool's schema: %w", err)
	}
	ns, err := json.Marshal(n)
	if err != nil {
		return nil, err
	}
	m[NamespaceKey] = ns
	return json.Marshal(m)
}

// NamespaceOf returns the namespace a decoded input schema names under NamespaceKey, and
// the schema without it; ok is false when it names none.
func NamespaceOf(schema map[string]any) (n Namespace, rest map[string]any, ok bool) {
	v, found := schema[NamespaceKey].(map[string]any)
	if !found {
		return Namespace{}, schema, false
	}
	n.Name, _ = v["name"].(string)
	n.Description, _ = v["description"].(string)
	n.Function, _ = v["function"].(string)
	rest = make(map[string]any, len(schema)-1)
	for k, x := range schema {
		if k != NamespaceKey {
			rest[k] = x
		}
	}
	return n, rest, n.Name != ""
}

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	// Name is the name the model calls the tool by.
	Name string
	// Description tells the model what the tool does.
	Description string
	// InputSchema is the JSON Schema of the tool's arguments; nil means an object with
	// no declared properties.
	InputSchema json.RawMessage
	// DeferLoading marks a tool offered behind a tool search: the Messages API shows the
	// model its definition only once a tool_reference block names it (defer_loading; a
	// text block's ToolReference in a tool result);
	// the other wires declare it as any tool.
	DeferLoading bool
}

// Clone returns a deep copy of r: no slice, map, pointer or raw JSON of the copy is shared
// with r. The copy holds every content block and message source in its value form (a
// pointer variant becomes the value it points to, a nil one nil), so that a model, which
// streams a clone of its request (every adapter and [Scripted] do), sees one dynamic type
// per variant.
func (r Request) Clone() Request {
	c := Request{Config: cloneConfig(r.Config), System: r.System}
	if r.Messages != nil {
		c.Messages = make([]Message, len(r.Messages))
		for i, m := range r.Messages {
			c.Messages[i] = Message{Role: m.Role, Content: cloneBlocks(m.Content), Source: cloneSource(m.Source)}
		}
	}
	if r.Tools != nil {
		c.Tools = make([]ToolSpec, len(r.Tools))
		for i, t := range r.Tools {
			c.Tools[i] = ToolSpec{Name: t.Name, Description: t.Description, InputSchema: slices.Clone(t.InputSchema), DeferLoading: t.DeferLoading}
		}
	}
	return c
}

func cloneConfig(c dsh.LLMCallConfig) dsh.LLMCallConfig {
	out := c
	out.MaxTokens = clonePtr(c.MaxTokens)
	out.Temperature = clonePtr(c.Temperature)
	out.System = clonePtr(c.System)
	if c.Extra != nil {
		out.Extra = make(map[string]json.RawMessage, len(c.Extra))
		for k, v := range c.Extra {
			out.Extra[k] = slices.Clone(v)
		}
	}
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// cloneBlocks deep-copies content blocks into their value forms (see [Request.Clone]).
func cloneBlocks(bs []dsh.ContentBlock) []dsh.ContentBlock {
	if bs == nil {
		return nil
	}
	out := make([]dsh.ContentBlock, len(bs))
	for i, b := range bs {
		out[i] = cloneBlock(b)
	}
	return out
}

func cloneBlock(b dsh.ContentBlock) dsh.ContentBlock {
	switch v := variant.Value(b).(type) {
	case dsh.ToolResultBlock:
		v.Content = cloneBlocks(v.Content)
		return v
	case dsh.ReasoningBlock:
		v.Signature, v.Redacted = clonePtr(v.Signature), clonePtr(v.Redacted)
		return v
	case dsh.ToolCallBlock:
		v.Signature = clonePtr(v.Signature)
		return v
	default: // text and image hold no reference; nil (or a nil pointer variant) is nil
		return v
	}
}

// cloneSource deep-copies a message source into its value form (see [Request.Clone]).
func cloneSource(s dsh.MessageSource) dsh.MessageSource {
	switch v := variant.Value(s).(type) {
	case dsh.SourcePlugin:
		v.Summary = clonePtr(v.Summary)
		return v
	case dsh.SourceModel:
		v.ReplayState = slices.Clone(v.ReplayState)
		return v
	default: // user and tool sources hold no reference
		return v
	}
}

// Failure codes the package produces. Provider codes (from an error body) pass through
// unchanged.
const (
	// CodeUnknown is an error nothing more specific is known about.
	CodeUnknown = "UNKNOWN"
	// CodeAborted is a call ended by the cancellation of its context.
	CodeAborted = "ABORTED"
	// CodeTimeout is a call whose context deadline passed, or a network timeout.
	CodeTimeout = "TIMEOUT"
	// CodeNetwork is a transport failure: the provider could not be reached.
	CodeNetwork = "NETWORK_ERROR"
	// CodeStreamInterrupted is a response stream that broke before its finish.
	CodeStreamInterrupted = "STREAM_INTERRUPTED"
	// CodeBadResponse is a response the adapter could not understand.
	CodeBadResponse = "BAD_RESPONSE"
	// CodeInvalidRequest is a request the adapter could not build or send.
	CodeInvalidRequest = "INVALID_REQUEST"
	// CodeResponseTooLarge is a response over one of the provider's caps (its body, one
	// event, one tool call's arguments, what is held of it, its blocks); the rest was not
	// read. It is not retried.
	CodeResponseTooLarge = "RESPONSE_TOO_LARGE"
	// CodeRedirectRefused is a request the endpoint redirected to another origin, which
	// the providers do not follow (the credentials stay with their endpoint).
	CodeRedirectRefused = "REDIRECT_REFUSED"
)

// FailureError is a Go error that carries an exact [dsh.LLMFailure]; [AsFailure] returns
// the failure unchanged. Models yield it when they know the failure facts but have no
// finish to put them in.
type FailureError struct {
	// Failure is the failure the error stands for.
	Failure dsh.LLMFailure
	// Err is the underlying error, if any.
	Err error
}

// Error returns the failure's code and message.
func (e *FailureError) Error() string {
	return e.Failure.Code + ": " + e.Failure.Message
}

// Unwrap returns the underlying error.
func (e *FailureError) Unwrap() error { return e.Err }

// AsFailure converts a Go error yielded by a stream into the failure the loop records: a
// [*FailureError]'s failure as is; context cancellation as [CodeAborted]; a passed
// deadline or a network timeout as [CodeTimeout]; any other network error as
// [CodeNetwork]; anything else as [CodeUnknown]. The message is the error's text. A nil
// error gives a [CodeUnknown] failure with the message "unknown error".
func AsFailure(err error) dsh.LLMFailure {
	if err == nil {
		return dsh.LLMFailure{Message: "unknown error", Code: CodeUnknown}
	}
	var fe *FailureError
	if errors.As(err, &fe) {
		return fe.Failure
	}
	code := CodeUnknown
	var netErr net.Error
	switch {
	case errors.Is(err, context.Canceled):
		code = CodeAborted
	case errors.Is(err, context.DeadlineExceeded):
		code = CodeTimeout
	case errors.As(err, &netErr):
		if netErr.Timeout() {
			code = CodeTimeout
		} else {
			code = CodeNetwork
		}
	}
	return dsh.LLMFailure{Message: err.Error(), Code: code}
}

// AbortedFinish is the finish of a call whose context was cancelled: reason aborted, an
// error of [CodeAborted] carrying the context's cause, and the usage so far. A [Model]
// yields it when ctx is cancelled mid-call.
func AbortedFinish(ctx context.Context, usage *dsh.Usage) dsh.ChunkFinish {
	msg := "aborted"
	if cause := context.Cause(ctx); cause != nil {
		msg = cause.Error()
	}
	return dsh.ChunkFinish{
		Reason: dsh.FinishReasonAborted,
		Usage:  usage,
		Error:  &dsh.LLMFailure{Message: msg, Code: CodeAborted},
	}
}

// ErrorFinish is the finish of a call that failed with f: reason error, f as its error,
// and the usage so far.
func ErrorFinish(f dsh.LLMFailure, usage *dsh.Usage) dsh.ChunkFinish {
	return dsh.ChunkFinish{Reason: dsh.FinishReasonError, Usage: usage, Error: &f}
}

// Response is a folded stream: what one model call produced.
type Response struct {
	// Content is the assistant content in stream order: each run of text deltas is one
	// [dsh.TextBlock], each run of reasoning deltas one [dsh.ReasoningBlock], each tool
	// call one [dsh.ToolCallBlock]. Truncated tool calls of a max-tokens finish are kept
	// here; dropping them is the loop's rule.
	Content []dsh.ContentBlock
	// Text is all the text deltas, concatenated.
	Text string
	// Reasoning is all the reasoning deltas, concatenated.
	Reasoning string
	// ToolCalls are the tool calls, in stream order.
	ToolCalls []dsh.ToolCallBlock
	// Finish is the stream's finish; its Reason is empty if the stream ended without one.
	Finish dsh.ChunkFinish
	// Usage is the finish's usage, when the provider reported it.
	Usage *dsh.Usage
}

// Message returns the response as an assistant message (its content shared, not
// copied).
func (r Response) Message() dsh.AssistantMessage {
	return dsh.AssistantMessage{Role: dsh.AssistantMessageRoleAssistant, Content: r.Content}
}

// Finished reports whether the response has a finish.
func (r Response) Finished() bool { return r.Finish.Reason != "" }

// Errors [Assembler.Add] and [Collect] report for streams that break the contract.
var (
	// ErrNilChunk is a nil chunk yielded with a nil error.
	ErrNilChunk = errors.New("llm: stream yielded a nil chunk")
	// ErrChunkAfterFinish is a chunk yielded after the finish.
	ErrChunkAfterFinish = errors.New("llm: stream yielded a chunk after its finish")
	// ErrNoFinish is a stream that ended without a finish or an error.
	ErrNoFinish = errors.New("llm: stream ended without a finish")
	// ErrDuplicateToolCallID is a tool call whose id an earlier call of the same response
	// has: the calls could not be told apart, so neither may run.
	ErrDuplicateToolCallID = errors.New("llm: two tool calls of one response have the same id")
)

// Assembler folds chunks into a [Response] one at a time, for a consumer that also
// handles each chunk itself (e.g. logs it). The zero value is ready to use. Folding is
// linear in the stream's length: a run of text or reasoning deltas is appended to a
// builder and becomes one block when the run ends or [Assembler.Response] is called.
type Assembler struct {
	resp Response
	// run holds the text of the trailing run of text or reasoning deltas, which is not in
	// resp.Content yet; runKind says which (0: no run open).
	run     strings.Builder
	runKind dsh.ContentBlockKind
	// sig and redacted are the signature and redaction of the reasoning run being closed.
	sig      *string
	redacted *bool
	// ids are the tool call ids seen, once there are several calls.
	ids map[string]struct{}
}

// Add folds one chunk. It returns [ErrNilChunk] for a nil chunk,
// [ErrChunkAfterFinish] for any chunk after the finish, [ErrDuplicateToolCallID] for a
// tool call whose id an earlier one has, and leaves the response
// unchanged then.
func (a *Assembler) Add(c dsh.AssistantChunk) error {
	if isNilChunk(c) {
		return ErrNilChunk
	}
	if a.resp.Finished() {
		return fmt.Errorf("%w (%s)", ErrChunkAfterFinish, c.Kind())
	}
	r := &a.resp
	if tc, ok := c.(dsh.ChunkToolCall); ok && tc.ID != "" {
		if a.ids == nil {
			a.ids = map[string]struct{}{}
		}
		if _, dup := a.ids[tc.ID]; dup {
			return fmt.Errorf("%w: %q", ErrDuplicateToolCallID, tc.ID)
		}
		a.ids[tc.ID] = struct{}{}
	}
	dsh.SwitchAssistantChunk(c,
		func(d dsh.ChunkTextDelta) struct{} {
			a.extend(dsh.TextBlock{}.Kind(), d.Text)
			return struct{}{}
		},
		func(d dsh.ChunkReasoningDelta) struct{} {
			a.extend(dsh.ReasoningBlock{}.Kind(), d.Text)
			if d.Signature != nil || d.Redacted != nil {
				// A signed delta ends its block: the next reasoning opens another.
				a.sig, a.redacted = clonePtr(d.Signature), clonePtr(d.Redacted)
				a.closeRun()
			}
			return struct{}{}
		},
		func(tc dsh.ChunkToolCall) struct{} {
			a.closeRun()
			b := dsh.ToolCallBlock{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments, Signature: clonePtr(tc.Signature)}
			r.ToolCalls = append(r.ToolCalls, b)
			r.Content = append(r.Content, b)
			return struct{}{}
		},
		func(f dsh.ChunkFinish) struct{} {
			r.Finish = f
			r.Usage = f.Usage
			return struct{}{}
		},
	)
	return nil
}

// extend adds a delta of the given kind to the trailing run, closing the run first if
// it is of the other kind.
func (a *Assembler) extend(kind dsh.ContentBlockKind, text string) {
	if a.runKind != kind {
		a.closeRun()
		a.runKind = kind
	}
	a.run.WriteString(text)
}

// closeRun moves the trailing run, if any, into the content as one block.
func (a *Assembler) closeRun() {
	if a.runKind == "" {
		return
	}
	a.resp.Content = append(a.resp.Content, a.runBlock())
	a.run.Reset()
	a.runKind = ""
	a.sig, a.redacted = nil, nil
}

// runBlock is the trailing run as a content block.
func (a *Assembler) runBlock() dsh.ContentBlock {
	if a.runKind == (dsh.ReasoningBlock{}).Kind() {
		return dsh.ReasoningBlock{Text: a.run.String(), Signature: a.sig, Redacted: a.redacted}
	}
	return dsh.TextBlock{Text: a.run.String()}
}

// Response returns the response folded so far. Its slices are copies: later Adds do not
// change them.
func (a *Assembler) Response() Response {
	r := a.resp
	r.Content = slices.Clone(r.Content)
	if a.runKind != "" {
		r.Content = append(r.Content, a.runBlock())
	}
	var texts, reasonings []string
	for _, b := range r.Content {
		//dshvet:partial only text and reasoning have text to join
		switch b := b.(type) {
		case dsh.TextBlock:
			texts = append(texts, b.Text)
		case dsh.ReasoningBlock:
			reasonings = append(reasonings, b.Text)
		}
	}
	r.Text, r.Reasoning = join(texts), join(reasonings)
	r.ToolCalls = slices.Clone(r.ToolCalls)
	return r
}

// join concatenates parts without a copy when there is only one, and with one allocation
// of the final size otherwise: a response's text may be tens of megabytes (up to the
// provider's response cap), and a builder growing by doubling would hold it twice over.
func join(parts []string) string {
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts, "")
}

// Finished reports whether the finish has been added.
func (a *Assembler) Finished() bool { return a.resp.Finished() }

// Collect consumes a whole stream and folds it into a [Response]. A yielded Go error ends
// the fold and is returned with the response so far (use [AsFailure] on it). A stream that
// breaks the contract (a nil chunk, a chunk after the finish, no finish at all) returns
// the response so far and [ErrNilChunk], [ErrChunkAfterFinish] or [ErrNoFinish].
func Collect(seq iter.Seq2[dsh.AssistantChunk, error]) (Response, error) {
	var a Assembler
	for c, err := range seq {
		if err != nil {
			return a.Response(), err
		}
		if err := a.Add(c); err != nil {
			return a.Response(), err
		}
	}
	if !a.Finished() {
		return a.Response(), ErrNoFinish
	}
	return a.Response(), nil
}

// isNilChunk reports whether c is nil or a nil pointer variant.
func isNilChunk(c dsh.AssistantChunk) bool { return variant.Value(c) == nil }
