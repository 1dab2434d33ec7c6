package llm_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

// A scripted model plays its responses in order and, after RecordRequests, records every
// request, so a loop test can drive a tool round trip and then assert what the model was
// sent.
func ExampleScripted() {
	model := llm.NewScripted(
		llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{
			{Name: "Bash", Arguments: json.RawMessage(`{"command": "ls"}`)},
		}},
		llm.ScriptedResponse{Text: "There are two files."},
	).RecordRequests()
	ctx := context.Background()
	req := llm.Request{
		Config:   dsh.LLMCallConfig{Provider: "scripted", Model: "test"},
		Messages: []llm.Message{{Role: llm.RoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "What is here?"}}}},
	}

	// Step 1: the model asks for a tool.
	resp, err := llm.Collect(model.Stream(ctx, req))
	if err != nil {
		fmt.Println(llm.AsFailure(err))
		return
	}
	call := resp.ToolCalls[0]
	fmt.Println(resp.Finish.Reason, call.ID, call.Name, call.Arguments)

	// Step 2: send the tool result back and watch the chunks stream.
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, Content: resp.Content},
		llm.Message{Role: llm.RoleUser, Content: []dsh.ContentBlock{
			dsh.ToolResultBlock{ToolCallID: call.ID, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "a.txt\nb.txt"}}},
		}},
	)
	for chunk, err := range model.Stream(ctx, req) {
		if err != nil {
			fmt.Println(llm.AsFailure(err))
			return
		}
		//dshvet:partial the example prints text and the finish only
		switch c := chunk.(type) {
		case dsh.ChunkTextDelta:
			fmt.Printf("text %q\n", c.Text)
		case dsh.ChunkFinish:
			fmt.Println("finish", c.Reason)
		}
	}

	// Once the script is used up, the model answers "done".
	resp, _ = llm.Collect(model.Stream(ctx, req))
	fmt.Println(resp.Text)

	// The second request carried the tool result.
	sent := model.Requests()[1]
	fmt.Println(len(model.Requests()), len(sent.Messages), sent.Messages[2].Content[0].(dsh.ToolResultBlock).ToolCallID)
	// Output:
	// tool-calls call_1 Bash {"command":"ls"}
	// text "There "
	// text "are "
	// text "two "
	// text "files."
	// finish stop
	// done
	// 3 3 call_1
}

// A script file holds the same responses as JSON; unknown fields are rejected.
func ExampleParseScript() {
	model, err := llm.ParseScript([]byte(`{"responses": [
	  {"reasoning": "short answer", "text": "Hello!", "usage": {"inputTokens": 9, "outputTokens": 2}},
	  {"error": {"message": "slow down", "code": "rate_limit_exceeded", "status": 429, "retryAfterMs": 2000}}
	]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 2 {
		resp, _ := llm.Collect(model.Stream(context.Background(), llm.Request{}))
		if f := resp.Finish.Error; f != nil {
			fmt.Println(resp.Finish.Reason, f.Code, *f.Status, *f.ProviderRetryAfterMS)
			continue
		}
		fmt.Println(resp.Reasoning, "|", resp.Text, "|", resp.Finish.Reason, resp.Usage.OutputTokens)
	}

	_, err = llm.ParseScript([]byte(`{"responses": [{"txt": "typo"}]}`))
	fmt.Println(err)
	// Output:
	// short answer | Hello! | stop 2
	// error rate_limit_exceeded 429 2000
	// llm: parse script: json: unknown field "txt"
}
