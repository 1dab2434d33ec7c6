package loop_test

import (
	"context"
	"fmt"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/loop"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
)

// Running a loop: an agent with a scripted model, one tool and an in-memory session log
// takes one prompt; Wait returns when the turn is over, and the log holds what happened.
func Example() {
	ctx := context.Background()
	hooks := dsh.NewRegistry()
	registry := tools.NewRegistry()
	registry.Register(tools.Definition{Name: "Clock", Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
		return "12:00", nil
	}})
	model, err := llm.ParseScript([]byte(`{"responses": [
		{"toolCalls": [{"id": "call_1", "name": "Clock", "arguments": {}}]},
		{"text": "It is noon."}
	]}`))
	if err != nil {
		panic(err)
	}
	log, err := session.Open(ctx, session.NewMemory())
	if err != nil {
		panic(err)
	}
	agent, err := loop.New(ctx, loop.Config{ID: "main", Registry: hooks, Tools: tools.New(registry, hooks),
		Model: model, Log: log, LLM: dsh.LLMCallConfig{Provider: "scripted", Model: "example"}})
	if err != nil {
		panic(err)
	}
	defer agent.Close()
	if err := agent.Followup(ctx, dsh.UserText(dsh.SourceUser{}, "What time is it?")); err != nil {
		panic(err)
	}
	if err := agent.Wait(ctx); err != nil {
		panic(err)
	}
	for msg, err := range session.Of[dsh.AssistantMessageLogged](log.Events()) {
		if err != nil {
			panic(err)
		}
		for _, b := range msg.Message.Content {
			//dshvet:partial the example prints text and tool calls only
			switch b := b.(type) {
			case dsh.TextBlock:
				fmt.Println("assistant:", b.Text)
			case dsh.ToolCallBlock:
				fmt.Println("tool call:", b.Name)
			}
		}
	}
	// Output:
	// tool call: Clock
	// assistant: It is noon.
}
