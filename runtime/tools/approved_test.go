package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
)

// RunContext.Approved is true in the body of a call that asked and was allowed, by
// approval/answer or by the approver, and false in one that ran without asking.
func TestRunContextApproved(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ask    bool
		answer bool // approval/answer allows (else the approver does)
		want   bool
	}{
		{name: "no ask", want: false},
		{name: "approval/answer allows", ask: true, answer: true, want: true},
		{name: "approver allows", ask: true, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, WithApprover(&countingApprover{outcome: dsh.ApprovalOutcomeAllowedOnce}))
			got := !tc.want
			def := echoDef()
			run := def.Run
			def.Run = func(ctx context.Context, rc *RunContext) (any, error) { got = rc.Approved(); return run(ctx, rc) }
			e.register(t, def)
			if tc.ask {
				askAll(e)
			}
			if tc.answer {
				e.hooks.OnApprovalAnswer(func(ctx context.Context, p *dsh.ApprovalAnswerPayload, next dsh.ApprovalAnswerNext) (dsh.ApprovalAnswerDecision, error) {
					return dsh.ApprovalAnswerAllow{}, nil
				})
			}
			r := e.rt.Execute(context.Background(), Input{CallID: "c1", Name: "echo", AgentID: "a1", Arguments: json.RawMessage(`{"text":"hi"}`)})
			if text(r) != "hi" || got != tc.want {
				t.Errorf("text %q, Approved %v; want hi, %v", text(r), got, tc.want)
			}
		})
	}
}
