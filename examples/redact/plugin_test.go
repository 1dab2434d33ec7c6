package redact_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/dshkit/dsh/examples/redact"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/loop"
	"github.com/dshkit/dsh/runtime/session"
)

// run runs one agent over a memory log and the scripted model, with the plugin
// registered, one turn per prompt; it returns the requests the model received and the log.
func run(p *redact.Plugin, prompts []string, responses ...llm.ScriptedResponse) ([]llm.Request, *session.Log, error) {
	ctx := context.Background()
	reg := dsh.NewRegistry()
	p.Register(reg.Plugin("redact"))
	model := llm.NewScripted(responses...).RecordRequests()
	log, err := session.Open(ctx, session.NewMemory())
	if err != nil {
		return nil, nil, err
	}
	a, err := loop.New(ctx, loop.Config{ID: "a1", Registry: reg, Model: model, Log: log,
		System: "deploy key: sk-live-0000", LLM: dsh.LLMCallConfig{Provider: "scripted", Model: "m"}})
	if err != nil {
		return nil, nil, err
	}
	defer a.Close()
	for _, prompt := range prompts {
		msg := dsh.UserMessage{Content: []dsh.ContentBlock{dsh.TextBlock{Text: prompt}}, Source: dsh.SourceUser{}}
		if err := a.Followup(ctx, msg); err != nil {
			return nil, nil, err
		}
		if err := a.Wait(ctx); err != nil {
			return nil, nil, err
		}
	}
	return model.Requests(), log, nil
}

func texts(req llm.Request) string {
	var out []string
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if tb, ok := b.(dsh.TextBlock); ok {
				out = append(out, string(m.Role)+": "+tb.Text)
			}
		}
	}
	return strings.Join(out, " | ")
}

var keys = []*regexp.Regexp{regexp.MustCompile(`sk-live-[0-9a-z]+`)}

// TestRedactsEveryRequestNotTheLog: the provider never sees the key, in the system prompt,
// the prompt, or the history of a later turn; the log keeps the prompt as written and
// records each rewrite.
func TestRedactsEveryRequestNotTheLog(t *testing.T) {
	reqs, log, err := run(&redact.Plugin{Patterns: keys}, []string{"use sk-live-1234 to deploy", "and what about sk-live-9?", "thanks"},
		llm.ScriptedResponse{Text: "ok"}, llm.ScriptedResponse{Text: "fine"}, llm.ScriptedResponse{Text: "bye"})
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, r := range reqs {
		if strings.Contains(texts(r)+r.System, "sk-live") {
			t.Errorf("request %d leaks a key: %s / %s", i+1, r.System, texts(r))
		}
	}
	if got, want := texts(reqs[2]), "user: use [redacted] to deploy | assistant: ok | user: and what about [redacted]? | assistant: fine | user: thanks"; got != want {
		t.Errorf("request 3:\n got %s\nwant %s", got, want)
	}
	rewritten, prompts := 0, 0
	for ev, err := range log.Events() {
		if err != nil {
			t.Fatal(err)
		}
		data, err := ev.Decode()
		if err != nil {
			t.Fatal(err)
		}
		switch d := data.(type) {
		case dsh.RequestRewritten:
			rewritten++
			if d.Chain[0].By != "redact#1" || d.Before == d.After {
				t.Errorf("request/rewritten %+v", d)
			}
		case dsh.UserMessageLogged:
			if prompts == 0 && d.Message.Content[0].(dsh.TextBlock).Text != "use sk-live-1234 to deploy" {
				t.Errorf("the log changed the prompt: %+v", d.Message.Content)
			}
			prompts++
		default:
			// Every other event of the log is irrelevant to redaction.
		}
	}
	if rewritten != 3 {
		t.Errorf("%d request/rewritten records, want 3 (the system prompt holds a key)", rewritten)
	}
}

// TestPassesCleanRequests: without a match the plugin passes, and nothing is recorded.
func TestPassesCleanRequests(t *testing.T) {
	p := &redact.Plugin{Patterns: []*regexp.Regexp{regexp.MustCompile(`never-matches`)}}
	reqs, _, err := run(p, []string{"hello"}, llm.ScriptedResponse{Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(reqs[0]); got != "user: hello" || reqs[0].System != "deploy key: sk-live-0000" {
		t.Errorf("request %q, system %q", got, reqs[0].System)
	}
}

// Example shows what the provider receives when the plugin is registered.
func Example() {
	reqs, _, err := run(&redact.Plugin{Patterns: keys}, []string{"my key is sk-live-42"}, llm.ScriptedResponse{Text: "noted"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(reqs[0].System)
	fmt.Println(texts(reqs[0]))
	// Output:
	// deploy key: [redacted]
	// user: my key is [redacted]
}
