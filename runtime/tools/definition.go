package tools

import (
	"context"
	"encoding/json"

	"github.com/dshkit/dsh/generated/dsh"
)

// Definition is a tool: its model-facing description, the contract of its arguments and
// value, and its body.
type Definition struct {
	// Name is the tool name; it must be non-empty and unique within one registry layer.
	Name string
	// Description tells the model what the tool does.
	Description string
	// InputSchema is the JSON Schema of the arguments (draft 2020-12 unless it names
	// another draft; self-contained). Arguments are validated against it when the call is
	// created, before any policy runs. Nil means any JSON value is accepted.
	InputSchema json.RawMessage
	// Output declares the canonical value and how it is presented; nil means any lossless
	// value, rendered by the default rendering (see Output.Render), with no meta.
	Output *Output
	// Run is the body. It returns the canonical value, which must be lossless JSON
	// (json.Marshal-able, no NaN or infinity, no -0; a json.RawMessage is taken as JSON).
	// An error (or panic) fails the call; return an *Error for a structured failure.
	Run func(ctx context.Context, rc *RunContext) (any, error)
	// FinalizeContent, if set, maps the content of the final result of every call,
	// whatever its outcome, exactly once. It is captured when the call is created, so
	// unregistering the tool later does not remove it. It may replace only the content:
	// nil keeps it. It must be total: an error replaces the result with a failure whose
	// message is the error's own (an *Error keeps its code; the model sees "Error:
	// <message>"), a panic with one of message "panic: <value>", and content that is not
	// lossless JSON with the failure "tool result must be losslessly JSON-serializable";
	// the contexts that survive every failure are kept.
	FinalizeContent func(exec dsh.ToolExecution, result dsh.ToolExecutionResult) ([]dsh.ContentBlock, error)
	// IsConcurrencySafe, if set, tells whether a call with args may run in parallel with
	// other parallel calls; see Runtime.ExecutionMode.
	IsConcurrencySafe func(args json.RawMessage) bool
	// Loading is how the model's requests declare the tool: in full from the first
	// request (the zero value), or behind a tool search. A call to the tool runs
	// whichever it is.
	Loading Loading
	// Precheck, if set, checks a call's arguments (the model's, valid JSON) when the call
	// is created, before any listener sees it: no tools/rewrite-input, no
	// tools/pre-execute. An error fails the call there, finally, as an argument that breaks
	// the input schema does (an *Error keeps its code; the message is what the model
	// reads). It is for the refusals an engine makes before its hooks run (Codex parsing a
	// function's arguments, checking the MCP server a resource tool names). It must be
	// quick and must not block; a panic is a failure.
	Precheck func(args json.RawMessage) error
	// Resumable says a call of the tool that a crash left without a result may be
	// dispatched again when its agent resumes: the tool itself makes a second dispatch
	// safe (the agent tool answers a child that finished from the session log and runs
	// only one that did not). A call of any other tool gets an INTERRUPTED failure on
	// resume, and never runs twice.
	Resumable bool
}

// Loading is how the model's requests declare a tool (the Messages API's deferred tool
// loading, Claude Code's ToolSearch).
type Loading string

const (
	// LoadEager declares the tool in full in every request (the zero value).
	LoadEager Loading = ""
	// LoadDeferred offers the tool behind a tool search: a request declares it only once a
	// tool reference of the conversation names it (a text block's ToolReference in a tool
	// result), and then with deferLoading
	// (the model knows it by name until then).
	LoadDeferred Loading = "deferred"
	// LoadPlaceholder declares the tool in every request that leaves a deferred tool out,
	// with deferLoading: an entry the model never sees, which keeps the API's deferred
	// loading on (Claude Code's DeferredToolPlaceholder).
	LoadPlaceholder Loading = "placeholder"
)

// Output declares a tool's canonical value and its presentation.
type Output struct {
	// Schema is the JSON Schema the value must satisfy; nil accepts any lossless value.
	Schema json.RawMessage
	// Render renders the content the model sees from the arguments and the value. Nil
	// renders one text block: the value's text if it is a JSON string, else its JSON text.
	Render func(args, value json.RawMessage) ([]dsh.ContentBlock, error)
	// PresentationMeta, if set, computes the presentation metadata persisted for UI replay
	// (top-level calls only); nil from it means no meta.
	PresentationMeta func(args, value json.RawMessage) (json.RawMessage, error)
}

// Mode is how the agent loop's scheduler may run a call.
type Mode string

const (
	// ModeExclusive: the call runs alone, as a barrier.
	ModeExclusive Mode = "exclusive"
	// ModeParallel: the call may run alongside other parallel calls.
	ModeParallel Mode = "parallel"
)
