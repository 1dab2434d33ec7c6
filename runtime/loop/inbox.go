package loop

import (
	"context"
	"slices"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
)

// The inbox (docs/design/SEMANTICS.md#51-state-and-inbox) is two FIFO lists, next-turn and next-step. Every
// mutation is first appended to the log as agent/inbox/spliced and only then applied, so
// that Replay rebuilds exactly the lists the agent holds. Mutations are serialized by
// a.mut, which is held across the append; a.mu guards the lists themselves and is never
// held across an append or a listener call.
//
// Inserts always go to the end of a list and removals always take a prefix (a claim, a
// clear), so the lists stay FIFO queues.

// list returns the list of target. Called with a.mu held.
func (a *Agent) list(target dsh.InboxTarget) *[]dsh.UserMessage {
	if target == dsh.InboxTargetNextStep {
		return &a.nextStep
	}
	return &a.nextTurn
}

// spliceLocked appends one agent/inbox/spliced event and, once it is in the log, applies
// it; applied reports whether it did. It is called with a.mut held. An append that stored
// the event but failed to sync it still applies it (the log holds it) and returns the
// error.
func (a *Agent) spliceLocked(ctx context.Context, target dsh.InboxTarget, start, removed int,
	inserted []dsh.UserMessage, canceled bool) (applied bool, err error) {
	data := dsh.InboxSpliced{Target: target, Start: start, Inserted: inserted}
	if data.Inserted == nil {
		data.Inserted = []dsh.UserMessage{}
	}
	if removed > 0 {
		data.RemovedCount = &removed
	}
	if canceled {
		data.Outcome = dsh.InboxSplicedOutcomeCanceled
	}
	ev, err := a.log.Append(ctx, data)
	if err != nil && ev.Type == "" {
		return false, err
	}
	a.mu.Lock()
	l := a.list(target)
	*l = slices.Replace(*l, start, start+removed, inserted...)
	a.mu.Unlock()
	return true, err
}

// insert appends msgs (private copies) to the end of target and emits
// agent/inbox/inserted for each. A failed append leaves the inbox unchanged.
func (a *Agent) insert(ctx context.Context, target dsh.InboxTarget, msgs []dsh.UserMessage) error {
	if len(msgs) == 0 {
		return nil
	}
	a.mut.Lock()
	a.mu.Lock()
	start := len(*a.list(target))
	a.mu.Unlock()
	applied, err := a.spliceLocked(ctx, target, start, 0, msgs, false)
	a.mut.Unlock()
	if !applied {
		return err
	}
	for _, m := range msgs {
		a.emit(dsh.InboxInsertedEventName, a.reg.EmitInboxInserted(a.base, &dsh.InboxInsertedPayload{
			Agent: a, AgentID: a.id, Target: target, Message: cloneMust(m)}))
	}
	return err
}

// claim takes the exclusive batch of a step (B §5.2 step 2): every next-step message, then,
// when withPrompt, the first next-turn message; it emits agent/inbox/claimed for each, in
// claim order.
func (a *Agent) claim(turn int, withPrompt bool) ([]dsh.UserMessage, error) {
	claimed, _, err := a.claimParts(turn, withPrompt)
	return claimed, err
}

// claimParts is claim; prompt reports whether the batch ends with a next-turn prompt.
func (a *Agent) claimParts(turn int, withPrompt bool) (claimed []dsh.UserMessage, prompt bool, err error) {
	a.mut.Lock()
	a.mu.Lock()
	steps := slices.Clone(a.nextStep)
	var prompts []dsh.UserMessage
	if withPrompt && len(a.nextTurn) > 0 {
		prompts = []dsh.UserMessage{a.nextTurn[0]}
	}
	a.mu.Unlock()
	if len(steps) > 0 {
		_, err = a.spliceLocked(a.base, dsh.InboxTargetNextStep, 0, len(steps), nil, false)
	}
	if err == nil && len(prompts) > 0 {
		_, err = a.spliceLocked(a.base, dsh.InboxTargetNextTurn, 0, 1, nil, false)
	}
	a.mut.Unlock()
	if err != nil {
		return nil, false, err
	}
	claimed = append(steps, prompts...)
	for _, m := range claimed {
		a.emit(dsh.InboxClaimedEventName, a.reg.EmitInboxClaimed(a.base, &dsh.InboxClaimedPayload{
			Agent: a, AgentID: a.id, Message: cloneMust(m), Turn: turn}))
	}
	return claimed, len(prompts) > 0, nil
}

// clearWait is how long clearInbox waits for a busy inbox before clearing it
// asynchronously (see clearInbox).
const clearWait = 20 * time.Millisecond

// clearInbox discards every pending message with canceled splices and
// agent/inbox/discarded (B §5.5 cancel). It never blocks for long: if the inbox is busy
// (for instance because Cancel runs inside a session-log observer on the goroutine that
// is appending a splice), the messages pending now are discarded by a goroutine as soon
// as the inbox is free, while later messages are kept.
func (a *Agent) clearInbox() {
	deadline := time.Now().Add(clearWait)
	for !a.mut.TryLock() {
		if time.Now().After(deadline) {
			a.mu.Lock()
			turnIDs, stepIDs := messageIDs(a.nextTurn), messageIDs(a.nextStep)
			a.mu.Unlock()
			go func() {
				a.mut.Lock()
				a.discardPrefixes(turnIDs, stepIDs)
			}()
			return
		}
		time.Sleep(200 * time.Microsecond)
	}
	a.mu.Lock()
	turnIDs, stepIDs := messageIDs(a.nextTurn), messageIDs(a.nextStep)
	a.mu.Unlock()
	a.discardPrefixes(turnIDs, stepIDs)
}

// discardPrefixes removes, from each list, the leading messages whose ids are among
// those given, with one canceled splice per list, then unlocks a.mut and emits
// agent/inbox/discarded for each removed message. It is called with a.mut held.
func (a *Agent) discardPrefixes(turnIDs, stepIDs []string) {
	var turnMsgs, stepMsgs []dsh.UserMessage
	turnMsgs = a.discardPrefixLocked(dsh.InboxTargetNextTurn, turnIDs)
	stepMsgs = a.discardPrefixLocked(dsh.InboxTargetNextStep, stepIDs)
	a.mut.Unlock()
	a.emitDiscarded(dsh.InboxTargetNextTurn, turnMsgs)
	a.emitDiscarded(dsh.InboxTargetNextStep, stepMsgs)
}

// discardPrefixLocked removes the leading messages of target whose ids are among ids with
// one canceled splice and returns them. It is called with a.mut held.
func (a *Agent) discardPrefixLocked(target dsh.InboxTarget, ids []string) []dsh.UserMessage {
	if len(ids) == 0 {
		return nil
	}
	a.mu.Lock()
	l := *a.list(target)
	n := 0
	for n < len(l) && slices.Contains(ids, l[n].ID) {
		n++
	}
	msgs := slices.Clone(l[:n])
	a.mu.Unlock()
	if n == 0 {
		return nil
	}
	applied, err := a.spliceLocked(a.base, target, 0, n, nil, true)
	if err != nil {
		a.logger.Error("loop: cannot discard the inbox", "agent", a.id, "target", string(target), "err", err)
	}
	if !applied {
		return nil
	}
	return msgs
}

// discardNextStep removes every next-step message with a canceled splice (the
// continuation cap, docs/design/SEMANTICS.md#a9-the-stop-loop-is-capped).
func (a *Agent) discardNextStep() error {
	a.mut.Lock()
	a.mu.Lock()
	msgs := slices.Clone(a.nextStep)
	a.mu.Unlock()
	applied, err := true, error(nil)
	if len(msgs) > 0 {
		applied, err = a.spliceLocked(a.base, dsh.InboxTargetNextStep, 0, len(msgs), nil, true)
	}
	a.mut.Unlock()
	if applied {
		a.emitDiscarded(dsh.InboxTargetNextStep, msgs)
	}
	return err
}

// emitDiscarded emits agent/inbox/discarded for each of msgs.
func (a *Agent) emitDiscarded(target dsh.InboxTarget, msgs []dsh.UserMessage) {
	for _, m := range msgs {
		a.emit(dsh.InboxDiscardedEventName, a.reg.EmitInboxDiscarded(a.base, &dsh.InboxDiscardedPayload{
			Agent: a, AgentID: a.id, Target: target, Message: cloneMust(m)}))
	}
}

// pending reports the lengths of the two lists.
func (a *Agent) pending() (nextTurn, nextStep int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.nextTurn), len(a.nextStep)
}

// pendingSteps returns the next-step messages pending now (shared, not copied: read only).
func (a *Agent) pendingSteps() []dsh.UserMessage {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.nextStep
}

// cloneMust deep-copies m, a message the inbox holds (see copyMessage).
func cloneMust(m dsh.UserMessage) dsh.UserMessage { return copyMessage(m) }
