package loop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
)

func TestPreStepPanicEndsTurnError(t *testing.T) {
	e := newEnv(t, text("never"))
	e.reg.OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		panic("pre-step panicked")
	})
	var errs []dsh.LLMFailure
	e.reg.OnAgentError(func(ctx context.Context, p *dsh.AgentErrorPayload) { errs = append(errs, p.Error) })
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	want := dsh.LLMFailure{Message: "panic: pre-step panicked", Code: "UNKNOWN"}
	diff(t, "agent/error", []dsh.LLMFailure{want}, errs)
	diff(t, "turn/end", []dsh.TurnEnd{{Turn: 1, Reason: dsh.TurnEndError{Error: want}}}, records[dsh.TurnEnd](t, e.log))
	checkLog(t, e.log, "spliced turn/start spliced turn/end")
}

func TestLogFailureMidTurn(t *testing.T) {
	e := newEnv(t, calls("c1:breaker"), text("recovered"))
	store := e.failingLog(t)
	e.register(toolDef("breaker", false, func(ctx context.Context, rc *tools.RunContext) (any, error) {
		store.setFail(true) // the disk fills up while the tool runs
		return "ok", nil
	}))
	var errs []string
	e.reg.OnAgentError(func(ctx context.Context, p *dsh.AgentErrorPayload) { errs = append(errs, p.Error.Code) })
	a := e.agent()
	if err := a.Followup(context.Background(), dsh.UserMessage{Content: []dsh.ContentBlock{dsh.TextBlock{Text: "go"}}}); err != nil {
		t.Fatal(err)
	}
	wait(t, a)
	diff(t, "agent/error", []string{"UNKNOWN"}, errs)
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant call")
	store.setFail(false)
	followup(t, a, "u2", "again")
	wait(t, a)
	// The failed turn's turn/end is appended before the next turn starts.
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant call spliced turn/end turn/start spliced step/start user chunk*2 assistant step/end turn/end")
	if _, err := session.Replay(e.log.Events()); err != nil {
		t.Errorf("replay: %v", err)
	}
	diff(t, "ids are minted", true, strings.HasPrefix(records[dsh.UserMessageLogged](t, e.log)[0].Message.ID, "msg_"))
}

// A new agent's session/created carries the configured session id, or a fresh "ses_" one.
func TestSessionCreatedCarriesTheSessionID(t *testing.T) {
	for _, sid := range []string{"mine", ""} {
		e := newEnv(t)
		e.cfg.SessionID = sid
		e.agent()
		var got dsh.SessionCreated
		for ev := range e.log.Events() {
			if ev.Type != dsh.SessionCreatedType {
				t.Fatalf("first event %s, want session/created", ev.Type)
			}
			if err := json.Unmarshal(ev.Data, &got); err != nil {
				t.Fatal(err)
			}
			break
		}
		switch {
		case sid != "" && got.SessionID != sid:
			t.Errorf("configured %q: session id %q", sid, got.SessionID)
		case sid == "" && (!strings.HasPrefix(got.SessionID, "ses_") || len(got.SessionID) <= len("ses_")):
			t.Errorf("no configured id: session id %q, want a fresh ses_ id", got.SessionID)
		}
	}
}

// A failing observer (here agent/status) is logged at debug level; a healthy one is not.
func TestFailingObserverIsLogged(t *testing.T) {
	for _, fail := range []bool{false, true} {
		e := newEnv(t, text("ok"))
		var logs bytes.Buffer
		e.cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		e.reg.OnStatus(func(context.Context, *dsh.StatusPayload) {
			if fail {
				panic("observer broke")
			}
		})
		a := e.agent()
		followup(t, a, "u1", "hi")
		wait(t, a)
		if logged := strings.Contains(logs.String(), "loop: observer failed"); logged != fail {
			t.Errorf("fail=%v: logged %v:\n%s", fail, logged, logs.String())
		}
	}
}

// refusingStore refuses to append decision/recorded events when refuse is set.
type refusingStore struct {
	*session.Memory
	refuse bool
}

func (s *refusingStore) Append(ctx context.Context, line []byte) error {
	if s.refuse && bytes.Contains(line, []byte(`"decision/recorded"`)) {
		return errors.New("no room for decisions")
	}
	return s.Memory.Append(ctx, line)
}

// A decision the audit cannot append is logged as an error; the turn goes on.
func TestUnrecordedDecisionIsLogged(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		e := newEnv(t, text("ok"))
		log, err := session.Open(context.Background(), &refusingStore{Memory: session.NewMemory(), refuse: refuse})
		if err != nil {
			t.Fatal(err)
		}
		e.log = log
		e.cfg.Audit = true
		var logs bytes.Buffer
		e.cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		e.reg.Plugin("policy").OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
			return dsh.PreStepEnter{Messages: p.Messages}, nil
		})
		a := e.agent()
		followup(t, a, "u1", "hi")
		wait(t, a)
		if logged := strings.Contains(logs.String(), "loop: cannot record a decision"); logged != refuse {
			t.Errorf("refuse=%v: logged %v:\n%s", refuse, logged, logs.String())
		}
		_ = log.Close()
	}
}

// A Cancel whose discard of the inbox cannot be appended logs the failure and leaves the
// inbox as it was; a discard that is appended logs nothing.
func TestFailedInboxDiscardIsLogged(t *testing.T) {
	for _, fail := range []bool{false, true} {
		e := newEnv(t)
		store := e.failingLog(t)
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
	}
}

// A session-start overrun whose record cannot be appended is logged; startup goes on.
func TestUnrecordedSessionStartOverrunIsLogged(t *testing.T) {
	for _, fail := range []bool{false, true} {
		e := newEnv(t)
		store := e.failingLog(t)
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
		diff(t, fmt.Sprintf("fail=%v: overruns recorded", fail), !fail, hasType(e.log, dsh.StartListenerOverrunType))
		closeWithin(t, a)
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

// A retry delay too long for a time.Duration waits (the longest Duration), as asked: it
// once wrapped to a negative delay and retried at once.
func TestRequestErrorRetryDelayPastADuration(t *testing.T) {
	e := newEnv(t, llm.ScriptedResponse{Error: &llm.ScriptedError{Message: "slow down", Code: "rate_limit"}}, text("fine"))
	decided := make(chan struct{})
	e.reg.OnRequestError(func(ctx context.Context, p *dsh.RequestErrorPayload, next dsh.RequestErrorNext) (dsh.RequestErrorDecision, error) {
		d := math.MaxInt
		close(decided)
		return dsh.RequestErrorRetry{DelayMS: &d}, nil
	})
	a := e.agent()
	followup(t, a, "u1", "go")
	<-decided
	time.Sleep(100 * time.Millisecond) // a wrapped delay would have retried by now
	a.Cancel(dsh.CancelUser{}, true)
	wait(t, a)
	diff(t, "requests", 1, len(e.requests()))
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
