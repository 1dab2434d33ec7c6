package provider

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

// TestExtraHeader: a Config.Extra key "header:NAME" is sent as the header NAME, not as a
// body key; a value that is not a JSON string fails the request before it is sent.
func TestExtraHeader(t *testing.T) {
	var (
		mu      sync.Mutex
		bodies  []map[string]any
		headers []http.Header
	)
	m := newOpenAITest(t, func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		bodies, headers = append(bodies, body), append(headers, r.Header.Clone())
		mu.Unlock()
		streamHeaders(w)
		writeSSE(w, `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, doneEvent)
	})
	req := llm.Request{Config: dsh.LLMCallConfig{Model: "gpt-x", Extra: map[string]json.RawMessage{
		HeaderExtraPrefix + "x-openai-subagent": json.RawMessage(`"collab_spawn"`), "seed": json.RawMessage(`7`)}},
		Messages: []llm.Message{userText("hi")}}
	if _, err := drain(m.Stream(context.Background(), req)); err != nil {
		t.Fatal(err)
	}
	if len(headers) != 1 || headers[0].Get("X-Openai-Subagent") != "collab_spawn" {
		t.Fatalf("headers = %v, want x-openai-subagent: collab_spawn", headers)
	}
	if _, ok := bodies[0][HeaderExtraPrefix+"x-openai-subagent"]; ok || bodies[0]["seed"] != float64(7) {
		t.Errorf("body = %v: the header key must not be in it, seed must", bodies[0])
	}
	req.Config.Extra = map[string]json.RawMessage{HeaderExtraPrefix + "x-bad": json.RawMessage(`7`)}
	if _, err := drain(m.Stream(context.Background(), req)); err == nil || !strings.Contains(err.Error(), "a header's value must be a JSON string") {
		t.Errorf("a header with a number: err = %v", err)
	}
	if len(bodies) != 1 {
		t.Errorf("%d requests sent, want the bad one refused before sending", len(bodies))
	}
}
