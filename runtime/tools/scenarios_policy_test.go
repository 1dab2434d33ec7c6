package tools

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/approval"
)

// Scenario 61: a model's "not json" reaches the body as that raw string; "" as {}.
func TestModelArguments(t *testing.T) {
	e := newEnv(t)
	var got []string
	e.register(t, Definition{Name: "raw", Run: func(ctx context.Context, rc *RunContext) (any, error) {
		got = append(got, string(rc.Arguments()))
		return "ok", nil
	}})
	for _, raw := range []string{"not json", "", `{"a":1}`} {
		r := e.rt.Execute(context.Background(), Input{CallID: "c1", Name: "raw", Arguments: ModelArguments(raw)})
		successOf(t, r)
	}
	want := []string{`"not json"`, `{}`, `{"a":1}`}
	if !slices.Equal(got, want) {
		t.Errorf("body arguments = %q, want %q", got, want)
	}
}

// Scenario 62: a structured body error keeps its info; presentationMeta becomes the meta.
func TestHarnessErrorAndMeta(t *testing.T) {
	e := newEnv(t)
	e.register(t, toolDef("boom", func(ctx context.Context, rc *RunContext) (any, error) {
		return nil, NewError("BOOM", "exploded")
	}))
	def := toolDef("card", func(ctx context.Context, rc *RunContext) (any, error) { return "ok", nil })
	def.Output.PresentationMeta = func(args, value json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"presentation":"diff-card"}`), nil
	}
	e.register(t, def)

	r := e.exec(context.Background(), "boom", `{}`)
	wantOutcome(t, r, `{"kind":"failure","error":{"message":"exploded","info":{"name":"HarnessError","code":"BOOM"}},
		"content":[{"kind":"text","text":"Error: exploded"}]}`)
	r = e.exec(context.Background(), "card", `{}`)
	if got := string(successOf(t, r).Meta); got != `{"presentation":"diff-card"}` {
		t.Errorf("meta = %s", got)
	}
}

// Scenario 63: a post-execute content replacement keeps the call's identity.
func TestPostReplacesContentKeepsCallID(t *testing.T) {
	e := newEnv(t)
	e.register(t, echoDef())
	e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		return dsh.PostToolAccept{Content: []dsh.ContentBlock{dsh.TextBlock{Text: "rewritten"}}}, nil
	})
	r := e.rt.Execute(context.Background(), Input{CallID: "model-call-7", Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)})
	if r.Exec.CallID != "model-call-7" || text(r) != "rewritten" {
		t.Errorf("callId %q, text %q", r.Exec.CallID, text(r))
	}
	if string(successOf(t, r).Value) != `"hi"` {
		t.Errorf("value changed: %s", successOf(t, r).Value)
	}
}

// Scenario 64: echo("hi") succeeds; tools/result observes an equal result.
func TestEcho(t *testing.T) {
	e := newEnv(t)
	e.register(t, echoDef())
	var observed dsh.ToolExecutionResult
	e.hooks.OnToolResult(func(ctx context.Context, p *dsh.ToolResultPayload) { observed = p.Result })
	r := e.exec(context.Background(), "echo", `{"text":"hi"}`)
	want := `{"kind":"success","value":"hi","content":[{"kind":"text","text":"hi"}]}`
	wantOutcome(t, r, want)
	if got, _ := json.Marshal(observed); !jsonEqual(string(got), want) {
		t.Errorf("observed %s", got)
	}
}

// Scenario 66: a pre-execute deny skips tools/execute and the body; post-execute still runs
// and cannot change the pipeline's result by mutating its payload.
func TestPreExecuteDeny(t *testing.T) {
	e := newEnv(t)
	var rec recorder
	e.register(t, toolDef("echo", func(ctx context.Context, rc *RunContext) (any, error) {
		rec.add("body")
		return "hi", nil
	}))
	e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		return dsh.NewPreToolDeny("nope"), nil
	})
	e.hooks.WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
		rec.add("execute")
		return next.Call(ctx)
	})
	e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		rec.add("post")
		f := p.Result.(dsh.ToolFailure)
		f.Content[0] = dsh.TextBlock{Text: "mutated"} // the payload is a copy
		return next.Call(ctx)
	})
	r := e.exec(context.Background(), "echo", `{}`)
	wantOutcome(t, r, `{"kind":"failure","error":{"message":"nope"},"content":[{"kind":"text","text":"Error: nope"}]}`)
	if got := rec.get(); !slices.Equal(got, []string{"post"}) {
		t.Errorf("phases = %v, want [post]", got)
	}
}

// Scenario 67: ask without an approval seam denies with the ask reason, or a default.
func TestAskWithoutApprover(t *testing.T) {
	for _, tc := range []struct {
		reason *string
		want   string
	}{
		{ptr("needs approval"), "Error: needs approval"},
		{nil, `Error: permission to use tool "echo" was requested, but it has not been granted (no one can answer here)`},
		{ptr(""), `Error: permission to use tool "echo" was requested, but it has not been granted (no one can answer here)`},
	} {
		e := newEnv(t)
		e.register(t, echoDef())
		e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
			return dsh.PreToolAsk{Reason: tc.reason}, nil
		})
		r := e.exec(context.Background(), "echo", `{"text":"hi"}`)
		if text(r) != tc.want {
			t.Errorf("text = %q, want %q", text(r), tc.want)
		}
		wantInfo(t, r, "", "")
	}
}

func ptr[T any](v T) *T { return &v }

type ctxKey struct{}

// Scenario 68: allowed-once runs the tool; the request carries agent, tool, call, reason and
// the caller's context.
func TestAskAllowedOnce(t *testing.T) {
	var (
		seen    []approval.Request
		seenCtx context.Context
	)
	approver := approval.ApproverFunc(func(ctx context.Context, req approval.Request) (dsh.ApprovalOutcome, error) {
		seen, seenCtx = append(seen, req), ctx
		return dsh.ApprovalOutcomeAllowedOnce, nil
	})
	e := newEnv(t, WithApprover(approver))
	e.register(t, echoDef())
	e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		return dsh.PreToolAsk{Reason: ptr("hook wants a human")}, nil
	})
	ctx := context.WithValue(context.Background(), ctxKey{}, "caller")
	r := e.rt.Execute(ctx, Input{CallID: "c1", Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`), AgentID: "a1"})
	if text(r) != "hi" || r.IsError() {
		t.Fatalf("result %s", outcomeJSON(t, r))
	}
	want := []approval.Request{{AgentID: "a1", ToolName: "echo", CallID: "c1", Reason: "hook wants a human",
		Arguments: json.RawMessage(`{"text":"hi"}`), ArgsDigest: ArgsDigest(json.RawMessage(`{"text":"hi"}`))}}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("requests = %+v", seen)
	}
	if seenCtx.Value(ctxKey{}) != "caller" {
		t.Error("the approver did not get the caller's context")
	}
}

// Scenario 69: the other outcomes, and an agent-less call, deny with their texts.
func TestAskOutcomes(t *testing.T) {
	for _, tc := range []struct {
		outcome dsh.ApprovalOutcome
		agent   string
		want    string
		asked   bool
	}{
		{dsh.ApprovalOutcomeRejected, "a1", `Error: the user rejected tool "echo"`, true},
		{dsh.ApprovalOutcomeCancelled, "a1", `Error: approval for tool "echo" was cancelled`, true},
		{dsh.ApprovalOutcomeUnavailable, "a1", `Error: tool "echo" requires approval, but no approval channel is available`, true},
		{dsh.ApprovalOutcomeAllowedOnce, "", `Error: tool "echo" requires approval, but the call has no agent to route it through`, false},
		{"yolo", "a1", `Error: unreachable: approval returned the unknown outcome "yolo"`, true},
	} {
		asked := false
		e := newEnv(t, WithApprover(approval.ApproverFunc(func(ctx context.Context, req approval.Request) (dsh.ApprovalOutcome, error) {
			asked = true
			return tc.outcome, nil
		})))
		e.register(t, echoDef())
		e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
			return dsh.NewPreToolAsk(), nil
		})
		r := e.rt.Execute(context.Background(), Input{CallID: "c1", Name: "echo", Arguments: json.RawMessage(`{}`), AgentID: tc.agent})
		if text(r) != tc.want || asked != tc.asked {
			t.Errorf("%s: text %q asked %v, want %q asked %v", tc.outcome, text(r), asked, tc.want, tc.asked)
		}
	}
}

// Scenario 70: a caller abort while approval is pending gives ABORTED_BEFORE_DISPATCH even
// when the answer is allowed-once; the body never runs.
func TestAbortWhileApprovalPending(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	approver := approval.ApproverFunc(func(actx context.Context, req approval.Request) (dsh.ApprovalOutcome, error) {
		cancel()
		return dsh.ApprovalOutcomeAllowedOnce, nil
	})
	e := newEnv(t, WithApprover(approver))
	ran := false
	e.register(t, toolDef("probe", func(ctx context.Context, rc *RunContext) (any, error) { ran = true; return "", nil }))
	e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		return dsh.NewPreToolAsk(), nil
	})
	r := e.rt.Execute(ctx, Input{CallID: "c1", Name: "probe", Arguments: json.RawMessage(`{}`), AgentID: "a1"})
	wantInfo(t, r, NameAbort, CodeAbortedBeforeDispatch)
	if ran {
		t.Error("the body ran")
	}

	// The same through the approval Service, which maps the abort to cancelled.
	ctx, cancel = context.WithCancel(context.Background())
	svc := approval.NewService()
	svc.AddAnswerer(approval.AnswererFunc(func(actx context.Context, req approval.Request) (dsh.ApprovalOutcome, error) {
		cancel()
		<-actx.Done()
		return dsh.ApprovalOutcomeAllowedOnce, nil
	}))
	e.rt.approver = svc
	r = e.rt.Execute(ctx, Input{CallID: "c2", Name: "probe", Arguments: json.RawMessage(`{}`), AgentID: "a1"})
	wantInfo(t, r, NameAbort, CodeAbortedBeforeDispatch)
	if text(r) != "Error: tool call aborted before dispatch" || ran {
		t.Errorf("text %q ran %v", text(r), ran)
	}
}

// Scenario 71: guards [abstain, deny] deny with the first reason; the body never runs.
func TestGuardsFirstReasonWins(t *testing.T) {
	e := newEnv(t)
	ran := false
	e.register(t, toolDef("echo", func(ctx context.Context, rc *RunContext) (any, error) { ran = true; return "", nil }))
	e.hooks.Guard(func(ctx context.Context, p *dsh.GuardPayload) dsh.GuardVerdict { return dsh.GuardAbstain{} })
	e.hooks.Guard(func(ctx context.Context, p *dsh.GuardPayload) dsh.GuardVerdict {
		return dsh.NewGuardDeny("global denial")
	})
	e.hooks.Guard(func(ctx context.Context, p *dsh.GuardPayload) dsh.GuardVerdict { return dsh.NewGuardDeny("later") })
	r := e.exec(context.Background(), "echo", `{}`)
	wantOutcome(t, r, `{"kind":"failure","error":{"message":"global denial"},"content":[{"kind":"text","text":"Error: global denial"}]}`)
	if ran {
		t.Error("the body ran")
	}
}

// Scenario 72: a guard scoped to agent A denies A's calls even after an allowing
// pre-execute listener registered first; other agents run the tool; disposal lifts it.
func TestScopedGuard(t *testing.T) {
	e := newEnv(t)
	e.register(t, echoDef())
	e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		return dsh.PreToolAllow{}, nil
	})
	scope := e.hooks.Plugin("policy").ForAgent("A")
	scope.Guard(func(ctx context.Context, p *dsh.GuardPayload) dsh.GuardVerdict {
		return dsh.NewGuardDeny("terminal policy")
	})
	run := func(agent string) Result {
		return e.rt.Execute(context.Background(), Input{CallID: "c1", Name: "echo", Arguments: json.RawMessage(`{"text":"ok"}`), AgentID: agent})
	}
	if r := run("A"); text(r) != "Error: terminal policy" {
		t.Errorf("A: %q", text(r))
	}
	if r := run("B"); text(r) != "ok" {
		t.Errorf("B: %q", text(r))
	}
	scope.Close()
	if r := run("A"); text(r) != "ok" {
		t.Errorf("A after disposal: %q", text(r))
	}
}

// Scenario 73: a guard registered while guards run is consulted by the same run.
func TestGuardRegisteredDuringEvaluation(t *testing.T) {
	e := newEnv(t)
	e.register(t, echoDef())
	registered := false
	e.hooks.Guard(func(ctx context.Context, p *dsh.GuardPayload) dsh.GuardVerdict {
		if !registered {
			registered = true
			e.hooks.Guard(func(ctx context.Context, p *dsh.GuardPayload) dsh.GuardVerdict { return dsh.NewGuardDeny("late guard") })
		}
		return dsh.GuardAbstain{}
	})
	if r := e.exec(context.Background(), "echo", `{}`); text(r) != "Error: late guard" {
		t.Errorf("text %q", text(r))
	}
}

// Scenario 74: a failing pre-execute, tools/execute or post-execute listener is a failure
// with its message; info only for a structured error.
func TestThrowingListeners(t *testing.T) {
	for _, phase := range []string{"pre", "execute", "post"} {
		for _, err := range []error{errors.New("hook broke"), NewError("DENIED", "denied")} {
			e := newEnv(t)
			e.register(t, echoDef())
			switch phase {
			case "pre":
				e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
					return nil, err
				})
			case "execute":
				e.hooks.WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
					panic(err)
				})
			case "post":
				e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
					return nil, err
				})
			}
			r := e.exec(context.Background(), "echo", `{"text":"hi"}`)
			msg := err.Error()
			if phase == "execute" {
				msg = "panic: " + msg // a wrapper has no error result: it panics
			}
			info := ""
			if _, structured := err.(*Error); structured {
				info = `,"info":{"name":"HarnessError","code":"DENIED"}`
			}
			wantOutcome(t, r, `{"kind":"failure","error":{"message":"`+msg+`"`+info+`},"content":[{"kind":"text","text":"Error: `+msg+`"}]}`)
		}
	}
}

// Scenario 75: a failing body arrives at the wrappers as a failure result, and post-execute
// sees it too.
func TestThrownBodyNormalizedBeforeWrapper(t *testing.T) {
	e := newEnv(t)
	e.register(t, toolDef("boom", func(ctx context.Context, rc *RunContext) (any, error) {
		return nil, NewError("BOOM", "kaboom")
	}))
	var seen, postSaw dsh.ToolExecutionResult
	e.hooks.WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
		seen = next.Call(ctx)
		return seen
	})
	e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		postSaw = p.Result
		return next.Call(ctx)
	})
	r := e.exec(context.Background(), "boom", `{}`)
	f, ok := seen.(dsh.ToolFailure)
	if !ok || f.Error.Message != "kaboom" || f.Error.Info == nil || *f.Error.Info != (dsh.ToolErrorInfo{Name: "HarnessError", Code: "BOOM"}) {
		t.Errorf("wrapper saw %#v", seen)
	}
	if postSaw.Kind() != dsh.ToolFailureKind || text(r) != "Error: kaboom" {
		t.Errorf("post saw %v, text %q", postSaw.Kind(), text(r))
	}
}

// Scenario 76: an unknown tool reaches policy and fails at dispatch with UNKNOWN_TOOL.
func TestUnknownTool(t *testing.T) {
	e := newEnv(t)
	var rec recorder
	e.phaseCounter(&rec)
	r := e.exec(context.Background(), "nope", `{}`)
	wantOutcome(t, r, `{"kind":"failure","error":{"message":"unknown tool \"nope\"","info":{"name":"ToolNotFoundError","code":"UNKNOWN_TOOL"}},
		"content":[{"kind":"text","text":"Error: unknown tool \"nope\""}]}`)
	if got := rec.get(); !slices.Equal(got, []string{"pre", "execute", "post", "result"}) {
		t.Errorf("phases = %v", got)
	}
}
