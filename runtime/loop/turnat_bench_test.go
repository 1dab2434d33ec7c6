package loop

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
)

// BenchmarkTurnAt measures one more turn of a session that already ran N turns: the
// scripted model answers two echo tool calls, then a text, so that a turn is two model
// steps and two tool calls (about 16 events). One op is one turn; the N prior turns are
// set up before the timer starts, on a memory store or a JSONL file (default sync
// policy: one fsync per turn). A turn's cost should not depend on N.
func BenchmarkTurnAt(b *testing.B) {
	for _, store := range []string{"memory", "jsonl"} {
		for _, n := range []int{10, 100, 1000, 5000} {
			b.Run(fmt.Sprintf("%s/N=%d", store, n), func(b *testing.B) {
				benchTurnAt(b, store, n)
			})
		}
	}
}

func benchTurnAt(b *testing.B, store string, prior int) {
	ctx := context.Background()
	var st session.Store = session.NewMemory()
	if store == "jsonl" {
		f, _, err := session.OpenFile(filepath.Join(b.TempDir(), "log.jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		st = f
	}
	l, err := session.Open(ctx, st)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	// The script is played in order: enough turns for the prior ones and the timed ones
	// (b.N is known here; the benchmark function runs once per b.N).
	script := make([]llm.ScriptedResponse, 0, 2*(prior+b.N))
	for range prior + b.N {
		script = append(script, calls("c1:echo", "c2:echo"), text("done"))
	}
	reg := dsh.NewRegistry(dsh.WithLogger(quiet))
	toolReg := tools.NewRegistry()
	if _, err := toolReg.Register(okTool("echo", true)); err != nil {
		b.Fatal(err)
	}
	a, err := New(ctx, Config{ID: "bench", Registry: reg, Tools: tools.New(toolReg, reg, tools.WithLogger(quiet)),
		Model: llm.NewScripted(script...), Log: l, LLM: dsh.LLMCallConfig{Provider: "test", Model: "m"}, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	msg := dsh.UserMessage{Content: []dsh.ContentBlock{dsh.TextBlock{Text: "go"}}}
	turn := func() {
		if err := a.Followup(ctx, msg); err != nil {
			b.Fatal(err)
		}
		if err := a.Wait(ctx); err != nil {
			b.Fatal(err)
		}
	}
	for range prior {
		turn()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		turn()
	}
	b.StopTimer()
	b.ReportMetric(float64(l.Len())/float64(prior+b.N), "events/turn")
}
