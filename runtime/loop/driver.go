package loop

import (
	"context"

	"github.com/dshkit/dsh/generated/dsh"
)

// goOn says what the driver may do after a turn closed (docs/design/SEMANTICS.md#52-turn-algorithm step 10,
// docs/design/SEMANTICS.md#a10-no-stranded-queue-after-a-blocked-turn).
type goOn int

const (
	// stop: the driver exits; the queue waits for the next waking send (error, aborted,
	// an empty first batch).
	stop goOn = iota
	// onPending: the driver starts the next turn while either inbox list holds messages
	// (completed, max-tokens).
	onPending
	// onFollowup: the driver starts the next turn when a follow-up is pending (blocked).
	onFollowup
)

// wake starts the driver of an idle agent: agent/status running, turn/start and the claim
// happen on the caller's goroutine, the rest of the turn on the driver's.
func (a *Agent) wake() {
	a.mu.Lock()
	if a.maint && !a.closed {
		a.maintWake = true // the manual compaction wakes the agent when it is done
	}
	if a.running || a.closed || a.maint {
		a.mu.Unlock()
		return
	}
	a.running = true
	a.idle = make(chan struct{})
	t := a.newTurnLocked()
	a.mu.Unlock()
	a.emitStatus(dsh.AgentStatusRunning)
	claimed, open, err := a.beginTurn(t)
	go a.drive(t, claimed, open, err)
}

// newTurnLocked creates the next turn and makes it current. Called with a.mu held.
func (a *Agent) newTurnLocked() *turnRun {
	n := a.lastTurn + 1
	ctx, cancel := context.WithCancelCause(withScope(a.base, scope{agent: a, turn: n}))
	t := &turnRun{n: n, ctx: ctx, cancel: cancel}
	a.turn = t
	return t
}

// beginTurn runs B §5.2 steps 1-2: the abort check, turn/start and the first claim.
// open reports whether turn/start was appended; err is a failure of the claim, which
// fails the open turn.
func (a *Agent) beginTurn(t *turnRun) (claimed []dsh.UserMessage, open bool, err error) {
	if a.stopCause(t) != nil {
		return nil, false, nil
	}
	err = a.closePending()
	if err == nil {
		_, err = a.log.Append(a.base, dsh.TurnStart{Turn: t.n})
	}
	if err != nil {
		a.logger.Error("loop: cannot start a turn", "turn", t.n, "err", err)
		a.emit(dsh.AgentErrorEventName, a.reg.EmitAgentError(a.base, &dsh.AgentErrorPayload{
			Agent: a, AgentID: a.id, Turn: t.n, Step: 1, Error: failureOf(err)}))
		return nil, false, nil
	}
	a.mu.Lock()
	a.lastTurn = t.n
	a.mu.Unlock()
	claimed, t.prompt, err = a.claimParts(t.n, true)
	return claimed, true, err
}

// drive runs turns until the driver may not go on, then makes the agent idle.
func (a *Agent) drive(t *turnRun, claimed []dsh.UserMessage, open bool, claimErr error) {
	for {
		next := stop
		if open {
			var reason dsh.TurnEndReason
			if claimErr != nil {
				reason = a.fail(t, 1, claimErr)
			} else {
				reason, next = a.runTurn(t, claimed)
			}
			a.endTurn(t, reason)
			if ab, ok := reason.(dsh.TurnEndAborted); ok {
				if _, user := ab.Reason.(dsh.CancelUser); user {
					a.turnInterrupted(t.n)
				}
			}
		}
		t.cancel(nil)
		nt, replay := a.afterTurn(t, next)
		if nt == nil {
			return
		}
		if replay {
			a.emitStatus(dsh.AgentStatusIdle)
			a.emitStatus(dsh.AgentStatusRunning)
		}
		t = nt
		claimed, open, claimErr = a.beginTurn(t)
	}
}

// endTurn appends turn/end (B §5.2 step 10). When the append fails the turn stays open in
// the log; the next turn appends its turn/end first (closePending), so that the log keeps
// its turn structure.
func (a *Agent) endTurn(t *turnRun, reason dsh.TurnEndReason) {
	end := dsh.TurnEnd{Turn: t.n, Reason: reason}
	if ev, err := a.log.Append(a.base, end); err != nil && ev.Type == "" {
		a.logger.Error("loop: cannot end a turn", "turn", t.n, "err", err)
		a.req.pendingEnd = &end
	}
}

// closePending appends the turn/end a failed append left pending.
func (a *Agent) closePending() error {
	if a.req.pendingEnd == nil {
		return nil
	}
	if ev, err := a.log.Append(a.base, *a.req.pendingEnd); err != nil && ev.Type == "" {
		return err
	}
	a.req.pendingEnd = nil
	return nil
}

// afterTurn decides, once t has closed, whether the driver starts another turn (returned,
// already current; replay reports a latched wake) or exits, making the agent idle.
func (a *Agent) afterTurn(t *turnRun, next goOn) (nt *turnRun, replay bool) {
	a.mu.Lock()
	a.turn = nil
	if t.cause != nil && next != stop {
		// Cancelled or halted after it closed: do not start another turn.
		next = stop
	}
	switch {
	case a.closed:
	case next == onPending && (len(a.nextTurn) > 0 || len(a.nextStep) > 0),
		next == onFollowup && len(a.nextTurn) > 0:
		nt = a.newTurnLocked()
		a.mu.Unlock()
		return nt, false
	case a.latched:
		a.latched = false
		nt = a.newTurnLocked()
		a.mu.Unlock()
		return nt, true
	}
	a.running = false
	a.latched = false
	idle := a.idle
	a.mu.Unlock()
	a.emitStatus(dsh.AgentStatusIdle)
	close(idle)
	return nil, false
}
