package subagent_test

import (
	"context"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/loop"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/subagent"
	"github.com/dshkit/dsh/runtime/tools"
)

// benchTurn runs one parent turn whose first step calls tool, on a scripted model: the
// cost of a step with a child (tool "Agent": the child's own step answers at once) against
// one with a plain tool ("Echo") is what a child adds beyond its model call.
func benchTurn(b *testing.B, tool string) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		hooks, reg := dsh.NewRegistry(), tools.NewRegistry()
		rt := func() *tools.Runtime { return tools.New(reg, hooks) }
		_, _ = reg.Register(tools.Definition{Name: "Echo", Run: func(context.Context, *tools.RunContext) (any, error) { return "echo", nil }})
		responses := []llm.ScriptedResponse{{ToolCalls: []llm.ScriptedToolCall{{ID: "call_a", Name: tool, Arguments: args(map[string]any{"prompt": "go"})}}}}
		if tool == "Agent" {
			responses = append(responses, llm.ScriptedResponse{Text: "child answer"})
		}
		model := llm.NewScripted(append(responses, llm.ScriptedResponse{Text: "done"})...)
		log, _ := session.Open(ctx, session.NewMemory())
		r, err := subagent.New(subagent.Config{Registry: hooks, Tools: rt, Model: model, LLM: dsh.LLMCallConfig{Provider: "scripted", Model: "m"},
			Logs: &subagent.MemoryLogs{}, ParentLog: log, ToolName: "Agent"})
		if err != nil {
			b.Fatal(err)
		}
		def := r.Definition(subagent.ClaudeCode)
		def.Name = "Agent"
		_, _ = reg.Register(def)
		a, err := loop.New(ctx, loop.Config{ID: "main", Registry: hooks, Tools: rt(), Model: model, Log: log,
			LLM: dsh.LLMCallConfig{Provider: "scripted", Model: "m"}})
		if err != nil {
			b.Fatal(err)
		}
		if err := a.Followup(ctx, dsh.UserText(dsh.SourceUser{}, "go")); err != nil {
			b.Fatal(err)
		}
		if err := a.Wait(ctx); err != nil {
			b.Fatal(err)
		}
		_ = a.Close()
		r.Close()
	}
}

// BenchmarkTurnWithChild is a turn whose step runs a child; compare BenchmarkTurnWithTool
// (the bound: a child adds at most 2 ms to its parent's step beyond its own model
// calls).
func BenchmarkTurnWithChild(b *testing.B) { benchTurn(b, "Agent") }

// BenchmarkTurnWithTool is the same turn with a plain tool in place of the child.
func BenchmarkTurnWithTool(b *testing.B) { benchTurn(b, "Echo") }
