package loop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
)

// The tests of this file pin rules that the full mutation pass over runtime/loop
// (docs/testing.md) showed no other test to check.

// ctxKey is the key of a value a test puts in the context it passes to New.
type ctxKey struct{}

// The values of the context New gets reach the agent's work (here a tool run), though its
// cancellation does not.
func TestNewKeepsTheContextValues(t *testing.T) {
	e := newEnv(t, calls("c1:probe"), text("done"))
	got := make(chan any, 1)
	e.register(toolDef("probe", false, func(ctx context.Context, _ *tools.RunContext) (any, error) {
		got <- ctx.Value(ctxKey{})
		return "ok", nil
	}))
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "mine"))
	a, err := New(ctx, e.config())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeWithin(t, a) })
	cancel()
	followup(t, a, "u1", "hi")
	wait(t, a)
	if v := await(t, got, "the tool run"); v != "mine" {
		t.Errorf("tool run saw value %v, want the one of New's context", v)
	}
	diff(t, "turn/end reasons", []string{`{"kind":"completed"}`}, reasons(t, e.log))
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

// An agent/request listener that changes the config it got in place (the extra map, the
// pointed-to maxTokens) changes that request only: the next request starts from the
// agent's own config again.
func TestRequestListenerCannotChangeTheAgentsConfig(t *testing.T) {
	e := newEnv(t, text("one"), text("two"))
	maxTokens := 100
	e.cfg.LLM.MaxTokens = &maxTokens
	e.cfg.LLM.Extra = map[string]json.RawMessage{"a": json.RawMessage(`1`)}
	e.reg.OnRequest(func(ctx context.Context, p *dsh.RequestPayload) (dsh.RequestDecision, error) {
		if p.Turn != 1 {
			return dsh.RequestPass{}, nil
		}
		cfg := p.Request.Config
		cfg.Extra["b"] = json.RawMessage(`2`)
		*cfg.MaxTokens = 7
		return dsh.RequestUse{Config: cfg}, nil
	})
	a := e.agent()
	followup(t, a, "u1", "one")
	wait(t, a)
	followup(t, a, "u2", "two")
	wait(t, a)
	reqs := e.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	diff(t, "first extra", `{"a":1,"b":2}`, jsonOf(t, reqs[0].Config.Extra))
	diff(t, "second extra", `{"a":1}`, jsonOf(t, reqs[1].Config.Extra))
	diff(t, "second maxTokens", 100, *reqs[1].Config.MaxTokens)
	diff(t, "the agent's own extra", `{"a":1}`, jsonOf(t, e.cfg.LLM.Extra))
}

// A Cancel whose discard of the inbox cannot be appended logs the failure and leaves the
// inbox as it was; a discard that is appended logs nothing.
func TestFailedInboxDiscardIsLogged(t *testing.T) {
	for _, fail := range []bool{false, true} {
		e := newEnv(t)
		store := &failingStore{Memory: session.NewMemory()}
		l, err := session.Open(context.Background(), store)
		if err != nil {
			t.Fatal(err)
		}
		e.log = l
		var logs bytes.Buffer
		e.cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		a := e.agent()
		if err := a.Inject(context.Background(), pluginMsg("n1", "a note")); err != nil {
			t.Fatal(err)
		}
		store.setFail(fail)
		a.Cancel(nil, false)
		_, nextStep := a.Inbox()
		if logged := strings.Contains(logs.String(), "loop: cannot discard the inbox"); logged != fail {
			t.Errorf("fail=%v: logged %v:\n%s", fail, logged, logs.String())
		}
		want := 0
		if fail {
			want = 1
		}
		diff(t, fmt.Sprintf("fail=%v: pending next-step messages", fail), want, len(nextStep))
		store.setFail(false)
		closeWithin(t, a)
		_ = l.Close()
	}
}

// A session-start overrun whose record cannot be appended is logged; startup goes on.
func TestUnrecordedSessionStartOverrunIsLogged(t *testing.T) {
	for _, fail := range []bool{false, true} {
		e := newEnv(t)
		store := &failingStore{Memory: session.NewMemory()}
		l, err := session.Open(context.Background(), store)
		if err != nil {
			t.Fatal(err)
		}
		e.log = l
		var logs bytes.Buffer
		e.cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		e.cfg.SessionStartTimeout = 20 * time.Millisecond
		e.reg.OnSessionStart(func(ctx context.Context, p *dsh.SessionStartPayload) error {
			store.setFail(fail)
			<-ctx.Done()
			return nil
		})
		a := e.agent()
		store.setFail(false)
		if logged := strings.Contains(logs.String(), "loop: cannot record a session-start overrun"); logged != fail {
			t.Errorf("fail=%v: logged %v:\n%s", fail, logged, logs.String())
		}
		diff(t, fmt.Sprintf("fail=%v: overruns recorded", fail), !fail, hasType(l, dsh.StartListenerOverrunType))
		closeWithin(t, a)
		_ = l.Close()
	}
}

// Every failing agent/session-start listener is logged with its name; startup goes on.
func TestFailingSessionStartListenersAreLogged(t *testing.T) {
	e := newEnv(t, text("ok"))
	var logs bytes.Buffer
	e.cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	for _, name := range []string{"first", "second"} {
		e.reg.Plugin(name).OnSessionStart(func(ctx context.Context, p *dsh.SessionStartPayload) error {
			return errors.New(name + " broke")
		})
	}
	a := e.agent()
	for _, name := range []string{"first", "second"} {
		if !strings.Contains(logs.String(), name+" broke") {
			t.Errorf("the failure of %s is not logged:\n%s", name, logs.String())
		}
	}
	followup(t, a, "u1", "hi")
	wait(t, a)
	diff(t, "turn/end reasons", []string{`{"kind":"completed"}`}, reasons(t, e.log))
}

// refuseStore refuses to append the events whose line contains refuse.
type refuseStore struct {
	*session.Memory
	refuse string
}

func (s *refuseStore) Append(ctx context.Context, line []byte) error {
	if s.refuse != "" && strings.Contains(string(line), s.refuse) {
		return errors.New("store full")
	}
	return s.Memory.Append(ctx, line)
}

// A step/end that cannot be appended fails the turn (B §3.2), though the step itself went
// well.
func TestFailedStepEndAppendFailsTheTurn(t *testing.T) {
	e := newEnv(t, calls("c1:echo"), text("never"))
	e.register(okTool("echo", false))
	l, err := session.Open(context.Background(), &refuseStore{Memory: session.NewMemory(), refuse: `"type":"step/end"`})
	if err != nil {
		t.Fatal(err)
	}
	e.log = l
	t.Cleanup(func() { _ = l.Close() })
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "requests", 1, len(e.requests()))
	got := records[dsh.TurnEnd](t, l)
	if len(got) != 1 || jsonOf(t, got[0].Reason) == `{"kind":"completed"}` || !strings.Contains(jsonOf(t, got[0].Reason), "store full") {
		t.Errorf("turn/end %s, want an error naming the failed append", jsonOf(t, got))
	}
}

// agent/request-error counts the attempts of one step: 1, 2, ...
func TestRequestErrorAttemptsCount(t *testing.T) {
	failing := llm.ScriptedResponse{Error: &llm.ScriptedError{Message: "slow down", Code: "rate_limit"}}
	e := newEnv(t, failing, failing, text("fine"))
	var attempts []int
	e.reg.OnRequestError(func(ctx context.Context, p *dsh.RequestErrorPayload, next dsh.RequestErrorNext) (dsh.RequestErrorDecision, error) {
		attempts = append(attempts, p.Attempt)
		return dsh.RequestErrorRetry{}, nil
	})
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "attempts", []int{1, 2}, attempts)
	diff(t, "reasons", []string{`{"kind":"completed"}`}, reasons(t, e.log))
}

// A retry that asks for a delay waits it before the next attempt.
func TestRequestErrorRetryWaitsItsDelay(t *testing.T) {
	e := newEnv(t, llm.ScriptedResponse{Error: &llm.ScriptedError{Message: "slow down", Code: "rate_limit"}}, text("fine"))
	const delay = 150
	e.reg.OnRequestError(func(ctx context.Context, p *dsh.RequestErrorPayload, next dsh.RequestErrorNext) (dsh.RequestErrorDecision, error) {
		d := delay
		return dsh.RequestErrorRetry{DelayMS: &d}, nil
	})
	a := e.agent()
	start := time.Now()
	followup(t, a, "u1", "go")
	wait(t, a)
	if took := time.Since(start); took < delay*time.Millisecond {
		t.Errorf("the turn took %s, less than the retry delay of %d ms", took, delay)
	}
	diff(t, "requests", 2, len(e.requests()))
}

// turnEndsInError runs one turn over a log that refuses the lines holding refuse and
// checks that the turn ends in error naming the failed append, with no second request.
func turnEndsInError(t *testing.T, e *env, refuse string) {
	t.Helper()
	l, err := session.Open(context.Background(), &refuseStore{Memory: session.NewMemory(), refuse: refuse})
	if err != nil {
		t.Fatal(err)
	}
	e.log = l
	t.Cleanup(func() { _ = l.Close() })
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "requests", 1, len(e.requests()))
	got := records[dsh.TurnEnd](t, l)
	if len(got) != 1 || !strings.Contains(jsonOf(t, got[0].Reason), `"kind":"error"`) || !strings.Contains(jsonOf(t, got[0].Reason), "store full") {
		t.Errorf("turn/end %s, want an error naming the failed append", jsonOf(t, got))
	}
}

// A tool/result that cannot be appended fails the turn: no further step runs.
func TestFailedToolResultAppendFailsTheTurn(t *testing.T) {
	e := newEnv(t, calls("c1:echo"), text("never"))
	e.register(okTool("echo", false))
	turnEndsInError(t, e, `"type":"tool/result"`)
}

// The batch's contexts that cannot be put in the inbox fail the turn (a failed append).
func TestFailedContextInsertFailsTheTurn(t *testing.T) {
	e := newEnv(t, calls("c1:echo"), text("never"))
	e.register(okTool("echo", false))
	e.reg.OnPostTool(contextPerCall)
	turnEndsInError(t, e, `ctx-c1`)
}

// countingRefuseStore refuses the first n appends of lines holding refuse.
type countingRefuseStore struct {
	*session.Memory
	refuse string
	n      int
}

func (s *countingRefuseStore) Append(ctx context.Context, line []byte) error {
	if s.n > 0 && strings.Contains(string(line), s.refuse) {
		s.n--
		return errors.New("store full")
	}
	return s.Memory.Append(ctx, line)
}

// A turn/end that cannot be appended stays pending: the next turn appends it before its
// turn/start, and while that fails too no turn starts, so the log keeps its turn
// structure (and replays).
func TestPendingTurnEndIsAppendedBeforeTheNextTurn(t *testing.T) {
	e := newEnv(t, text("one"), text("two"), text("three"))
	l, err := session.Open(context.Background(), &countingRefuseStore{Memory: session.NewMemory(), refuse: `"type":"turn/end"`, n: 2})
	if err != nil {
		t.Fatal(err)
	}
	e.log = l
	t.Cleanup(func() { _ = l.Close() })
	a := e.agent()
	followup(t, a, "u1", "one") // its turn/end fails
	wait(t, a)
	followup(t, a, "u2", "two") // the pending turn/end fails again: no turn starts
	wait(t, a)
	diff(t, "turns started", 1, len(records[dsh.TurnStart](t, l)))
	followup(t, a, "u3", "three")
	wait(t, a)
	diff(t, "boundaries", []string{"turn/start", "turn/end", "turn/start", "turn/end", "turn/start", "turn/end"},
		typesOf(l, dsh.TurnStartType, dsh.TurnEndType))
	diff(t, "turn numbers", []int{1, 2, 3}, fields(t, l, func(r dsh.TurnEnd) int { return r.Turn }))
	if _, err := session.Replay(l.Events()); err != nil {
		t.Errorf("the log does not replay: %v", err)
	}
}

// A send with a cancelled context fails with its error and queues nothing.
func TestSendWithACancelledContextFails(t *testing.T) {
	e := newEnv(t, text("never"))
	a := e.agent()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := a.Followup(ctx, userMsg("u1", "hi")); !errors.Is(err, context.Canceled) {
		t.Errorf("Followup with a cancelled context: %v, want context.Canceled", err)
	}
	wait(t, a)
	nextTurn, nextStep := a.Inbox()
	diff(t, "pending", 0, len(nextTurn)+len(nextStep))
	diff(t, "requests", 0, len(e.requests()))
}

// A Halt that arrives after the turn ended but before the driver moved on (here from a
// session-log observer of its turn/end) still stops the driver: the follow-up queued
// during the turn waits for the next waking send.
func TestHaltAfterTheTurnEndedStopsTheDriver(t *testing.T) {
	e := newEnv(t, text("one"), text("two"))
	e.reg.OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		if p.Turn == 1 {
			if err := p.Agent.(*Agent).Followup(ctx, userMsg("u2", "two")); err != nil {
				return nil, err
			}
		}
		return next.Call(ctx)
	})
	a := e.agent()
	halted := false
	stop := e.log.Subscribe(func(ev session.Event) {
		if ev.Type == dsh.TurnEndType && !halted {
			halted = true
			a.Halt("late")
		}
	})
	defer stop()
	followup(t, a, "u1", "one")
	wait(t, a)
	diff(t, "turns", 1, len(records[dsh.TurnStart](t, e.log)))
	diff(t, "reasons", []string{`{"kind":"completed"}`}, reasons(t, e.log))
	nextTurn, _ := a.Inbox()
	diff(t, "pending follow-ups", []string{"u2"}, messageIDs(nextTurn))
}

// New refuses a config missing any required field, or whose Tools dispatch through
// another registry, naming what is wrong.
func TestNewRefusesAnIncompleteConfig(t *testing.T) {
	for _, c := range []struct {
		name  string
		spoil func(*Config)
		want  string
	}{
		{"no ID", func(c *Config) { c.ID = "" }, "empty ID"},
		{"no Registry", func(c *Config) { c.Registry = nil }, "nil Registry"},
		{"no Model", func(c *Config) { c.Model = nil }, "nil Model"},
		{"no Log", func(c *Config) { c.Log = nil }, "nil Log"},
		{"foreign Tools", func(c *Config) { c.Tools = tools.New(nil, dsh.NewRegistry()) }, "another registry"},
	} {
		e := newEnv(t)
		cfg := e.config()
		c.spoil(&cfg)
		_, err := New(context.Background(), cfg)
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrInvalidConfig naming %q", c.name, err, c.want)
		}
	}
}
