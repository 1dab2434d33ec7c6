package respcache_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/dshkit/dsh/examples/respcache"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/loop"
	"github.com/dshkit/dsh/runtime/session"
)

// oneTurn runs one single-turn agent over a fresh log with the shared cache registered
// and returns the assistant messages it logged (text and source).
func oneTurn(cache *respcache.Plugin, model llm.Model, prompt string) ([]string, error) {
	ctx := context.Background()
	reg := dsh.NewRegistry()
	cache.Register(reg.Plugin("cache"))
	log, err := session.Open(ctx, session.NewMemory())
	if err != nil {
		return nil, err
	}
	a, err := loop.New(ctx, loop.Config{ID: "a1", Registry: reg, Model: model, Log: log,
		LLM: dsh.LLMCallConfig{Provider: "scripted", Model: "m"}})
	if err != nil {
		return nil, err
	}
	defer a.Close()
	if err := a.Followup(ctx, dsh.UserMessage{Content: []dsh.ContentBlock{dsh.TextBlock{Text: prompt}}, Source: dsh.SourceUser{}}); err != nil {
		return nil, err
	}
	if err := a.Wait(ctx); err != nil {
		return nil, err
	}
	var out []string
	for ev, err := range log.Events() {
		if err != nil {
			return nil, err
		}
		if ev.Type != dsh.AssistantMessageLoggedType {
			continue
		}
		data, err := ev.Decode()
		if err != nil {
			return nil, err
		}
		m := data.(dsh.AssistantMessageLogged)
		by := "provider"
		if src, ok := m.Source.(dsh.ResponseByListener); ok {
			by = src.Listener
		}
		out = append(out, m.Message.Content[0].(dsh.TextBlock).Text+" (from "+by+")")
	}
	return out, nil
}

// TestSecondIdenticalSessionIsAnsweredFromTheCache: the same first request in a second
// session is answered by the cache, without a model call; another request is not.
func TestSecondIdenticalSessionIsAnsweredFromTheCache(t *testing.T) {
	cache := &respcache.Plugin{}
	model := llm.NewScripted(llm.ScriptedResponse{Text: "42"}, llm.ScriptedResponse{Text: "7"}).RecordRequests()
	for i, tc := range []struct{ prompt, want string }{
		{"the answer?", "42 (from provider)"},
		{"the answer?", "42 (from cache#1)"},
		{"another question", "7 (from provider)"},
	} {
		got, err := oneTurn(cache, model, tc.prompt)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("session %d: %q, want %q", i+1, got, tc.want)
		}
	}
	if n := len(model.Requests()); n != 2 {
		t.Errorf("%d model requests, want 2", n)
	}
	if cache.Hits() != 1 {
		t.Errorf("%d hits, want 1", cache.Hits())
	}
}

// Example runs the same question in two sessions: the second is answered from the cache.
func Example() {
	cache := &respcache.Plugin{}
	model := llm.NewScripted(llm.ScriptedResponse{Text: "Paris"})
	for range 2 {
		got, err := oneTurn(cache, model, "capital of France?")
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(got[0])
	}
	// Output:
	// Paris (from provider)
	// Paris (from cache#1)
}
