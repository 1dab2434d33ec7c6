package tools

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
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

// TestPointerContentIsValue pins the boundary where a tool's content and context
// messages enter the runtime (snapshotContent, snapshotMessage): a tool that renders its
// value, defers a context or finalizes its content with pointer variants (blocks at any
// depth, sources) gets the same result as one that uses value forms, and the result holds
// value forms only. A nil pointer block fails as a nil block does.
func TestPointerContentIsValue(t *testing.T) {
	ctx := context.Background()
	sum := "summary"
	type forms struct {
		render, final []dsh.ContentBlock
		deferred      dsh.UserMessage
	}
	values := forms{
		render: []dsh.ContentBlock{dsh.TextBlock{Text: "r"}, dsh.ToolResultBlock{ToolCallID: "x", Content: []dsh.ContentBlock{dsh.ImageBlock{MediaType: "image/png", Data: "AA=="}}}},
		final:  []dsh.ContentBlock{dsh.ReasoningBlock{Text: "why"}, dsh.ToolCallBlock{ID: "t", Name: "n", Arguments: "{}"}},
		deferred: dsh.UserMessage{ID: "d", Content: []dsh.ContentBlock{dsh.TextBlock{Text: "later"}},
			Source: dsh.SourcePlugin{Plugin: "p", Summary: &sum}},
	}
	pointers := forms{
		render: []dsh.ContentBlock{&dsh.TextBlock{Text: "r"}, &dsh.ToolResultBlock{ToolCallID: "x", Content: []dsh.ContentBlock{&dsh.ImageBlock{MediaType: "image/png", Data: "AA=="}}}},
		final:  []dsh.ContentBlock{&dsh.ReasoningBlock{Text: "why"}, &dsh.ToolCallBlock{ID: "t", Name: "n", Arguments: "{}"}},
		deferred: dsh.UserMessage{ID: "d", Content: []dsh.ContentBlock{&dsh.TextBlock{Text: "later"}},
			Source: &dsh.SourcePlugin{Plugin: "p", Summary: &sum}},
	}
	run := func(t *testing.T, f forms, finalize bool) Result {
		e := newEnv(t)
		def := Definition{Name: "forms",
			Output: &Output{Render: func(args, value json.RawMessage) ([]dsh.ContentBlock, error) { return f.render, nil }},
			Run: func(ctx context.Context, rc *RunContext) (any, error) {
				if err := rc.DeferContext(f.deferred); err != nil {
					t.Errorf("DeferContext: %v", err)
				}
				return "v", nil
			}}
		if finalize {
			def.FinalizeContent = func(dsh.ToolExecution, dsh.ToolExecutionResult) ([]dsh.ContentBlock, error) { return f.final, nil }
		}
		e.register(t, def)
		return e.exec(ctx, "forms", `{}`)
	}
	for _, finalize := range []bool{false, true} {
		want, got := run(t, values, finalize), run(t, pointers, finalize)
		if want.IsError() {
			t.Fatalf("value forms failed: %s", outcomeJSON(t, want))
		}
		if !reflect.DeepEqual(got.Outcome, want.Outcome) || !reflect.DeepEqual(got.AdditionalContexts(), want.AdditionalContexts()) {
			t.Errorf("finalize %v: pointer variants\n got: %s %#v\nwant: %s %#v", finalize,
				outcomeJSON(t, got), got.AdditionalContexts(), outcomeJSON(t, want), want.AdditionalContexts())
		}
	}
	nilBlock := func(b dsh.ContentBlock) string {
		f := values
		f.render = []dsh.ContentBlock{dsh.TextBlock{Text: "r"}, b}
		return outcomeJSON(t, run(t, f, false))
	}
	if got, want := nilBlock((*dsh.TextBlock)(nil)), nilBlock(nil); got != want || !strings.Contains(want, "failure") {
		t.Errorf("nil pointer block\n got: %s\nwant: %s", got, want)
	}
}
