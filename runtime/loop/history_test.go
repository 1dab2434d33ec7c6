package loop

import (
	"context"
	"encoding/json"
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

// foldAll is the reference derivation of a request's history: every message event of the
// log, from the start, decoded afresh (what the loop did before it derived requests
// incrementally).
func foldAll(t testing.TB, l *session.Log) []llm.Message {
	t.Helper()
	var out []llm.Message
	for ev, err := range l.Events() {
		if err != nil {
			t.Fatalf("Events: %v", err)
		}
		switch ev.Type {
		case dsh.UserMessageLoggedType, dsh.ToolResultLoggedType, dsh.AssistantMessageLoggedType:
		default:
			continue
		}
		data, err := ev.Decode()
		if err != nil {
			t.Fatalf("event %d: %v", ev.Seq, err)
		}
		switch d := data.(type) {
		case dsh.UserMessageLogged:
			out = append(out, llm.Message{Role: llm.RoleUser, Content: d.Message.Content})
		case dsh.ToolResultLogged:
			out = append(out, llm.Message{Role: llm.RoleUser, Content: d.Message.Content})
		case dsh.AssistantMessageLogged:
			if len(d.Message.Content) > 0 {
				out = append(out, llm.Message{Role: llm.RoleAssistant, Content: d.Message.Content})
			}
		}
	}
	return out
}

// checkingModel compares every request's history, as JSON, with the full fold of the log
// at the time of the request, then plays the inner model.
type checkingModel struct {
	t     testing.TB
	inner llm.Model
	mu    sync.Mutex
	log   *session.Log
	n     int
}

func (m *checkingModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[dsh.AssistantChunk, error] {
	m.mu.Lock()
	l := m.log
	m.n++
	n := m.n
	m.mu.Unlock()
	got, err := json.Marshal(req.Messages)
	if err != nil {
		m.t.Fatal(err)
	}
	want, err := json.Marshal(foldAll(m.t, l))
	if err != nil {
		m.t.Fatal(err)
	}
	if string(got) != string(want) {
		m.t.Errorf("request %d: the incremental history differs from the full fold:\n got %s\nwant %s", n, got, want)
	}
	return m.inner.Stream(ctx, req)
}

// variedScript is a script of turns of several shapes: tool calls (parallel and not),
// plain text, reasoning, a max-tokens finish whose calls are dropped, an error finish.
func variedScript(turns int) []llm.ScriptedResponse {
	var s []llm.ScriptedResponse
	for i := range turns {
		switch i % 5 {
		case 0:
			s = append(s, calls(fmt.Sprintf("a%d:echo", i), fmt.Sprintf("b%d:echo", i)), text(fmt.Sprintf("done %d", i)))
		case 1:
			s = append(s, llm.ScriptedResponse{Reasoning: "let me think", Text: fmt.Sprintf("thought %d", i)})
		case 2:
			s = append(s, calls(fmt.Sprintf("c%d:slow", i)), calls(fmt.Sprintf("d%d:echo", i)), text("two steps"))
		case 3:
			r := calls(fmt.Sprintf("e%d:echo", i))
			r.Text, r.Finish = "cut short", dsh.FinishReasonMaxTokens
			s = append(s, r)
		case 4:
			s = append(s, llm.ScriptedResponse{Text: "partial", Error: &llm.ScriptedError{Message: "overloaded"}})
		}
	}
	return s
}

// TestIncrementalHistoryMatchesFullFold runs a session long enough that the log keeps
// only part of it in memory, on both stores, checks every request against the full fold
// of the log, then resumes it and checks the requests after resuming too.
func TestIncrementalHistoryMatchesFullFold(t *testing.T) {
	const turns = 150 // more than 2*1024 events
	for _, store := range []string{"memory", "jsonl"} {
		t.Run(store, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "log.jsonl")
			mem := session.NewMemory()
			open := func() *session.Log {
				var st session.Store = mem
				if store == "jsonl" {
					f, _, err := session.OpenFile(path)
					if err != nil {
						t.Fatal(err)
					}
					st = f
				}
				l, err := session.Open(ctx, st)
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			reg := dsh.NewRegistry(dsh.WithLogger(quiet))
			toolReg := tools.NewRegistry()
			for _, d := range []tools.Definition{okTool("echo", true), okTool("slow", false)} {
				if _, err := toolReg.Register(d); err != nil {
					t.Fatal(err)
				}
			}
			rt := tools.New(toolReg, reg, tools.WithLogger(quiet))
			script := variedScript(turns + 10)
			model := &checkingModel{t: t, inner: llm.NewScripted(script...)}
			l := open()
			model.log = l
			cfg := Config{ID: "a1", Registry: reg, Tools: rt, Model: model, Log: l,
				LLM: dsh.LLMCallConfig{Provider: "test", Model: "m"}, Logger: quiet}
			a, err := New(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			for i := range turns {
				if i%7 == 3 {
					if err := a.Inject(ctx, pluginMsg(fmt.Sprintf("n%d", i), fmt.Sprintf("note %d", i))); err != nil {
						t.Fatal(err)
					}
				}
				followup(t, a, fmt.Sprintf("u%d", i), fmt.Sprintf("prompt %d", i))
				wait(t, a)
			}
			if l.Len() <= 2*1024 {
				t.Fatalf("the session has only %d events", l.Len())
			}
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			// Resume with the rest of the script: the first requests after resuming fold
			// the whole log in one pass.
			l = open()
			defer l.Close()
			model.mu.Lock()
			model.log, model.inner = l, llm.NewScripted(script[len(script)-10:]...)
			model.mu.Unlock()
			cfg.Log = l
			b, err := Resume(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			before := model.n
			for i := range 3 {
				followup(t, b, fmt.Sprintf("r%d", i), fmt.Sprintf("after resume %d", i))
				wait(t, b)
			}
			if model.n == before {
				t.Fatal("no request after resuming")
			}
		})
	}
}
