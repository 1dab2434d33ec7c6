package tools

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
)

// TestUnknownToolAtCreation: with WithUnknownTool, a model's call of a tool no
// registration has fails at creation with the text as it is, and no listener of the
// rewrite, pre-execute, guard or post-execute phases runs; a registered tool, a direct
// execution and a hidden registered tool still go through policy.
func TestUnknownToolAtCreation(t *testing.T) {
	var asked []string
	e := newEnv(t, WithUnknownTool(func(agentID, name string) string {
		asked = append(asked, agentID+"/"+name)
		return "unsupported call: " + name
	}))
	e.register(t, echoDef())
	var listened atomic.Int32
	e.hooks.OnRewriteInput(func(ctx context.Context, p *dsh.RewriteInputPayload) (dsh.RewriteDecision, error) {
		listened.Add(1)
		return dsh.RewriteKeep{}, nil
	})
	e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		listened.Add(1)
		return next.Call(ctx)
	})
	e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		listened.Add(1)
		return next.Call(ctx)
	})
	model := func(name string, hidden bool) Result {
		return e.rt.Execute(context.Background(), Input{CallID: "c1", Name: name, Arguments: json.RawMessage(`{"x":1}`),
			AgentID: "a1", Turn: 1, Step: 1, Hidden: hidden})
	}

	r := model("shell", false)
	f := failureOfResult(t, r)
	if text(r) != "unsupported call: shell" || f.Error.Message != "unsupported call: shell" {
		t.Errorf("content %q, message %q; want the text as it is", text(r), f.Error.Message)
	}
	if f.Error.Info == nil || f.Error.Info.Code != CodeUnknownTool || f.Error.Info.Name != NameToolNotFound {
		t.Errorf("info %+v, want %s/%s", f.Error.Info, NameToolNotFound, CodeUnknownTool)
	}
	if n := listened.Load(); n != 0 {
		t.Errorf("%d listeners ran for an unknown tool refused at creation", n)
	}
	if len(asked) != 1 || asked[0] != "a1/shell" {
		t.Errorf("text asked for %v, want [a1/shell]", asked)
	}
	if string(r.Exec.Arguments) != `{"x":1}` {
		t.Errorf("arguments %s, want the model's", r.Exec.Arguments)
	}

	// A registered tool runs through every phase.
	if r := model("echo", false); r.IsError() || listened.Load() != 3 {
		t.Errorf("echo: error %v, %d listeners; want success through 3", r.IsError(), listened.Load())
	}
	// A registered tool hidden from the call reaches policy and fails at dispatch.
	listened.Store(0)
	if r := model("echo", true); text(r) != `Error: unknown tool "echo"` || listened.Load() == 0 {
		t.Errorf("hidden echo: %q after %d listeners; want dsh's words after policy", text(r), listened.Load())
	}
	// A direct execution (no turn) of an unknown tool reaches policy too.
	listened.Store(0)
	if r := e.exec(context.Background(), "shell", `{}`); text(r) != `Error: unknown tool "shell"` || listened.Load() == 0 {
		t.Errorf("direct call: %q after %d listeners; want dsh's words after policy", text(r), listened.Load())
	}
	if len(asked) != 1 {
		t.Errorf("text asked for %v, want one model call", asked)
	}
}

// TestUnknownToolDefault: without WithUnknownTool a model's call of an unknown tool
// reaches policy and fails at dispatch in dsh's words.
func TestUnknownToolDefault(t *testing.T) {
	e := newEnv(t)
	var pre atomic.Int32
	e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		pre.Add(1)
		return next.Call(ctx)
	})
	r := e.rt.Execute(context.Background(), Input{CallID: "c1", Name: "shell", Arguments: json.RawMessage(`{}`), Turn: 1, Step: 1})
	if text(r) != `Error: unknown tool "shell"` || pre.Load() != 1 {
		t.Errorf("%q after %d pre-execute runs; want dsh's words after one", text(r), pre.Load())
	}
}
