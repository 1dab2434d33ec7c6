package loop

import (
	"context"
	"errors"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
)

// sessionStart runs the agent/session-start listeners (docs/design/SEMANTICS.md#21-agentsession-start, docs/design/SEMANTICS.md#a6-session-start-is-awaited-and-bounded
// ): awaited in order before the first claim, each bounded by Config.SessionStartTimeout.
// A listener still running at its bound has its context cancelled (cause
// dsh.ErrListenerOverrun) and, after a short grace, is abandoned and recorded as
// session/start-listener-overrun with its name; startup goes on with the next listener.
// Other failures are logged; nothing vetoes startup. A compaction calls it too, with the
// payload's source compact and its own bound.
func (a *Agent) sessionStart(ctx context.Context, p dsh.SessionStartPayload, bound time.Duration) {
	p.Agent, p.AgentID = a, a.id
	overran, err := a.reg.NotifySessionStartBounded(withScope(ctx, scope{agent: a}), &p, bound)
	for _, name := range overran {
		a.recordOverrun(name, bound)
	}
	for _, le := range listenerErrors(err) {
		a.logger.Warn("loop: agent/session-start listener failed", "listener", le.Listener, "source", string(p.Source), "err", le.Err)
	}
}

// subagentStart runs the agent/subagent-start listeners of a created child (in place of
// agent/session-start), bounded as those are: awaited in order before the first claim;
// contexts they inject reach the child's first request; an overrun is recorded as
// session/start-listener-overrun and a failure logged, and the child starts.
func (a *Agent) subagentStart(ctx context.Context) {
	sa := a.cfg.Subagent
	bound := a.cfg.SessionStartTimeout
	p := &dsh.SubagentStartPayload{Agent: a, AgentID: a.id, Lineage: sa.Lineage, Task: sa.Task}
	overran, err := a.reg.NotifySubagentStartBounded(withScope(ctx, scope{agent: a}), p, bound)
	for _, name := range overran {
		a.recordOverrun(name, bound)
	}
	for _, le := range listenerErrors(err) {
		a.logger.Warn("loop: agent/subagent-start listener failed", "listener", le.Listener, "err", le.Err)
	}
}

// setup runs the agent/setup listeners of a created agent, before agent/session-start, in
// order, each bounded by Config.SessionStartTimeout; failures and overruns are logged and
// startup goes on.
func (a *Agent) setup(ctx context.Context, trigger dsh.SetupTrigger) {
	bound := a.cfg.SessionStartTimeout
	overran, err := a.reg.NotifySetupBounded(withScope(ctx, scope{agent: a}), &dsh.SetupPayload{Agent: a, AgentID: a.id, Trigger: trigger}, bound)
	for _, name := range overran {
		a.logger.Warn("loop: agent/setup listener overran its bound; abandoned", "listener", name, "bound", bound)
	}
	for _, le := range listenerErrors(err) {
		a.logger.Warn("loop: agent/setup listener failed", "listener", le.Listener, "trigger", string(trigger), "err", le.Err)
	}
}

// instructionsLoaded runs the agent/instructions-loaded listeners for one instruction
// file (turn: the open turn, when loaded within one), in order, each bounded by
// Config.SessionStartTimeout; failures and overruns are logged and the agent goes on.
func (a *Agent) instructionsLoaded(ctx context.Context, f dsh.InstructionFile, turn *int) {
	bound := a.cfg.SessionStartTimeout
	p := &dsh.InstructionsLoadedPayload{Agent: a, AgentID: a.id, File: f, Turn: turn}
	overran, err := a.reg.NotifyInstructionsLoadedBounded(withScope(ctx, scope{agent: a}), p, bound)
	for _, name := range overran {
		a.logger.Warn("loop: agent/instructions-loaded listener overran its bound; abandoned", "listener", name, "bound", bound)
	}
	for _, le := range listenerErrors(err) {
		a.logger.Warn("loop: agent/instructions-loaded listener failed", "listener", le.Listener, "path", f.Path, "err", le.Err)
	}
}

// sessionEnd runs the agent/session-end listeners once the agent is closed and idle, in
// order, each bounded by Config.SessionEndTimeout: a listener still running at its bound
// has its context cancelled and, after a short grace, is abandoned and recorded as
// session/end-listener-overrun. Failures are logged; nothing is undone.
func (a *Agent) sessionEnd(reason dsh.SessionEndReason) {
	bound := a.cfg.SessionEndTimeout
	overran, err := a.reg.NotifySessionEndBounded(a.base, &dsh.SessionEndPayload{Agent: a, AgentID: a.id, Reason: reason}, bound)
	for _, name := range overran {
		if _, err := a.log.Append(a.base, dsh.EndListenerOverrun{Listener: name, BudgetMS: int(bound / time.Millisecond)}); err != nil {
			a.logger.Error("loop: cannot record a session-end overrun", "listener", name, "err", err)
		}
	}
	for _, le := range listenerErrors(err) {
		a.logger.Warn("loop: agent/session-end listener failed", "listener", le.Listener, "err", le.Err)
	}
}

// turnInterrupted runs the agent/turn-interrupted listeners once a user's cancellation
// ended turn n, after its turn/end, in order, each bounded by Config.SessionEndTimeout as
// the session-end listeners are (their context is the agent's, not the cancelled turn's).
// Failures and overruns are logged; nothing is undone.
func (a *Agent) turnInterrupted(n int) {
	bound := a.cfg.SessionEndTimeout
	overran, err := a.reg.NotifyTurnInterruptedBounded(withScope(a.base, scope{agent: a, turn: n}),
		&dsh.TurnInterruptedPayload{Agent: a, AgentID: a.id, Turn: n}, bound)
	for _, name := range overran {
		a.logger.Warn("loop: agent/turn-interrupted listener overran its bound; abandoned", "listener", name, "bound", bound)
	}
	for _, le := range listenerErrors(err) {
		a.logger.Warn("loop: agent/turn-interrupted listener failed", "listener", le.Listener, "err", le.Err)
	}
}

// recordOverrun appends session/start-listener-overrun.
func (a *Agent) recordOverrun(listener string, bound time.Duration) {
	if _, err := a.log.Append(a.base, dsh.StartListenerOverrun{Listener: listener, TimeoutMS: int(bound / time.Millisecond)}); err != nil {
		a.logger.Error("loop: cannot record a session-start overrun", "listener", listener, "err", err)
	}
}

// listenerErrors returns the listener errors err joins.
func listenerErrors(err error) []*dsh.ListenerError {
	if err == nil {
		return nil
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*dsh.ListenerError
		for _, e := range joined.Unwrap() {
			out = append(out, listenerErrors(e)...)
		}
		return out
	}
	var le *dsh.ListenerError
	if errors.As(err, &le) {
		return []*dsh.ListenerError{le}
	}
	return []*dsh.ListenerError{{Listener: "?", Err: err}}
}
