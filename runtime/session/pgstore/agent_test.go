package pgstore

import (
	"context"
	"iter"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/loop"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"

	"github.com/dshkit/dsh/internal/syncbuf"
)

var quiet = slog.New(slog.DiscardHandler)

// agentConfig is the config of an agent with one echo tool over l.
func agentConfig(tb testing.TB, l *session.Log, model llm.Model, logger *slog.Logger) loop.Config {
	tb.Helper()
	reg := dsh.NewRegistry(dsh.WithLogger(quiet))
	toolReg := tools.NewRegistry()
	echo := tools.Definition{Name: "echo", Description: "echo",
		Run: func(context.Context, *tools.RunContext) (any, error) { return "ok", nil }}
	if _, err := toolReg.Register(echo); err != nil {
		tb.Fatal(err)
	}
	return loop.Config{ID: "main", Registry: reg, Tools: tools.New(toolReg, reg, tools.WithLogger(quiet)),
		Model: model, Log: l, LLM: dsh.LLMCallConfig{Provider: "test", Model: "m"}, Logger: logger}
}

// runTurn sends a prompt and waits for the turn to end.
func runTurn(tb testing.TB, a *loop.Agent) {
	tb.Helper()
	ctx := context.Background()
	if err := a.Followup(ctx, dsh.UserMessage{Content: []dsh.ContentBlock{dsh.TextBlock{Text: "go"}}}); err != nil {
		tb.Fatal(err)
	}
	if err := a.Wait(ctx); err != nil {
		tb.Fatal(err)
	}
}

// cycleModel answers two echo tool calls, then a text, forever (as BenchmarkTurnAt's in
// runtime/loop); before, if set, runs at the start of every call.
type cycleModel struct {
	mu     sync.Mutex
	n      int
	before func(call int)
}

func (m *cycleModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[dsh.AssistantChunk, error] {
	m.mu.Lock()
	m.n++
	n := m.n
	m.mu.Unlock()
	if m.before != nil {
		m.before(n)
	}
	if n%2 == 1 {
		return llm.NewScripted(llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{ID: "c1", Name: "echo"}, {ID: "c2", Name: "echo"}}}).Stream(ctx, req)
	}
	return llm.NewScripted(llm.ScriptedResponse{Text: "done"}).Stream(ctx, req)
}

// TestConnectionLossMidTurn stops the server in the middle of a turn: the turn fails
// closed (the agent logs the failed append, appends nothing more, and the store refuses
// every later append), the log holds a contiguous prefix of whole events, and once the
// server is back a new writer resumes the session: the broken turn is closed as
// interrupted and the next turn completes.
func TestConnectionLossMidTurn(t *testing.T) {
	s := server(t)
	url := s.Schema(t)
	ctx := context.Background()
	db := connect(t, url)
	st, err := db.Open(ctx, "loss")
	if err != nil {
		t.Fatal(err)
	}
	l, err := session.Open(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	// The third model call is the first of turn 2: the server goes away during it.
	model := &cycleModel{before: func(call int) {
		if call == 3 {
			s.Stop()
		}
	}}
	a, err := loop.New(ctx, agentConfig(t, l, model, slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	runTurn(t, a)
	before := l.Len()
	runTurn(t, a) // the server stops during it
	if !strings.Contains(logs.String(), "the store refuses further appends (reopen the session)") {
		t.Fatalf("the agent's log does not say why the turn failed:\n%s", logs.String())
	}
	if _, err := l.Append(ctx, dsh.TurnStart{Turn: 9}); err == nil || !strings.Contains(err.Error(), "refuses") {
		t.Fatalf("append after the connection loss: %v, want the store's refusal", err)
	}
	a.Close()
	l.Close() // cannot release the lease: the server is down
	appended := l.Len()

	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	db2 := connect(t, url)
	evs := events(t, db2.Events(ctx, "loss"))
	if int64(len(evs)) != appended || appended <= before {
		t.Fatalf("the log holds %d events; the writer had %d acknowledged (%d before turn 2)", len(evs), appended, before)
	}
	// The crashed writer's lease is still live: a supervisor that knows it is gone takes over.
	l2, _ := openLog(t, db2, "loss", WithTakeover())
	defer l2.Close()
	a2, err := loop.Resume(ctx, agentConfig(t, l2, &cycleModel{}, quiet))
	if err != nil {
		t.Fatal(err)
	}
	defer a2.Close()
	runTurn(t, a2)
	var reasons []string
	for _, d := range session.Decoded(l2.Events()) {
		if end, ok := d.(dsh.TurnEnd); ok {
			reasons = append(reasons, string(end.Reason.Kind()))
		}
	}
	t.Logf("turn ends %v; the agent logged:\n%s", reasons, logs.String())
	if strings.Join(reasons, ",") != "completed,interrupted,completed" && strings.Join(reasons, ",") != "completed,failed,completed" {
		t.Fatalf("turn ends %v, want turn 2 closed (interrupted or failed) between two completed turns", reasons)
	}
}
