package runner

import (
	"context"
	"testing"

	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

// A prompt hook that judges the conversation sends the last finished request's messages,
// its answer, then its prompt; one that does not sends the prompt alone; its own request
// is not recorded as the session's last exchange.
func TestHookModelConversation(t *testing.T) {
	scripted := llm.NewScripted(
		llm.ScriptedResponse{Text: "finished"},
		llm.ScriptedResponse{Text: `{"ok": true, "reason": "done"}`},
		llm.ScriptedResponse{Text: `{"ok": true, "reason": "fine"}`},
		llm.ScriptedResponse{Text: `{"ok": true, "reason": "again"}`},
	).RecordRequests()
	last := &exchange{}
	main := recordingModel{Model: scripted, last: last}
	hm := hookModel{model: scripted, last: last}
	ctx := context.Background()

	// Before any exchange the conversation is empty.
	if got := last.conversation(); got != nil {
		t.Fatalf("conversation before any request: %v", got)
	}
	user := llm.Message{Role: llm.RoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "Do the task."}}}
	if _, err := llm.Collect(main.Stream(ctx, llm.Request{Messages: []llm.Message{user}})); err != nil {
		t.Fatal(err)
	}
	if _, err := hm.EvaluateHook(ctx, hookproto.PromptEval{System: "judge", Prompt: "Condition: done?", Conversation: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := hm.EvaluateHook(ctx, hookproto.PromptEval{System: "judge", Prompt: "Safe?"}); err != nil {
		t.Fatal(err)
	}
	// The evaluations did not replace the exchange.
	if _, err := hm.EvaluateHook(ctx, hookproto.PromptEval{System: "judge", Prompt: "Again?", Conversation: true}); err != nil {
		t.Fatal(err)
	}
	reqs := scripted.Requests()
	texts := func(r llm.Request) []string {
		var out []string
		for _, m := range r.Messages {
			for _, b := range m.Content {
				if tb, ok := b.(dsh.TextBlock); ok {
					out = append(out, string(m.Role)+":"+tb.Text)
				}
			}
		}
		return out
	}
	for i, want := range [][]string{
		{"user:Do the task.", "assistant:finished", "user:Condition: done?"},
		{"user:Safe?"},
		{"user:Do the task.", "assistant:finished", "user:Again?"},
	} {
		got := texts(reqs[i+1])
		if len(got) != len(want) {
			t.Fatalf("evaluation %d sent %q, want %q", i+1, got, want)
		}
		for j := range want {
			if got[j] != want[j] {
				t.Errorf("evaluation %d message %d: %q, want %q", i+1, j, got[j], want[j])
			}
		}
		if reqs[i+1].System != "judge" {
			t.Errorf("evaluation %d system %q", i+1, reqs[i+1].System)
		}
	}
}
