// Package approval is the seam that resolves a tools/pre-execute "ask" decision
// (docs/design/SEMANTICS.md#210-ask-resolution-the-approval-seam, docs/design/SEMANTICS.md#34-ask).
//
// The tool pipeline hands an [Approver] one [Request] per asked call and maps the
// [dsh.ApprovalOutcome] it returns: only allowed-once lets the call proceed (and guards
// still run); rejected, cancelled and unavailable deny it; an error is a final failure of
// the call.
//
// [Service] is the standard Approver. It appends the durable approval/asked and
// approval/decided pair through a [Recorder], auto-rejects under the session policy
// [PolicyNever] before any answerer runs, asks its [Answerer]s first-wins (none deciding
// gives unavailable), and maps a cancelled context to cancelled.
package approval

import (
	"context"
	"encoding/json"

	"github.com/dshkit/dsh/generated/dsh"
)

// Request is one approval request: which agent's call to which tool, and why.
type Request struct {
	// AgentID is the id of the agent the call runs for.
	AgentID string
	// ToolName is the tool the call asked for.
	ToolName string
	// CallID is the id of the tool call.
	CallID string
	// Reason is the reason the ask decision gave; empty when it gave none.
	Reason string
	// Arguments is the call's sealed, effective arguments (after any tools/rewrite-input
	// rewrite): what the call runs with if allowed. Treat it as read-only.
	Arguments json.RawMessage
	// ModelArguments is the model's own arguments when a rewrite changed them; nil
	// otherwise. A UI shows them beside Arguments.
	ModelArguments json.RawMessage
	// ArgsDigest is the digest of Arguments ("sha256:<hex>" of their canonical JSON) an
	// answer is bound to: an allowed-once counts only when the answer echoes it (see
	// DigestAnswerer); otherwise the call is denied with APPROVAL_STALE.
	ArgsDigest string
}

// Decision is an approval answer together with the argument digest it was given for.
type Decision struct {
	// Outcome is how the request ended.
	Outcome dsh.ApprovalOutcome
	// ArgsDigest is the digest the answer echoed; an answerer that does not echo one
	// answered the request it was given, whose Request.ArgsDigest it is.
	ArgsDigest string
}

// DigestApprover is an Approver that also reports the argument digest its answer echoed
// (docs/design/REWRITE-COMPACTION.md#17-approval-binds-to-the-effective-arguments). The tool pipeline prefers it: an allowed-once whose digest
// is not the sealed call's is a denial (APPROVAL_STALE). Service implements it.
type DigestApprover interface {
	Approver
	// ApproveDigest resolves req and reports the digest the answer was given for.
	ApproveDigest(ctx context.Context, req Request) (Decision, error)
}

// DigestAnswerer is an Answerer whose answer names the argument digest it approves, as an
// asynchronous answerer (a UI answering by request id later) does: Service asks it with
// AnswerDigest instead of Answer.
type DigestAnswerer interface {
	Answerer
	// AnswerDigest decides req, or passes (Outcome Pass), echoing the digest it decided for.
	AnswerDigest(ctx context.Context, req Request) (Decision, error)
}

// ReasonPtr returns a pointer to a copy of Reason, or nil when it is empty.
func (r Request) ReasonPtr() *string {
	if r.Reason == "" {
		return nil
	}
	s := r.Reason
	return &s
}

// Approver resolves approval requests. Approve returns how the request ended; ctx is the
// caller's context (its cancellation is the caller's abort). An error is a failure of the
// seam itself, never a denial.
type Approver interface {
	// Approve resolves req.
	Approve(ctx context.Context, req Request) (dsh.ApprovalOutcome, error)
}

// ApproverFunc adapts a function to the Approver interface.
type ApproverFunc func(ctx context.Context, req Request) (dsh.ApprovalOutcome, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, req Request) (dsh.ApprovalOutcome, error) {
	return f(ctx, req)
}

// Recorder appends durable session events; the agent loop wires the session log into it.
// A failing append is returned, and the request fails with it.
type Recorder interface {
	// Record appends one event whose data is data.
	Record(ctx context.Context, data dsh.SessionEventData) error
}

// RecorderFunc adapts a function to the Recorder interface.
type RecorderFunc func(ctx context.Context, data dsh.SessionEventData) error

// Record calls f.
func (f RecorderFunc) Record(ctx context.Context, data dsh.SessionEventData) error {
	return f(ctx, data)
}

// Pass is what an Answerer returns to abstain: the next answerer is asked.
const Pass dsh.ApprovalOutcome = ""

// Answerer answers approval requests, typically by asking a human. It returns an outcome
// to decide, or Pass to leave the request to the next answerer. It should return promptly
// once ctx is cancelled; its answer is then ignored.
type Answerer interface {
	// Answer decides req, or passes.
	Answer(ctx context.Context, req Request) (dsh.ApprovalOutcome, error)
}

// AnswererFunc adapts a function to the Answerer interface.
type AnswererFunc func(ctx context.Context, req Request) (dsh.ApprovalOutcome, error)

// Answer calls f.
func (f AnswererFunc) Answer(ctx context.Context, req Request) (dsh.ApprovalOutcome, error) {
	return f(ctx, req)
}

// Policy is a session's approval policy.
type Policy string

const (
	// PolicyAsk asks the answerers (the default).
	PolicyAsk Policy = "ask"
	// PolicyNever rejects every request before any answerer runs.
	PolicyNever Policy = "never"
)

// Valid reports whether p is PolicyAsk or PolicyNever.
func (p Policy) Valid() bool {
	return p == PolicyAsk || p == PolicyNever
}
