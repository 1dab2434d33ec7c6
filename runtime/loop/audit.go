package loop

import (
	"context"
	"errors"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/approval"
)

// DecisionAudit is the registry option that makes Config.Audit work (docs/design/SEMANTICS.md#a12-native-decisions-can-be-audited
// ): create the registry with dsh.NewRegistry(loop.DecisionAudit()). Every decision
// a listener resolves at a policy point (agent/pre-step, agent/request, agent/response,
// agent/request-error, tools/pre-execute, tools/guard, tools/post-execute,
// approval/answer) for an agent
// whose Config.Audit is set is then appended to that agent's log as decision/recorded,
// with the turn, step and tool call it concerns. Decisions that are the event's default
// or the runtime's own (no listener decided) are not recorded.
func DecisionAudit() dsh.RegistryOption {
	return dsh.WithDecisionAudit(recordDecision)
}

// recordDecision appends d to the log of the auditing agent ctx belongs to.
func recordDecision(ctx context.Context, d dsh.ResolvedDecision) {
	s, ok := scopeOf(ctx)
	if !ok || !s.agent.cfg.Audit || d.Listener == "" {
		return
	}
	switch d.Decision.(type) {
	case dsh.RequestPass, dsh.ResponseAccept:
		return // a model-call fold's "no opinion", its default
	}
	rec := dsh.DecisionRecorded{Point: d.Event, Listener: d.Listener, Decision: d.Kind, Reason: decisionReason(d.Decision)}
	if s.turn > 0 {
		turn := s.turn
		rec.Turn = &turn
	}
	if s.step > 0 {
		step := s.step
		rec.Step = &step
	}
	if s.callID != "" {
		id := s.callID
		rec.CallID = &id
	}
	if _, err := s.agent.log.Append(s.agent.base, rec); err != nil {
		s.agent.logger.Error("loop: cannot record a decision", "point", d.Event, "err", err)
	}
}

// decisionReason returns the reason a decision carries, if any.
func decisionReason(d any) *string {
	str := func(s string) *string { return &s }
	switch v := d.(type) {
	case dsh.PreStepReject:
		return v.Reason
	case dsh.PreStepHalt:
		return str(v.Reason)
	case dsh.PreToolDeny:
		return str(v.Reason)
	case dsh.PreToolAsk:
		return v.Reason
	case dsh.PreToolHalt:
		return str(v.Reason)
	case dsh.GuardDeny:
		return str(v.Reason)
	case dsh.PostToolHalt:
		return str(v.Reason)
	case dsh.PostToolBlock:
		for _, b := range v.Feedback {
			if t, ok := b.(dsh.TextBlock); ok {
				return str(t.Text)
			}
		}
	case dsh.RequestRewrite:
		return v.Reason
	case dsh.RequestRestrict:
		return v.Reason
	case dsh.RequestDeny:
		return str(v.Reason)
	case dsh.ResponseReplace:
		return v.Reason
	case dsh.ResponseBlock:
		return str(v.Reason)
	case dsh.PreCompactDefer:
		return str(v.Reason)
	case dsh.PreCompactReplace:
		return v.Reason
	case dsh.ApprovalAnswerDeny:
		return v.Message
	}
	return nil
}

// ErrNoTurn is the error of the approval recorder for a request made outside an agent's
// turn (docs/design/SEMANTICS.md#210-ask-resolution-the-approval-seam: the seam throws outside an open turn).
var ErrNoTurn = errors.New("loop: approval requested outside an agent turn")

// ApprovalRecorder returns the approval.Recorder that appends approval/asked and
// approval/decided to the session log of the agent whose tool call asks: mount it with
// approval.WithRecorder on the Service the tool runtime uses. A request made outside an
// agent's turn fails with ErrNoTurn.
func ApprovalRecorder() approval.Recorder {
	return approval.RecorderFunc(func(ctx context.Context, data dsh.SessionEventData) error {
		s, ok := scopeOf(ctx)
		if !ok || s.turn == 0 {
			return ErrNoTurn
		}
		_, err := s.agent.log.Append(s.agent.base, data)
		return err
	})
}
