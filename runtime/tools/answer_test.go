package tools

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/approval"
)

// askAll makes every call ask the approval seam, with the reason "please confirm".
func askAll(e *env) {
	e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		r := "please confirm"
		return dsh.PreToolAsk{Reason: &r}, nil
	})
}

// countingApprover answers outcome and counts the requests it gets.
type countingApprover struct {
	outcome dsh.ApprovalOutcome
	reqs    []approval.Request
}

func (a *countingApprover) Approve(_ context.Context, req approval.Request) (dsh.ApprovalOutcome, error) {
	a.reqs = append(a.reqs, req)
	return a.outcome, nil
}

func str(s string) *string { return &s }

// approval/answer answers an ask before the seam: allow dispatches and deny denies with
// the message, and the approver is never asked; pass leaves it to the approver.
func TestApprovalAnswer_AnswersBeforeTheSeam(t *testing.T) {
	yes := true
	for _, tc := range []struct {
		name      string
		decision  dsh.ApprovalAnswerDecision
		ran       bool
		asked     int
		text      string
		haltPoint HaltPoint
	}{
		{name: "allow", decision: dsh.ApprovalAnswerAllow{}, ran: true, text: "hi"},
		{name: "deny", decision: dsh.ApprovalAnswerDeny{Message: str("no way")}, text: "Error: no way"},
		{name: "deny-nomessage", decision: &dsh.ApprovalAnswerDeny{}, text: "Error: the approval was denied"},
		{name: "deny-interrupt", decision: dsh.ApprovalAnswerDeny{Message: str("stop now"), Interrupt: &yes}, text: "Error: stop now", haltPoint: HaltApprovalAnswer},
		{name: "pass", decision: dsh.ApprovalAnswerPass{}, asked: 1, text: "Error: the user rejected tool \"echo\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			appr := &countingApprover{outcome: dsh.ApprovalOutcomeRejected}
			e := newEnv(t, WithApprover(appr))
			ran := false
			def := echoDef()
			run := def.Run
			def.Run = func(ctx context.Context, rc *RunContext) (any, error) { ran = true; return run(ctx, rc) }
			e.register(t, def)
			askAll(e)
			var seen []*dsh.ApprovalAnswerPayload
			e.hooks.OnApprovalAnswer(func(ctx context.Context, p *dsh.ApprovalAnswerPayload, next dsh.ApprovalAnswerNext) (dsh.ApprovalAnswerDecision, error) {
				seen = append(seen, p)
				return tc.decision, nil
			})
			r := e.rt.Execute(context.Background(), Input{CallID: "c1", Name: "echo", AgentID: "a1", Arguments: json.RawMessage(`{"text":"hi"}`)})
			if ran != tc.ran || len(appr.reqs) != tc.asked || text(r) != tc.text {
				t.Errorf("ran %v, approver asked %d times, text %q; want %v, %d, %q", ran, len(appr.reqs), text(r), tc.ran, tc.asked, tc.text)
			}
			if len(seen) != 1 || seen[0].Exec.CallID != "c1" || string(seen[0].Exec.Arguments) != `{"text":"hi"}` ||
				seen[0].Reason == nil || *seen[0].Reason != "please confirm" || seen[0].Exec.AgentID == nil || *seen[0].Exec.AgentID != "a1" {
				t.Errorf("payloads %+v", seen)
			}
			switch {
			case tc.haltPoint == "" && r.Halt != nil:
				t.Errorf("halt %+v, want none", r.Halt)
			case tc.haltPoint != "" && (r.Halt == nil || r.Halt.Point != tc.haltPoint || r.Halt.Reason != "stop now"):
				t.Errorf("halt %+v, want %s", r.Halt, tc.haltPoint)
			}
		})
	}
}

// Without an approval seam an approval/answer still answers; when it passes, the ask is
// denied with its reason as before.
func TestApprovalAnswer_WithoutSeam(t *testing.T) {
	for _, allow := range []bool{true, false} {
		e := newEnv(t)
		e.register(t, echoDef())
		askAll(e)
		e.hooks.OnApprovalAnswer(func(ctx context.Context, p *dsh.ApprovalAnswerPayload, next dsh.ApprovalAnswerNext) (dsh.ApprovalAnswerDecision, error) {
			if allow {
				return dsh.ApprovalAnswerAllow{}, nil
			}
			return next.Call(ctx)
		})
		r := e.exec(context.Background(), "echo", `{"text":"hi"}`)
		want := "Error: please confirm"
		if allow {
			want = "hi"
		}
		if text(r) != want {
			t.Errorf("allow=%v: text %q, want %q", allow, text(r), want)
		}
	}
}

// approval/answer runs only for an ask, and the guards still run after its allow.
func TestApprovalAnswer_OnlyOnAskAndGuardsStillRun(t *testing.T) {
	e := newEnv(t)
	e.register(t, echoDef())
	n := 0
	e.hooks.OnApprovalAnswer(func(ctx context.Context, p *dsh.ApprovalAnswerPayload, next dsh.ApprovalAnswerNext) (dsh.ApprovalAnswerDecision, error) {
		n++
		return dsh.ApprovalAnswerAllow{}, nil
	})
	if r := e.exec(context.Background(), "echo", `{"text":"hi"}`); text(r) != "hi" || n != 0 {
		t.Fatalf("an allowed call: text %q, approval/answer ran %d times", text(r), n)
	}
	askAll(e)
	e.hooks.Guard(func(ctx context.Context, p *dsh.GuardPayload) dsh.GuardVerdict {
		return dsh.GuardDeny{Reason: "guarded"}
	})
	if r := e.exec(context.Background(), "echo", `{"text":"hi"}`); text(r) != "Error: guarded" || n != 1 {
		t.Errorf("an answered ask: text %q, approval/answer ran %d times; want the guard's denial after one run", text(r), n)
	}
}

// A failing approval/answer listener is a final failure of the call; the approver is not
// asked and the body does not run.
func TestApprovalAnswer_ListenerFailureIsFinal(t *testing.T) {
	appr := &countingApprover{outcome: dsh.ApprovalOutcomeAllowedOnce}
	e := newEnv(t, WithApprover(appr))
	ran := false
	e.register(t, toolDef("t", func(ctx context.Context, rc *RunContext) (any, error) { ran = true; return "ok", nil }))
	askAll(e)
	e.hooks.OnApprovalAnswer(func(ctx context.Context, p *dsh.ApprovalAnswerPayload, next dsh.ApprovalAnswerNext) (dsh.ApprovalAnswerDecision, error) {
		return nil, errors.New("answerer broke")
	})
	post := 0
	e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		post++
		return next.Call(ctx)
	})
	r := e.exec(context.Background(), "t", `{}`)
	if ran || len(appr.reqs) != 0 || post != 0 || !strings.Contains(text(r), "answerer broke") {
		t.Errorf("ran %v, asked %d, post-execute %d, text %q", ran, len(appr.reqs), post, text(r))
	}
}

// approval/prompt is observed for a request that goes to a mounted seam, after
// approval/answer passed and before the approver; a panicking observer changes nothing.
func TestApprovalPrompt_BeforeTheSeam(t *testing.T) {
	var order []string
	appr := approval.ApproverFunc(func(ctx context.Context, req approval.Request) (dsh.ApprovalOutcome, error) {
		order = append(order, "approver")
		return dsh.ApprovalOutcomeAllowedOnce, nil
	})
	e := newEnv(t, WithApprover(appr))
	e.register(t, echoDef())
	askAll(e)
	e.hooks.OnApprovalAnswer(func(ctx context.Context, p *dsh.ApprovalAnswerPayload, next dsh.ApprovalAnswerNext) (dsh.ApprovalAnswerDecision, error) {
		order = append(order, "answer")
		return next.Call(ctx)
	})
	e.hooks.OnApprovalPrompt(func(ctx context.Context, p *dsh.ApprovalPromptPayload) {
		order = append(order, "prompt:"+p.Exec.CallID+":"+*p.Reason)
	})
	e.hooks.OnApprovalPrompt(func(ctx context.Context, p *dsh.ApprovalPromptPayload) { panic("observer broke") })
	r := e.rt.Execute(context.Background(), Input{CallID: "c1", Name: "echo", AgentID: "a1", Arguments: json.RawMessage(`{"text":"hi"}`)})
	if text(r) != "hi" || !slices.Equal(order, []string{"answer", "prompt:c1:please confirm", "approver"}) {
		t.Errorf("text %q, order %q", text(r), order)
	}

	// No seam: nobody is prompted.
	order = nil
	e2 := newEnv(t)
	e2.register(t, echoDef())
	askAll(e2)
	e2.hooks.OnApprovalPrompt(func(ctx context.Context, p *dsh.ApprovalPromptPayload) { order = append(order, "prompt") })
	e2.exec(context.Background(), "echo", `{"text":"hi"}`)
	if len(order) != 0 {
		t.Errorf("prompted without a seam: %q", order)
	}
}
