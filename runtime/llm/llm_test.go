package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dshkit/dsh/generated/dsh"
)

// seqOf streams the given chunks, then err if non-nil.
func seqOf(err error, chunks ...dsh.AssistantChunk) iter.Seq2[dsh.AssistantChunk, error] {
	return func(yield func(dsh.AssistantChunk, error) bool) {
		for _, c := range chunks {
			if !yield(c, nil) {
				return
			}
		}
		if err != nil {
			yield(nil, err)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestCollectAssemblesInStreamOrder(t *testing.T) {
	usage := &dsh.Usage{InputTokens: 10, OutputTokens: 4}
	resp, err := Collect(seqOf(nil,
		dsh.ChunkReasoningDelta{Text: "let me "},
		&dsh.ChunkReasoningDelta{Text: "think"},
		dsh.ChunkTextDelta{Text: "Looking"},
		dsh.ChunkTextDelta{Text: " now."},
		dsh.ChunkToolCall{ID: "c1", Name: "Bash", Arguments: `{"command":"ls"}`},
		dsh.ChunkToolCall{ID: "c2", Name: "Read", Arguments: `{}`},
		dsh.ChunkTextDelta{Text: "after"},
		dsh.ChunkFinish{Reason: dsh.FinishReasonToolCalls, Usage: usage},
	))
	if err != nil {
		t.Fatal(err)
	}
	want := Response{
		Content: []dsh.ContentBlock{
			dsh.ReasoningBlock{Text: "let me think"},
			dsh.TextBlock{Text: "Looking now."},
			dsh.ToolCallBlock{ID: "c1", Name: "Bash", Arguments: `{"command":"ls"}`},
			dsh.ToolCallBlock{ID: "c2", Name: "Read", Arguments: `{}`},
			dsh.TextBlock{Text: "after"},
		},
		Text:      "Looking now.after",
		Reasoning: "let me think",
		ToolCalls: []dsh.ToolCallBlock{
			{ID: "c1", Name: "Bash", Arguments: `{"command":"ls"}`},
			{ID: "c2", Name: "Read", Arguments: `{}`},
		},
		Finish: dsh.ChunkFinish{Reason: dsh.FinishReasonToolCalls, Usage: usage},
		Usage:  usage,
	}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("Collect (-want +got):\n%s", diff)
	}
	msg := resp.Message()
	if msg.Role != dsh.AssistantMessageRoleAssistant || len(msg.Content) != 5 {
		t.Errorf("Message() = %+v", msg)
	}
	if err := msg.Validate(); err != nil {
		t.Errorf("Message().Validate() = %v", err)
	}
}

func TestCollectContractViolations(t *testing.T) {
	transport := errors.New("connection reset")
	tests := []struct {
		name     string
		seq      iter.Seq2[dsh.AssistantChunk, error]
		wantErr  error
		wantText string
	}{
		{"no finish", seqOf(nil, dsh.ChunkTextDelta{Text: "a"}), ErrNoFinish, "a"},
		{"empty", seqOf(nil), ErrNoFinish, ""},
		{"go error", seqOf(transport, dsh.ChunkTextDelta{Text: "partial"}), transport, "partial"},
		{"nil chunk", seqOf(nil, dsh.ChunkTextDelta{Text: "x"}, nil), ErrNilChunk, "x"},
		{"nil pointer chunk", seqOf(nil, (*dsh.ChunkFinish)(nil)), ErrNilChunk, ""},
		{"after finish", seqOf(nil, dsh.ChunkFinish{Reason: dsh.FinishReasonStop}, dsh.ChunkTextDelta{Text: "late"}), ErrChunkAfterFinish, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := Collect(tt.seq)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if resp.Text != tt.wantText {
				t.Errorf("Text = %q, want %q", resp.Text, tt.wantText)
			}
		})
	}
}

func TestAssemblerResponseIsASnapshot(t *testing.T) {
	var a Assembler
	if err := a.Add(dsh.ChunkToolCall{ID: "1", Name: "A"}); err != nil {
		t.Fatal(err)
	}
	snap := a.Response()
	if err := a.Add(dsh.ChunkTextDelta{Text: "x"}); err != nil {
		t.Fatal(err)
	}
	if len(snap.Content) != 1 || a.Finished() || snap.Finished() {
		t.Errorf("snapshot changed or finished early: %+v", snap)
	}
}

type fakeNetErr struct{ timeout bool }

func (e fakeNetErr) Error() string   { return "net failure" }
func (e fakeNetErr) Timeout() bool   { return e.timeout }
func (e fakeNetErr) Temporary() bool { return false }

func TestAsFailure(t *testing.T) {
	exact := dsh.LLMFailure{Message: "m", Code: "rate_limit", Status: ptr(429), ProviderRetryAfterMS: ptr(10), RequestID: ptr("r")}
	tests := []struct {
		name string
		err  error
		want dsh.LLMFailure
	}{
		{"nil", nil, dsh.LLMFailure{Message: "unknown error", Code: CodeUnknown}},
		{"failure error", fmt.Errorf("wrapped: %w", &FailureError{Failure: exact}), exact},
		{"canceled", fmt.Errorf("x: %w", context.Canceled), dsh.LLMFailure{Message: "x: context canceled", Code: CodeAborted}},
		{"deadline", context.DeadlineExceeded, dsh.LLMFailure{Message: "context deadline exceeded", Code: CodeTimeout}},
		{"net timeout", fakeNetErr{timeout: true}, dsh.LLMFailure{Message: "net failure", Code: CodeTimeout}},
		{"url error", &url.Error{Op: "Post", URL: "http://x", Err: errors.New("refused")}, dsh.LLMFailure{Message: `Post "http://x": refused`, Code: CodeNetwork}},
		{"plain", errors.New("boom"), dsh.LLMFailure{Message: "boom", Code: CodeUnknown}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, AsFailure(tt.err)); diff != "" {
				t.Errorf("AsFailure (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRequestCloneIsDeep(t *testing.T) {
	orig := Request{
		Config: dsh.LLMCallConfig{
			Provider: "p", Model: "m", MaxTokens: ptr(5), Temperature: ptr(0.5), System: ptr("s"),
			Extra: map[string]json.RawMessage{"k": json.RawMessage(`1`)},
		},
		System: "sys",
		Messages: []Message{
			{Role: RoleUser, Content: []dsh.ContentBlock{
				dsh.ToolResultBlock{ToolCallID: "c", Content: []dsh.ContentBlock{dsh.TextBlock{Text: "out"}}},
				&dsh.TextBlock{Text: "ptr"},
			}},
		},
		Tools: []ToolSpec{{Name: "T", InputSchema: json.RawMessage(`{"type":"object"}`)}},
	}
	c := orig.Clone()
	if diff := cmp.Diff(orig, c); diff != "" {
		t.Fatalf("clone differs:\n%s", diff)
	}
	*orig.Config.MaxTokens = 99
	*orig.Config.System = "changed"
	orig.Config.Extra["k"][0] = '2'
	orig.Messages[0].Content[0].(dsh.ToolResultBlock).Content[0] = dsh.TextBlock{Text: "changed"}
	orig.Messages[0].Content[1].(*dsh.TextBlock).Text = "changed"
	orig.Tools[0].InputSchema[2] = 'X'
	if *c.Config.MaxTokens != 5 || *c.Config.System != "s" || string(c.Config.Extra["k"]) != "1" {
		t.Errorf("config shared: %+v", c.Config)
	}
	if got := c.Messages[0].Content[0].(dsh.ToolResultBlock).Content[0]; got != (dsh.TextBlock{Text: "out"}) {
		t.Errorf("tool result content shared: %v", got)
	}
	if got := c.Messages[0].Content[1].(*dsh.TextBlock).Text; got != "ptr" {
		t.Errorf("pointer block shared: %q", got)
	}
	if string(c.Tools[0].InputSchema) != `{"type":"object"}` {
		t.Errorf("schema shared: %s", c.Tools[0].InputSchema)
	}
}

// TestAssemblerSnapshotOfAnOpenRun: a Response taken in the middle of a run of text
// deltas holds the run so far, and later deltas neither change it nor start a new block.
func TestAssemblerSnapshotOfAnOpenRun(t *testing.T) {
	var a Assembler
	for _, c := range []dsh.AssistantChunk{dsh.ChunkTextDelta{Text: "a"}, dsh.ChunkTextDelta{Text: "b"}} {
		if err := a.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	snap := a.Response()
	for _, c := range []dsh.AssistantChunk{dsh.ChunkTextDelta{Text: "c"}, dsh.ChunkReasoningDelta{Text: "r"}, dsh.ChunkTextDelta{Text: "d"}} {
		if err := a.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]dsh.ContentBlock{dsh.TextBlock{Text: "ab"}}, snap.Content); diff != "" || snap.Text != "ab" {
		t.Errorf("snapshot changed (Text %q), content (-want +got):\n%s", snap.Text, diff)
	}
	got := a.Response()
	want := []dsh.ContentBlock{dsh.TextBlock{Text: "abc"}, dsh.ReasoningBlock{Text: "r"}, dsh.TextBlock{Text: "d"}}
	if diff := cmp.Diff(want, got.Content); diff != "" || got.Text != "abcd" || got.Reasoning != "r" {
		t.Errorf("Text %q Reasoning %q, content (-want +got):\n%s", got.Text, got.Reasoning, diff)
	}
}

// BenchmarkAssemblerLongText folds a response of 20,000 small text deltas; the fold is
// linear in the response's length (it once joined with +=, quadratic).
func BenchmarkAssemblerLongText(b *testing.B) {
	delta := dsh.ChunkTextDelta{Text: "token "}
	for b.Loop() {
		var a Assembler
		for range 20000 {
			if err := a.Add(delta); err != nil {
				b.Fatal(err)
			}
		}
		if r := a.Response(); len(r.Text) != 6*20000 {
			b.Fatalf("len(Text) = %d", len(r.Text))
		}
	}
}
