package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"unsafe"

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
	summary := "sum"
	orig := Request{
		Config: dsh.LLMCallConfig{
			Provider: "p", Model: "m", MaxTokens: ptr(5), Temperature: ptr(0.5), System: ptr("s"),
			Extra: map[string]json.RawMessage{"k": json.RawMessage(`1`)},
		},
		System: "sys",
		Messages: []Message{
			{Role: RoleUser, Content: []dsh.ContentBlock{
				dsh.ToolResultBlock{ToolCallID: "c", Content: []dsh.ContentBlock{dsh.TextBlock{Text: "out"}}},
				dsh.ReasoningBlock{Text: "r", Signature: ptr("sig")},
			}, Source: dsh.SourcePlugin{Plugin: "p", Summary: &summary}},
			{Role: RoleUser, Source: dsh.SourceModel{ReplayState: json.RawMessage(`{"a":1}`)}},
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
	*orig.Messages[0].Content[1].(dsh.ReasoningBlock).Signature = "changed"
	summary = "changed"
	orig.Messages[1].Source.(dsh.SourceModel).ReplayState[2] = 'X'
	orig.Tools[0].InputSchema[2] = 'X'
	if *c.Config.MaxTokens != 5 || *c.Config.System != "s" || string(c.Config.Extra["k"]) != "1" {
		t.Errorf("config shared: %+v", c.Config)
	}
	if got := c.Messages[0].Content[0].(dsh.ToolResultBlock).Content[0]; got != (dsh.TextBlock{Text: "out"}) {
		t.Errorf("tool result content shared: %v", got)
	}
	if got := *c.Messages[0].Content[1].(dsh.ReasoningBlock).Signature; got != "sig" {
		t.Errorf("reasoning signature shared: %q", got)
	}
	if got := *c.Messages[0].Source.(dsh.SourcePlugin).Summary; got != "sum" {
		t.Errorf("plugin source summary shared: %q", got)
	}
	if got := string(c.Messages[1].Source.(dsh.SourceModel).ReplayState); got != `{"a":1}` {
		t.Errorf("model source replay state shared: %s", got)
	}
	if string(c.Tools[0].InputSchema) != `{"type":"object"}` {
		t.Errorf("schema shared: %s", c.Tools[0].InputSchema)
	}
}

// TestCloneMakesPointerVariantsValues pins the boundary where a request enters a model:
// every adapter and the scripted model stream a clone of their request, and the clone of
// a request holding pointer variants (content blocks at any depth, sources) equals the
// clone of the same request in value forms, so that an adapter switches over value forms
// only; it is deep too, and a nil pointer variant becomes nil. The estimate of both is
// the same.
func TestCloneMakesPointerVariantsValues(t *testing.T) {
	sig, summary := "sig", "sum"
	values := Request{Messages: []Message{
		{Role: RoleAssistant, Content: []dsh.ContentBlock{
			dsh.TextBlock{Text: "t"}, dsh.ReasoningBlock{Text: "r", Signature: &sig},
			dsh.ToolCallBlock{ID: "c", Name: "n", Arguments: "{}", Signature: &sig},
		}, Source: dsh.SourceModel{Provider: "p", ReplayState: json.RawMessage(`{}`)}},
		{Role: RoleUser, Content: []dsh.ContentBlock{
			dsh.ToolResultBlock{ToolCallID: "c", Content: []dsh.ContentBlock{dsh.TextBlock{Text: "out"}, dsh.ImageBlock{MediaType: "image/png", Data: "AA=="}}},
		}, Source: dsh.SourceTool{CallID: "c"}},
		{Role: RoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "ctx"}}, Source: dsh.SourcePlugin{Plugin: "p", Summary: &summary}},
		{Role: RoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "hi"}}, Source: dsh.SourceUser{}},
	}}
	pointers := Request{Messages: []Message{
		{Role: RoleAssistant, Content: []dsh.ContentBlock{
			&dsh.TextBlock{Text: "t"}, &dsh.ReasoningBlock{Text: "r", Signature: &sig},
			&dsh.ToolCallBlock{ID: "c", Name: "n", Arguments: "{}", Signature: &sig},
		}, Source: &dsh.SourceModel{Provider: "p", ReplayState: json.RawMessage(`{}`)}},
		{Role: RoleUser, Content: []dsh.ContentBlock{
			&dsh.ToolResultBlock{ToolCallID: "c", Content: []dsh.ContentBlock{&dsh.TextBlock{Text: "out"}, &dsh.ImageBlock{MediaType: "image/png", Data: "AA=="}}},
		}, Source: &dsh.SourceTool{CallID: "c"}},
		{Role: RoleUser, Content: []dsh.ContentBlock{&dsh.TextBlock{Text: "ctx"}}, Source: &dsh.SourcePlugin{Plugin: "p", Summary: &summary}},
		{Role: RoleUser, Content: []dsh.ContentBlock{&dsh.TextBlock{Text: "hi"}}, Source: &dsh.SourceUser{}},
	}}
	got := pointers.Clone()
	if diff := cmp.Diff(values.Clone(), got); diff != "" {
		t.Errorf("clone of pointer variants (-values +pointers):\n%s", diff)
	}
	if ev, ep := EstimateRequest(values), EstimateRequest(pointers); ev != ep {
		t.Errorf("estimate of pointer variants %d, of values %d", ep, ev)
	}
	sig, summary = "changed", "changed"
	if *got.Messages[0].Content[1].(dsh.ReasoningBlock).Signature != "sig" || *got.Messages[2].Source.(dsh.SourcePlugin).Summary != "sum" {
		t.Error("the clone of a pointer variant shares its pointers")
	}
	withNil := Request{Messages: []Message{{Role: RoleUser, Content: []dsh.ContentBlock{(*dsh.TextBlock)(nil)}, Source: (*dsh.SourceUser)(nil)}}}
	c := withNil.Clone()
	if c.Messages[0].Content[0] != nil || c.Messages[0].Source != nil {
		t.Errorf("nil pointer variants cloned to %#v, %#v; want nil", c.Messages[0].Content[0], c.Messages[0].Source)
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

// A response's Text is its one text block's text, not a second copy: a response may be
// tens of megabytes (up to the provider's cap), and the soak of an endless stream counts
// every copy in dsh's peak memory.
func TestAssemblerTextIsNotCopied(t *testing.T) {
	var a Assembler
	for range 64 {
		if err := a.Add(dsh.ChunkTextDelta{Text: strings.Repeat("x", 16<<10)}); err != nil {
			t.Fatal(err)
		}
	}
	r := a.Response()
	block, ok := r.Content[0].(dsh.TextBlock)
	if !ok || len(r.Content) != 1 || len(r.Text) != 1<<20 {
		t.Fatalf("content %d blocks, text %d bytes", len(r.Content), len(r.Text))
	}
	if unsafe.StringData(r.Text) != unsafe.StringData(block.Text) {
		t.Errorf("Response().Text is a copy of the text block's text")
	}
	allocs := testing.AllocsPerRun(10, func() { _ = a.Response() })
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	before := m.TotalAlloc
	_ = a.Response()
	runtime.ReadMemStats(&m)
	if grew := m.TotalAlloc - before; grew > 64<<10 {
		t.Errorf("Response() of a 1 MiB text allocated %d bytes (%v allocations); want no copy of the text", grew, allocs)
	}
}
