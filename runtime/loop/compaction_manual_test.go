// Tests of manual compaction, crash recovery and resume after compactions.

package loop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

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
	turns(t, a, "first", "second")
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
	turns(t, a, "first", "second")
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
	turns(t, a, "first", "second")
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
	b, rest := resumeRecording(t, e, window)
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
	turns(t, a, "first", "second")
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
