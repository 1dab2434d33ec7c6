package tools

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/dshkit/dsh/generated/dsh"
)

// ErrRunContextClosed is returned by DeferContext once the body has returned.
var ErrRunContextClosed = errors.New("tools: run context used after the body returned")

// RunContext is what a tool body gets besides its context: the sealed call, and the ways
// a body contributes beyond its value. It is safe for concurrent use by the body's
// goroutines; it stops accepting contexts when the body returns.
type RunContext struct {
	c    *call
	exec dsh.ToolExecution // the body's private copy

	mu        sync.Mutex
	deferred  []dsh.UserMessage
	concluded bool
	closed    bool
}

// Approved says whether the call asked for approval and was allowed (by an approval/answer
// listener or the approver), as opposed to running without asking: a tool whose engine
// refuses what needs an approval when no one was asked (Codex's escalation under approval
// policy never) reads it.
func (rc *RunContext) Approved() bool { return rc.c != nil && rc.c.allowedOnAsk }

// Exec returns the sealed call. Its Arguments are the body's own copy of the frozen
// arguments: changing them changes nothing else.
func (rc *RunContext) Exec() dsh.ToolExecution { return rc.exec }

// Arguments returns the body's copy of the frozen arguments (lossless JSON, valid against
// the tool's input schema).
func (rc *RunContext) Arguments() json.RawMessage { return rc.exec.Arguments }

// BindArguments decodes the arguments into v, like json.Unmarshal.
func (rc *RunContext) BindArguments(v any) error {
	return json.Unmarshal(rc.exec.Arguments, v)
}

// DeferContext adds msg to the call's additional contexts, after the result, whatever the
// outcome (docs/design/SEMANTICS.md#a5-deferred-contexts-survive-every-failure): only a post-execute block replaces them. msg is
// snapshotted now; an empty Role is "user" and an empty ID is minted. It fails for a
// message without a Source, one that is not lossless JSON, and after the body returned.
func (rc *RunContext) DeferContext(msg dsh.UserMessage) error {
	if msg.Role == "" {
		msg.Role = dsh.UserMessageRoleUser
	}
	if msg.Source == nil {
		return errors.New("tools: deferred context has no source")
	}
	if msg.ID == "" {
		msg.ID = "msg_" + rand.Text()
	}
	snap, err := snapshotMessage(msg)
	if err != nil {
		return fmt.Errorf("tools: deferred context: %w", err)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.closed {
		return ErrRunContextClosed
	}
	rc.deferred = append(rc.deferred, snap)
	return nil
}

// ConcludeTurn asks the loop to end the turn after this step (docs/design/SEMANTICS.md#26-agentturn-stopping): a
// successful result carries concludesTurn. It has no effect once the body returned.
func (rc *RunContext) ConcludeTurn() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if !rc.closed {
		rc.concluded = true
	}
}

// Execute runs a nested call through the complete pipeline (docs/design/SEMANTICS.md#49-nested-calls), with
// this call's token as its Parent and this call's RootCallID; an empty AgentID is this
// call's agent. The nested call computes no meta. Forward its result to pass its contexts
// and conclusion on. A call nested more than MaxNesting deep fails without running.
func (rc *RunContext) Execute(ctx context.Context, in Input) Result {
	in.Parent = rc.exec.Token
	in.RootCallID = rc.exec.RootCallID
	in.depth = min(rc.c.depth, MaxNesting) + 1
	if in.AgentID == "" {
		in.AgentID = rc.c.agentID
		in.Lineage = rc.exec.Lineage
	}
	return rc.c.rt.Execute(ctx, in)
}

// Forward defers the additional contexts of a nested result and, when it is a success that
// concludes the turn, concludes this call's turn too.
func (rc *RunContext) Forward(nested Result) error {
	for _, m := range nested.AdditionalContexts() {
		if err := rc.DeferContext(m); err != nil {
			return err
		}
	}
	if nested.ConcludesTurn() {
		rc.ConcludeTurn()
	}
	return nil
}

// close stops the run context and returns what the body deferred and whether it
// concluded.
func (rc *RunContext) close() ([]dsh.UserMessage, bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.closed = true
	return rc.deferred, rc.concluded
}

func (rc *RunContext) isConcluded() bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.concluded
}
