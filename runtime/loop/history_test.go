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
		//dshvet:partial only the events that carry messages make the history
		switch d := data.(type) {
		case dsh.UserMessageLogged:
			out = append(out, llm.Message{Role: llm.RoleUser, Content: d.Message.Content, Source: d.Message.Source})
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

// checkingModel compares a request's history, as JSON, with the full fold of the log at
// the time of the request, then plays the inner model. It checks the first 20 requests,
// every 8th and every request while all is set: a full fold per request would make the
// test quadratic.
type checkingModel struct {
	t       testing.TB
	inner   llm.Model
	mu      sync.Mutex
	log     *session.Log
	n       int
	all     bool
	checked int
}

func (m *checkingModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[dsh.AssistantChunk, error] {
	m.mu.Lock()
	l := m.log
	m.n++
	n := m.n
	check := m.all || n <= 20 || n%8 == 0
	if check {
		m.checked++
	}
	m.mu.Unlock()
	if !check {
		return m.inner.Stream(ctx, req)
	}
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
			model.log, model.inner, model.all = l, llm.NewScripted(script[len(script)-10:]...), true
			model.mu.Unlock()
			cfg.Log = l
			b, err := Resume(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer closeWithin(t, b)
			before := model.n
			for i := range 3 {
				followup(t, b, fmt.Sprintf("r%d", i), fmt.Sprintf("after resume %d", i))
				wait(t, b)
			}
			if model.n == before {
				t.Fatal("no request after resuming")
			}
			if model.checked < 50 {
				t.Fatalf("only %d requests checked", model.checked)
			}
		})
	}
}

// copyMessage gives what the JSON round trip gives, shares no mutable memory with its
// input, and falls back to the round trip for a variant it does not know.
func TestCopyMessageIsADeepCopy(t *testing.T) {
	summary := "sum"
	msgs := []dsh.UserMessage{
		{ID: "u", Role: dsh.UserMessageRoleUser, Source: dsh.SourceUser{}, Content: []dsh.ContentBlock{
			dsh.TextBlock{Text: "a"}, dsh.ReasoningBlock{Text: "r"}, dsh.ImageBlock{MediaType: "image/png", Data: "AAAA"},
			dsh.ToolCallBlock{ID: "c", Name: "n", Arguments: "{}"},
			dsh.ToolResultBlock{ToolCallID: "c", Content: []dsh.ContentBlock{dsh.TextBlock{Text: "nested"}}},
		}},
		{ID: "p", Role: dsh.UserMessageRoleUser, Source: dsh.SourcePlugin{Plugin: "x", Summary: &summary}, Content: []dsh.ContentBlock{}},
		{ID: "m", Role: dsh.UserMessageRoleUser, Source: dsh.SourceModel{Provider: "p", Model: "m", ReplayState: json.RawMessage(`{"k":1}`)},
			Content: []dsh.ContentBlock{dsh.TextBlock{Text: "b"}}},
		{ID: "t", Role: dsh.UserMessageRoleUser, Source: dsh.SourceTool{CallID: "c"}, Content: []dsh.ContentBlock{&dsh.TextBlock{Text: "pointer variant"}}},
	}
	for _, m := range msgs {
		want, err := cloneMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		got := copyMessage(m)
		if jsonOf(t, got) != jsonOf(t, want) {
			t.Errorf("copy of %s = %s, want %s", m.ID, jsonOf(t, got), jsonOf(t, want))
		}
		if len(m.Content) > 0 && &got.Content[0] == &m.Content[0] {
			t.Errorf("copy of %s shares its content", m.ID)
		}
	}
	got := copyMessage(msgs[0])
	tr := got.Content[4].(dsh.ToolResultBlock)
	tr.Content[0] = dsh.TextBlock{Text: "changed"}
	if msgs[0].Content[4].(dsh.ToolResultBlock).Content[0].(dsh.TextBlock).Text != "nested" {
		t.Error("a nested tool result's content is shared")
	}
	p := copyMessage(msgs[1])
	*p.Source.(dsh.SourcePlugin).Summary = "changed"
	m := copyMessage(msgs[2])
	m.Source.(dsh.SourceModel).ReplayState[0] = 'X'
	if summary != "sum" || string(msgs[2].Source.(dsh.SourceModel).ReplayState) != `{"k":1}` {
		t.Error("a source's pointer or raw state is shared")
	}
	if _, ok := copyMessage(msgs[3]).Content[0].(dsh.TextBlock); !ok {
		t.Error("a pointer variant did not go through the JSON copy")
	}
}
