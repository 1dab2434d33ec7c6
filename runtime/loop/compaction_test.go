package loop

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

// summarizingModel is a deterministic model for long sessions: it answers a summarizer
// request (the last message is the compaction directive) with a short summary, any other
// request with a short answer, reports the estimator's usage, and fails a request larger
// than its window with CONTEXT_WINDOW_EXCEEDED, as a provider would.
type summarizingModel struct {
	window int
	flat   bool // report a fixed usage instead of estimating the request (a model whose cost does not grow)

	mu        sync.Mutex
	record    bool
	digests   []string // sha256 of each request's JSON (summarizer requests included), when recording
	largest   int      // the largest request, in estimated tokens
	overflows int
	summaries int
	calls     int
}

func (m *summarizingModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[dsh.AssistantChunk, error] {
	return func(yield func(dsh.AssistantChunk, error) bool) {
		in := 1
		if !m.flat {
			in = llm.EstimateRequest(req)
		}
		last := ""
		if n := len(req.Messages); n > 0 {
			last = textOf(req.Messages[n-1].Content)
		}
		summarizer := strings.HasPrefix(last, summaryDirective)
		m.mu.Lock()
		m.calls++
		m.largest = max(m.largest, in)
		if m.window > 0 && in > m.window {
			m.overflows++
			m.mu.Unlock()
			yield(dsh.ChunkFinish{Reason: dsh.FinishReasonError, Error: &dsh.LLMFailure{Message: "too long", Code: llm.CodeContextWindowExceeded}}, nil)
			return
		}
		if m.record {
			data, err := json.Marshal(req)
			if err != nil {
				panic(err)
			}
			sum := sha256.Sum256(data)
			m.digests = append(m.digests, fmt.Sprintf("%x", sum[:8]))
		}
		var out string
		if summarizer {
			m.summaries++
			out = fmt.Sprintf("Summary of %d messages; the last said: %.40s", len(req.Messages)-1, textOf(req.Messages[max(len(req.Messages)-2, 0)].Content))
		} else {
			out = "answer to " + last
		}
		m.mu.Unlock()
		if !yield(dsh.ChunkTextDelta{Text: out}, nil) {
			return
		}
		yield(dsh.ChunkFinish{Reason: dsh.FinishReasonStop, Usage: &dsh.Usage{InputTokens: in, OutputTokens: llm.EstimateText(out)}}, nil)
	}
}

// longSession runs turns prompts (from first) through a, one turn each.
func longSession(t testing.TB, a *Agent, first, turns int) {
	t.Helper()
	for i := first; i < first+turns; i++ {
		followup(t, a, fmt.Sprintf("p%d", i), fmt.Sprintf("prompt number %d: please look at item %d", i, i*7))
		wait(t, a)
	}
}

// longEnv is an env over a summarizingModel with a window of window tokens (0: none, and
// compaction off).
func longEnv(t testing.TB, window int) (*env, *summarizingModel) {
	e := newEnv(t)
	m := &summarizingModel{window: window}
	e.model = m
	e.cfg.Compaction = CompactionConfig{ContextWindow: window, Disabled: window == 0}
	return e, m
}

// TestLongSessionStaysUnderTheWindow: 2,000 turns with a 1,000-token window stay under it
// by compacting (no request ever overflows), and a session restarted halfway sends
// byte-identical requests to the one that ran straight through.
func TestLongSessionStaysUnderTheWindow(t *testing.T) {
	const window, turns = 1000, 2000
	ref, rm := longEnv(t, window)
	ra := ref.agent()
	longSession(t, ra, 0, turns/2)
	rm.mu.Lock()
	rm.record = true
	rm.mu.Unlock()
	longSession(t, ra, turns/2, turns/2)

	if rm.overflows != 0 || rm.largest > window {
		t.Fatalf("%d requests overflowed; the largest held %d tokens (window %d)", rm.overflows, rm.largest, window)
	}
	ends := records[dsh.CompactionEnd](t, ref.log)
	if len(ends) < 20 {
		t.Fatalf("%d compactions in %d turns, want many", len(ends), turns)
	}
	for _, e := range ends {
		if e.Outcome != dsh.CompactionOutcomeCommitted || e.TokensAfter >= e.TokensBefore {
			t.Fatalf("compaction/end %+v: want committed and smaller", e)
		}
	}
	if n := len(records[dsh.TurnEnd](t, ref.log)); n != turns {
		t.Fatalf("%d turns, want %d", n, turns)
	}
	t.Logf("%d turns, %d compactions, %d model calls, largest request %d tokens", turns, len(ends), rm.calls, rm.largest)

	// The same session, restarted after turn 1,000.
	e, _ := longEnv(t, window)
	a := e.agent()
	longSession(t, a, 0, turns/2)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.log.Close(); err != nil {
		t.Fatal(err)
	}
	rest := &summarizingModel{window: window, record: true}
	e.log, e.model = e.openLog(), rest
	b, err := Resume(context.Background(), e.config())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	longSession(t, b, turns/2, turns/2)
	if len(rest.digests) != len(rm.digests) || !slices.Equal(rest.digests, rm.digests) {
		i := 0
		for i < min(len(rest.digests), len(rm.digests)) && rest.digests[i] == rm.digests[i] {
			i++
		}
		t.Fatalf("after resume the requests differ from request %d on (%d vs %d requests)", i, len(rest.digests), len(rm.digests))
	}
}

// BenchmarkLongSession measures the throughput of the 2,000-turn session with compaction
// on (a 1,000-token window) and off (no window: the history grows to 4,000 messages). The
// test model estimates every request it gets, as a provider's cost grows with the request;
// compaction-off-flat-model has it report a fixed usage instead, which leaves the loop's
// own cost of a growing session.
func BenchmarkLongSession(b *testing.B) {
	for _, c := range []struct {
		name   string
		window int
		flat   bool
	}{{"compaction-on", 1000, false}, {"compaction-off", 0, false}, {"compaction-off-flat-model", 0, true}} {
		b.Run(c.name, func(b *testing.B) {
			const turns = 2000
			for b.Loop() {
				e, m := longEnv(b, c.window)
				m.flat = c.flat
				a := e.agent()
				longSession(b, a, 0, turns)
				_ = a.Close()
			}
			b.ReportMetric(float64(turns*b.N)/b.Elapsed().Seconds(), "turns/s")
		})
	}
}

// compactEnv is an env whose scripted model has a window of window tokens, which the
// agent knows.
func compactEnv(t testing.TB, window int, responses ...llm.ScriptedResponse) *env {
	e := newEnv(t, responses...)
	e.script.WithContextWindow(window)
	e.cfg.Compaction = CompactionConfig{ContextWindow: window}
	return e
}

// filler is a text of about n tokens.
func filler(word string, n int) string {
	return strings.TrimSpace(strings.Repeat(word+" ", n*4/(len(word)+1)))
}

// compactionTypes are the compaction events.
var compactionTypes = []string{dsh.CompactionStartType, dsh.CompactionSummaryType, dsh.CompactionCheckpointType,
	dsh.CompactionEndType, dsh.CompactionSkippedType, dsh.CompactionListenerFailedType}

// TestPressureCompactsBeforeTheClaim: over the threshold, the boundary compacts — start <
// summary < checkpoint < end, post-compact committed, then session-start{compact} — and
// the next request is [checkpoint, retained tail, prompt].
func TestPressureCompactsBeforeTheClaim(t *testing.T) {
	big := filler("alpha", 250)
	e := compactEnv(t, 1000, text(big), text(big), text(big), text("SUMMARY-1"), text("after"))
	var trace recorder
	e.reg.Plugin("watch").OnPostCompact(func(ctx context.Context, p *dsh.PostCompactPayload) (dsh.PostCompactDecision, error) {
		trace.add(fmt.Sprintf("post %s %s gen=%d", p.Trigger, p.Outcome, p.ReplaceGeneration))
		return dsh.PostCompactAccept{}, nil
	})
	e.reg.Plugin("watch").OnSessionStart(func(ctx context.Context, p *dsh.SessionStartPayload) error {
		if p.Source == dsh.SessionStartSourceCompact {
			trace.add("session-start compact " + strings.TrimPrefix(*p.CompactionID, "cmp_")[:0] + fmt.Sprint(*p.Turn))
		}
		return nil
	})
	a := e.agent()
	for i := range 4 {
		followup(t, a, fmt.Sprintf("p%d", i), fmt.Sprintf("prompt %d %s", i, filler("beta", 40)))
		wait(t, a)
	}
	got := typesOf(e.log, compactionTypes...)
	want := []string{dsh.CompactionStartType, dsh.CompactionSummaryType, dsh.CompactionCheckpointType, dsh.CompactionEndType}
	if !slices.Equal(got, want) {
		t.Fatalf("compaction events %v, want %v", got, want)
	}
	if d := cmpList(trace.list(), []string{"post pressure committed gen=1", "session-start compact 4"}); d != "" {
		t.Fatal(d)
	}
	reqs := e.requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests, want 5", len(reqs))
	}
	sum := texts(reqs[3])
	if last := sum[len(sum)-1]; !strings.HasPrefix(last, "user:"+summaryDirective) {
		t.Fatalf("the summarizer request ends with %q", last)
	}
	if !slices.Equal(sum[:len(sum)-1], texts(reqs[2])[:len(sum)-1]) {
		t.Fatalf("the summarizer request does not replay the prefix:\n%v\n%v", sum, texts(reqs[2]))
	}
	next := texts(reqs[4])
	if !strings.HasPrefix(next[0], "user:"+checkpointPreamble+"SUMMARY-1") || !strings.HasPrefix(next[len(next)-1], "user:prompt 3") {
		t.Fatalf("the request after compaction is %v", next)
	}
	if len(next) >= len(texts(reqs[2]))+2 {
		t.Fatalf("the request after compaction (%d messages) did not shrink", len(next))
	}
	// The checkpoint is a user/message-like surface event with the checkpoint source.
	cp := records[dsh.CompactionCheckpoint](t, e.log)[0]
	if src, ok := cp.Message.Source.(dsh.SourcePlugin); !ok || src.Plugin != CheckpointPlugin || src.Form != dsh.PluginFormCheckpoint {
		t.Fatalf("checkpoint source %#v", cp.Message.Source)
	}
}

// cmpList returns a diff of two string lists, or "".
func cmpList(got, want []string) string {
	if slices.Equal(got, want) {
		return ""
	}
	return fmt.Sprintf("got  %q\nwant %q", got, want)
}

// TestBelowThresholdNothingHappens: below the threshold no listener runs and no event is
// written.
func TestBelowThresholdNothingHappens(t *testing.T) {
	e := compactEnv(t, 100000, text("one"), text("two"))
	ran := false
	e.reg.OnPreCompact(func(ctx context.Context, p *dsh.PreCompactPayload) (dsh.PreCompactDecision, error) {
		ran = true
		return dsh.PreCompactProceed{}, nil
	})
	a := e.agent()
	followup(t, a, "p1", "hello")
	wait(t, a)
	followup(t, a, "p2", "again")
	wait(t, a)
	if ran || len(typesOf(e.log, compactionTypes...)) != 0 {
		t.Fatalf("pre-compact ran %v; events %v", ran, typesOf(e.log, compactionTypes...))
	}
}

// pressureSetup runs three big turns so that the fourth prompt's boundary is over the
// threshold; the model then answers rest.
func pressureSetup(t *testing.T, rest ...llm.ScriptedResponse) *env {
	big := filler("alpha", 250)
	return compactEnv(t, 1000, append([]llm.ScriptedResponse{text(big), text(big), text(big)}, rest...)...)
}

// fourTurns runs the four prompts of pressureSetup.
func fourTurns(t *testing.T, a *Agent) {
	for i := range 4 {
		followup(t, a, fmt.Sprintf("p%d", i), fmt.Sprintf("prompt %d %s", i, filler("beta", 40)))
		wait(t, a)
	}
}

// TestPreCompactFailuresCountAsProceed: a failing, a panicking and an overrunning
// listener are recorded and count as Proceed; the Proceed instructions of another reach
// the directive, and compaction/start names who gave them.
func TestPreCompactFailuresCountAsProceed(t *testing.T) {
	e := pressureSetup(t, text("SUMMARY"), text("after"))
	e.cfg.Compaction.ListenerTimeout = 30 * time.Millisecond
	release := make(chan struct{})
	defer close(release)
	e.reg.Plugin("failing").OnPreCompact(func(ctx context.Context, p *dsh.PreCompactPayload) (dsh.PreCompactDecision, error) {
		return nil, errors.New("boom")
	})
	e.reg.Plugin("panicking").OnPreCompact(func(ctx context.Context, p *dsh.PreCompactPayload) (dsh.PreCompactDecision, error) {
		panic("bang")
	})
	e.reg.Plugin("stuck").OnPreCompact(func(ctx context.Context, p *dsh.PreCompactPayload) (dsh.PreCompactDecision, error) {
		<-release
		return dsh.PreCompactDefer{Reason: "too late"}, nil
	})
	e.reg.Plugin("keeper").OnPreCompact(func(ctx context.Context, p *dsh.PreCompactPayload) (dsh.PreCompactDecision, error) {
		return dsh.PreCompactProceed{Instructions: []string{"keep codename HERON"}}, nil
	})
	a := e.agent()
	fourTurns(t, a)
	fails := records[dsh.CompactionListenerFailed](t, e.log)
	var got []string
	for _, f := range fails {
		got = append(got, f.Listener+":"+f.Error)
	}
	if d := cmpList(got, []string{"failing#1:boom", "panicking#1:panic: bang", "stuck#1:overran its bound of 30 ms"}); d != "" {
		t.Fatal(d)
	}
	start := records[dsh.CompactionStart](t, e.log)
	if len(start) != 1 || len(start[0].Instructions) != 1 || start[0].Instructions[0].By != "keeper#1" {
		t.Fatalf("compaction/start %+v", start)
	}
	reqs := e.requests()
	sum := texts(reqs[3])
	if last := sum[len(sum)-1]; !strings.Contains(last, "keep codename HERON") {
		t.Fatalf("the directive lacks the instruction: %q", last)
	}
	if ends := records[dsh.CompactionEnd](t, e.log); ends[0].Outcome != dsh.CompactionOutcomeCommitted {
		t.Fatalf("end %+v", ends[0])
	}
}

// TestReplaceThatDoesNotShrinkIsRefused: a Replace summary larger than the range ends the
// attempt failed, the history unchanged, post-compact failed and its Append ignored.
func TestReplaceThatDoesNotShrinkIsRefused(t *testing.T) {
	e := pressureSetup(t, text("after"))
	e.reg.Plugin("x").OnPreCompact(func(ctx context.Context, p *dsh.PreCompactPayload) (dsh.PreCompactDecision, error) {
		return dsh.PreCompactReplace{Summary: filler("huge", p.ShadowedTokens+10)}, nil
	})
	var outcome string
	e.reg.Plugin("y").OnPostCompact(func(ctx context.Context, p *dsh.PostCompactPayload) (dsh.PostCompactDecision, error) {
		outcome = string(p.Outcome)
		return dsh.PostCompactAppend{Contexts: []dsh.UserMessage{pluginMsg("", "IGNORED-CONTEXT")}}, nil
	})
	a := e.agent()
	fourTurns(t, a)
	ends := records[dsh.CompactionEnd](t, e.log)
	if len(ends) != 1 || ends[0].Outcome != dsh.CompactionOutcomeFailed || ends[0].Error == nil || !strings.Contains(*ends[0].Error, "does not shrink") {
		t.Fatalf("end %+v", ends)
	}
	if outcome != "failed" || len(records[dsh.CompactionCheckpoint](t, e.log)) != 0 {
		t.Fatalf("post-compact outcome %q", outcome)
	}
	reqs := e.requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests (a Replace makes no model call)", len(reqs))
	}
	last := texts(reqs[3])
	if len(last) != 7 || strings.Contains(strings.Join(last, "|"), "IGNORED-CONTEXT") {
		t.Fatalf("the history changed: %v", last)
	}
}

// TestSummarizerFailureLeavesHistory: an error finish of the summarizer is recorded in
// compaction/end and the step runs uncompacted.
func TestSummarizerFailureLeavesHistory(t *testing.T) {
	e := pressureSetup(t, llm.ScriptedResponse{Error: &llm.ScriptedError{Message: "overloaded", Code: "overloaded"}}, text("after"))
	a := e.agent()
	fourTurns(t, a)
	ends := records[dsh.CompactionEnd](t, e.log)
	if len(ends) != 1 || ends[0].Outcome != dsh.CompactionOutcomeFailed || !strings.Contains(*ends[0].Error, "overloaded") {
		t.Fatalf("end %+v", ends)
	}
	if got := reasons(t, e.log); got[len(got)-1] != `{"kind":"completed"}` {
		t.Fatalf("reasons %v", got)
	}
	if last := texts(e.requests()[4]); len(last) != 7 {
		t.Fatalf("the history changed: %v", last)
	}
}

// TestOverflowDeferEndsWithTheOriginalError: an unconditional Defer on overflow ends the
// turn with the provider's CONTEXT_WINDOW_EXCEEDED, without retrying; pre-compact ran once.
func TestOverflowDeferEndsWithTheOriginalError(t *testing.T) {
	e := newEnv(t, text(filler("alpha", 300)), text("never"))
	e.script.WithContextWindow(400)
	e.cfg.Compaction = CompactionConfig{} // no window known: only overflow can compact
	runs := 0
	e.reg.Plugin("blocker").OnPreCompact(func(ctx context.Context, p *dsh.PreCompactPayload) (dsh.PreCompactDecision, error) {
		runs++
		if p.Trigger != dsh.CompactionTriggerOverflow || p.Origin != dsh.CompactionOriginAuto {
			t.Errorf("trigger %s origin %s", p.Trigger, p.Origin)
		}
		return dsh.PreCompactDefer{Reason: "not now"}, nil
	})
	a := e.agent()
	followup(t, a, "p1", "first")
	wait(t, a)
	followup(t, a, "p2", filler("gamma", 150))
	wait(t, a)
	got := reasons(t, e.log)
	if runs != 1 || !strings.Contains(got[1], llm.CodeContextWindowExceeded) {
		t.Fatalf("pre-compact ran %d times; reasons %v", runs, got)
	}
	if d := cmpList(typesOf(e.log, compactionTypes...), []string{dsh.CompactionSkippedType}); d != "" {
		t.Fatal(d)
	}
}

// TestOverflowCompactsAndRetries: without a known window, a request failing with
// CONTEXT_WINDOW_EXCEEDED compacts everything but the newest message and is sent again.
func TestOverflowCompactsAndRetries(t *testing.T) {
	e := newEnv(t, text(filler("alpha", 300)), text("SUMMARY"), text("fits now"))
	e.script.WithContextWindow(500)
	a := e.agent()
	followup(t, a, "p1", "first")
	wait(t, a)
	followup(t, a, "p2", filler("gamma", 250))
	wait(t, a)
	if got := reasons(t, e.log); got[1] != `{"kind":"completed"}` {
		t.Fatalf("reasons %v", got)
	}
	start := records[dsh.CompactionStart](t, e.log)
	if len(start) != 1 || start[0].Trigger != dsh.CompactionTriggerOverflow {
		t.Fatalf("start %+v", start)
	}
	reqs := e.requests()
	last := texts(reqs[len(reqs)-1])
	if len(last) != 2 || !strings.Contains(last[0], "SUMMARY") || !strings.HasPrefix(last[1], "user:gamma") {
		t.Fatalf("the retried request is %v", last)
	}
}

// TestDeferCap: three consecutive deferred pressure attempts are skipped; the fourth is
// overridden and runs.
func TestDeferCap(t *testing.T) {
	big := filler("alpha", 270)
	e := compactEnv(t, 1000, text(big), text(big), text(big), text("a4"), text("a5"), text("a6"), text("SUMMARY"), text("a7"))
	e.reg.Plugin("blocker").OnPreCompact(func(ctx context.Context, p *dsh.PreCompactPayload) (dsh.PreCompactDecision, error) {
		return dsh.PreCompactDefer{Reason: "busy"}, nil
	})
	a := e.agent()
	for i := range 7 {
		followup(t, a, fmt.Sprintf("p%d", i), fmt.Sprintf("prompt %d", i))
		wait(t, a)
	}
	skips := records[dsh.CompactionSkipped](t, e.log)
	var got []string
	for _, s := range skips {
		got = append(got, fmt.Sprintf("%d %v", s.Consecutive, s.Overridden != nil && *s.Overridden))
	}
	if d := cmpList(got, []string{"1 false", "2 false", "3 false", "4 true"}); d != "" {
		t.Fatal(d)
	}
	if ends := records[dsh.CompactionEnd](t, e.log); len(ends) != 1 || ends[0].Outcome != dsh.CompactionOutcomeCommitted {
		t.Fatalf("ends %+v", ends)
	}
}

// TestFoldDeferWinsOverProceed: A defers, B proceeds with instructions: the Defer wins.
func TestFoldDeferWinsOverProceed(t *testing.T) {
	e := pressureSetup(t, text("after"))
	e.reg.Plugin("A").OnPreCompact(func(ctx context.Context, p *dsh.PreCompactPayload) (dsh.PreCompactDecision, error) {
		return dsh.PreCompactDefer{Reason: "A says no"}, nil
	})
	e.reg.Plugin("B").OnPreCompact(func(ctx context.Context, p *dsh.PreCompactPayload) (dsh.PreCompactDecision, error) {
		return dsh.PreCompactProceed{Instructions: []string{"x"}}, nil
	})
	a := e.agent()
	fourTurns(t, a)
	skips := records[dsh.CompactionSkipped](t, e.log)
	if len(skips) != 1 || skips[0].By != "A#1" || skips[0].Reason != "A says no" || len(records[dsh.CompactionStart](t, e.log)) != 0 {
		t.Fatalf("skips %+v", skips)
	}
}

// TestManualCompact: Compact runs while idle, with the user's instructions; a prompt sent
// meanwhile waits for it; post-compact contexts enter with that prompt; the hook owner
// has no turn.
func TestManualCompact(t *testing.T) {
	e := newEnv(t, text(filler("one", 60)), text("two"), text("SUMMARY"), text("three"))
	gate := make(chan struct{})
	var a *Agent
	e.reg.Plugin("saver").OnPreCompact(func(ctx context.Context, p *dsh.PreCompactPayload) (dsh.PreCompactDecision, error) {
		if p.Trigger != dsh.CompactionTriggerManual || p.Origin != dsh.CompactionOriginManual || p.Turn != nil ||
			p.UserInstructions == nil || *p.UserInstructions != "focus on the API" {
			t.Errorf("payload %+v", p)
		}
		// A prompt sent during the compaction is queued until it is done.
		if err := a.Followup(context.Background(), userMsg("p3", "third")); err != nil {
			t.Error(err)
		}
		if a.Status() != dsh.AgentStatusIdle {
			t.Error("maintenance reports running")
		}
		close(gate)
		return dsh.PreCompactProceed{}, nil
	})
	e.reg.Plugin("restorer").OnPostCompact(func(ctx context.Context, p *dsh.PostCompactPayload) (dsh.PostCompactDecision, error) {
		return dsh.PostCompactAppend{Contexts: []dsh.UserMessage{{Content: []dsh.ContentBlock{dsh.TextBlock{Text: "RESTORED"}}}}}, nil
	})
	a = e.agent()
	followup(t, a, "p1", "first")
	wait(t, a)
	followup(t, a, "p2", "second")
	wait(t, a)
	res, err := a.Compact(context.Background(), "focus on the API")
	if err != nil {
		t.Fatal(err)
	}
	<-gate
	wait(t, a)
	if res.Outcome != dsh.CompactionOutcomeCommitted || res.Summary != "SUMMARY" {
		t.Fatalf("result %+v", res)
	}
	reqs := e.requests()
	if !strings.Contains(strings.Join(texts(reqs[2]), "|"), "focus on the API") {
		t.Fatalf("the summarizer request lacks the user's instructions: %v", texts(reqs[2]))
	}
	last := texts(reqs[3])
	want := []string{"user:" + checkpointPreamble + "SUMMARY", "assistant:two", "user:RESTORED", "user:third"}
	if d := cmpList(last, want); d != "" {
		t.Fatal(d)
	}
	// The restored context's source is the plugin.
	for _, u := range records[dsh.UserMessageLogged](t, e.log) {
		if textOf(u.Message.Content) == "RESTORED" {
			if s, ok := u.Message.Source.(dsh.SourcePlugin); !ok || s.Plugin != "restorer" {
				t.Fatalf("source %#v", u.Message.Source)
			}
		}
	}
}

// TestManualCompactDeferred: a Defer fails the command naming the listener, leaves no
// bracket, and a busy agent refuses to compact.
func TestManualCompactDeferred(t *testing.T) {
	e := newEnv(t, text("one"), text("two"))
	e.reg.Plugin("guard").OnPreCompact(func(ctx context.Context, p *dsh.PreCompactPayload) (dsh.PreCompactDecision, error) {
		return dsh.PreCompactDefer{Reason: "saving state"}, nil
	})
	a := e.agent()
	followup(t, a, "p1", "first")
	wait(t, a)
	followup(t, a, "p2", "second")
	wait(t, a)
	_, err := a.Compact(context.Background(), "")
	var de *DeferredError
	if !errors.As(err, &de) || de.Listener != "guard#1" || !strings.Contains(err.Error(), "guard#1") {
		t.Fatalf("err = %v", err)
	}
	if d := cmpList(typesOf(e.log, compactionTypes...), []string{dsh.CompactionSkippedType}); d != "" {
		t.Fatal(d)
	}
	// Nothing to compact in a fresh agent.
	f := newEnv(t)
	if _, err := f.agent().Compact(context.Background(), ""); !errors.Is(err, ErrNothingToCompact) {
		t.Fatalf("err = %v", err)
	}
}

// TestStaleAttemptAfterCrash: a compaction/start left without its end by a crash is stale
// on resume: no listener runs for it, the history is unchanged, and the next attempt works.
func TestStaleAttemptAfterCrash(t *testing.T) {
	e := newEnv(t, text(filler("one", 60)), text("two"))
	var runs []string
	e.reg.OnPreCompact(func(ctx context.Context, p *dsh.PreCompactPayload) (dsh.PreCompactDecision, error) {
		runs = append(runs, "pre "+string(p.Trigger))
		return dsh.PreCompactProceed{}, nil
	})
	e.reg.OnPostCompact(func(ctx context.Context, p *dsh.PostCompactPayload) (dsh.PostCompactDecision, error) {
		runs = append(runs, "post "+string(p.Outcome))
		return dsh.PostCompactAccept{}, nil
	})
	a := e.agent()
	followup(t, a, "p1", "first")
	wait(t, a)
	followup(t, a, "p2", "second")
	wait(t, a)
	// The crash: compaction/start is durable, nothing after it.
	if _, err := e.log.Append(context.Background(), dsh.CompactionStart{CompactionID: "cmp_torn", Trigger: dsh.CompactionTriggerManual,
		Origin: dsh.CompactionOriginManual, Range: dsh.CompactionRange{Start: 0, End: 2, ShadowedSeqs: []int{}}}); err != nil {
		t.Fatal(err)
	}
	_ = a.Close()
	_ = e.log.Close()
	e.log, e.model = e.openLog(), llm.NewScripted(text("SUMMARY"), text("three")).RecordRequests()
	b, err := Resume(context.Background(), e.config())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if len(runs) != 0 {
		t.Fatalf("listeners ran for the stale attempt: %v", runs)
	}
	if _, err := b.Compact(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	followup(t, b, "p3", "third")
	wait(t, b)
	if d := cmpList(runs, []string{"pre manual", "post committed"}); d != "" {
		t.Fatal(d)
	}
	reqs := e.model.(*llm.Scripted).Requests()
	if d := cmpList(texts(reqs[1]), []string{"user:" + checkpointPreamble + "SUMMARY", "assistant:two", "user:third"}); d != "" {
		t.Fatal(d)
	}
}

// TestResumeAfterCompactionsSendsTheSameRequests: a session compacted several times
// resumes with byte-identical requests (the checkpoint is folded from the log).
func TestResumeAfterCompactionsSendsTheSameRequests(t *testing.T) {
	const window = 600
	ref, rm := longEnv(t, window)
	ra := ref.agent()
	longSession(t, ra, 0, 60)
	if n := len(records[dsh.CompactionEnd](t, ref.log)); n < 3 {
		t.Fatalf("%d compactions, want several", n)
	}
	rm.record = true
	longSession(t, ra, 60, 5)

	e, _ := longEnv(t, window)
	a := e.agent()
	longSession(t, a, 0, 60)
	_ = a.Close()
	_ = e.log.Close()
	rest := &summarizingModel{window: window, record: true}
	e.log, e.model = e.openLog(), rest
	b, err := Resume(context.Background(), e.config())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	longSession(t, b, 60, 5)
	if d := cmpList(rest.digests, rm.digests); d != "" {
		t.Fatal(d)
	}
}

// TestPressureSkipsATinyRange: when what presses is the system prompt, not the history,
// no attempt is made (a checkpoint could not shrink the few messages before the newest).
func TestPressureSkipsATinyRange(t *testing.T) {
	e := compactEnv(t, 1000, text("one"), text("two"), text("three"))
	e.cfg.System = filler("rules", 900)
	ran := 0
	e.reg.OnPreCompact(func(ctx context.Context, p *dsh.PreCompactPayload) (dsh.PreCompactDecision, error) {
		ran++
		return dsh.PreCompactProceed{}, nil
	})
	a := e.agent()
	for i := range 3 {
		followup(t, a, fmt.Sprintf("p%d", i), "hi")
		wait(t, a)
	}
	if ran != 0 || len(typesOf(e.log, compactionTypes...)) != 0 || len(e.requests()) != 3 {
		t.Fatalf("pre-compact ran %d times; events %v; %d requests", ran, typesOf(e.log, compactionTypes...), len(e.requests()))
	}
}

// TestManualDeferDoesNotCountTowardsTheCap: a deferred /compact is not a deferred pressure
// attempt: the pressure count stays as the log folds it on resume.
func TestManualDeferDoesNotCountTowardsTheCap(t *testing.T) {
	e := newEnv(t, text(filler("one", 60)), text("two"))
	e.reg.Plugin("guard").OnPreCompact(func(ctx context.Context, p *dsh.PreCompactPayload) (dsh.PreCompactDecision, error) {
		if p.ConsecutiveDefers != 0 {
			t.Errorf("consecutive defers %d before a pressure attempt ever ran", p.ConsecutiveDefers)
		}
		return dsh.PreCompactDefer{Reason: "no"}, nil
	})
	a := e.agent()
	followup(t, a, "p1", "first")
	wait(t, a)
	followup(t, a, "p2", "second")
	wait(t, a)
	for range 2 {
		if _, err := a.Compact(context.Background(), ""); err == nil {
			t.Fatal("a deferred compaction succeeded")
		}
	}
	if a.req.defers != 0 {
		t.Fatalf("defers = %d after two manual defers", a.req.defers)
	}
}

// TestEmptyReplaceIsRefused: a Replace with an empty summary fails the attempt.
func TestEmptyReplaceIsRefused(t *testing.T) {
	e := pressureSetup(t, text("after"))
	e.reg.Plugin("x").OnPreCompact(func(ctx context.Context, p *dsh.PreCompactPayload) (dsh.PreCompactDecision, error) {
		return dsh.PreCompactReplace{Summary: "  "}, nil
	})
	a := e.agent()
	fourTurns(t, a)
	ends := records[dsh.CompactionEnd](t, e.log)
	if len(ends) != 1 || ends[0].Outcome != dsh.CompactionOutcomeFailed || !strings.Contains(*ends[0].Error, "empty") {
		t.Fatalf("ends %+v", ends)
	}
}

// msgs is a history of user messages with the texts.
func msgs(texts ...string) []llm.Message {
	out := make([]llm.Message, len(texts))
	for i, s := range texts {
		out[i] = llm.Message{Role: llm.RoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: s}}}
	}
	return out
}

// TestMeasureUsageAndEstimate: measure is the provider's usage plus the estimate of the
// messages appended since it applied (usageAt from 0 to len(history) inclusive), else the
// prefix plus the estimate of the whole history (no usage, or a usage position past the
// history); the pending messages' estimate is added either way.
func TestMeasureUsageAndEstimate(t *testing.T) {
	h := msgs(filler("one", 40), filler("two", 50), filler("three", 60))
	pending := []dsh.UserMessage{{Content: []dsh.ContentBlock{dsh.TextBlock{Text: filler("four", 30)}}}}
	pend := pendingTokens(pending)
	if pend <= 0 {
		t.Fatalf("pendingTokens = %d", pend)
	}
	const prefix, usage = 100, 5000
	whole := prefix + llm.EstimateMessages(h)
	for _, c := range []struct {
		usageAt, want int
	}{
		{-1, whole},
		{0, usage + llm.EstimateMessages(h)},
		{1, usage + llm.EstimateMessages(h[1:])},
		{3, usage},
		{4, whole},
	} {
		t.Run(fmt.Sprint(c.usageAt), func(t *testing.T) {
			var a Agent
			a.req.usage, a.req.usageAt = usage, c.usageAt
			if got := a.measure(prefix, h, nil); got != c.want {
				t.Errorf("measure = %d, want %d", got, c.want)
			}
			if got := a.measure(prefix, h, pending); got != c.want+pend {
				t.Errorf("measure with pending = %d, want %d", got, c.want+pend)
			}
		})
	}
}

// TestSelectCut: selectCut keeps the newest unit (an assistant message with its tool
// results, or one message), grows the retained tail backwards while it fits the budget
// (a tail exactly at the budget fits), never starts the tail at a tool result, never
// shadows nothing but the previous checkpoint, and returns 0 when nothing can be shadowed.
func TestSelectCut(t *testing.T) {
	u := func(s string) llm.Message {
		return llm.Message{Role: llm.RoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: s}}}
	}
	call := func(id string) llm.Message {
		return llm.Message{Role: llm.RoleAssistant, Content: []dsh.ContentBlock{dsh.ToolCallBlock{ID: id, Name: "echo", Arguments: "{}"}}}
	}
	result := func(id string) llm.Message {
		return llm.Message{Role: llm.RoleUser, Content: []dsh.ContentBlock{dsh.ToolResultBlock{ToolCallID: id,
			Content: []dsh.ContentBlock{dsh.TextBlock{Text: "r"}}}}}
	}
	cp := llm.Message{Role: llm.RoleUser, Content: checkpointMessage("s").Content,
		Source: dsh.SourcePlugin{Plugin: CheckpointPlugin, Form: dsh.PluginFormCheckpoint}}
	five := msgs("m0", "m1", "m2", "m3", "m4")
	e := llm.EstimateMessage(five[0]) // every message of five costs e
	withTools := []llm.Message{u("m0"), call("a"), result("a"), u("m3"), call("b"), result("b"), result("b2")}
	for _, c := range []struct {
		name    string
		history []llm.Message
		budget  int
		want    int
	}{
		{"empty", nil, -1, 0},
		{"one message", msgs("m0"), -1, 0},
		{"two messages", msgs("m0", "m1"), -1, 1},
		{"only the checkpoint before the newest", []llm.Message{cp, u("m1")}, -1, 0},
		{"the checkpoint and one more", []llm.Message{cp, u("m1"), u("m2")}, -1, 2},
		{"newest unit with its results", withTools, -1, 4},
		{"only results after the first message", []llm.Message{u("m0"), call("a"), result("a")}, -1, 1},
		{"budget 0 keeps the newest", five, 0, 4},
		{"tail of two fits", five, 2 * e, 3},
		{"tail of three fits exactly", five, 3 * e, 2},
		{"tail just under three", five, 3*e - 1, 3},
		{"everything fits: the first message still goes", five, 100 * e, 1},
		{"a tail does not start at a tool result", withTools, llm.EstimateMessages(withTools[2:]), 3},
		{"a tail may start at the call", withTools, llm.EstimateMessages(withTools[1:]), 1},
	} {
		if got := selectCut(c.history, c.budget); got != c.want {
			t.Errorf("%s: selectCut = %d, want %d", c.name, got, c.want)
		}
	}
}

// TestCompactUsesTheCallersContext: Compact runs the attempt under the caller's context
// (its values reach the compaction listeners), not a fresh one.
func TestCompactUsesTheCallersContext(t *testing.T) {
	e := newEnv(t, text(filler("one", 60)), text("two"), text("SUMMARY"))
	var got any
	e.reg.Plugin("p").OnPreCompact(func(ctx context.Context, p *dsh.PreCompactPayload) (dsh.PreCompactDecision, error) {
		got = ctx.Value(ctxKey{})
		return dsh.PreCompactProceed{}, nil
	})
	a := e.agent()
	followup(t, a, "p1", "first")
	wait(t, a)
	followup(t, a, "p2", "second")
	wait(t, a)
	if _, err := a.Compact(context.WithValue(context.Background(), ctxKey{}, "mine"), ""); err != nil {
		t.Fatal(err)
	}
	if got != "mine" {
		t.Fatalf("the pre-compact listener's context holds %v", got)
	}
}

// TestResumedContextSources: the resumed context's tokens are the provider's usage when
// one applies (usageAt 0 included), else the last checkpoint's projected size (not
// measured), else the estimate of the history; a log without a response gives {}.
func TestResumedContextSources(t *testing.T) {
	at := time.Unix(1700000000, 0)
	h := msgs(filler("one", 40), filler("two", 50))
	for _, c := range []struct {
		name string
		r    requestState
		want ResumedContext
	}{
		{"no response", requestState{usageAt: 0, usage: 7}, ResumedContext{}},
		{"usage at 0", requestState{respondedAt: at, usageAt: 0, usage: 7, generation: 1, checkpointTokens: 42},
			ResumedContext{OK: true, LastResponse: at, Tokens: 7, Measured: true}},
		{"checkpoint", requestState{respondedAt: at, usageAt: -1, usage: 7, generation: 1, checkpointTokens: 42, history: h},
			ResumedContext{OK: true, LastResponse: at, Tokens: 42}},
		{"estimate", requestState{respondedAt: at, usageAt: -1, usage: 7, checkpointTokens: 42, history: h},
			ResumedContext{OK: true, LastResponse: at, Tokens: llm.EstimateMessages(h), Measured: true}},
	} {
		if got := c.r.resumedContext(); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestCompactFreshAgentHasNothingToCompact: Compact on an agent that has sent no request
// yet (no request/context recorded) and has no provider or model configured returns
// ErrNothingToCompact and writes nothing.
func TestCompactFreshAgentHasNothingToCompact(t *testing.T) {
	e := newEnv(t)
	e.cfg.LLM = dsh.LLMCallConfig{}
	a := e.agent()
	res, err := a.Compact(context.Background(), "")
	if !errors.Is(err, ErrNothingToCompact) || res.CompactionID != "" {
		t.Fatalf("Compact: %+v, %v", res, err)
	}
	if got := typesOf(e.log, compactionTypes...); len(got) != 0 {
		t.Fatalf("compaction events %v", got)
	}
}

// TestRetainedTailFollowsTheTrigger: with a known window, a manual compaction retains the
// newest messages up to RetainRatio of it (here all but the first), while overflow
// recovery keeps only the newest unit, whatever the window.
func TestRetainedTailFollowsTheTrigger(t *testing.T) {
	t.Run("manual", func(t *testing.T) {
		e := newEnv(t, text(filler("one", 60)), text("two"), text("SUMMARY"))
		e.cfg.Compaction = CompactionConfig{ContextWindow: 100000}
		a := e.agent()
		followup(t, a, "p1", filler("first", 80))
		wait(t, a)
		followup(t, a, "p2", "second")
		wait(t, a)
		if _, err := a.Compact(context.Background(), ""); err != nil {
			t.Fatal(err)
		}
		start := records[dsh.CompactionStart](t, e.log)
		if len(start) != 1 || start[0].Range.End != 1 {
			t.Fatalf("compaction/start %+v, want the range [0, 1)", start)
		}
	})
	t.Run("overflow", func(t *testing.T) {
		e := newEnv(t, text(filler("alpha", 300)), text("SUMMARY"), text("fits now"))
		e.script.WithContextWindow(500)
		e.cfg.Compaction = CompactionConfig{ContextWindow: 100000} // wrong, and too big to press
		a := e.agent()
		followup(t, a, "p1", "first")
		wait(t, a)
		followup(t, a, "p2", filler("gamma", 250))
		wait(t, a)
		start := records[dsh.CompactionStart](t, e.log)
		if len(start) != 1 || start[0].Trigger != dsh.CompactionTriggerOverflow || start[0].Range.End != 2 {
			t.Fatalf("compaction/start %+v, want one overflow over [0, 2)", start)
		}
	})
}

// TestPreCompactPayloadFigures: the pre-compact payload's retained tokens are the measured
// tokens less the shadowed range and the request prefix (system prompt and tools), and the
// first attempt's ordinal is 1.
func TestPreCompactPayloadFigures(t *testing.T) {
	e := newEnv(t, text(filler("one", 60)), text("two"), text("SUMMARY"))
	e.cfg.System = "You are terse."
	var got *dsh.PreCompactPayload
	e.reg.Plugin("p").OnPreCompact(func(ctx context.Context, p *dsh.PreCompactPayload) (dsh.PreCompactDecision, error) {
		c := *p
		got = &c
		return dsh.PreCompactProceed{}, nil
	})
	a := e.agent()
	followup(t, a, "p1", filler("first", 80))
	wait(t, a)
	followup(t, a, "p2", "second")
	wait(t, a)
	if _, err := a.Compact(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	prefix := llm.EstimatePrefix(e.cfg.System, nil)
	if got == nil || prefix <= 0 {
		t.Fatalf("payload %v, prefix %d", got, prefix)
	}
	if want := got.MeasuredTokens - got.ShadowedTokens - prefix; want <= 0 || got.RetainedTokens != want {
		t.Errorf("retained %d, want %d (measured %d, shadowed %d, prefix %d)", got.RetainedTokens, want,
			got.MeasuredTokens, got.ShadowedTokens, prefix)
	}
	if got.Ordinal != 1 {
		t.Errorf("ordinal %d, want 1", got.Ordinal)
	}
}

// TestPressureNeedsTheModelsWindow: with windows known for other models only, the window
// of the model the agent calls is unknown and the pressure check does nothing, however
// long the history.
func TestPressureNeedsTheModelsWindow(t *testing.T) {
	big := filler("alpha", 250)
	e := newEnv(t, text(big), text(big), text(big), text("SUMMARY"), text("after"))
	e.cfg.Compaction = CompactionConfig{Windows: map[string]int{"other/model": 1000}}
	a := e.agent()
	fourTurns(t, a)
	if got := typesOf(e.log, compactionTypes...); len(got) != 0 {
		t.Fatalf("compaction events %v", got)
	}
}

// twoTurns runs two turns, the first with a prompt big enough to be worth summarizing.
func twoTurns(t *testing.T, a *Agent) {
	t.Helper()
	followup(t, a, "p1", filler("first", 80))
	wait(t, a)
	followup(t, a, "p2", "second")
	wait(t, a)
}

// TestSummaryMaxTokens: the summarizer request is capped, and compaction/summary records
// the cap: the configured SummaryMaxTokens, else the config's maxTokens. With no
// instructions the directive is the request's last text, as it is.
func TestSummaryMaxTokens(t *testing.T) {
	for _, c := range []struct {
		name          string
		summaryMax, w int
	}{{"config", 0, 123}, {"summary", 77, 77}} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, text(filler("one", 60)), text("two"), text("SUMMARY"))
			mt := 123
			e.cfg.LLM.MaxTokens = &mt
			e.cfg.Compaction = CompactionConfig{SummaryMaxTokens: c.summaryMax}
			a := e.agent()
			twoTurns(t, a)
			if _, err := a.Compact(context.Background(), ""); err != nil {
				t.Fatal(err)
			}
			sum := records[dsh.CompactionSummary](t, e.log)
			if len(sum) != 1 || sum[0].MaxTokens == nil || *sum[0].MaxTokens != c.w {
				t.Fatalf("compaction/summary %+v, want maxTokens %d", sum, c.w)
			}
			reqs := e.requests()
			if mt := reqs[2].Config.MaxTokens; mt == nil || *mt != c.w {
				t.Fatalf("the summarizer request's maxTokens %v, want %d", mt, c.w)
			}
			// No plugin instructions: the directive ends the request as it is.
			if last := texts(reqs[2]); last[len(last)-1] != "user:"+summaryDirective {
				t.Fatalf("the summarizer request ends with %q", last[len(last)-1])
			}
		})
	}
}

// TestSecondAttemptOrdinal: the second compaction attempt's pre-compact payload has
// ordinal 2.
func TestSecondAttemptOrdinal(t *testing.T) {
	e := newEnv(t, text(filler("one", 60)), text("two"), text("SUMMARY-1"), text(filler("three", 60)), text("SUMMARY-2"))
	var ordinals []int
	e.reg.Plugin("p").OnPreCompact(func(ctx context.Context, p *dsh.PreCompactPayload) (dsh.PreCompactDecision, error) {
		ordinals = append(ordinals, p.Ordinal)
		return dsh.PreCompactProceed{}, nil
	})
	a := e.agent()
	twoTurns(t, a)
	if _, err := a.Compact(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	followup(t, a, "p3", filler("third", 80))
	wait(t, a)
	if _, err := a.Compact(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if len(ordinals) != 2 || ordinals[0] != 1 || ordinals[1] != 2 {
		t.Fatalf("ordinals %v, want [1 2]", ordinals)
	}
}

// TestSummaryAsBigAsTheRangeIsRefused: a summary whose checkpoint costs exactly as much as
// the range it replaces does not shrink the history: the attempt fails.
func TestSummaryAsBigAsTheRangeIsRefused(t *testing.T) {
	e := newEnv(t, text(filler("one", 60)), text("two"))
	e.reg.Plugin("p").OnPreCompact(func(ctx context.Context, p *dsh.PreCompactPayload) (dsh.PreCompactDecision, error) {
		for n := 1; n < 4*p.ShadowedTokens; n++ {
			s := strings.Repeat("x", n)
			if llm.EstimateMessage(llm.Message{Content: checkpointMessage(s).Content}) == p.ShadowedTokens {
				return dsh.PreCompactReplace{Summary: s}, nil
			}
		}
		t.Errorf("no summary costs exactly %d tokens", p.ShadowedTokens)
		return dsh.PreCompactProceed{}, nil
	})
	a := e.agent()
	twoTurns(t, a)
	res, err := a.Compact(context.Background(), "")
	var fe *FailedError
	if !errors.As(err, &fe) || res.Outcome != dsh.CompactionOutcomeFailed || !strings.Contains(fe.Reason, "does not shrink") {
		t.Fatalf("Compact: %+v, %v", res, err)
	}
}

// TestCheckpointTokensAfterCountsThePending: a pressure compaction's projected size
// (compaction/checkpoint tokensAfter) is what the next request costs: the prefix, the
// checkpoint, the retained tail and the claimed prompt not yet in the history.
func TestCheckpointTokensAfterCountsThePending(t *testing.T) {
	e := pressureSetup(t, text("SUMMARY"), text("after"))
	a := e.agent()
	fourTurns(t, a)
	cps := records[dsh.CompactionCheckpoint](t, e.log)
	if len(cps) != 1 {
		t.Fatalf("%d checkpoints", len(cps))
	}
	reqs := e.requests()
	next := reqs[len(reqs)-1]
	if want := llm.EstimatePrefix(next.System, next.Tools) + llm.EstimateMessages(next.Messages); cps[0].TokensAfter != want {
		t.Fatalf("tokensAfter %d, want %d (the next request's estimate)", cps[0].TokensAfter, want)
	}
}

// TestPostCompactPayloadSummaryAndError: the post-compact payload carries the summary of a
// committed attempt and the failure of a failed one.
func TestPostCompactPayloadSummaryAndError(t *testing.T) {
	for _, c := range []struct {
		name, replace, summary, errPart string
	}{{"committed", "SHORT", "SHORT", ""}, {"failed", " ", "", "empty"}} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, text(filler("one", 60)), text("two"))
			e.reg.Plugin("p").OnPreCompact(func(ctx context.Context, p *dsh.PreCompactPayload) (dsh.PreCompactDecision, error) {
				return dsh.PreCompactReplace{Summary: c.replace}, nil
			})
			var summary, failure string
			e.reg.Plugin("p").OnPostCompact(func(ctx context.Context, p *dsh.PostCompactPayload) (dsh.PostCompactDecision, error) {
				if p.Summary != nil {
					summary = *p.Summary
				}
				if p.Error != nil {
					failure = *p.Error
				}
				return dsh.PostCompactAccept{}, nil
			})
			a := e.agent()
			twoTurns(t, a)
			_, _ = a.Compact(context.Background(), "")
			if summary != c.summary || (c.errPart == "") != (failure == "") || !strings.Contains(failure, c.errPart) {
				t.Fatalf("post-compact summary %q, error %q; want %q, an error with %q", summary, failure, c.summary, c.errPart)
			}
		})
	}
}

// TestPostCompactContextsThenSessionStart: after a committed compaction whose post-compact
// listener appends a context, agent/session-start{compact} still runs, and the context
// is claimed with the step, before the turn's prompt.
func TestPostCompactContextsThenSessionStart(t *testing.T) {
	e := pressureSetup(t, text("SUMMARY"), text("after"))
	e.reg.Plugin("restorer").OnPostCompact(func(ctx context.Context, p *dsh.PostCompactPayload) (dsh.PostCompactDecision, error) {
		return dsh.PostCompactAppend{Contexts: []dsh.UserMessage{{Content: []dsh.ContentBlock{dsh.TextBlock{Text: "RESTORED"}}}}}, nil
	})
	started := 0
	e.reg.Plugin("watch").OnSessionStart(func(ctx context.Context, p *dsh.SessionStartPayload) error {
		if p.Source == dsh.SessionStartSourceCompact {
			started++
		}
		return nil
	})
	a := e.agent()
	fourTurns(t, a)
	if started != 1 {
		t.Fatalf("session-start{compact} ran %d times", started)
	}
	reqs := e.requests()
	if next := strings.Join(texts(reqs[len(reqs)-1]), "|"); !strings.Contains(next, "|user:RESTORED|user:prompt 3") {
		t.Fatalf("the request after compaction lacks the context before the prompt: %s", next)
	}
}

// TestPressureWithPerModelWindowsOnly: a window known only per model (Windows, no
// ContextWindow) is enough for the pressure check to compact.
func TestPressureWithPerModelWindowsOnly(t *testing.T) {
	big := filler("alpha", 250)
	e := newEnv(t, text(big), text(big), text(big), text("SUMMARY"), text("after"))
	e.cfg.Compaction = CompactionConfig{Windows: map[string]int{"test/m1": 1000}}
	a := e.agent()
	fourTurns(t, a)
	if got := records[dsh.CompactionStart](t, e.log); len(got) != 1 || got[0].Trigger != dsh.CompactionTriggerPressure {
		t.Fatalf("compaction/start %+v, want one pressure attempt", got)
	}
}

// TestPressureAtExactlyTheThreshold: a step boundary whose measure equals the threshold
// compacts (the threshold is reached, not exceeded); one token under it does not.
func TestPressureAtExactlyTheThreshold(t *testing.T) {
	for _, c := range []struct {
		name  string
		extra int // window - measure
		want  bool
	}{{"at", 0, true}, {"under", 1, false}} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, text(filler("one", 80)), text("two"), text("SUMMARY"))
			a := e.agent()
			twoTurns(t, a)
			a.cfg.Compaction.ThresholdRatio = 1
			a.cfg.Compaction.ContextWindow = 1 << 30
			probe := a.compact(context.Background(), attempt{trigger: dsh.CompactionTriggerPressure})
			if probe.selected || probe.err != nil || probe.before <= 0 {
				t.Fatalf("probe: %+v", probe)
			}
			a.cfg.Compaction.ContextWindow = probe.before + c.extra
			res := a.compact(context.Background(), attempt{trigger: dsh.CompactionTriggerPressure})
			if res.err != nil || res.before != probe.before {
				t.Fatalf("attempt: %+v (measure %d before)", res, probe.before)
			}
			if res.selected != c.want || res.bracketed != c.want {
				t.Fatalf("measure %d, window %d: selected %v, bracketed %v, want %v", res.before,
					a.cfg.Compaction.ContextWindow, res.selected, res.bracketed, c.want)
			}
		})
	}
}
