package hookbridge

import (
	"context"
	"errors"

	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/generated/dsh"
)

// child is the session of the subagent agentID with lineage l: the parent's, marked with
// the child's identity.
func (b *Bridge) child(ctx context.Context, agentID string, l *dsh.Lineage) hookproto.Session {
	s := b.session(ctx, agentID)
	if l != nil {
		lineage := *l
		s.Lineage, s.AgentID = &lineage, agentID
	}
	return s
}

// execSession is the session of the agent a tool call runs for, marked with the child's
// identity when a subagent makes it.
func (b *Bridge) execSession(ctx context.Context, ex dsh.ToolExecution) hookproto.Session {
	return b.child(ctx, agentID(ex), ex.Lineage)
}

// subagentStart maps SubagentStart: matched on the agent type; its contexts go to the
// child's first request; it cannot block the child (a block is logged).
func (b *Bridge) subagentStart(ctx context.Context, p *dsh.SubagentStartPayload) error {
	ev := b.event(dsh.SubagentStartEventName)
	in := Input{Event: ev, Session: b.child(ctx, p.AgentID, &p.Lineage)}
	rep, err := b.fire(ctx, in, p.Lineage.AgentType, in.Session.TurnOpen, p.Agent)
	if err != nil {
		return err
	}
	switch rep.Merged.Outcome {
	case dsh.HookOutcomeBlock, dsh.HookOutcomeDeny, dsh.HookOutcomeHalt:
		b.log.Info("subagent-start hooks cannot block the child; ignored", "event", ev, "outcome", string(rep.Merged.Outcome), "reason", rep.Merged.Reason)
	}
	if len(rep.Merged.Contexts) == 0 {
		return nil
	}
	if p.Agent == nil {
		return errors.New("subagent-start hook contexts: the payload has no agent handle")
	}
	return p.Agent.Inject(ctx, b.message(b.contexts(ev, "", rep)))
}

// subagentStop maps SubagentStop as Stop: a block continues the child's turn with the
// reason, a halt ends it, matched on the agent type.
func (b *Bridge) subagentStop(ctx context.Context, p *dsh.SubagentStopPayload) error {
	s := b.child(ctx, p.AgentID, &p.Lineage)
	s.Turn, s.TurnOpen = p.Turn, true
	in := Input{Event: b.event(dsh.SubagentStopEventName), Session: s, Turn: p.Turn, StopHookActive: p.StopHookActive, Answer: p.Answer,
		BackgroundTasks: p.BackgroundTasks}
	rep, err := b.fire(ctx, in, p.Lineage.AgentType, true, p.Agent)
	if err != nil {
		return err
	}
	return b.stopOutcome(ctx, in.Event, rep, p.Agent)
}
