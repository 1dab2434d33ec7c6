package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
)

// benchEcho is the benchmarked tool: it decodes {"text"} and returns the text, with no
// schemas (the benchmarks measure the pipeline, not JSON Schema validation).
func benchEcho() Definition {
	return Definition{Name: "echo", Run: func(ctx context.Context, rc *RunContext) (any, error) {
		var args struct {
			Text string `json:"text"`
		}
		if err := rc.BindArguments(&args); err != nil {
			return nil, err
		}
		return args.Text, nil
	}}
}

// addFull8 registers the eight listeners of the full8 benchmark.
func addFull8(hooks *dsh.Registry) {
	for range 3 {
		addPassPre(hooks)
	}
	hooks.Guard(func(ctx context.Context, p *dsh.GuardPayload) dsh.GuardVerdict { return dsh.GuardAbstain{} })
	hooks.WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
		return next.Call(ctx)
	})
	for range 2 {
		hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
			return next.Call(ctx)
		})
	}
	hooks.OnToolResult(func(ctx context.Context, p *dsh.ToolResultPayload) {})
}

// addPassRewrite registers a tools/rewrite-input listener that keeps the input.
func addPassRewrite(hooks *dsh.Registry) {
	hooks.OnRewriteInput(func(ctx context.Context, p *dsh.RewriteInputPayload) (dsh.RewriteDecision, error) {
		return dsh.RewriteKeep{}, nil
	})
}

func addPassPre(hooks *dsh.Registry) {
	hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		return next.Call(ctx)
	})
}

// BenchmarkPipeline measures one call of the echo tool: the body alone (direct, the
// floor), the pipeline without listeners (bare), with eight listeners (full8), and with
// ten more pre-execute listeners (full8+10pre).
func BenchmarkPipeline(b *testing.B) {
	args := json.RawMessage(`{"text":"hi"}`)
	ctx := context.Background()
	b.Run("direct", func(b *testing.B) {
		def := benchEcho()
		rc := &RunContext{exec: dsh.ToolExecution{CallID: "c1", Name: "echo", Arguments: args}}
		b.ReportAllocs()
		for b.Loop() {
			if v, err := def.Run(ctx, rc); err != nil || v != "hi" {
				b.Fatal(v, err)
			}
		}
	})
	run := func(b *testing.B, setup func(*dsh.Registry), opts ...Option) {
		e := newEnv(b, opts...)
		e.register(b, benchEcho())
		setup(e.hooks)
		in := Input{CallID: "c1", Name: "echo", Arguments: args, AgentID: "a1"}
		if r := e.rt.Execute(ctx, in); text(r) != "hi" {
			b.Fatalf("result %s", outcomeJSON(b, r))
		}
		b.ReportAllocs()
		for b.Loop() {
			e.rt.Execute(ctx, in)
		}
	}
	b.Run("bare", func(b *testing.B) { run(b, func(*dsh.Registry) {}) })
	// One pass-through tools/rewrite-input listener (it keeps the input): bounded by the
	// default deadline (each listener runs on its own goroutine), and unbounded (inline).
	b.Run("bare+rewrite", func(b *testing.B) { run(b, addPassRewrite) })
	b.Run("bare+rewrite-unbounded", func(b *testing.B) { run(b, addPassRewrite, WithRewriteDeadline(0)) })
	b.Run("full8", func(b *testing.B) { run(b, addFull8) })
	b.Run("full8+rewrite", func(b *testing.B) {
		run(b, func(h *dsh.Registry) { addFull8(h); addPassRewrite(h) })
	})
	b.Run("full8+10pre", func(b *testing.B) {
		run(b, func(h *dsh.Registry) {
			addFull8(h)
			for range 10 {
				addPassPre(h)
			}
		})
	})
}

// BenchmarkGeneratedRunners is the floor the pipeline stands on: the five generated
// runners alone (pre-execute, guard, execute around a constant terminal, post-execute,
// tools/result), with the listeners of each BenchmarkPipeline variant and nothing else.
func BenchmarkGeneratedRunners(b *testing.B) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		setup func(*dsh.Registry)
	}{
		{"bare", func(*dsh.Registry) {}},
		{"full8", addFull8},
		{"full8+10pre", func(h *dsh.Registry) {
			addFull8(h)
			for range 10 {
				addPassPre(h)
			}
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			h := dsh.NewRegistry()
			tc.setup(h)
			res := dsh.ToolExecutionResult(dsh.ToolSuccess{Value: json.RawMessage(`"hi"`)})
			terminal := func(context.Context) dsh.ToolExecutionResult { return res }
			var (
				pre  dsh.PreToolPayload
				g    dsh.GuardPayload
				ex   dsh.ExecutePayload
				post dsh.PostToolPayload
				obs  dsh.ToolResultPayload
			)
			b.ReportAllocs()
			for b.Loop() {
				_, _ = h.RunPreTool(ctx, &pre, nil)
				_, _ = h.RunGuard(ctx, &g)
				_, _ = h.RunExecute(ctx, &ex, terminal)
				_, _ = h.RunPostTool(ctx, &post, nil)
				_ = h.EmitToolResult(ctx, &obs)
			}
		})
	}
}
