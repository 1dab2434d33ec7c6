package tools

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/approval"
)

// Runtime runs tool calls through the five-phase pipeline (see the package doc). It is
// safe for concurrent use.
type Runtime struct {
	tools    *Registry
	hooks    *dsh.Registry
	approver approval.Approver
	log      *slog.Logger
	// conflict and rewriteBound configure the tools/rewrite-input fold (rewrite.go).
	conflict     ConflictPolicy
	rewriteBound time.Duration
	// unknown words the failure of a model's call of a tool no registration is visible
	// to, made at creation (WithUnknownTool); nil: such a call fails at dispatch.
	unknown func(agentID, name string) string
	// finals holds the final failure a tools/execute wrapper recorded with Fail, by *call,
	// until dispatch takes it (fail.go).
	finals sync.Map
}

// Option configures a Runtime.
type Option func(*Runtime)

// WithApprover mounts the approval seam that resolves ask decisions. Without one an ask is
// denied (docs/design/SEMANTICS.md#210-ask-resolution-the-approval-seam).
func WithApprover(a approval.Approver) Option {
	return func(rt *Runtime) { rt.approver = a }
}

// WithUnknownTool makes a call the model made (not one a composite nested, nor a tail
// call) of a tool that no registration visible to it has fail at creation, before
// tools/rewrite-input and any policy, so that no listener of any phase sees it: its
// content is text(agentID, name) as it is (no "Error: " before it), its error
// UNKNOWN_TOOL. This is how the engines refuse a tool they do not have, before their hooks
// (spec/toolsets' "unknown"). A tool registered but hidden from the call (Input.Hidden)
// still goes through policy. Without the option, or with a nil text, an unknown tool
// fails at dispatch, after policy.
func WithUnknownTool(text func(agentID, name string) string) Option {
	return func(rt *Runtime) { rt.unknown = text }
}

// WithLogger sets the logger of the runtime (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(rt *Runtime) {
		if l != nil {
			rt.log = l
		}
	}
}

// New returns a runtime that resolves tools in tools and dispatches the tools/* events
// through hooks, where plugins and bridges register their listeners. A nil tools or hooks
// is replaced by an empty one.
func New(tools *Registry, hooks *dsh.Registry, opts ...Option) *Runtime {
	if tools == nil {
		tools = NewRegistry()
	}
	if hooks == nil {
		hooks = dsh.NewRegistry()
	}
	rt := &Runtime{tools: tools, hooks: hooks, log: slog.Default(), conflict: ConflictOrdered, rewriteBound: DefaultRewriteDeadline}
	for _, o := range opts {
		if o != nil {
			o(rt)
		}
	}
	return rt
}

// Tools returns the runtime's tool registry.
func (rt *Runtime) Tools() *Registry { return rt.tools }

// Hooks returns the registry the runtime dispatches the tools/* events through.
func (rt *Runtime) Hooks() *dsh.Registry { return rt.hooks }

// Input is one tool call, as the caller (the agent loop, a composite tool, a test) makes
// it. It is read once, when the call is created.
type Input struct {
	// CallID is the id of the call (the model's tool-call id for a loop call).
	CallID string
	// Name is the tool name; unknown names are executed too (and fail with UNKNOWN_TOOL
	// at dispatch, after policy).
	Name string
	// Arguments is the caller's JSON. It is snapshotted when the call is created;
	// anything that is not lossless JSON (empty, invalid, invalid UTF-8, a non-finite
	// number or -0) fails the call before any policy. Use ModelArguments to turn a
	// model's raw argument string into Arguments. The tools/rewrite-input listeners may
	// rewrite them before the call is sealed.
	Arguments json.RawMessage
	// RawArguments is the model's raw argument string Arguments was made from with
	// ModelArguments, for a call the model made; it tells the tools/rewrite-input
	// listeners that arguments which were not valid JSON arrive as a JSON string (Raw).
	RawArguments string
	// Turn and Step locate a call the model made, for the tools/rewrite-input payload; 0
	// for a direct execution.
	Turn, Step int
	// AgentID is the id of the agent the call runs for; empty for an agent-less call.
	AgentID string
	// Lineage is, for a call a subagent makes, the child's identity (ToolExecution's
	// lineage); nil for a top-level agent's call.
	Lineage *dsh.Lineage
	// Parent is the token of the composite call that dispatched this one; zero for a
	// top-level call.
	Parent dsh.Token
	// RootCallID is the id of the outermost call of a nested chain; empty means CallID.
	RootCallID string
	// Hidden says the tool was not offered to the model in the request this call answers
	// (an agent/request restriction or rewrite took it out): the call resolves as an
	// unknown tool (UNKNOWN_TOOL), whatever the registry holds.
	Hidden bool

	depth uint8 // how many calls RunContext.Execute nested this one in (0: top level)
	// original and tails place a tail call (tail.go): the name of the model's call it
	// replaces, and how many tail calls precede it in its chain, itself included.
	original string
	tails    uint8
}

// MaxNesting is how deep RunContext.Execute nests calls: a call nested deeper fails at
// creation (CodeNestingTooDeep), before any policy, so that a composite tool that keeps
// calling itself fails instead of exhausting the goroutine's stack, which no recover can
// catch.
const MaxNesting = 64

// ModelArguments turns a model's raw tool-call argument string into Input.Arguments
// (docs/design/SEMANTICS.md#54-tool-batch-scheduling-and-ordering): "" gives {}, valid JSON is kept, anything else becomes that
// string as a JSON string.
func ModelArguments(raw string) json.RawMessage {
	if raw == "" {
		return json.RawMessage("{}")
	}
	if data, err := snapshotJSON([]byte(raw)); err == nil {
		return data
	}
	data, _ := json.Marshal(raw)
	return data
}

// HaltPoint says which decision halted the turn.
type HaltPoint string

const (
	// HaltPreExecute: a tools/pre-execute halt; the call was denied with the reason.
	HaltPreExecute HaltPoint = dsh.PreToolEventName
	// HaltPostExecute: a tools/post-execute halt; the result was kept.
	HaltPostExecute HaltPoint = dsh.PostToolEventName
	// HaltApprovalAnswer: an approval/answer deny with interrupt; the call was denied with
	// the message.
	HaltApprovalAnswer HaltPoint = dsh.ApprovalAnswerEventName
)

// Halt is a halt decision made for a call (docs/design/SEMANTICS.md#a7-halt-is-a-decision): the agent loop
// settles the rest of the batch and ends the turn aborted{hook{reason}}.
type Halt struct {
	// Reason is the halt reason.
	Reason string `json:"reason"`
	// Point is the event whose decision halted.
	Point HaltPoint `json:"point"`
}

// Result is the outcome of one call.
type Result struct {
	// Exec is the sealed call, as the phases saw it.
	Exec dsh.ToolExecution `json:"exec"`
	// Outcome is the final, normalized result: a dsh.ToolSuccess or a dsh.ToolFailure
	// (values, never pointers), lossless JSON.
	Outcome dsh.ToolExecutionResult `json:"result"`
	// Halt is set when a pre- or post-execute decision halted the turn (the first halt
	// wins); the call's outcome stands either way.
	Halt *Halt `json:"halt,omitempty"`
	// Tails are the tail calls that ran in place of the call (a tools/post-execute tail
	// decision), in order: Outcome is the last one's, Exec stays the call's own.
	Tails []dsh.ToolTail `json:"tails,omitempty"`
}

// IsError reports whether the call failed.
func (r Result) IsError() bool {
	_, ok := r.Outcome.(dsh.ToolFailure)
	return ok
}

// Content returns the model-facing content of the outcome.
func (r Result) Content() []dsh.ContentBlock {
	switch v := r.Outcome.(type) {
	case dsh.ToolSuccess:
		return v.Content
	case dsh.ToolFailure:
		return v.Content
	}
	return nil
}

// AdditionalContexts returns the context messages the call adds after the batch's
// results.
func (r Result) AdditionalContexts() []dsh.UserMessage {
	switch v := r.Outcome.(type) {
	case dsh.ToolSuccess:
		return v.AdditionalContexts
	case dsh.ToolFailure:
		return v.AdditionalContexts
	}
	return nil
}

// ConcludesTurn reports whether the call succeeded and its body asked to conclude the
// turn.
func (r Result) ConcludesTurn() bool {
	s, ok := r.Outcome.(dsh.ToolSuccess)
	return ok && s.ConcludesTurn != nil && *s.ConcludesTurn
}

// ExecutionMode classifies a call for the loop's scheduler (docs/design/SEMANTICS.md#410-classification-and-registry-rules):
// ModeParallel only when the definition visible to agentID's call is known, its
// arguments are lossless and valid against its input schema, and its IsConcurrencySafe
// returns true; ModeExclusive otherwise (unknown tool, no classifier, a panic, invalid
// arguments).
func (rt *Runtime) ExecutionMode(agentID, name string, args json.RawMessage) Mode {
	return modeOf(rt.tools.lookup(agentID, name), args)
}

// modeOf classifies args for the definition t (nil: unknown).
func modeOf(t *tool, args json.RawMessage) Mode {
	if t == nil || t.def.IsConcurrencySafe == nil {
		return ModeExclusive
	}
	snap, err := snapshotJSON(args)
	if err != nil {
		return ModeExclusive
	}
	if t.input != nil && t.input.validate(snap, "") != "" {
		return ModeExclusive
	}
	if classify(t.def.IsConcurrencySafe, snap) {
		return ModeParallel
	}
	return ModeExclusive
}

// classify calls a concurrency classifier; a panic is false.
func classify(f func(json.RawMessage) bool, args json.RawMessage) (safe bool) {
	defer func() {
		if recover() != nil {
			safe = false
		}
	}()
	return f(args)
}

// Execute runs one call through the pipeline and returns its result: Start, PreDispatch,
// Dispatch and Finish in a row. It never panics and has no error: every failure at every
// stage is a normalized failure outcome (docs/design/SEMANTICS.md#32-what-a-failing-listener-becomes). It returns once the call has
// settled, including a started body, which is always awaited, even after ctx is
// cancelled.
func (rt *Runtime) Execute(ctx context.Context, in Input) Result {
	return rt.Start(ctx, in).Finish()
}
