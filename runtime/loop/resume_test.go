package loop

import (
	"context"
	"errors"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

// Resume: the history is derived from the log, so a resumed agent sends what the
// original would have sent.

func resumeScript() []llm.ScriptedResponse {
	return []llm.ScriptedResponse{calls("c1:echo"), text("one"), text("two"), calls("c2:echo"), text("three")}
}

func TestResumeSendsTheSameHistory(t *testing.T) {
	// The reference: one agent runs three turns.
	ref := newEnv(t, resumeScript()...)
	ref.register(okTool("echo", false))
	ra := ref.agent()
	for _, p := range []string{"first", "second", "third"} {
		followup(t, ra, p, p)
		wait(t, ra)
	}

	// The same three turns, with a restart after the second.
	e := newEnv(t, resumeScript()...)
	e.register(okTool("echo", false))
	a := e.agent()
	followup(t, a, "first", "first")
	wait(t, a)
	if err := a.Inject(context.Background(), pluginMsg("note", "a note")); err != nil {
		t.Fatal(err)
	}
	followup(t, a, "second", "second")
	wait(t, a)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.log.Close(); err != nil {
		t.Fatal(err)
	}
	// A fresh model that plays the rest of the script.
	rest := llm.NewScripted(resumeScript()[3:]...).RecordRequests()
	e.log, e.model = e.openLog(), rest
	b, err := Resume(context.Background(), e.config())
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, b)
	followup(t, b, "third", "third")
	wait(t, b)

	refReqs := ref.requests()
	got := rest.Requests()
	// The reference has no note: drop it from the resumed history before comparing.
	var gotTexts []string
	for _, s := range texts(got[0]) {
		if s != "user:a note" {
			gotTexts = append(gotTexts, s)
		}
	}
	diff(t, "request of turn 3", texts(refReqs[3]), gotTexts)
	if !contains(got[0], "a note") {
		t.Errorf("the injected note was lost: %v", texts(got[0]))
	}
	diff(t, "header reasons", []dsh.HeaderReason{dsh.HeaderReasonInitial, dsh.HeaderReasonResume},
		fields(t, e.log, func(r dsh.RequestHeaderLogged) dsh.HeaderReason { return r.Reason }))
	diff(t, "turns", []int{1, 2, 3}, fields(t, e.log, func(r dsh.TurnStart) int { return r.Turn }))
	diff(t, "config", refReqs[3].Config, got[0].Config)
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant call result step/end step/start chunk*2 assistant step/end turn/end spliced*2 turn/start spliced*2 step/start user*2 chunk*2 assistant step/end turn/end spliced turn/start spliced step/start user header chunk*2 assistant call result step/end step/start chunk*2 assistant step/end turn/end")
}

func TestResumeClosesCrashOrphanedTurn(t *testing.T) {
	e := newEnv(t, text("after the crash"))
	ctx := context.Background()
	prompt := userMsg("u1", "lost turn")
	for _, d := range []dsh.SessionEventData{
		dsh.SessionCreated{SessionID: "s1", AgentID: "a1"},
		dsh.InboxSpliced{Target: dsh.InboxTargetNextTurn, Inserted: []dsh.UserMessage{prompt}},
		dsh.TurnStart{Turn: 1},
		dsh.InboxSpliced{Target: dsh.InboxTargetNextTurn, RemovedCount: ptr(1), Inserted: []dsh.UserMessage{}},
		dsh.StepStart{Turn: 1, Step: 1},
		dsh.UserMessageLogged{Message: prompt},
		dsh.InboxSpliced{Target: dsh.InboxTargetNextTurn, Inserted: []dsh.UserMessage{userMsg("u2", "queued")}},
	} {
		if _, err := e.log.Append(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	a, err := Resume(ctx, e.config())
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, a)
	diff(t, "closed", []dsh.TurnEnd{{Turn: 1, Reason: dsh.TurnEndInterrupted{}}}, records[dsh.TurnEnd](t, e.log))
	nextTurn, _ := a.Inbox()
	diff(t, "restored inbox", []string{"queued"}, msgTexts(nextTurn))
	followup(t, a, "u3", "new")
	wait(t, a)
	diff(t, "turns", []int{1, 2, 3}, fields(t, e.log, func(r dsh.TurnStart) int { return r.Turn }))
	diff(t, "request 1", []string{"user:lost turn", "user:queued"}, texts(e.requests()[0]))
	checkLog(t, e.log, "spliced turn/start spliced step/start user spliced turn/end spliced turn/start spliced step/start user header context chunk*4 assistant step/end turn/end turn/start spliced step/start user chunk*2 assistant step/end turn/end")
}

func ptr[T any](v T) *T { return &v }

func TestNewAndResumeCheckTheLog(t *testing.T) {
	e := newEnv(t)
	e.agent()
	if _, err := New(context.Background(), e.config()); !errors.Is(err, ErrLogNotEmpty) {
		t.Errorf("New on a used log: %v", err)
	}
	cfg := e.config()
	cfg.ID = "someone-else"
	if _, err := Resume(context.Background(), cfg); !errors.Is(err, ErrNotResumable) {
		t.Errorf("Resume of another agent's log: %v", err)
	}
	empty := newEnv(t)
	if _, err := Resume(context.Background(), empty.config()); !errors.Is(err, ErrNotResumable) {
		t.Errorf("Resume of an empty log: %v", err)
	}
	if _, err := New(context.Background(), Config{}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("New with an empty config: %v", err)
	}
}
