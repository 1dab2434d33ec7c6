package tools

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
)

// A phase nobody listens to is skipped (no payload is built), which must not change what
// the call does. These tests pin the two ways that could show.

// TestUnlistenedPhasesStillAudited: with a decision audit and no listener, pre-execute
// and the guards still resolve (and record) their defaults.
func TestUnlistenedPhasesStillAudited(t *testing.T) {
	var (
		mu  sync.Mutex
		got []string
	)
	hooks := dsh.NewRegistry(dsh.WithLogger(quietLogger()), dsh.WithDecisionAudit(func(_ context.Context, d dsh.ResolvedDecision) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, d.Event+" "+d.Kind)
	}))
	tools := NewRegistry()
	if _, err := tools.Register(echoDef()); err != nil {
		t.Fatal(err)
	}
	rt := New(tools, hooks, WithLogger(quietLogger()))
	r := rt.Execute(context.Background(), Input{CallID: "c1", Name: "echo", Arguments: []byte(`{"text":"hi"}`), AgentID: "a1"})
	if text(r) != "hi" {
		t.Fatalf("result %s", outcomeJSON(t, r))
	}
	want := []string{"tools/pre-execute allow", "tools/guard abstain", "tools/post-execute accept"}
	if !slices.Equal(got, want) {
		t.Errorf("audit %q, want %q", got, want)
	}
}

// TestListenerRegisteredDuringCall: a listener registered while a call runs (here by the
// body) sees the phases of that call that start after it was registered.
func TestListenerRegisteredDuringCall(t *testing.T) {
	e := newEnv(t)
	var seen []string
	e.register(t, toolDef("reg", func(ctx context.Context, rc *RunContext) (any, error) {
		e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
			seen = append(seen, "post "+p.Exec.CallID)
			return dsh.PostToolAccept{Content: []dsh.ContentBlock{dsh.TextBlock{Text: "replaced"}}}, nil
		})
		e.hooks.OnToolResult(func(ctx context.Context, p *dsh.ToolResultPayload) {
			seen = append(seen, "result "+p.Exec.CallID)
		})
		return "body", nil
	}))
	r := e.exec(context.Background(), "reg", `{}`)
	if text(r) != "replaced" {
		t.Errorf("result %s", outcomeJSON(t, r))
	}
	if len(seen) != 2 || seen[0] != "post c1" || seen[1] != "result c1" {
		t.Errorf("seen %q", seen)
	}
}
