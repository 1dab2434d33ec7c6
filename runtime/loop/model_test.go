package loop

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"iter"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

// redactor is an agent/request listener that replaces "hunter2" in every text block of the
// request, counting its runs.
func redactor(runs *atomic.Int32) dsh.RequestListener {
	return func(ctx context.Context, p *dsh.RequestPayload) (dsh.RequestDecision, error) {
		runs.Add(1)
		msgs := make([]dsh.ModelMessage, len(p.Request.Messages))
		for i, m := range p.Request.Messages {
			content := make([]dsh.ContentBlock, len(m.Content))
			for j, b := range m.Content {
				if tb, ok := b.(dsh.TextBlock); ok {
					tb.Text = strings.ReplaceAll(tb.Text, "hunter2", "***")
					b = tb
				}
				content[j] = b
			}
			m.Content = content
			msgs[i] = m
		}
		return dsh.RequestRewrite{Messages: msgs}, nil
	}
}

// TestModelRewriteResume: a session resumed with the same rewriter registered sends
// byte-identical requests (the history derived from the log, rewritten again) and runs
// the rewriter for the new requests only, never for the replayed history.
func TestModelRewriteResume(t *testing.T) {
	script := func() []llm.ScriptedResponse {
		return []llm.ScriptedResponse{calls("c1:echo"), text("one"), text("two"), text("three")}
	}
	prompts := []string{"pw hunter2", "again hunter2", "last hunter2"}

	var refRuns atomic.Int32
	ref := newEnv(t, script()...)
	ref.register(okTool("echo", true))
	ref.reg.Plugin("redact").OnRequest(redactor(&refRuns))
	ra := ref.agent()
	for i, p := range prompts {
		followup(t, ra, "u"+string(rune('1'+i)), p)
		wait(t, ra)
	}

	var runs atomic.Int32
	e := newEnv(t, script()...)
	e.register(okTool("echo", true))
	e.reg.Plugin("redact").OnRequest(redactor(&runs))
	a := e.agent()
	for i, p := range prompts[:2] {
		followup(t, a, "u"+string(rune('1'+i)), p)
		wait(t, a)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.log.Close(); err != nil {
		t.Fatal(err)
	}
	before := runs.Load()
	if before != 3 { // two steps in turn 1, one in turn 2
		t.Fatalf("the rewriter ran %d times in two turns, want 3", before)
	}
	rest := llm.NewScripted(script()[3:]...).RecordRequests()
	e.log, e.model = e.openLog(), rest
	b, err := Resume(context.Background(), e.config())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if n := runs.Load(); n != before {
		t.Errorf("resuming ran the rewriter %d times", n-before)
	}
	followup(t, b, "u3", prompts[2])
	wait(t, b)
	if n := runs.Load() - before; n != 1 {
		t.Errorf("the rewriter ran %d times after resume, want 1 (the new request)", n)
	}
	want, err := json.Marshal(ref.requests()[3])
	if err != nil {
		t.Fatal(err)
	}
	have, err := json.Marshal(rest.Requests()[0])
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, have) {
		t.Errorf("the resumed request differs:\nwant %s\ngot  %s", want, have)
	}
	if bytes.Contains(have, []byte("hunter2")) || !bytes.Contains(have, []byte("last ***")) {
		t.Errorf("the resumed request is not redacted: %s", have)
	}
	if got := userTexts(t, e.log); len(got) != 3 || got[2] != "last hunter2" {
		t.Errorf("the log does not keep the user's text: %q", got)
	}
}

// TestModelRewriteDigests: request/rewritten carries the digests of the request derived
// from the log and of the one the provider received, each the SHA-256 of the dsh JSON of
// the #ModelRequest.
func TestModelRewriteDigests(t *testing.T) {
	e := newEnv(t, text("ok"))
	e.cfg.System = "sys"
	var runs atomic.Int32
	e.reg.Plugin("redact").OnRequest(redactor(&runs))
	a := e.agent()
	followup(t, a, "u1", "pw hunter2")
	wait(t, a)
	recs := records[dsh.RequestRewritten](t, e.log)
	if len(recs) != 1 || len(recs[0].Chain) != 1 || recs[0].Chain[0].By != "redact#1" {
		t.Fatalf("request/rewritten %s", jsonOf(t, recs))
	}
	sent := e.requests()[0]
	if got := texts(sent); len(got) != 1 || got[0] != "user:pw ***" {
		t.Fatalf("sent %q", got)
	}
	digest := func(r dsh.ModelRequest) string {
		data, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		return "sha256:" + hex.EncodeToString(sum[:])
	}
	system := "sys"
	cfg := dsh.LLMCallConfig{Provider: "test", Model: "m1", System: &system}
	msg := func(s string) []dsh.ModelMessage {
		return []dsh.ModelMessage{{Role: dsh.ModelRoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: s}}, Source: dsh.SourceUser{}}}
	}
	before := dsh.ModelRequest{Config: cfg, Messages: msg("pw hunter2"), Tools: []dsh.ModelTool{}}
	after := dsh.ModelRequest{Config: cfg, Messages: msg("pw ***"), Tools: []dsh.ModelTool{}}
	diff(t, "before", digest(before), recs[0].Before)
	diff(t, "after", digest(after), recs[0].After)
	diff(t, "step digest", digest(after), *recs[0].Chain[0].Digest)
}

// TestModelResponseHoldsChunksUntilCancel: with an agent/response listener, a stream
// cancelled midway logs nothing of the response (the listener never saw it), where
// without one the visible prefix is logged as an interrupted message.
func TestModelResponseHoldsChunksUntilCancel(t *testing.T) {
	for _, listening := range []bool{false, true} {
		e := newEnv(t)
		streamed := make(chan struct{})
		e.model = modelFunc(func(ctx context.Context, req llm.Request) iter.Seq2[dsh.AssistantChunk, error] {
			return func(yield func(dsh.AssistantChunk, error) bool) {
				if !yield(dsh.ChunkTextDelta{Text: "partial secret"}, nil) {
					return
				}
				close(streamed)
				<-ctx.Done()
				yield(dsh.AssistantChunk(nil), ctx.Err())
			}
		})
		var saw atomic.Int32
		if listening {
			e.reg.OnResponse(func(ctx context.Context, p *dsh.ResponsePayload) (dsh.ResponseDecision, error) {
				saw.Add(1)
				return dsh.ResponseAccept{}, nil
			})
		}
		a := e.agent()
		followup(t, a, "u1", "go")
		await(t, streamed, "the first chunk")
		a.Cancel(dsh.CancelUser{}, false)
		wait(t, a)
		chunks, msgs := records[dsh.AssistantChunkLogged](t, e.log), records[dsh.AssistantMessageLogged](t, e.log)
		if listening {
			if len(chunks) != 0 || len(msgs) != 0 || saw.Load() != 0 {
				t.Errorf("listening: %d chunks, %d messages logged, listener ran %d times", len(chunks), len(msgs), saw.Load())
			}
		} else if len(chunks) != 1 || len(msgs) != 1 || msgs[0].Interrupted == nil {
			t.Errorf("not listening: %d chunks, messages %s", len(chunks), jsonOf(t, msgs))
		}
	}
}

// modelFunc is a model made of a func.
type modelFunc func(ctx context.Context, req llm.Request) iter.Seq2[dsh.AssistantChunk, error]

func (f modelFunc) Stream(ctx context.Context, req llm.Request) iter.Seq2[dsh.AssistantChunk, error] {
	return f(ctx, req)
}

// TestModelAnswerIsReplayedAsHistory: a synthetic answer is part of the history the next
// request is derived from, like any assistant message, and resume reads it from the log.
func TestModelAnswerIsReplayedAsHistory(t *testing.T) {
	e := newEnv(t, text("second"))
	e.reg.Plugin("cache").OnRequest(func(ctx context.Context, p *dsh.RequestPayload) (dsh.RequestDecision, error) {
		if p.Turn == 1 {
			return dsh.RequestAnswer{Content: []dsh.ContentBlock{dsh.TextBlock{Text: "cached"}}}, nil
		}
		return dsh.RequestPass{}, nil
	})
	a := e.agent()
	followup(t, a, "u1", "one")
	wait(t, a)
	followup(t, a, "u2", "two")
	wait(t, a)
	reqs := e.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	diff(t, "history", []string{"user:one", "assistant:cached", "user:two"}, texts(reqs[0]))
	msgs := records[dsh.AssistantMessageLogged](t, e.log)
	if src, ok := msgs[0].Source.(dsh.ResponseByListener); !ok || src.Listener != "cache#1" || msgs[1].Source != nil {
		t.Errorf("sources %s", jsonOf(t, msgs))
	}
}

// TestModelPassIgnoresInPlaceChanges: a listener that changes its payload's message list in
// place and passes changes nothing sent, now or in a later request (the history the runtime
// derives from the log is not the payload's list).
func TestModelPassIgnoresInPlaceChanges(t *testing.T) {
	e := newEnv(t, text("ok"), text("ok again"))
	e.reg.Plugin("vandal").OnRequest(func(ctx context.Context, p *dsh.RequestPayload) (dsh.RequestDecision, error) {
		p.Request.Messages[0] = dsh.ModelMessage{Role: dsh.ModelRoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "vandalized"}}} //dshvet:allow payloadwrite the test checks that writing the payload changes nothing
		p.Request.Tools = nil                                                                                                             //dshvet:allow payloadwrite the test checks that writing the payload changes nothing
		return dsh.RequestPass{}, nil
	})
	a := e.agent()
	followup(t, a, "u1", "one")
	wait(t, a)
	followup(t, a, "u2", "two")
	wait(t, a)
	reqs := e.requests()
	diff(t, "first", []string{"user:one"}, texts(reqs[0]))
	diff(t, "second", []string{"user:one", "assistant:ok", "user:two"}, texts(reqs[1]))
	if n := len(records[dsh.RequestRewritten](t, e.log)); n != 0 {
		t.Errorf("%d request/rewritten records for passes", n)
	}
}

// TestModelDecisionPointerBlocks: an agent/request rewrite or answer whose content holds
// pointer variants is applied as the same decision in value forms (the registry makes
// them values): the same requests, records and turn ends. A nil pointer block fails the
// decision as a nil block does.
func TestModelDecisionPointerBlocks(t *testing.T) {
	type decide func(p *dsh.RequestPayload) dsh.RequestDecision
	rewrite := func(extra dsh.ContentBlock) decide {
		return func(p *dsh.RequestPayload) dsh.RequestDecision {
			msgs := slices.Clone(p.Request.Messages)
			last := msgs[len(msgs)-1]
			last.Content = append(slices.Clone(last.Content), extra)
			msgs[len(msgs)-1] = last
			return dsh.RequestRewrite{Messages: msgs}
		}
	}
	answer := func(blocks ...dsh.ContentBlock) decide {
		return func(*dsh.RequestPayload) dsh.RequestDecision { return dsh.RequestAnswer{Content: blocks} }
	}
	// run returns what the turn sent and logged: the requests and the records of the
	// model calls, as JSON. The decision is the first request's; the others pass.
	run := func(t *testing.T, d decide) string {
		e := newEnv(t, text("ok"))
		e.register(okTool("echo", true))
		var decided atomic.Bool
		e.reg.Plugin("p").OnRequest(func(ctx context.Context, p *dsh.RequestPayload) (dsh.RequestDecision, error) {
			if decided.Swap(true) {
				return dsh.RequestPass{}, nil
			}
			return d(p), nil
		})
		a := e.agent()
		followup(t, a, "u1", "one")
		wait(t, a)
		return jsonOf(t, e.requests()) + "\n" + jsonOf(t, records[dsh.RequestRewritten](t, e.log)) + "\n" +
			jsonOf(t, records[dsh.AssistantMessageLogged](t, e.log)) + "\n" + strings.Join(reasons(t, e.log), ",")
	}
	for _, tc := range []struct {
		name         string
		value, point decide
	}{
		{"rewrite", rewrite(dsh.TextBlock{Text: "added"}), rewrite(&dsh.TextBlock{Text: "added"})},
		{"rewrite with a nil block", rewrite(nil), rewrite((*dsh.ImageBlock)(nil))},
		{"answer", answer(dsh.TextBlock{Text: "a"}, dsh.ReasoningBlock{Text: "r"}),
			answer(&dsh.TextBlock{Text: "a"}, &dsh.ReasoningBlock{Text: "r"})},
		{"answer that calls a tool", answer(dsh.ToolCallBlock{ID: "c", Name: "echo", Arguments: "{}"}),
			answer(&dsh.ToolCallBlock{ID: "c", Name: "echo", Arguments: "{}"})},
		{"answer with a nil block", answer(dsh.TextBlock{Text: "a"}, nil), answer(dsh.TextBlock{Text: "a"}, (*dsh.TextBlock)(nil))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, got := run(t, tc.value), run(t, tc.point)
			if got != want {
				t.Errorf("pointer variants\n got: %s\nwant: %s", got, want)
			}
			if strings.Contains(tc.name, "nil") && !strings.Contains(want, CodeModelRewriteInvalid) {
				t.Errorf("a nil block was not refused: %s", want)
			}
		})
	}
}
