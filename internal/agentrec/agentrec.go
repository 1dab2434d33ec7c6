// Package agentrec is an agent handle that records what listeners do with it, for running
// extension points outside an agent loop: dsh hooks run fires one event through a
// registry with it, and the hook bridges' tests drive every point with it the way the
// runtime does.
package agentrec

import (
	"context"
	"sync"

	"github.com/dshkit/dsh/generated/dsh"
)

// Agent is a dsh.Agent that records the messages listeners inject and steer and the halts
// they ask for. There is no turn to abort, so a cancellation is recorded as a halt,
// "cancelled (<cause kind>)". Its methods are safe for concurrent use.
type Agent struct {
	// AgentID is the id ID returns.
	AgentID string

	mu       sync.Mutex
	injected []dsh.UserMessage
	steered  []dsh.UserMessage
	halted   []string
}

var _ dsh.Agent = (*Agent)(nil)

// ID returns AgentID.
func (a *Agent) ID() string { return a.AgentID }

// Inject records msg.
func (a *Agent) Inject(_ context.Context, msg dsh.UserMessage) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.injected = append(a.injected, msg)
	return nil
}

// Steer records msg.
func (a *Agent) Steer(_ context.Context, msg dsh.UserMessage) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.steered = append(a.steered, msg)
	return nil
}

// Halt records reason.
func (a *Agent) Halt(reason string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.halted = append(a.halted, reason)
}

// Cancel records the cancellation as a halt naming the cause's kind (user for nil).
func (a *Agent) Cancel(cause dsh.AgentCancelCause, keepInbox bool) {
	kind := "user"
	if cause != nil {
		kind = string(cause.Kind())
	}
	a.Halt("cancelled (" + kind + ")")
}

// Inbox returns the injected and then the steered messages as next-step messages: what
// the listeners queued.
func (a *Agent) Inbox() (nextTurn, nextStep []dsh.UserMessage) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return nil, append(append([]dsh.UserMessage(nil), a.injected...), a.steered...)
}

// Injected returns the injected messages, oldest first, and forgets them.
func (a *Agent) Injected() []dsh.UserMessage { return take(a, &a.injected) }

// Steered returns the steered messages, oldest first, and forgets them.
func (a *Agent) Steered() []dsh.UserMessage { return take(a, &a.steered) }

// Halted returns the halt reasons, oldest first, and forgets them.
func (a *Agent) Halted() []string { return take(a, &a.halted) }

// take returns *list and empties it, under a's lock.
func take[T any](a *Agent, list *[]T) []T {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := *list
	*list = nil
	return out
}
