package loop_test

import (
	"context"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/loop"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
)

// TestListenerUsesAgentHandle is a budget plugin as its author writes it: a pre-step
// listener that reads the agent's inbox and cancels the turn through the dsh.Agent handle
// in its payload, with no type assertion to *loop.Agent.
func TestListenerUsesAgentHandle(t *testing.T) {
	ctx := context.Background()
	registry := dsh.NewRegistry()
	var queued []dsh.UserMessage
	registry.Plugin("budget").OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		if p.Step == 1 {
			// Inject lands in the inbox for a later step; Inbox shows it.
			if err := p.Agent.Inject(ctx, dsh.UserMessage{Content: []dsh.ContentBlock{dsh.TextBlock{Text: "remember the budget"}},
				Source: dsh.SourcePlugin{Plugin: "budget"}}); err != nil {
				return nil, err
			}
			_, queued = p.Agent.Inbox()
			p.Agent.Cancel(dsh.CancelHook{Reason: "over budget"}, true)
		}
		return next.Call(ctx)
	})
	model, err := llm.ParseScript([]byte(`{"responses": [{"text": "one"}, {"text": "two"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	log, err := session.Open(ctx, session.NewMemory())
	if err != nil {
		t.Fatal(err)
	}
	agent, err := loop.New(ctx, loop.Config{ID: "main", Registry: registry, Tools: tools.New(tools.NewRegistry(), registry),
		Model: model, Log: log, LLM: dsh.LLMCallConfig{Provider: "scripted", Model: "m"}})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	if err := agent.Followup(ctx, dsh.UserMessage{Content: []dsh.ContentBlock{dsh.TextBlock{Text: "go"}}}); err != nil {
		t.Fatal(err)
	}
	if err := agent.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if len(queued) != 1 || queued[0].ID == "" {
		t.Errorf("Inbox in the listener: %+v, want the injected message with a minted ID", queued)
	}
	var ends []dsh.TurnEnd
	for end, err := range session.Of[dsh.TurnEnd](log.Events()) {
		if err != nil {
			t.Fatal(err)
		}
		ends = append(ends, end)
	}
	if len(ends) != 1 {
		t.Fatalf("turn ends: %+v", ends)
	}
	ab, ok := ends[0].Reason.(dsh.TurnEndAborted)
	if !ok || ab.Reason != (dsh.CancelHook{Reason: "over budget"}) {
		t.Errorf("turn ended %+v, want aborted by hook{over budget}", ends[0].Reason)
	}
	// keepInbox: the injected message is still queued.
	if _, step := agent.Inbox(); len(step) != 1 {
		t.Errorf("inbox after the cancel: %+v", step)
	}
}
