package llm

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dshkit/dsh/generated/dsh"
)

// drain collects every chunk and the final error of a stream.
func drain(seq func(func(dsh.AssistantChunk, error) bool)) ([]dsh.AssistantChunk, error) {
	var out []dsh.AssistantChunk
	var last error
	for c, err := range seq {
		if err != nil {
			last = err
			continue
		}
		out = append(out, c)
	}
	return out, last
}

func userText(s string) Message {
	return Message{Role: RoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: s}}}
}

const sampleScript = `{
  "responses": [
    {"reasoning": "need a listing", "text": "Let me look.", "toolCalls": [
      {"name": "Bash", "arguments": {"command": "ls",  "timeout": 5}},
      {"id": "mine", "name": "Read", "arguments": "{\"path\": broken"},
      {"name": "Glob"}
    ], "usage": {"inputTokens": 7, "outputTokens": 3}},
    {"toolCalls": [{"name": "Bash", "arguments": ""}]},
    {"text": "cut off", "finish": "max-tokens"},
    {"error": {"message": "slow down", "code": "rate_limit", "status": 429, "retryAfterMs": 1500, "requestId": "req-1"}},
    {"error": {}}
  ]
}`

func TestParseScriptPlaysInOrder(t *testing.T) {
	m, err := ParseScript([]byte(sampleScript))
	if err != nil {
		t.Fatal(err)
	}
	m.RecordRequests()
	if m.Remaining() != 5 {
		t.Fatalf("Remaining = %d", m.Remaining())
	}
	ctx := context.Background()
	want := [][]dsh.AssistantChunk{
		{
			dsh.ChunkReasoningDelta{Text: "need "}, dsh.ChunkReasoningDelta{Text: "a "}, dsh.ChunkReasoningDelta{Text: "listing"},
			dsh.ChunkTextDelta{Text: "Let "}, dsh.ChunkTextDelta{Text: "me "}, dsh.ChunkTextDelta{Text: "look."},
			dsh.ChunkToolCall{ID: "call_1", Name: "Bash", Arguments: `{"command":"ls","timeout":5}`},
			dsh.ChunkToolCall{ID: "mine", Name: "Read", Arguments: `{"path": broken`},
			dsh.ChunkToolCall{ID: "call_3", Name: "Glob", Arguments: `{}`},
			dsh.ChunkFinish{Reason: dsh.FinishReasonToolCalls, Usage: &dsh.Usage{InputTokens: 7, OutputTokens: 3}},
		},
		{
			dsh.ChunkToolCall{ID: "call_4", Name: "Bash", Arguments: ""},
			dsh.ChunkFinish{Reason: dsh.FinishReasonToolCalls},
		},
		{
			dsh.ChunkTextDelta{Text: "cut "}, dsh.ChunkTextDelta{Text: "off"},
			dsh.ChunkFinish{Reason: dsh.FinishReasonMaxTokens},
		},
		{
			dsh.ChunkFinish{Reason: dsh.FinishReasonError, Error: &dsh.LLMFailure{
				Message: "slow down", Code: "rate_limit", Status: ptr(429), ProviderRetryAfterMS: ptr(1500), RequestID: ptr("req-1"),
			}},
		},
		{
			dsh.ChunkFinish{Reason: dsh.FinishReasonError, Error: &dsh.LLMFailure{Message: "scripted error", Code: CodeUnknown}},
		},
		{ // exhausted
			dsh.ChunkTextDelta{Text: ExhaustedText},
			dsh.ChunkFinish{Reason: dsh.FinishReasonStop},
		},
		{
			dsh.ChunkTextDelta{Text: ExhaustedText},
			dsh.ChunkFinish{Reason: dsh.FinishReasonStop},
		},
	}
	for i, w := range want {
		got, err := drain(m.Stream(ctx, Request{Messages: []Message{userText("call " + string(rune('0'+i)))}}))
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("call %d (-want +got):\n%s", i, diff)
		}
	}
	reqs := m.Requests()
	if len(reqs) != len(want) {
		t.Fatalf("%d requests recorded, want %d", len(reqs), len(want))
	}
	if got := reqs[2].Messages[0].Content[0].(dsh.TextBlock).Text; got != "call 2" {
		t.Errorf("request 3 = %q", got)
	}
	if m.Remaining() != 0 {
		t.Errorf("Remaining = %d", m.Remaining())
	}
}

func TestParseScriptRejects(t *testing.T) {
	tests := []struct {
		name, script string
		want         []string
	}{
		{"unknown top-level field", `{"responses": [], "model": "x"}`, []string{`"model"`}},
		{"unknown response field", `{"responses": [{"txt": "x"}]}`, []string{`"txt"`}},
		{"unknown tool call field", `{"responses": [{"toolCalls": [{"name": "A", "args": {}}]}]}`, []string{`"args"`}},
		{"unknown error field", `{"responses": [{"error": {"msg": "x"}}]}`, []string{`"msg"`}},
		{"unknown usage field", `{"responses": [{"usage": {"input": 1}}]}`, []string{"input"}},
		{"field in the wrong case", `{"responses": [{"toolcalls": [{"name": "Bash"}]}]}`, []string{`responses[0]: unknown field "toolcalls" (did you mean "toolCalls"?)`}},
		{"nested field in the wrong case", `{"responses": [{"toolCalls": [{"Name": "Bash"}]}]}`, []string{`responses[0].toolCalls[0]: unknown field "Name"`}},
		{"top-level field in the wrong case", `{"Responses": []}`, []string{`unknown field "Responses"`}},
		{"bad finish", `{"responses": [{"finish": "done"}]}`, []string{"FinishReason"}},
		{"error finish without error", `{"responses": [{"text": "a"}, {"finish": "error"}]}`, []string{"responses[1]", "without an error"}},
		{"error with other finish", `{"responses": [{"finish": "stop", "error": {}}]}`, []string{"responses[0]", "error with finish"}},
		{"transport error with finish", `{"responses": [{"finish": "stop", "transportError": "x"}]}`, []string{"transportError"}},
		{"tool call without name", `{"responses": [{"toolCalls": [{"arguments": {}}]}]}`, []string{"toolCalls[0]", "missing name"}},
		{"negative delay", `{"responses": [{"delayMs": -1}]}`, []string{"delayMs"}},
		{"trailing data", `{"responses": []} {}`, []string{"after the top-level object"}},
		{"malformed", `{"responses": [`, []string{"parse script"}},
		{"not an object", `[]`, []string{"parse script"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseScript([]byte(tt.script))
			if err == nil {
				t.Fatal("ParseScript succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestLoadScript(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	if err := os.WriteFile(good, []byte(`{"responses": [{"text": "hi there"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := LoadScript(good)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := Collect(m.Stream(context.Background(), Request{}))
	if err != nil || resp.Text != "hi there" {
		t.Errorf("got %q, %v", resp.Text, err)
	}

	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"responses": [{"text": 1}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{bad, filepath.Join(dir, "missing.json")} {
		if _, err := LoadScript(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("LoadScript(%s) error %v does not name the path", path, err)
		}
	}
}

func TestScriptedInvalidResponseIsAnErrorFinish(t *testing.T) {
	m := NewScripted(ScriptedResponse{Text: "ok"}, ScriptedResponse{Finish: "bogus"})
	if _, err := Collect(m.Stream(context.Background(), Request{})); err != nil {
		t.Fatal(err)
	}
	resp, err := Collect(m.Stream(context.Background(), Request{}))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Finish.Reason != dsh.FinishReasonError || resp.Finish.Error.Code != CodeInvalidScript ||
		!strings.Contains(resp.Finish.Error.Message, "responses[1]") {
		t.Errorf("finish = %+v, error %+v", resp.Finish, resp.Finish.Error)
	}
}

func TestScriptedTransportError(t *testing.T) {
	m := NewScripted(ScriptedResponse{Text: "partial", TransportError: "connection reset by peer"})
	chunks, err := drain(m.Stream(context.Background(), Request{}))
	if err == nil || err.Error() != "connection reset by peer" {
		t.Fatalf("err = %v", err)
	}
	if diff := cmp.Diff([]dsh.AssistantChunk{dsh.ChunkTextDelta{Text: "partial"}}, chunks); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
	if f := AsFailure(err); f.Code != CodeUnknown {
		t.Errorf("AsFailure = %+v", f)
	}
}

func TestScriptedHangEndsAbortedOnCancel(t *testing.T) {
	m := NewScripted(ScriptedResponse{Text: "thinking about it", Hang: true, ToolCalls: []ScriptedToolCall{{Name: "Never"}}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []dsh.AssistantChunk
	start := time.Now()
	for c, err := range m.Stream(ctx, Request{}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, c)
		if len(got) == 3 {
			go func() { time.Sleep(20 * time.Millisecond); cancel() }()
		}
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("hang took %v to end", time.Since(start))
	}
	want := []dsh.AssistantChunk{
		dsh.ChunkTextDelta{Text: "thinking "}, dsh.ChunkTextDelta{Text: "about "}, dsh.ChunkTextDelta{Text: "it"},
		dsh.ChunkFinish{Reason: dsh.FinishReasonAborted, Error: &dsh.LLMFailure{Message: "context canceled", Code: CodeAborted}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	resp, _ := Collect(seqOf(nil, got...))
	if resp.Text != "thinking about it" || len(resp.ToolCalls) != 0 {
		t.Errorf("interrupted response = %+v", resp)
	}
}

func TestScriptedDelayAndCancellation(t *testing.T) {
	m := NewScripted(
		ScriptedResponse{DelayMS: 30, Text: "late"},
		ScriptedResponse{DelayMS: 60_000, Text: "never"},
		ScriptedResponse{Text: "a b c"},
	).RecordRequests()
	start := time.Now()
	resp, err := Collect(m.Stream(context.Background(), Request{}))
	if err != nil || resp.Text != "late" {
		t.Fatalf("got %+v, %v", resp, err)
	}
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Errorf("delay not applied: %v", d)
	}

	cause := errors.New("user pressed escape")
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(20*time.Millisecond, func() { cancel(cause) })
	start = time.Now()
	resp, err = Collect(m.Stream(ctx, Request{}))
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancellation not prompt: %v", d)
	}
	want := dsh.ChunkFinish{Reason: dsh.FinishReasonAborted, Error: &dsh.LLMFailure{Message: "user pressed escape", Code: CodeAborted}}
	if diff := cmp.Diff(want, resp.Finish); diff != "" || resp.Text != "" {
		t.Errorf("finish (-want +got):\n%s text %q", diff, resp.Text)
	}

	// An already-cancelled context still consumes a response and records the request.
	resp, err = Collect(m.Stream(ctx, Request{System: "s"}))
	if err != nil || resp.Finish.Reason != dsh.FinishReasonAborted || resp.Text != "" {
		t.Errorf("got %+v, %v", resp, err)
	}
	if m.Remaining() != 0 || len(m.Requests()) != 3 {
		t.Errorf("remaining %d, requests %d", m.Remaining(), len(m.Requests()))
	}
}

func TestScriptedConsumerBreak(t *testing.T) {
	m := NewScripted(ScriptedResponse{Text: "one two three"}, ScriptedResponse{Text: "next"})
	n := 0
	for range m.Stream(context.Background(), Request{}) {
		n++
		break
	}
	if n != 1 {
		t.Fatalf("n = %d", n)
	}
	resp, err := Collect(m.Stream(context.Background(), Request{}))
	if err != nil || resp.Text != "next" {
		t.Errorf("got %q, %v", resp.Text, err)
	}
}

func TestScriptedRecordsDeepCopies(t *testing.T) {
	m := NewScripted().RecordRequests()
	req := Request{
		Config:   dsh.LLMCallConfig{Provider: "scripted", Model: "m", MaxTokens: ptr(10)},
		System:   "sys",
		Messages: []Message{userText("original")},
		Tools:    []ToolSpec{{Name: "Bash", InputSchema: json.RawMessage(`{"type":"object"}`)}},
	}
	seq := m.Stream(context.Background(), req)
	// Mutating the caller's request after Stream does not change what was sent.
	req.Messages[0].Content[0] = dsh.TextBlock{Text: "mutated"}
	*req.Config.MaxTokens = 99
	if _, err := Collect(seq); err != nil {
		t.Fatal(err)
	}
	got := m.Requests()
	if len(got) != 1 {
		t.Fatalf("%d requests", len(got))
	}
	if txt := got[0].Messages[0].Content[0].(dsh.TextBlock).Text; txt != "original" || *got[0].Config.MaxTokens != 10 {
		t.Errorf("recorded %q, maxTokens %d", txt, *got[0].Config.MaxTokens)
	}
	// Mutating what Requests returned does not change the record.
	got[0].Messages[0].Content[0] = dsh.TextBlock{Text: "changed"}
	got[0].Tools[0].InputSchema[0] = 'X'
	again := m.Requests()
	if txt := again[0].Messages[0].Content[0].(dsh.TextBlock).Text; txt != "original" || again[0].Tools[0].InputSchema[0] != '{' {
		t.Errorf("record shared with caller: %+v", again[0])
	}
}

func TestScriptedConcurrentUse(t *testing.T) {
	const n = 40
	responses := make([]ScriptedResponse, n)
	for i := range responses {
		responses[i] = ScriptedResponse{Text: "r" + string(rune('A'+i%26)) + string(rune('a'+i/26))}
	}
	m := NewScripted(responses...).RecordRequests()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		texts []string
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := Collect(m.Stream(context.Background(), Request{Messages: []Message{userText(string(rune('a' + i%26)))}}))
			if err != nil {
				t.Error(err)
				return
			}
			_ = m.Requests()
			mu.Lock()
			texts = append(texts, resp.Text)
			mu.Unlock()
		}()
	}
	wg.Wait()
	var want []string
	for _, r := range responses {
		want = append(want, r.Text)
	}
	slices.Sort(want)
	slices.Sort(texts)
	if diff := cmp.Diff(want, texts); diff != "" {
		t.Errorf("each response played once (-want +got):\n%s", diff)
	}
	if len(m.Requests()) != n || m.Remaining() != 0 {
		t.Errorf("requests %d remaining %d", len(m.Requests()), m.Remaining())
	}
}

func TestScriptedDefaultIDsCountAcrossResponses(t *testing.T) {
	m := NewScripted(
		ScriptedResponse{ToolCalls: []ScriptedToolCall{{Name: "A"}, {ID: "x", Name: "B"}}},
		ScriptedResponse{Text: "between"},
		ScriptedResponse{ToolCalls: []ScriptedToolCall{{Name: "C", Arguments: json.RawMessage(` { "k" : [1, 2] } `)}}},
	)
	var ids, args []string
	for range 3 {
		resp, err := Collect(m.Stream(context.Background(), Request{}))
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range resp.ToolCalls {
			ids = append(ids, tc.ID)
			args = append(args, tc.Arguments)
		}
	}
	if diff := cmp.Diff([]string{"call_1", "x", "call_3"}, ids); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"{}", "{}", `{"k":[1,2]}`}, args); diff != "" {
		t.Errorf("arguments (-want +got):\n%s", diff)
	}
}

func TestSplitDeltas(t *testing.T) {
	tests := map[string][]string{
		"":              {},
		"done":          {"done"},
		"a b":           {"a ", "b"},
		"trailing ":     {"trailing "},
		"two  spaces":   {"two ", " ", "spaces"},
		"line\nbreak x": {"line\nbreak ", "x"},
	}
	for in, want := range tests {
		if diff := cmp.Diff(want, splitDeltas(in)); diff != "" {
			t.Errorf("splitDeltas(%q) (-want +got):\n%s", in, diff)
		}
		if strings.Join(splitDeltas(in), "") != in {
			t.Errorf("splitDeltas(%q) loses text", in)
		}
	}
}

func TestScriptedRecordsNothingByDefault(t *testing.T) {
	m := NewScripted(ScriptedResponse{Text: "one"}, ScriptedResponse{Text: "two"})
	if _, err := Collect(m.Stream(context.Background(), Request{Messages: []Message{userText("a")}})); err != nil {
		t.Fatal(err)
	}
	if got := m.Requests(); len(got) != 0 {
		t.Fatalf("a model without RecordRequests recorded %d requests", len(got))
	}
	m.RecordRequests()
	resp, err := Collect(m.Stream(context.Background(), Request{Messages: []Message{userText("b")}}))
	if err != nil || resp.Text != "two" {
		t.Fatalf("second call = %q, %v", resp.Text, err)
	}
	got := m.Requests()
	if len(got) != 1 || got[0].Messages[0].Content[0].(dsh.TextBlock).Text != "b" {
		t.Fatalf("after RecordRequests: %+v", got)
	}
}
