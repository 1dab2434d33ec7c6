package llm

import (
	"context"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
)

// TestEstimate: a token per started 4 bytes, 4 per message, the system prompt and tools
// counted once.
func TestEstimate(t *testing.T) {
	for _, c := range []struct {
		s    string
		want int
	}{{"", 0}, {"a", 1}, {"abcd", 1}, {"abcde", 2}, {strings.Repeat("x", 400), 100}} {
		if got := EstimateText(c.s); got != c.want {
			t.Errorf("EstimateText(%d bytes) = %d, want %d", len(c.s), got, c.want)
		}
	}
	req := Request{System: "abcdefgh", Messages: []Message{
		{Role: RoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "abcd"}}},
		{Role: RoleAssistant, Content: []dsh.ContentBlock{dsh.ToolCallBlock{ID: "c1", Name: "echo", Arguments: "{}"}}},
		{Role: RoleUser, Content: []dsh.ContentBlock{dsh.ToolResultBlock{ToolCallID: "c1", Content: []dsh.ContentBlock{dsh.TextBlock{Text: "okok"}}}}},
	}, Tools: []ToolSpec{{Name: "echo", Description: "echo", InputSchema: []byte(`{}`)}}}
	// system 4+2; tool 4+1+1+1; messages (4+1) + (4+1+1+2) + (4+1+2)
	if got, want := EstimateRequest(req), 6+7+5+8+7; got != want {
		t.Errorf("EstimateRequest = %d, want %d", got, want)
	}
}

// TestScriptedContextWindow: a request over the window fails CONTEXT_WINDOW_EXCEEDED
// without consuming a response (it is recorded); the others report the estimate as usage.
func TestScriptedContextWindow(t *testing.T) {
	m := NewScripted(ScriptedResponse{Text: "fine"}).RecordRequests().WithContextWindow(20)
	big := Request{Messages: []Message{{Role: RoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: strings.Repeat("x", 100)}}}}}
	resp, err := Collect(m.Stream(context.Background(), big))
	if err != nil || resp.Finish.Reason != dsh.FinishReasonError || !IsContextWindowExceeded(*resp.Finish.Error) {
		t.Fatalf("over the window: %+v %v", resp.Finish, err)
	}
	if m.Remaining() != 1 || len(m.Requests()) != 1 {
		t.Fatalf("the refused request consumed a response (%d left) or was not recorded (%d)", m.Remaining(), len(m.Requests()))
	}
	small := Request{Messages: []Message{{Role: RoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "hi"}}}}}
	resp, err = Collect(m.Stream(context.Background(), small))
	if err != nil || resp.Text != "fine" || resp.Usage == nil || *resp.Usage != (dsh.Usage{InputTokens: 5, OutputTokens: 1}) {
		t.Fatalf("within the window: %+v %+v %v", resp.Finish, resp.Usage, err)
	}
	if !IsContextWindowExceeded(dsh.LLMFailure{Code: CodeContextWindowExceeded}) || IsContextWindowExceeded(dsh.LLMFailure{Code: "UNKNOWN"}) {
		t.Error("IsContextWindowExceeded")
	}
}
