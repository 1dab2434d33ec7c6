package loop

import (
	"context"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
)

// docs/design/SEMANTICS.md#a12-native-decisions-can-be-audited: the decision audit.

func TestPartA12_DecisionAudit(t *testing.T) {
	e := newEnv(t, calls("c1:t"), text("done"))
	e.cfg.Audit = true
	e.register(okTool("t", false))
	policy := e.reg.Plugin("policy")
	policy.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		return dsh.PreToolDeny{Reason: "no"}, nil
	})
	reason := "not now"
	policy.OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		if p.Turn == 2 {
			return dsh.PreStepReject{Reason: &reason}, nil
		}
		return next.Call(ctx)
	})
	e.reg.Plugin("passthrough").OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		return next.Call(ctx)
	})
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	followup(t, a, "u2", "again")
	wait(t, a)
	one, two, no, c1 := 1, 2, "no", "c1"
	diff(t, "decisions", []dsh.DecisionRecorded{
		{Turn: &one, Step: &one, Point: "tools/pre-execute", Listener: "policy#1", Decision: "deny", Reason: &no, CallID: &c1},
		{Turn: &two, Step: &one, Point: "agent/pre-step", Listener: "policy#2", Decision: "reject", Reason: &reason},
	}, records[dsh.DecisionRecorded](t, e.log))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant call decision result step/end step/start chunk*2 assistant step/end turn/end spliced turn/start spliced decision turn/end")
}

func TestPartA12_NoAuditByDefault(t *testing.T) {
	e := newEnv(t, text("done"))
	e.reg.OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		return dsh.PreStepEnter{Messages: p.Messages}, nil
	})
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "decisions", 0, len(records[dsh.DecisionRecorded](t, e.log)))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant step/end turn/end")
}
