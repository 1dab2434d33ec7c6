package loop

import (
	"context"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
)

// BenchmarkLoop measures whole turns on the scripted model and a memory log.
func BenchmarkLoop(b *testing.B) {
	b.Run("scripted-1000turns", func(b *testing.B) {
		const turns = 1000
		script := make([]llm.ScriptedResponse, 0, 2*turns)
		for range turns {
			script = append(script, calls("c1:echo", "c2:echo"), text("done"))
		}
		b.ReportAllocs()
		for b.Loop() {
			reg := dsh.NewRegistry(dsh.WithLogger(quiet))
			toolReg := tools.NewRegistry()
			if _, err := toolReg.Register(okTool("echo", true)); err != nil {
				b.Fatal(err)
			}
			l, err := session.Open(context.Background(), session.NewMemory())
			if err != nil {
				b.Fatal(err)
			}
			a, err := New(context.Background(), Config{ID: "bench", Registry: reg, Tools: tools.New(toolReg, reg, tools.WithLogger(quiet)),
				Model: llm.NewScripted(script...), Log: l, LLM: dsh.LLMCallConfig{Provider: "test", Model: "m"}, Logger: quiet})
			if err != nil {
				b.Fatal(err)
			}
			for range turns {
				if err := a.Followup(context.Background(), dsh.UserMessage{Content: []dsh.ContentBlock{dsh.TextBlock{Text: "go"}}}); err != nil {
					b.Fatal(err)
				}
				if err := a.Wait(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			_ = a.Close()
			_ = l.Close()
		}
	})
}
