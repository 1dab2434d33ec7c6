package loop

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
)

// The step of docs/design/SEMANTICS.md#53-step: model failures, agent/request-error, agent/request and
// the request header.

func TestStreamErrorMidToolCallEndsTurnError(t *testing.T) {
	e := newEnv(t, llm.ScriptedResponse{Text: "let me", ToolCalls: []llm.ScriptedToolCall{{ID: "c1", Name: "echo"}},
		Error: &llm.ScriptedError{Message: "overloaded", Code: "overloaded"}})
	e.register(okTool("echo", false))
	var agentErrors []dsh.LLMFailure
	e.reg.OnAgentError(func(ctx context.Context, p *dsh.AgentErrorPayload) { agentErrors = append(agentErrors, p.Error) })
	var attempts []int
	e.reg.OnRequestError(func(ctx context.Context, p *dsh.RequestErrorPayload, next dsh.RequestErrorNext) (dsh.RequestErrorDecision, error) {
		attempts = append(attempts, p.Attempt)
		return next.Call(ctx)
	})
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	want := dsh.LLMFailure{Message: "overloaded", Code: "overloaded"}
	diff(t, "turn/end", []dsh.TurnEnd{{Turn: 1, Reason: dsh.TurnEndError{Error: want}}}, records[dsh.TurnEnd](t, e.log))
	diff(t, "agent/error", []dsh.LLMFailure{want}, agentErrors)
	diff(t, "request-error attempts", []int{1}, attempts)
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*4 step/end turn/end")
}

func TestTransportErrorEndsTurnError(t *testing.T) {
	e := newEnv(t, llm.ScriptedResponse{TransportError: "dial tcp: connection refused"})
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "reasons", []string{`{"kind":"error","error":{"message":"dial tcp: connection refused","code":"UNKNOWN"}}`}, reasons(t, e.log))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context step/end turn/end")
}

func TestRequestErrorRetryWithinStep(t *testing.T) {
	e := newEnv(t, llm.ScriptedResponse{Error: &llm.ScriptedError{Message: "slow down", Code: "rate_limit"}}, text("fine"))
	var failures []string
	e.reg.OnRequestError(func(ctx context.Context, p *dsh.RequestErrorPayload, next dsh.RequestErrorNext) (dsh.RequestErrorDecision, error) {
		failures = append(failures, p.Failure.Code)
		delay := 1
		return dsh.RequestErrorRetry{DelayMS: &delay}, nil
	})
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "failures", []string{"rate_limit"}, failures)
	diff(t, "requests", 2, len(e.requests()))
	diff(t, "steps", 1, len(records[dsh.StepStart](t, e.log)))
	diff(t, "reasons", []string{`{"kind":"completed"}`}, reasons(t, e.log))
	diff(t, "request 2", []string{"user:go"}, texts(e.requests()[1]))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*3 assistant step/end turn/end")
}

func TestRetryAfterCancelIsIgnored(t *testing.T) {
	e := newEnv(t, llm.ScriptedResponse{Error: &llm.ScriptedError{Message: "boom"}}, text("never"))
	e.reg.OnRequestError(func(ctx context.Context, p *dsh.RequestErrorPayload, next dsh.RequestErrorNext) (dsh.RequestErrorDecision, error) {
		p.Agent.(*Agent).Cancel(dsh.CancelUser{}, false)
		return dsh.RequestErrorRetry{}, nil
	})
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "requests", 1, len(e.requests()))
	diff(t, "reasons", []string{abortedUser}, reasons(t, e.log))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk step/end turn/end")
}

func TestRequestListenerChangesHeader(t *testing.T) {
	e := newEnv(t, text("one"), text("two"))
	e.cfg.System = "be brief"
	e.reg.OnRequest(func(ctx context.Context, p *dsh.RequestPayload) (dsh.RequestDecision, error) {
		if p.Turn == 1 {
			return dsh.RequestPass{}, nil
		}
		cfg := p.Request.Config
		cfg.Model = "m2"
		return dsh.RequestUse{Config: cfg}, nil
	})
	a := e.agent()
	followup(t, a, "u1", "one")
	wait(t, a)
	followup(t, a, "u2", "two")
	wait(t, a)
	diff(t, "header reasons", []dsh.HeaderReason{dsh.HeaderReasonInitial, dsh.HeaderReasonChange},
		fields(t, e.log, func(r dsh.RequestHeaderLogged) dsh.HeaderReason { return r.Reason }))
	diff(t, "contexts", []string{"m1", "m2"}, fields(t, e.log, func(r dsh.RequestContext) string { return r.Model }))
	reqs := e.requests()
	diff(t, "models", []string{"m1", "m2"}, []string{reqs[0].Config.Model, reqs[1].Config.Model})
	diff(t, "system", "be brief", reqs[1].System)
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant step/end turn/end spliced turn/start spliced step/start user header context chunk*2 assistant step/end turn/end")
}

func TestRequestWithoutModelFails(t *testing.T) {
	e := newEnv(t, text("never"))
	e.cfg.LLM = dsh.LLMCallConfig{}
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "reasons", []string{`{"kind":"error","error":{"message":"` + ErrNoModel.Error() + `","code":"UNKNOWN"}}`}, reasons(t, e.log))
	diff(t, "requests", 0, len(e.requests()))
	checkLog(t, e.log, "spliced turn/start spliced step/start user step/end turn/end")
}

func TestToolsOfferedInCanonicalOrder(t *testing.T) {
	e := newEnv(t, text("ok"))
	e.register(okTool("zeta", false))
	e.register(okTool("alpha", false))
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	var names []string
	for _, s := range e.requests()[0].Tools {
		names = append(names, s.Name)
	}
	diff(t, "tools", []string{"alpha", "zeta"}, names)
	diff(t, "header tools", [][]string{{"alpha", "zeta"}}, fields(t, e.log, func(r dsh.RequestHeaderLogged) []string { return r.Header.Tools }))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant step/end turn/end")
}

func TestToolCallSourcesAndArguments(t *testing.T) {
	e := newEnv(t, llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{
		{ID: "c1", Name: "echo", Arguments: []byte(`"not json"`)}, {ID: "c2", Name: "echo", Arguments: []byte(`""`)}}}, text("done"))
	var args recorder
	e.register(toolDef("echo", false, func(ctx context.Context, rc *tools.RunContext) (any, error) {
		args.add(string(rc.Arguments()))
		return "ok", nil
	}))
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "raw arguments", []string{"not json", ""}, fields(t, e.log, func(r dsh.ToolCall) string { return r.Arguments }))
	diff(t, "body arguments", []string{`"not json"`, `{}`}, args.list())
	// Every tool/result cites its tool/call.
	var callSeqs, cited []int64
	for _, ev := range events(e.log) {
		switch ev.Type {
		case dsh.ToolCallType:
			callSeqs = append(callSeqs, ev.Seq)
		case dsh.ToolResultLoggedType:
			cited = append(cited, ev.SourceEventSeqs...)
		}
	}
	diff(t, "sources", callSeqs, cited)
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*3 assistant call result call result step/end step/start chunk*2 assistant step/end turn/end")
}

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
