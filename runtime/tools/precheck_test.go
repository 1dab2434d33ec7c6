package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
)

// TestPrecheck: a tool's Precheck runs when a call is created, on the model's arguments:
// its error (or panic) fails the call there, before any rewrite, pre-execute or
// post-execute listener and before the body; a call it passes goes through them all.
func TestPrecheck(t *testing.T) {
	reg := tools.NewRegistry()
	ran := 0
	_, err := reg.Register(tools.Definition{Name: "T",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}`),
		Precheck: func(args json.RawMessage) error {
			var in map[string]any
			_ = json.Unmarshal(args, &in)
			switch in["x"] {
			case "refuse":
				return tools.NewError("REFUSED", "refused before the hooks")
			case "plain":
				return errors.New("a plain error")
			case "panic":
				panic("boom")
			}
			return nil
		},
		Run: func(ctx context.Context, rc *tools.RunContext) (any, error) { ran++; return "ok", nil }})
	if err != nil {
		t.Fatal(err)
	}
	hooks := dsh.NewRegistry()
	var seen []string
	hooks.OnRewriteInput(func(ctx context.Context, p *dsh.RewriteInputPayload) (dsh.RewriteDecision, error) {
		seen = append(seen, "rewrite")
		return dsh.RewriteKeep{}, nil
	})
	hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		seen = append(seen, "pre")
		return next.Call(ctx)
	})
	hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		seen = append(seen, "post")
		return next.Call(ctx)
	})
	rt := tools.New(reg, hooks)
	for _, c := range []struct{ x, code, msg string }{
		{"refuse", "REFUSED", "refused before the hooks"},
		{"plain", "", "a plain error"},
		{"panic", "", "panic: boom"},
	} {
		seen, ran = nil, 0
		r := rt.Execute(context.Background(), tools.Input{CallID: "c", Name: "T", Arguments: json.RawMessage(`{"x":"` + c.x + `"}`)})
		f, ok := r.Outcome.(dsh.ToolFailure)
		if !ok || !strings.Contains(f.Error.Message, c.msg) || len(seen) != 0 || ran != 0 {
			t.Errorf("x=%s: outcome %#v, listeners %v, body ran %d times; want a failure %q before any of them", c.x, r.Outcome, seen, ran, c.msg)
			continue
		}
		if c.code != "" && (f.Error.Info == nil || f.Error.Info.Code != c.code) {
			t.Errorf("x=%s: error info %+v, want the code %s", c.x, f.Error.Info, c.code)
		}
	}
	seen, ran = nil, 0
	if r := rt.Execute(context.Background(), tools.Input{CallID: "c", Name: "T", Arguments: json.RawMessage(`{"x":"fine"}`)}); r.IsError() ||
		ran != 1 || strings.Join(seen, ",") != "rewrite,pre,post" {
		t.Errorf("a call Precheck passes: error %v, body ran %d times, listeners %v", r.IsError(), ran, seen)
	}
	// Arguments that are not JSON are not prechecked: they fail as such.
	seen, ran = nil, 0
	if r := rt.Execute(context.Background(), tools.Input{CallID: "c", Name: "T", Arguments: json.RawMessage(`{`)}); !r.IsError() || ran != 0 {
		t.Errorf("arguments that are not JSON: error %v, body ran %d times", r.IsError(), ran)
	}
}
