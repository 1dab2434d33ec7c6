package hookbridge

import (
	"context"

	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
)

// approvalAnswer maps PermissionRequest: allow answers allowed-once, deny (or block)
// denies with the reason, halt (a deny with interrupt) denies and ends the turn; anything
// else leaves the request to the next listener and the approval seam.
func (b *Bridge) approvalAnswer(ctx context.Context, p *dsh.ApprovalAnswerPayload, next dsh.ApprovalAnswerNext) (dsh.ApprovalAnswerDecision, error) {
	ex := p.Exec
	s := b.execSession(ctx, ex)
	in := Input{Event: b.event(dsh.ApprovalAnswerEventName), Session: s, Turn: s.Turn, ToolName: ex.Name, ToolInput: toolInput(ex), ToolUseID: ex.CallID}
	rep, err := b.fire(ctx, in, ex.Name, ex.AgentID != nil && s.TurnOpen, s.Agent)
	if err != nil {
		return nil, err
	}
	reason := rep.Merged.Reason
	switch rep.Merged.Outcome {
	case dsh.HookOutcomeAllow:
		return dsh.ApprovalAnswerAllow{}, nil
	case dsh.HookOutcomeDeny, dsh.HookOutcomeBlock, dsh.HookOutcomeHalt:
		if b.d.Render.PermissionDeny != nil && !ex.Token.IsZero() {
			text := b.d.Render.PermissionDeny(ex.Name, reason)
			b.calls.update(ex.Token, func(c *call) { c.denied, c.isDenied = text, true })
		}
		d := dsh.ApprovalAnswerDeny{Message: &reason}
		if rep.Merged.Outcome == dsh.HookOutcomeHalt {
			yes := true
			d.Interrupt = &yes
		}
		return d, nil
	}
	return next.Call(ctx)
}

// notify fires an observing event (Notification) with the subject kind; its outcome is
// not acted on.
func (b *Bridge) notify(ctx context.Context, event, kind, tool string, s hookproto.Session, inTurn bool) {
	msg := ""
	if b.d.NotificationText != nil {
		msg = b.d.NotificationText(kind, tool)
	}
	in := Input{Event: event, Session: s, Turn: s.Turn, NotificationType: kind, Message: msg}
	rep, err := b.fire(ctx, in, kind, inTurn, s.Agent)
	if err != nil {
		b.log.Warn("notification hook", "event", event, "type", kind, "error", err)
		return
	}
	if rep.Merged.Outcome != dsh.HookOutcomePass || len(rep.Merged.Contexts) > 0 {
		b.log.Info("notification hooks only observe; their output is ignored", "event", event, "type", kind, "outcome", string(rep.Merged.Outcome))
	}
}

// approvalPrompt fires the approval/prompt event (Notification) with the table's subject
// (permission_prompt): an approval request goes to the approval seam.
func (b *Bridge) approvalPrompt(ctx context.Context, p *dsh.ApprovalPromptPayload) {
	ev := b.event(dsh.ApprovalPromptEventName)
	e, _ := b.d.Table.Lookup(ev)
	s := b.execSession(ctx, p.Exec)
	b.notify(ctx, ev, e.Subject, p.Exec.Name, s, p.Exec.AgentID != nil && s.TurnOpen)
}

// status fires event at agent/status, as its table row's also entry a says: when the
// agent's status is a's (Claude Code's Notification idle_prompt: an interactive agent
// went idle, waiting for input), with a's subject.
func (b *Bridge) status(event string, a hookmap.Also) dsh.StatusListener {
	return func(ctx context.Context, p *dsh.StatusPayload) {
		if a.Status != "" && string(p.Status) != a.Status {
			return
		}
		s := b.session(ctx, p.AgentID)
		s.TurnOpen = false
		b.notify(ctx, event, a.Subject, "", s, false)
	}
}
