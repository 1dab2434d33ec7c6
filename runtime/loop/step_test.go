package loop

import (
	"context"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/tools"
)

// The step of SEMANTICS.md B §5.3: model failures, agent/request-error, agent/request and
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
