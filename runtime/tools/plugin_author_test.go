package tools_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
)

// TestWrapperFailsCleanly is a timeout plugin as its author writes it: a tools/execute
// wrapper that gives up on a slow body with tools.Fail. The call fails with the plugin's
// own message and code, finally: tools/post-execute does not run, tools/result does.
func TestWrapperFailsCleanly(t *testing.T) {
	registry := dsh.NewRegistry()
	p := registry.Plugin("timeout")
	p.WrapExecute(func(ctx context.Context, pl *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
		ctx2, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		res := next.Call(ctx2)
		if ctx2.Err() != nil {
			return tools.Fail(ctx, tools.NewError("TIMEOUT", pl.Exec.Name+" timed out"))
		}
		return res
	})
	postRan, resultSeen := false, false
	p.OnPostTool(func(ctx context.Context, pl *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		postRan = true
		return next.Call(ctx)
	})
	p.OnToolResult(func(ctx context.Context, pl *dsh.ToolResultPayload) {
		resultSeen = true
	})
	reg := tools.NewRegistry()
	reg.Register(tools.Definition{Name: "Slow", Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	reg.Register(tools.Definition{Name: "Fast", Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
		return "done", nil
	}})
	rt := tools.New(reg, registry)

	res := rt.Execute(context.Background(), tools.Input{CallID: "c1", Name: "Slow", Arguments: json.RawMessage(`{}`)})
	f, ok := res.Outcome.(dsh.ToolFailure)
	if !ok {
		t.Fatalf("outcome %T, want a failure", res.Outcome)
	}
	if f.Error.Message != "Slow timed out" || f.Error.Info == nil || f.Error.Info.Code != "TIMEOUT" {
		t.Errorf("error %+v (info %+v), want the plugin's message and code TIMEOUT", f.Error, f.Error.Info)
	}
	if len(f.Content) != 1 || f.Content[0] != (dsh.TextBlock{Text: "Error: Slow timed out"}) {
		t.Errorf("content %+v", f.Content)
	}
	if postRan {
		t.Error("tools/post-execute ran after a final failure")
	}
	if !resultSeen {
		t.Error("tools/result did not see the failure")
	}

	// A fast call is untouched, and post-execute runs for it.
	res = rt.Execute(context.Background(), tools.Input{CallID: "c2", Name: "Fast", Arguments: json.RawMessage(`{}`)})
	if res.IsError() || !postRan {
		t.Errorf("fast call: isError %v, post-execute ran %v", res.IsError(), postRan)
	}

	// Outside a pipeline, Fail just returns the failure (a wrapper unit-tested alone).
	r := tools.Fail(context.Background(), tools.NewError("TIMEOUT", "x"))
	if f, ok := r.(dsh.ToolFailure); !ok || f.Error.Message != "x" {
		t.Errorf("Fail outside a pipeline: %+v", r)
	}
}
