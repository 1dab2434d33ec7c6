package loop

import (
	"context"
	"errors"
	"strings"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

// ending is how a step ended naturally (B §5.2 step 6).
type ending int

const (
	endNone      ending = iota // a tool continuation: the turn goes on
	endCompleted               // a text-only answer, or a batch that concluded the turn
	endMaxTokens               // the output limit was hit
	endBlocked                 // agent/request denied or agent/response blocked: turnRun.blocked
)

// runTurn runs B §5.2 steps 3-9 for t, whose turn/start and first claim are done, and
// returns the reason to close it with and what the driver may do next.
func (a *Agent) runTurn(t *turnRun, claimed []dsh.UserMessage) (dsh.TurnEndReason, goOn) {
	var (
		end           = endNone
		maxTokens     bool // sticky: once a step hit max-tokens the turn ends max-tokens
		step          int  // steps opened so far
		continuations int  // continuations from a natural stop (Part A item 9)
	)
	closing := func() dsh.TurnEndReason {
		if maxTokens {
			return dsh.TurnEndMaxTokens{}
		}
		return dsh.TurnEndCompleted{}
	}
	// The compaction phase of the first step: its claim was made when the turn started,
	// so the contexts compaction adds are claimed now, before the prompt.
	if c := a.stopCause(t); c == nil {
		n, err := a.pressure(t, claimed)
		if err != nil {
			return a.fail(t, 1, err), stop
		}
		if n > 0 {
			extra, err := a.claim(t.n, false)
			if err != nil {
				return a.fail(t, 1, err), stop
			}
			claimed = mergeClaim(claimed, extra, t.prompt)
		}
	}
	for {
		// Step 3: the system prompt is static (Config.System); then the abort check.
		if c := a.stopCause(t); c != nil {
			return aborted(c), stop
		}
		// Step 4: pre-step, at every proposed step.
		decision, err := a.preStep(t, claimed, step+1)
		if c := a.stopCause(t); c != nil {
			return aborted(c), stop // an abort wins over the decision, and over a failure
		}
		if err != nil {
			return a.fail(t, step+1, err), stop
		}
		// Step 5.
		var msgs []dsh.UserMessage
		switch d := decision.(type) {
		case dsh.PreStepReject:
			return dsh.TurnEndBlocked{Reason: d.Reason, DroppedMessageIDs: messageIDs(claimed)}, onFollowup
		case dsh.PreStepHalt:
			a.haltTurn(t, d.Reason)
			return aborted(a.stopCause(t)), stop
		case dsh.PreStepEnter:
			msgs = d.Messages
		}
		if len(msgs) == 0 {
			if end != endNone {
				return closing(), onPending
			}
			if step == 0 {
				return dsh.TurnEndCompleted{}, stop
			}
		}
		// Step 6.
		if c := a.stopCause(t); c != nil {
			return aborted(c), stop
		}
		step++
		out, failure, err := a.openStep(t, step, msgs)
		if err != nil {
			return a.fail(t, step, err), stop
		}
		if failure != nil {
			return a.failWith(t, step, *failure), stop
		}
		if out == endBlocked {
			return *t.blocked, onFollowup
		}
		end = out
		if end == endMaxTokens {
			maxTokens = true
		}
		// Step 7.
		if c := a.stopCause(t); c != nil {
			return aborted(c), stop
		}
		if end != endNone {
			if _, pending := a.pending(); pending == 0 {
				err := a.turnStopping(t, continuations)
				if c := a.stopCause(t); c != nil {
					return aborted(c), stop
				}
				if err != nil {
					return a.fail(t, step, err), stop
				}
				// Step 8.
				if _, pending := a.pending(); pending == 0 {
					return closing(), onPending
				}
				if continuations >= a.cfg.ContinuationCap {
					return a.capContinuations(t, step, continuations, closing())
				}
				continuations++
			}
		}
		// The compaction phase: the step is durable, the next one is not claimed yet.
		if _, err := a.pressure(t, a.pendingSteps()); err != nil {
			return a.fail(t, step+1, err), stop
		}
		if c := a.stopCause(t); c != nil {
			return aborted(c), stop
		}
		// Step 9: the next step claims the next-step list only.
		if claimed, err = a.claim(t.n, false); err != nil {
			return a.fail(t, step+1, err), stop
		}
	}
}

// mergeClaim places the contexts claimed after the first claim of a turn before its
// prompt, as if they had been claimed together.
func mergeClaim(claimed, extra []dsh.UserMessage, prompt bool) []dsh.UserMessage {
	if !prompt || len(claimed) == 0 {
		return append(claimed, extra...)
	}
	n := len(claimed) - 1
	out := make([]dsh.UserMessage, 0, len(claimed)+len(extra))
	return append(append(append(out, claimed[:n]...), extra...), claimed[n])
}

// capContinuations discards the input steered past the continuation cap and closes the
// turn with reason (docs/design/SEMANTICS.md#a9-the-stop-loop-is-capped).
func (a *Agent) capContinuations(t *turnRun, step, continuations int, reason dsh.TurnEndReason) (dsh.TurnEndReason, goOn) {
	if err := a.discardNextStep(); err != nil {
		return a.fail(t, step, err), stop
	}
	if _, err := a.log.Append(a.base, dsh.ContinuationCapped{Turn: t.n, Continuations: continuations, Cap: a.cfg.ContinuationCap}); err != nil {
		return a.fail(t, step, err), stop
	}
	return reason, onPending
}

// preStep runs the agent/pre-step waterfall (B §2.3) over the claimed batch. The default
// decision enters the claimed messages; listeners see a private copy of them.
func (a *Agent) preStep(t *turnRun, claimed []dsh.UserMessage, step int) (dsh.PreStepDecision, error) {
	p := &dsh.PreStepPayload{Agent: a, AgentID: a.id, Messages: cloneMessages(claimed), Turn: t.n, Step: step}
	if p.Messages == nil {
		p.Messages = []dsh.UserMessage{}
	}
	ctx := withScope(t.ctx, scope{agent: a, turn: t.n, step: step})
	d, err := a.reg.RunPreStep(ctx, p, func(context.Context) (dsh.PreStepDecision, error) {
		return dsh.PreStepEnter{Messages: cloneMessages(claimed)}, nil
	})
	if err != nil {
		return nil, err
	}
	return d, nil // the registry returns value variants only
}

// turnStopping awaits the agent/turn-stopping listeners (B §2.6), or a child's
// agent/subagent-stop listeners: every one runs (Part A item 3); their joined failures
// fail the turn.
func (a *Agent) turnStopping(t *turnRun, continuations int) error {
	if sa := a.cfg.Subagent; sa != nil {
		// A child's turn stops at agent/subagent-stop instead, with its answer.
		p := &dsh.SubagentStopPayload{Agent: a, AgentID: a.id, Lineage: sa.Lineage, Turn: t.n,
			Continuations: continuations, StopHookActive: continuations > 0}
		if t.answer != nil {
			answer := *t.answer
			p.Answer = &answer
		}
		p.BackgroundTasks = a.backgroundTasks()
		return a.reg.NotifySubagentStop(t.ctx, p)
	}
	return a.reg.NotifyTurnStopping(t.ctx, &dsh.TurnStoppingPayload{
		Agent: a, AgentID: a.id, Turn: t.n, Continuations: continuations, StopHookActive: continuations > 0,
		BackgroundTasks: a.backgroundTasks()})
}

// backgroundTasks are the session's tasks running in the background (nil: none).
func (a *Agent) backgroundTasks() []dsh.BackgroundTask {
	if a.cfg.BackgroundTasks == nil {
		return nil
	}
	if tasks := a.cfg.BackgroundTasks(); len(tasks) > 0 {
		return tasks
	}
	return nil
}

// aborted is the reason of a turn stopped by cause.
func aborted(cause dsh.AgentCancelCause) dsh.TurnEndReason {
	return dsh.TurnEndAborted{Reason: cause}
}

// fail ends the turn error for err: a listener failure, a failed append (B §3.2). It
// emits agent/error first.
func (a *Agent) fail(t *turnRun, step int, err error) dsh.TurnEndReason {
	return a.failWith(t, step, failureOf(err))
}

// failWith emits agent/error for f and returns turn/end{error{f}}.
func (a *Agent) failWith(t *turnRun, step int, f dsh.LLMFailure) dsh.TurnEndReason {
	a.logger.Warn("loop: turn failed", "turn", t.n, "step", step, "code", f.Code, "message", f.Message)
	a.emit(dsh.AgentErrorEventName, a.reg.EmitAgentError(a.base, &dsh.AgentErrorPayload{
		Agent: a, AgentID: a.id, Turn: t.n, Step: step, Error: f}))
	return dsh.TurnEndError{Error: f}
}

// failureOf is the failure a turn records for err: an llm.FailureError keeps its facts;
// anything else is {message, UNKNOWN}, where the message is the text of the failure
// itself, without the listener-error framing (the listeners' texts joined by "; ").
func failureOf(err error) dsh.LLMFailure {
	var fe *llm.FailureError
	if errors.As(err, &fe) {
		return fe.Failure
	}
	return dsh.LLMFailure{Message: failureText(err), Code: llm.CodeUnknown}
}

// failureText unwraps listener errors and joined errors into their messages.
func failureText(err error) string {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var parts []string
		for _, e := range joined.Unwrap() {
			parts = append(parts, failureText(e))
		}
		return strings.Join(parts, "; ")
	}
	var le *dsh.ListenerError
	if errors.As(err, &le) && le.Err != nil {
		return le.Err.Error()
	}
	return err.Error()
}
