package loop

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/dshkit/dsh/generated/dsh"
)

// Agent implements the handle listeners get in their payloads.
var _ dsh.Agent = (*Agent)(nil)

// ErrDuplicateID is returned by a send whose message id is already pending in the inbox
// (ids are unique across both lists, docs/design/SEMANTICS.md#0-shared-vocabulary).
var ErrDuplicateID = errors.New("loop: message id already pending")

// Followup queues msg as the prompt of a turn of its own (the next-turn list) and wakes
// the agent. On an idle agent the turn starts before Followup returns: agent/status
// running, turn/start and the claim of the prompt are done synchronously (docs/design/SEMANTICS.md#51-state-and-inbox
// ). A nil Source is the user source; an empty ID is minted. A failed append returns
// its error and changes nothing.
func (a *Agent) Followup(ctx context.Context, msg dsh.UserMessage) error {
	return a.send(ctx, msg, dsh.InboxTargetNextTurn, true, dsh.SourceUser{})
}

// Steer queues msg for the next step (the next-step list) and wakes the agent: a running
// turn continues with another step that carries it, an idle agent starts a turn. msg must
// have a Source. While the current turn is being cancelled, the message goes to the
// next-turn list instead and a wake is replayed once the agent is idle.
func (a *Agent) Steer(ctx context.Context, msg dsh.UserMessage) error {
	return a.send(ctx, msg, dsh.InboxTargetNextStep, true, nil)
}

// Inject queues msg for the next step without waking the agent: it reaches the model at
// the agent's next step, whenever that happens. msg must have a Source.
func (a *Agent) Inject(ctx context.Context, msg dsh.UserMessage) error {
	return a.send(ctx, msg, dsh.InboxTargetNextStep, false, nil)
}

// send is the common path of Followup, Steer and Inject (docs/design/SEMANTICS.md#51-state-and-inbox).
//
// Sends must not be made synchronously from a session-log observer (session.Log
// Subscribe) of this agent's log: observers run on the appending goroutine, which may
// hold the inbox. Registry listeners, tool bodies and other goroutines may send freely;
// Cancel and Halt are safe everywhere.
func (a *Agent) send(ctx context.Context, msg dsh.UserMessage, target dsh.InboxTarget, wake bool, defSource dsh.MessageSource) error {
	if ctx == nil {
		ctx = context.Background()
	}
	m, err := prepareMessage(msg, defSource)
	if err != nil {
		return err
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return ErrClosed
	}
	latch := false
	if wake && a.turn != nil && a.turn.aborted {
		// B §5.1: a waking send during an aborted turn goes to next-turn and is latched.
		target, latch = dsh.InboxTargetNextTurn, true
	}
	a.mu.Unlock()
	if err := a.insertUnique(ctx, target, m); err != nil {
		return err
	}
	if latch {
		a.mu.Lock()
		a.latched = true
		a.mu.Unlock()
	}
	if wake {
		a.wake()
	}
	return nil
}

// insertUnique inserts m unless its id is already pending.
func (a *Agent) insertUnique(ctx context.Context, target dsh.InboxTarget, m dsh.UserMessage) error {
	a.mu.Lock()
	dup := slices.ContainsFunc(a.nextTurn, func(x dsh.UserMessage) bool { return x.ID == m.ID }) ||
		slices.ContainsFunc(a.nextStep, func(x dsh.UserMessage) bool { return x.ID == m.ID })
	a.mu.Unlock()
	if dup {
		return fmt.Errorf("%w: %q", ErrDuplicateID, m.ID)
	}
	return a.insert(ctx, target, []dsh.UserMessage{m})
}

// Halt ends the current turn as aborted{hook{reason}} once the running step, and its tool
// batch, has settled: no further tool call starts (the unstarted ones get
// ABORTED_BEFORE_DISPATCH results) and no further step opens. The inbox is left as it is
// (docs/design/SEMANTICS.md#a7-halt-is-a-decision). If the turn is already being stopped, the first cause
// wins. On an idle agent Halt does nothing.
func (a *Agent) Halt(reason string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if t := a.turn; t != nil && t.cause == nil {
		t.cause = dsh.CancelHook{Reason: reason}
	}
}

// Cancel aborts the current turn with cause (nil is user); the first cause wins and the
// turn ends aborted{cause}. Unless keepInbox, it also discards both inbox lists (canceled
// splices, agent/inbox/discarded) and every context the current tool batch produces,
// whether accepted before or after the cancel (docs/design/SEMANTICS.md#a11-cancel-does-not-depend-on-timing). On an idle
// agent nothing is aborted; without keepInbox the inbox is still discarded. After an
// aborted turn the agent stays idle, keeping what is queued, until the next waking send.
// Cancel never blocks for long and may be called from anywhere, including listeners and
// session-log observers.
func (a *Agent) Cancel(cause dsh.AgentCancelCause, keepInbox bool) {
	if cause == nil {
		cause = dsh.CancelUser{}
	}
	a.mu.Lock()
	t := a.turn
	if t != nil {
		if t.cause == nil {
			t.cause = cause
		}
		t.aborted = true
		if !keepInbox {
			t.discard = true
		}
	}
	a.mu.Unlock()
	if !keepInbox {
		a.clearInbox()
	}
	if t != nil {
		t.cancel(cancelError{cause: cause})
	}
}

// stopCause returns the cause the turn is being stopped with, or nil.
func (a *Agent) stopCause(t *turnRun) dsh.AgentCancelCause {
	a.mu.Lock()
	defer a.mu.Unlock()
	return t.cause
}

// haltTurn records a halt of t (from a decision), unless it is already being stopped.
func (a *Agent) haltTurn(t *turnRun, reason string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if t.cause == nil {
		t.cause = dsh.CancelHook{Reason: reason}
	}
}

// discarding reports whether the contexts of t's batches are to be discarded.
func (a *Agent) discarding(t *turnRun) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return t.discard
}
