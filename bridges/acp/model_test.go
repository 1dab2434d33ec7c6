package acp_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dshkit/dsh/bridges/acp"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

// TestSyntheticAnswerStreams: an answer an agent/request listener gives instead of the
// provider streams to the editor as agent_message_chunk updates like any response, and a
// response an agent/response listener replaces streams its new text only.
func TestSyntheticAnswerStreams(t *testing.T) {
	dir := t.TempDir()
	model := llm.NewScripted(llm.ScriptedResponse{Text: "the secret is out"}).RecordRequests()
	c := startHooked(t, dir, acp.PermissionsAllow, func() llm.Model { return model }, nil, func(reg *dsh.Registry) {
		reg.Plugin("cache").OnRequest(func(ctx context.Context, p *dsh.RequestPayload) (dsh.RequestDecision, error) {
			if p.Turn == 1 {
				return dsh.RequestAnswer{Content: []dsh.ContentBlock{dsh.ReasoningBlock{Text: "looked it up"}, dsh.TextBlock{Text: "from the cache"}}}, nil
			}
			return dsh.RequestPass{}, nil
		})
		reg.Plugin("scrub").OnResponse(func(ctx context.Context, p *dsh.ResponsePayload) (dsh.ResponseDecision, error) {
			if p.Turn == 2 {
				return dsh.ResponseReplace{Text: "[scrubbed]"}, nil
			}
			return dsh.ResponseAccept{}, nil
		})
	})
	id := c.newSession(dir)
	updates := func(text string) (chunks, thoughts []string) {
		reqID := c.request("session/prompt", prompt(id, text))
		for _, f := range c.until(responseTo(reqID)) {
			params := fmt.Sprint(f["params"])
			p, _ := f["params"].(map[string]any)
			u, _ := p["update"].(map[string]any)
			content, _ := u["content"].(map[string]any)
			switch {
			case strings.Contains(params, "agent_message_chunk"):
				chunks = append(chunks, fmt.Sprint(content["text"]))
			case strings.Contains(params, "agent_thought_chunk"):
				thoughts = append(thoughts, fmt.Sprint(content["text"]))
			}
		}
		return chunks, thoughts
	}
	chunks, thoughts := updates("what is it?")
	if strings.Join(chunks, "") != "from the cache" || strings.Join(thoughts, "") != "looked it up" {
		t.Errorf("turn 1 streamed %q, thoughts %q", chunks, thoughts)
	}
	if n := len(model.Requests()); n != 0 {
		t.Errorf("the provider was called %d times for an answered request", n)
	}
	chunks, _ = updates("and now?")
	if got := strings.Join(chunks, ""); got != "[scrubbed]" {
		t.Errorf("turn 2 streamed %q, want only the replacement", got)
	}
}
