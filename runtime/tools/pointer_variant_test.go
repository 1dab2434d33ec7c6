package tools

import (
	"context"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
)

// TestPointerDecisionIsValue pins the one dynamic type per union variant: a listener that
// returns a pointer to a decision variant (&dsh.PreToolAllow{} after a policy that would
// ask, say) is treated exactly as one that returns the value, so the runtime's checks,
// which test value forms only, cannot be bypassed.
func TestPointerDecisionIsValue(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name         string
		value, point func(e *env)
	}{
		{"pre-execute allow after a deny policy", func(e *env) {
			e.hooks.OnPreTool(preDecides(dsh.PreToolAllow{}))
			e.hooks.OnPreTool(preDecides(dsh.PreToolDeny{Reason: "policy"}))
		}, func(e *env) {
			e.hooks.OnPreTool(preDecides(&dsh.PreToolAllow{}))
			e.hooks.OnPreTool(preDecides(dsh.PreToolDeny{Reason: "policy"}))
		}},
		{"pre-execute deny", func(e *env) { e.hooks.OnPreTool(preDecides(dsh.PreToolDeny{Reason: "no"})) },
			func(e *env) { e.hooks.OnPreTool(preDecides(&dsh.PreToolDeny{Reason: "no"})) }},
		{"pre-execute halt", func(e *env) { e.hooks.OnPreTool(preDecides(dsh.PreToolHalt{Reason: "stop"})) },
			func(e *env) { e.hooks.OnPreTool(preDecides(&dsh.PreToolHalt{Reason: "stop"})) }},
		{"guard deny", func(e *env) {
			e.hooks.Guard(func(context.Context, *dsh.GuardPayload) dsh.GuardVerdict { return dsh.GuardDeny{Reason: "g"} })
		}, func(e *env) {
			e.hooks.Guard(func(context.Context, *dsh.GuardPayload) dsh.GuardVerdict { return &dsh.GuardDeny{Reason: "g"} })
		}},
		{"post-execute block", func(e *env) {
			e.hooks.OnPostTool(postDecides(dsh.PostToolBlock{Feedback: []dsh.ContentBlock{dsh.TextBlock{Text: "blocked"}}}))
		}, func(e *env) {
			e.hooks.OnPostTool(postDecides(&dsh.PostToolBlock{Feedback: []dsh.ContentBlock{&dsh.TextBlock{Text: "blocked"}}}))
		}},
		{"post-execute halt", func(e *env) { e.hooks.OnPostTool(postDecides(dsh.PostToolHalt{Reason: "h"})) },
			func(e *env) { e.hooks.OnPostTool(postDecides(&dsh.PostToolHalt{Reason: "h"})) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(setup func(*env)) Result {
				e := newEnv(t)
				e.register(t, echoDef())
				setup(e)
				return e.exec(ctx, "echo", `{"text":"hi"}`)
			}
			want, got := run(tc.value), run(tc.point)
			if w, g := outcomeJSON(t, want), outcomeJSON(t, got); w != g || want.Halt != got.Halt && (want.Halt == nil || got.Halt == nil || *want.Halt != *got.Halt) {
				t.Errorf("pointer variant\n got: %s %+v\nwant: %s %+v", g, got.Halt, w, want.Halt)
			}
		})
	}
}

func preDecides(d dsh.PreToolDecision) dsh.PreToolListener {
	return func(context.Context, *dsh.PreToolPayload, dsh.PreToolNext) (dsh.PreToolDecision, error) {
		return d, nil
	}
}

func postDecides(d dsh.PostToolDecision) dsh.PostToolListener {
	return func(context.Context, *dsh.PostToolPayload, dsh.PostToolNext) (dsh.PostToolDecision, error) {
		return d, nil
	}
}
