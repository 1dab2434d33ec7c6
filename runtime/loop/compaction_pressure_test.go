// Tests of compaction under pressure and on overflow: the threshold, the pre-compact
// fold's decisions, refused replacements and the defer cap.

package loop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

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
	turns(t, a, "hello", "again")
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
	turns(t, a, "first", filler("gamma", 150))
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
	turns(t, a, "first", filler("gamma", 250))
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
