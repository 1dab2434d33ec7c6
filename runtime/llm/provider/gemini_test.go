package provider

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

func gemText(text, finish string) [2]string {
	t, _ := json.Marshal(text)
	f := ""
	if finish != "" {
		f = `,"finishReason":"` + finish + `"`
	}
	return [2]string{"", `{"candidates":[{"content":{"role":"model","parts":[{"text":` + string(t) + `}]}` + f + `,"index":0}],"modelVersion":"gemini-test"}`}
}

var gemUsage = [2]string{"", `{"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":30,"cachedContentTokenCount":12,"candidatesTokenCount":5,"thoughtsTokenCount":4,"totalTokenCount":39}}`}

func newGeminiTest(t *testing.T, baseURL string, timeout time.Duration) llm.Model {
	t.Helper()
	m, err := NewGemini(GeminiConfig{BaseURL: baseURL, APIKey: "gem-test", Model: "gemini-test", Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func init() {
	fixtures = append(fixtures, providerFixture{
		name:         "gemini",
		newModel:     newGeminiTest,
		text:         sse(gemText("Hel", ""), gemText("lo", "STOP")),
		textPrefix:   sse(gemText("Hel", "")),
		unknownEvent: sse(gemText("Hel", ""), [2]string{"", `{"futureField":{"x":1},"candidates":[]}`}, gemText("lo", "STOP")),
		// The Gemini wire carries arguments as a JSON object: a string there is a
		// malformed response.
		badArgs:      sse([2]string{"", `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"Bash","args":"{not json"}}]},"finishReason":"STOP"}]}`}),
		badArgsFails: true,
		bigText:      func(text string) string { return sse(gemText(text, "STOP")) },
		errorBody:    `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`,
		errorMessage: "The model is overloaded",
	})
}

// TestGeminiStream: a thought with its signature, parallel function calls (one with a
// thought signature), and usage.
func TestGeminiStream(t *testing.T) {
	body := sse(
		[2]string{"", `{"candidates":[{"content":{"role":"model","parts":[{"text":"need ls","thought":true}]},"index":0}]}`},
		[2]string{"", `{"candidates":[{"content":{"role":"model","parts":[{"text":"Looking."},{"functionCall":{"id":"fc_a","name":"Bash","args":{"command":"ls"}},"thoughtSignature":"U0lHMQ=="},{"functionCall":{"name":"Read","args":{"path":"a"}}}]},"index":0}]}`},
		gemUsage,
	)
	srv := serveSSE(t, 200, "text/event-stream", writeBody(body))
	resp, err := llm.Collect(newGeminiTest(t, srv.URL, 0).Stream(context.Background(), simpleReq()))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 2 || resp.ToolCalls[1].ID == "" {
		t.Fatalf("calls %+v", resp.ToolCalls)
	}
	resp.ToolCalls[1].ID = "made"
	want := []dsh.ToolCallBlock{
		{ID: "fc_a", Name: "Bash", Arguments: `{"command":"ls"}`, Signature: ptr("U0lHMQ==")},
		{ID: "made", Name: "Read", Arguments: `{"path":"a"}`},
	}
	if diff := cmp.Diff(want, resp.ToolCalls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if resp.Reasoning != "need ls" || resp.Text != "Looking." {
		t.Errorf("reasoning %q, text %q", resp.Reasoning, resp.Text)
	}
	wantFinish := dsh.ChunkFinish{Reason: dsh.FinishReasonToolCalls, Usage: &dsh.Usage{InputTokens: 30, OutputTokens: 9, CacheReadTokens: ptr(12)}}
	if diff := cmp.Diff(wantFinish, resp.Finish); diff != "" {
		t.Errorf("finish (-want +got):\n%s", diff)
	}
}

// TestGeminiSession: one session against a local Gemini API mock: the model calls a
// tool, gets its result back as a functionResponse with the call's thought signature,
// and answers.
func TestGeminiSession(t *testing.T) {
	calls := 0
	srv := serveSSE(t, 200, "text/event-stream", func(w http.ResponseWriter, r *http.Request) {
		calls++
		if calls == 1 {
			_, _ = io.WriteString(w, sse([2]string{"", `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"c1","name":"Bash","args":{"command":"ls"}},"thoughtSignature":"U0lH"}]},"finishReason":"STOP"}]}`}))
			return
		}
		_, _ = io.WriteString(w, sse(gemText("There is a.txt.", "STOP")))
	})
	m := newGeminiTest(t, srv.URL, 0)
	req := simpleReq()
	req.Tools = []llm.ToolSpec{{Name: "Bash", Description: "run", InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)}}
	first, err := llm.Collect(m.Stream(context.Background(), req))
	if err != nil || len(first.ToolCalls) != 1 {
		t.Fatalf("first: %+v, %v", first, err)
	}
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, Content: first.Content},
		llm.Message{Role: llm.RoleUser, Content: []dsh.ContentBlock{dsh.ToolResultBlock{ToolCallID: "c1", Content: []dsh.ContentBlock{dsh.TextBlock{Text: "a.txt"}}}}})
	second, err := llm.Collect(m.Stream(context.Background(), req))
	if err != nil || second.Text != "There is a.txt." || second.Finish.Reason != dsh.FinishReasonStop {
		t.Fatalf("second: %+v, %v", second, err)
	}
	body := srv.body(t, 1)
	wantContents := []any{
		map[string]any{"role": "user", "parts": []any{map[string]any{"text": "hi"}}},
		map[string]any{"role": "model", "parts": []any{map[string]any{"functionCall": map[string]any{"id": "c1", "name": "Bash", "args": map[string]any{"command": "ls"}}, "thoughtSignature": "U0lH"}}},
		map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{"id": "c1", "name": "Bash", "response": map[string]any{"output": "a.txt"}}}}},
	}
	if diff := cmp.Diff(wantContents, body["contents"]); diff != "" {
		t.Errorf("contents (-want +got):\n%s", diff)
	}
	if got := body["systemInstruction"]; !cmp.Equal(got, map[string]any{"role": "user", "parts": []any{map[string]any{"text": "Be brief."}}}) {
		t.Errorf("systemInstruction %v", got)
	}
}
