package loop

import (
	"context"
	"fmt"
	"iter"
	"path/filepath"
	"sync"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
)

// BenchmarkTurnAt measures one more turn of a session that already ran N turns: the
// model answers two echo tool calls, then a text, so that a turn is two model steps and
// two tool calls (about 20 events). One op is one turn; the N prior turns run once,
// before the loop (b.Loop), on a memory store or a JSONL file (default sync policy: one
// fsync per turn). A turn's cost should not depend on N. Since setup runs once, the
// instructions of one turn are the difference of two runs with -benchtime 30x and 10x,
// divided by 20 (docs/performance.md).
func BenchmarkTurnAt(b *testing.B) {
	for _, store := range []string{"memory", "jsonl"} {
		for _, n := range []int{10, 100, 1000, 5000} {
			b.Run(fmt.Sprintf("%s/N=%d", store, n), func(b *testing.B) {
				benchTurnAt(b, store, n, nil)
			})
		}
	}
}

func benchTurnAt(b *testing.B, store string, prior int, setup func(*dsh.Registry)) {
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
	reg := dsh.NewRegistry(dsh.WithLogger(quiet))
	if setup != nil {
		setup(reg)
	}
	toolReg := tools.NewRegistry()
	if _, err := toolReg.Register(okTool("echo", true)); err != nil {
		b.Fatal(err)
	}
	a, err := New(ctx, Config{ID: "bench", Registry: reg, Tools: tools.New(toolReg, reg, tools.WithLogger(quiet)),
		Model: &cycleModel{}, Log: l, LLM: dsh.LLMCallConfig{Provider: "test", Model: "m"}, Logger: quiet})
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
	before, turns := l.Len(), 0
	for b.Loop() {
		turn()
		turns++
	}
	b.ReportMetric(float64(l.Len()-before)/float64(turns), "events/turn")
}

// cycleModel answers two echo tool calls, then a text, then again, forever: a scripted
// model whose script never runs out, so that a benchmark's turns all look alike.
type cycleModel struct {
	mu sync.Mutex
	n  int
}

func (m *cycleModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[dsh.AssistantChunk, error] {
	m.mu.Lock()
	m.n++
	odd := m.n%2 == 1
	m.mu.Unlock()
	if odd {
		return llm.NewScripted(calls("c1:echo", "c2:echo")).Stream(ctx, req)
	}
	return llm.NewScripted(text("done")).Stream(ctx, req)
}
