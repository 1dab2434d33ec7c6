package loop

import (
	"context"
	"errors"
	"iter"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/session"
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

// A log whose history holds an event that does not decode is not resumable, even when the
// turn structure replays.
func TestResumeRefusesAnUndecodableHistoryEvent(t *testing.T) {
	e := newEnv(t, text("one"))
	a := e.agent()
	followup(t, a, "u1", "hi")
	wait(t, a)
	closeWithin(t, a)
	var userSeq int64 = -1
	for ev := range e.log.Events() {
		if ev.Type == "user/message" {
			userSeq = ev.Seq
		}
	}
	if userSeq < 0 {
		t.Fatal("no user/message logged")
	}
	if err := e.log.Close(); err != nil {
		t.Fatal(err)
	}
	log, err := session.Open(context.Background(), &corruptStore{Memory: e.store, seq: userSeq, data: `{"message":5}`})
	if err != nil {
		t.Fatal(err)
	}
	e.log = log
	t.Cleanup(func() { _ = log.Close() })
	if _, err := Resume(context.Background(), e.config()); !errors.Is(err, ErrNotResumable) {
		t.Errorf("Resume over an undecodable user/message: %v, want ErrNotResumable", err)
	}
}

// A resumed agent whose config leaves the call configuration out starts from the logged
// request/header (B §2.4): provider, model, maxTokens, temperature and system carry over,
// and as the provider and model did not change no new request/context is logged.
func TestResumeSeedsTheConfigFromTheLoggedHeader(t *testing.T) {
	e := newEnv(t, text("one"))
	maxTokens, temp := 100, 0.5
	e.cfg.LLM = dsh.LLMCallConfig{Provider: "test", Model: "m1", MaxTokens: &maxTokens, Temperature: &temp}
	e.cfg.System = "be brief"
	a := e.agent()
	followup(t, a, "u1", "hi")
	wait(t, a)
	closeWithin(t, a)
	if err := e.log.Close(); err != nil {
		t.Fatal(err)
	}
	rest := llm.NewScripted(text("two")).RecordRequests()
	e.log, e.model = e.openLog(), rest
	e.cfg.LLM, e.cfg.System = dsh.LLMCallConfig{}, ""
	b, err := Resume(context.Background(), e.config())
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, b)
	followup(t, b, "u2", "again")
	wait(t, b)
	diff(t, "turn/end reasons", []string{`{"kind":"completed"}`, `{"kind":"completed"}`}, reasons(t, e.log))
	reqs := rest.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests after resuming, want 1", len(reqs))
	}
	got := reqs[0].Config
	if got.Provider != "test" || got.Model != "m1" || got.MaxTokens == nil || *got.MaxTokens != 100 ||
		got.Temperature == nil || *got.Temperature != 0.5 || got.System == nil || *got.System != "be brief" {
		t.Errorf("config after resuming: %s, want the logged header's", jsonOf(t, got))
	}
	diff(t, "request/context events", 1, len(records[dsh.RequestContext](t, e.log)))
}

// corruptStore serves its events with the data of one seq replaced.
type corruptStore struct {
	*session.Memory
	seq  int64
	data string
}

func (s *corruptStore) Read(ctx context.Context, from, to int64) iter.Seq2[session.Event, error] {
	return func(yield func(session.Event, error) bool) {
		for ev, err := range s.Memory.Read(ctx, from, to) {
			if err == nil && ev.Seq == s.seq {
				ev.Data = []byte(s.data)
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}
