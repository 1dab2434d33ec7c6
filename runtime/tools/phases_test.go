package tools

import (
	"context"
	"encoding/json"
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

// An agent-less call shows no agent id at any phase, an agent's call its id at every one.
func TestPhasesSeeTheCallsAgentID(t *testing.T) {
	for _, agent := range []string{"", "a1"} {
		e := newEnv(t)
		e.register(t, echoDef())
		var seen []*string
		e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
			seen = append(seen, p.Exec.AgentID)
			return next.Call(ctx)
		})
		e.hooks.Guard(func(ctx context.Context, p *dsh.GuardPayload) dsh.GuardVerdict {
			seen = append(seen, p.Exec.AgentID)
			return dsh.GuardAbstain{}
		})
		e.hooks.WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
			seen = append(seen, p.Exec.AgentID)
			return next.Call(ctx)
		})
		e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
			seen = append(seen, p.Exec.AgentID)
			return next.Call(ctx)
		})
		e.hooks.OnToolResult(func(ctx context.Context, p *dsh.ToolResultPayload) { seen = append(seen, p.Exec.AgentID) })
		r := e.rt.Execute(context.Background(), Input{CallID: "c1", Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`), AgentID: agent})
		if r.IsError() {
			t.Fatalf("agent %q: %s", agent, text(r))
		}
		if len(seen) != 5 {
			t.Fatalf("agent %q: %d phases ran, want 5", agent, len(seen))
		}
		for i, id := range seen {
			switch {
			case agent == "" && id != nil:
				t.Errorf("agent-less call: phase %d sees agent id %q", i, *id)
			case agent != "" && (id == nil || *id != agent):
				t.Errorf("agent %q: phase %d sees agent id %v", agent, i, id)
			}
		}
	}
}

// B §4.4 step 1.1: when the innermost wrapper passes the caller's own context to next, the
// body runs under that very context (no fusion); a derived one is fused with the caller's.
func TestBodyRunsUnderTheCallersOwnContext(t *testing.T) {
	type key struct{}
	caller := context.WithValue(context.Background(), key{}, "caller")
	for _, derive := range []bool{false, true} {
		e := newEnv(t)
		var body context.Context
		e.register(t, toolDef("t", func(ctx context.Context, rc *RunContext) (any, error) {
			body = ctx
			return "ok", nil
		}))
		e.hooks.WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
			if derive {
				ctx = context.WithValue(ctx, key{}, "wrapper")
			}
			return next.Call(ctx)
		})
		if r := e.exec(caller, "t", `{}`); r.IsError() {
			t.Fatalf("derive=%v: %s", derive, text(r))
		}
		if same := body == caller; same == derive {
			t.Errorf("derive=%v: the body's context is the caller's: %v", derive, same)
		}
		if want := map[bool]string{false: "caller", true: "wrapper"}[derive]; body.Value(key{}) != want {
			t.Errorf("derive=%v: the body sees value %v, want %q", derive, body.Value(key{}), want)
		}
	}
}

// Visible offers an agent its own tools, which shadow the global ones of the same name,
// and no other agent's.
func TestVisibleIncludesTheAgentsOwnTools(t *testing.T) {
	e := newEnv(t)
	e.register(t, Definition{Name: "x", Description: "global", Run: echoDef().Run})
	for _, d := range []Definition{{Name: "x", Description: "a1's"}, {Name: "mine", Description: "a1's"}} {
		d.Run = echoDef().Run
		if _, err := e.tools.RegisterForAgent("a1", d); err != nil {
			t.Fatal(err)
		}
	}
	describe := func(agent string) []string {
		var out []string
		for _, d := range e.tools.Visible(agent) {
			out = append(out, d.Name+":"+d.Description)
		}
		return out
	}
	if got, want := describe("a1"), []string{"mine:a1's", "x:a1's"}; !slices.Equal(got, want) {
		t.Errorf("Visible(a1) = %v, want %v", got, want)
	}
	for _, agent := range []string{"a2", ""} {
		if got, want := describe(agent), []string{"x:global"}; !slices.Equal(got, want) {
			t.Errorf("Visible(%q) = %v, want %v", agent, got, want)
		}
	}
}

// A nested call without an agent id runs for its parent's agent (and so sees that agent's
// tools); one that names an agent runs for that agent.
func TestNestedCallInheritsTheAgent(t *testing.T) {
	e := newEnv(t)
	for _, agent := range []string{"a1", "a2"} {
		who := agent
		if _, err := e.tools.RegisterForAgent(agent, toolDef("inner", func(ctx context.Context, rc *RunContext) (any, error) {
			return "inner of " + who, nil
		})); err != nil {
			t.Fatal(err)
		}
	}
	e.register(t, toolDef("outer", func(ctx context.Context, rc *RunContext) (any, error) {
		var in struct {
			Agent string `json:"agent"`
		}
		if err := rc.BindArguments(&in); err != nil {
			return nil, err
		}
		r := rc.Execute(ctx, Input{CallID: "n1", Name: "inner", Arguments: json.RawMessage(`{}`), AgentID: in.Agent})
		return text(r), nil
	}))
	for args, want := range map[string]string{`{}`: "inner of a1", `{"agent":"a2"}`: "inner of a2"} {
		r := e.rt.Execute(context.Background(), Input{CallID: "c1", Name: "outer", Arguments: json.RawMessage(args), AgentID: "a1"})
		if got := text(r); got != want {
			t.Errorf("outer %s for a1: %q, want %q", args, got, want)
		}
	}
}

// A violation inside nested arrays names each index, however deep (the path follows the
// instance through every array).
func TestViolationPathThroughNestedArrays(t *testing.T) {
	e := newEnv(t)
	e.register(t, Definition{Name: "t",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"m":{"type":"array","items":{"type":"array","items":{"type":"object","properties":{"s":{"type":"string"}}}}}}}`),
		Run:         func(ctx context.Context, rc *RunContext) (any, error) { return "ok", nil }})
	for args, want := range map[string]string{
		`{"m":[[{"s":1}]]}`:       `invalid arguments: "m[0][0].s" must be a string`,
		`{"m":[[],[{},{"s":2}]]}`: `invalid arguments: "m[1][1].s" must be a string`,
	} {
		if got := failureOfResult(t, e.exec(context.Background(), "t", args)).Error.Message; got != want {
			t.Errorf("%s: %q, want %q", args, got, want)
		}
	}
}
