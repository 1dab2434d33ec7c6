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
