// Package conformance is the harness of dsh's conformance suite: it replays the scenarios
// of spec/conformance (generated into generated/conformance) against any runtime that
// implements Runtime, so that a third-party runtime or bridge written in Go can run the
// whole suite against itself. dsh's own runtime is wired in by conformance/dshrt.
//
// A scenario's scripted behaviours (call next, decide, fail, panic, steer, ...) are a
// closed vocabulary defined in the spec; this harness turns them into listeners and tool
// bodies on the generated surface, runs the scenario's inputs and compares the outcome with
// go-cmp.
package conformance

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	sc "github.com/dshkit/dsh/generated/conformance"
	"github.com/dshkit/dsh/generated/dsh"
)

// Runtime is what a runtime provides to run the suite against it. One Runtime serves one
// scenario.
type Runtime interface {
	// Registrar is where the harness registers a listener of one extension point (e.g.
	// "tools/pre-execute") named name ("" for unnamed): normally the registry's
	// Plugin(name), every point sharing one registry.
	Registrar(point, name string) *dsh.Registrar
	// RegisterTool registers a tool for every agent.
	RegisterTool(t Tool) error
	// SetApprover mounts an approval service that answers with fn. Not called: none is
	// mounted. fn may return AllowedOnceStale.
	SetApprover(fn func(ctx context.Context, toolName string) (dsh.ApprovalOutcome, error))
	// SetModel scripts the model's responses, consumed in order. A response with a gate
	// calls wait(ctx, gate) once its text has streamed (at once when it has none), before
	// its tool calls and finish (or before hanging); ctx is the request's context.
	SetModel(responses []sc.Response, wait func(ctx context.Context, gate string) error)
	// SetOptions sets the runtime's settings for the agents created afterwards.
	SetOptions(o Options)
	// AttachHooks attaches a shell-hook bridge (docs/design/HOOK-PROTOCOLS.md) running the hooks
	// configuration h.ConfigPath in h.Dialect ("claude-code" or "codex"). The harness calls
	// it during the setup, after RegisterTool and before registering the scenario's
	// listeners, and before any agent exists; a runtime without bridges returns an error
	// (the hook scenarios then fail at their setup). The runtime must:
	//
	//   - load the file with the dialect's bridge, as a user would name it explicitly, and
	//     register the bridge on the same registry as the listeners, now: it is then the
	//     outermost listener at every point it maps (session start, pre-step, pre-execute,
	//     post-execute, turn-stopping);
	//   - run the hooks with h.Workspace as their working directory (and Claude Code's
	//     CLAUDE_PROJECT_DIR), through a POSIX sh: Claude Code's `sh -c`, Codex's
	//     `$SHELL -c` with a POSIX $SHELL;
	//   - describe the session of each event lazily, when it fires (the agent may not exist
	//     at AttachHooks): the agent's handle (for the contexts and steering the bridge
	//     adds), its open turn, if any, and no transcript path (Claude Code sends "",
	//     Codex null);
	//   - append the bridge's hook/invoked and hook/result records to the agent's session
	//     log, where Log returns them, inside the agent's open turns;
	//   - make Agent.WaitIdle wait, once the agent is idle, for the async hooks started so
	//     far too, and for what they inject, so that a scenario's outcome does not depend
	//     on when a detached hook finishes;
	//   - kill the hooks still running at Close.
	AttachHooks(ctx context.Context, h HookConfig) error
	// AttachPermissions registers the permission plugin of Claude Code's permission table
	// (bridges/permissions) with the scenario's rules and mode, now: after the hooks, before
	// the scenario's listeners. Its decisions are appended to the agent's log as
	// decision/recorded. A runtime without permission rules returns an error.
	AttachPermissions(p sc.PermissionRules) error
	// AttachSubagents registers the agent tool s names for every agent created
	// afterwards (docs/design/SUBAGENTS.md): a call runs a child agent over the same
	// registry, tools and scripted model, in the foreground, with the task of the call's
	// "prompt" argument and the type of its "subagent_type"; the child fires
	// agent/subagent-start and agent/subagent-stop, its calls carry its lineage, and the
	// parent's log records subagent/started and subagent/finished (a call id that has a
	// subagent/finished is answered from it). A runtime without subagents returns an
	// error.
	AttachSubagents(s sc.Subagents) error
	// Execute runs one tool call directly through the pipeline.
	Execute(ctx context.Context, in ExecuteInput) dsh.ToolExecutionResult
	// Agent creates the agent with the id (running agent/session-start), or returns it.
	Agent(ctx context.Context, id string) (Agent, error)
	// Resume disposes of the agent with the id, as a process exit would, and re-creates it
	// from its persisted session log (agent/session-start with the source "resume"); the
	// log goes on in the same session.
	Resume(ctx context.Context, id string) (Agent, error)
	// Log returns the session log of the agents so far.
	Log() []LogEvent
	// Requests returns the model requests made so far, each as the texts of its messages
	// in order (user, assistant, tool-result and plugin text alike).
	Requests() [][]string
	// RequestInfo returns the system prompt and the offered tools of each model request
	// made so far, in order.
	RequestInfo() []RequestInfo
	// Close releases everything the runtime holds.
	Close()
}

// Options are the settings a scenario's setup fixes; a zero field keeps the runtime's
// default.
type Options struct {
	// MaxParallelToolCalls caps the tool calls in flight at once.
	MaxParallelToolCalls int
	// ContinuationCap caps how many times a turn continues from a natural stop
	// (SEMANTICS A9).
	ContinuationCap int
	// SessionStartTimeout bounds the agent/session-start listeners (SEMANTICS A6).
	SessionStartTimeout time.Duration
	// Setup is the setup trigger the agent is created with ("": none).
	Setup dsh.SetupTrigger
	// Instructions are the instruction files the host loaded for the new agent.
	Instructions []dsh.InstructionFile
	// Audit logs every decision a listener resolves at a policy point of an agent as
	// decision/recorded (SEMANTICS A12).
	Audit bool
	// RewriteConflict is the conflict policy of the tools/rewrite-input fold: "ordered" or
	// "fail" ("": the runtime's default).
	RewriteConflict string
	// RewriteDeadline bounds each tools/rewrite-input listener.
	RewriteDeadline time.Duration
	// ModelListenerTimeout bounds each agent/request and agent/response listener.
	ModelListenerTimeout time.Duration
	// Compaction configures compaction (docs/design/REWRITE-COMPACTION.md#2-compaction).
	Compaction CompactionOptions
}

// CompactionOptions are a scenario's compaction settings; a zero field keeps the runtime's
// default.
type CompactionOptions struct {
	// ContextWindow is the model's context window the agent knows, in tokens (0: unknown).
	ContextWindow int
	// ModelWindow is the scripted model's own window, in estimated tokens: SetModel's
	// model fails a larger request with CONTEXT_WINDOW_EXCEEDED, consuming no response,
	// and reports the estimated usage of the others (0: no window). SetOptions comes
	// before SetModel.
	ModelWindow int
	// ThresholdRatio is the share of the window at which a step boundary compacts.
	ThresholdRatio float64
	// ListenerTimeout bounds each compaction listener.
	ListenerTimeout time.Duration
}

// RequestInfo is what a model request carried besides its messages.
type RequestInfo struct {
	// System is the request's system prompt.
	System string
	// Tools are the names of the tools offered, in order.
	Tools []string
}

// AllowedOnceStale is the outcome SetApprover's fn returns for an allowed-once given for
// other arguments than the call's: the runtime's answer echoes the digest of the model's
// arguments (or any digest other than the asked one), and the call must be denied with
// APPROVAL_STALE (docs/design/REWRITE-COMPACTION.md#17-approval-binds-to-the-effective-arguments).
const AllowedOnceStale dsh.ApprovalOutcome = "allowed-once-stale"

// HookConfig is a hooks configuration the harness wrote for a scenario
// (spec/conformance/schema.cue, #Hooks).
type HookConfig struct {
	// Dialect is the hook protocol: "claude-code" or "codex".
	Dialect string
	// ConfigPath is the hooks file, in the dialect's settings shape
	// ({"hooks": {Event: [{matcher, hooks: [...]}]}}); its commands source scripts the
	// harness wrote.
	ConfigPath string
	// Workspace is the session's working directory: the hooks' cwd and Claude Code's
	// project directory. It exists and is empty.
	Workspace string
	// RevalidateAfterRewrite runs the PreToolUse hooks a second time on the effective
	// input after their updatedInput changed it (the Claude Code bridge option of the same
	// name; docs/design/REWRITE-COMPACTION.md#1920-revalidateafterrewrite).
	RevalidateAfterRewrite bool
}

// Factory builds a fresh Runtime for one scenario.
type Factory func(t testing.TB) Runtime

// Tool is a tool whose behaviour the harness scripts.
type Tool struct {
	// Name is the tool name.
	Name string
	// Parallel marks the tool concurrency-safe.
	Parallel bool
	// ExclusiveWhen, when set, makes the tool exclusive for the calls whose arguments'
	// JSON text contains it, and concurrency-safe for the others.
	ExclusiveWhen string
	// InputSchema is the JSON Schema of the arguments; nil accepts any JSON.
	InputSchema json.RawMessage
	// OutputSchema is the JSON Schema of the value; nil accepts any JSON.
	OutputSchema json.RawMessage
	// Run is the body.
	Run func(ctx context.Context, call Call) (any, error)
	// Finalize, if set, maps the final content of every call (nil keeps it).
	Finalize func(result dsh.ToolExecutionResult) ([]dsh.ContentBlock, error)
}

// Call is what a scripted tool body can do besides returning.
type Call interface {
	// CallID is the call's id.
	CallID() string
	// AgentID is the id of the agent the call runs for ("" when agent-less).
	AgentID() string
	// Arguments is the call's arguments, as the body got them.
	Arguments() json.RawMessage
	// Defer adds a context to the call's result.
	Defer(msg dsh.UserMessage) error
	// Conclude asks to conclude the turn.
	Conclude()
}

// ExecuteInput is a direct tool execution.
type ExecuteInput struct {
	// CallID, Name and Arguments describe the call.
	CallID, Name string
	// Arguments is the call's JSON arguments.
	Arguments json.RawMessage
	// AgentID is the agent the call runs for; "" for an agent-less call.
	AgentID string
}

// Agent is an agent under test.
type Agent interface {
	// ID returns the agent id.
	ID() string
	// Handle is the dsh.Agent handle of the agent.
	Handle() dsh.Agent
	// Followup queues a prompt and wakes the agent.
	Followup(ctx context.Context, msg dsh.UserMessage) error
	// Cancel cancels the agent's turn with the cause ("user", "parent" or "disposed");
	// unless keepInbox, it discards the inbox too. It must not block: scripts call it from
	// inside the turn.
	Cancel(cause string, keepInbox bool)
	// WaitIdle waits until the agent is idle.
	WaitIdle(ctx context.Context) error
	// Inbox returns the pending next-turn and next-step messages.
	Inbox() (nextTurn, nextStep []dsh.UserMessage)
	// Compact compacts the idle agent now (the trigger "manual") with the instructions
	// and returns the outcome: "committed", "failed", "nothing" (no range worth
	// compacting) or "deferred by <listener name>"; err is anything else.
	Compact(ctx context.Context, instructions string) (outcome string, err error)
}

// LogEvent is one session-log event, as the harness compares it.
type LogEvent struct {
	// Type is the event type, e.g. "turn/end".
	Type string
	// Data is the event's data.
	Data json.RawMessage
}
