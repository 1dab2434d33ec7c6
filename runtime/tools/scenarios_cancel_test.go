package tools

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
)

// Scenario 89: a pre-aborted call runs no phase but finalize and tools/result, ends
// ABORTED_BEFORE_DISPATCH, and exposes a copy of the arguments.
func TestPreAborted(t *testing.T) {
	e := newEnv(t)
	var rec recorder
	e.register(t, toolDef("domain-abort", func(ctx context.Context, rc *RunContext) (any, error) { rec.add("body"); return "", nil }))
	e.phaseCounter(&rec)
	var observed *dsh.ToolResultPayload
	e.hooks.OnToolResult(func(ctx context.Context, p *dsh.ToolResultPayload) { observed = p })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	args := json.RawMessage(`{"nested":{"value":1}}`)
	r := e.rt.Execute(ctx, Input{CallID: "pre-aborted", Name: "domain-abort", Arguments: args})
	wantOutcome(t, r, `{"kind":"failure","error":{"message":"tool call aborted before dispatch","info":{"name":"AbortError","code":"ABORTED_BEFORE_DISPATCH"}},
		"content":[{"kind":"text","text":"Error: tool call aborted before dispatch"}]}`)
	if got := rec.get(); !slices.Equal(got, []string{"result"}) {
		t.Errorf("phases = %v", got)
	}
	if observed == nil || observed.Exec.Token.IsZero() || string(observed.Exec.Arguments) != string(args) {
		t.Fatalf("observed exec %+v", observed)
	}
	observed.Exec.Arguments[0] = 'X'
	if string(args) != `{"nested":{"value":1}}` || string(r.Exec.Arguments) != string(args) {
		t.Error("the observer's arguments alias the caller's or the result's")
	}
}

// Scenario 90: non-JSON arguments fail even when pre-aborted; exec.Arguments is absent.
func TestNonJSONArgumentsPreAborted(t *testing.T) {
	e := newEnv(t)
	var rec recorder
	e.phaseCounter(&rec)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, args := range []string{`{"invalid": `, ``, `NaN`, `{"a":-0}`, `1e999`, "\"\xff\""} {
		r := e.rt.Execute(ctx, Input{CallID: "c1", Name: "missing", Arguments: json.RawMessage(args)})
		wantOutcome(t, r, `{"kind":"failure","error":{"message":"tool execution arguments must be losslessly JSON-serializable"},
			"content":[{"kind":"text","text":"Error: tool execution arguments must be losslessly JSON-serializable"}]}`)
		if r.Exec.Arguments != nil {
			t.Errorf("%q: exec.Arguments = %s", args, r.Exec.Arguments)
		}
	}
	if got := rec.count("result"); got != 6 || len(rec.get()) != 6 {
		t.Errorf("phases = %v", rec.get())
	}
}

// Scenario 91: cancellation while pre-execute waits: a later allow is
// ABORTED_BEFORE_DISPATCH, a deny is kept, a failure is kept.
func TestCancelDuringPreExecute(t *testing.T) {
	for _, tc := range []struct {
		name   string
		decide func(ctx context.Context, next dsh.PreToolNext) (dsh.PreToolDecision, error)
		want   string
	}{
		{"allow", func(ctx context.Context, next dsh.PreToolNext) (dsh.PreToolDecision, error) { return next.Call(ctx) },
			"Error: tool call aborted before dispatch"},
		{"deny", func(ctx context.Context, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
			return dsh.NewPreToolDeny("policy denied the call"), nil
		}, "Error: policy denied the call"},
		{"throw", func(ctx context.Context, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
			return nil, errors.New("gate interrupted")
		}, "Error: gate interrupted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			ran := false
			e.register(t, toolDef("must-not-run", func(ctx context.Context, rc *RunContext) (any, error) { ran = true; return "", nil }))
			ctx, cancel := context.WithCancel(context.Background())
			e.hooks.OnPreTool(func(lctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
				cancel() // the caller cancels while the gate decides
				return tc.decide(lctx, next)
			})
			r := e.exec(ctx, "must-not-run", `{}`)
			if text(r) != tc.want || ran {
				t.Errorf("text %q ran %v", text(r), ran)
			}
		})
	}
}

// Scenario 92: a wrapper-swapped context: a caller abort during the wrapper's wait, or an
// already-cancelled replacement, is ABORTED_BEFORE_DISPATCH.
func TestWrapperSwappedContext(t *testing.T) {
	for _, tc := range []string{"caller-aborts", "replacement-aborted"} {
		t.Run(tc, func(t *testing.T) {
			e := newEnv(t)
			ran := false
			e.register(t, toolDef("must-not-run", func(ctx context.Context, rc *RunContext) (any, error) { ran = true; return "", nil }))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			e.hooks.WrapExecute(func(wctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
				replacement, rcancel := context.WithCancel(context.Background())
				defer rcancel()
				if tc == "caller-aborts" {
					cancel()
				} else {
					rcancel()
				}
				return next.Call(replacement)
			})
			r := e.exec(ctx, "must-not-run", `{}`)
			wantOutcome(t, r, `{"kind":"failure","error":{"message":"tool call aborted before dispatch","info":{"name":"AbortError","code":"ABORTED_BEFORE_DISPATCH"}},
				"content":[{"kind":"text","text":"Error: tool call aborted before dispatch"}]}`)
			if ran {
				t.Error("the body ran")
			}
		})
	}
	// A wrapper short-circuit overtaken by cancellation keeps its contexts.
	e := newEnv(t)
	e.register(t, echoDef())
	ctx, cancel := context.WithCancel(context.Background())
	e.hooks.WrapExecute(func(wctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
		cancel()
		return dsh.ToolSuccess{Value: json.RawMessage(`"wrapper success"`), AdditionalContexts: []dsh.UserMessage{ctxMsg("w", "wrapper")}}
	})
	r := e.exec(ctx, "echo", `{}`)
	wantInfo(t, r, NameAbort, CodeAbortedBeforeDispatch)
	if got := contextIDs(r); !slices.Equal(got, []string{"w"}) {
		t.Errorf("contexts = %v", got)
	}
}

// Scenario 93: a body completed with a deferred context; cancellation during the wrapper's
// wait gives ABORTED [child]; during post-execute's wait ABORTED [child, post].
func TestCancelAfterBody(t *testing.T) {
	body := func(ctx context.Context, rc *RunContext) (any, error) {
		return "body complete", rc.DeferContext(ctxMsg("child", "child"))
	}
	t.Run("wrapper", func(t *testing.T) {
		e := newEnv(t)
		e.register(t, toolDef("t", body))
		ctx, cancel := context.WithCancel(context.Background())
		e.hooks.WrapExecute(func(wctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
			r := next.Call(wctx)
			cancel()
			return r
		})
		r := e.exec(ctx, "t", `{}`)
		wantInfo(t, r, NameAbort, CodeAborted)
		if text(r) != "Error: tool call aborted" || !slices.Equal(contextIDs(r), []string{"child"}) {
			t.Errorf("text %q contexts %v", text(r), contextIDs(r))
		}
	})
	t.Run("post", func(t *testing.T) {
		e := newEnv(t)
		e.register(t, toolDef("t", body))
		ctx, cancel := context.WithCancel(context.Background())
		e.hooks.OnPostTool(func(pctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
			cancel()
			return dsh.PostToolAccept{AdditionalContexts: []dsh.UserMessage{ctxMsg("post", "post")}}, nil
		})
		r := e.exec(ctx, "t", `{}`)
		wantInfo(t, r, NameAbort, CodeAborted)
		if !slices.Equal(contextIDs(r), []string{"child", "post"}) {
			t.Errorf("contexts %v", contextIDs(r))
		}
	})
	t.Run("failure-kept", func(t *testing.T) {
		// A wrapper failure or a tool failure that settles after cancellation is kept.
		e := newEnv(t)
		e.register(t, toolDef("t", func(ctx context.Context, rc *RunContext) (any, error) {
			<-ctx.Done()
			return nil, NewError("TOOL_FAILURE", "tool failed")
		}))
		ctx, cancel := context.WithCancel(context.Background())
		go func() { time.Sleep(5 * time.Millisecond); cancel() }()
		r := e.exec(ctx, "t", `{}`)
		wantInfo(t, r, NameHarnessError, "TOOL_FAILURE")
	})
}

// Scenario 94: the body's context differs from the caller's and the wrapper's; a caller
// abort cancels it but not the wrapper's replacement; the result is ABORTED.
func TestFusedBodyContext(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	replacement, rcancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "wrapper"))
	defer rcancel()
	var bodyCtx context.Context
	entered := make(chan struct{})
	e.register(t, toolDef("cooperative", func(bctx context.Context, rc *RunContext) (any, error) {
		bodyCtx = bctx
		close(entered)
		<-bctx.Done()
		return "stopped", nil
	}))
	e.hooks.WrapExecute(func(wctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
		return next.Call(replacement)
	})
	go func() { <-entered; cancel() }()
	r := e.exec(ctx, "cooperative", `{}`)
	wantInfo(t, r, NameAbort, CodeAborted)
	if bodyCtx == ctx || bodyCtx == replacement {
		t.Error("the body ran under the caller's or the wrapper's own context")
	}
	if bodyCtx.Err() == nil || replacement.Err() != nil {
		t.Errorf("body ctx err %v, replacement err %v", bodyCtx.Err(), replacement.Err())
	}
	if bodyCtx.Value(ctxKey{}) != "wrapper" {
		t.Error("the body context lost the wrapper's values")
	}
}

// Scenario 95: post-execute runs under the caller's context whatever a wrapper passed on.
func TestPostSeesCallerContext(t *testing.T) {
	e := newEnv(t)
	e.register(t, echoDef())
	ctx := context.WithValue(context.Background(), ctxKey{}, "caller")
	e.hooks.WrapExecute(func(wctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
		return next.Call(context.WithValue(wctx, ctxKey{}, "wrapper"))
	})
	var postValue any
	e.hooks.OnPostTool(func(pctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		postValue = pctx.Value(ctxKey{})
		return next.Call(pctx)
	})
	successOf(t, e.exec(ctx, "echo", `{}`))
	if postValue != "caller" {
		t.Errorf("post-execute saw %v", postValue)
	}
}

// Scenario 96: an uncooperative body keeps Execute pending until it settles, then ABORTED
// with its deferred contexts — even when a wrapper returned without waiting for it.
func TestUncooperativeBody(t *testing.T) {
	e := newEnv(t)
	release := make(chan struct{})
	entered := make(chan struct{})
	e.register(t, toolDef("uncooperative", func(ctx context.Context, rc *RunContext) (any, error) {
		_ = rc.DeferContext(ctxMsg("nested", "nested"))
		close(entered)
		<-release
		return "settled", nil
	}))
	ctx, cancel := context.WithCancel(context.Background())
	var settled atomic.Bool
	done := make(chan Result)
	go func() {
		r := e.exec(ctx, "uncooperative", `{}`)
		settled.Store(true)
		done <- r
	}()
	<-entered
	cancel()
	time.Sleep(10 * time.Millisecond)
	if settled.Load() {
		t.Fatal("Execute returned before the body settled")
	}
	close(release)
	r := <-done
	wantInfo(t, r, NameAbort, CodeAborted)
	if !slices.Equal(contextIDs(r), []string{"nested"}) {
		t.Errorf("contexts %v", contextIDs(r))
	}

	// A timeout wrapper that returns its own failure without waiting still waits for the body.
	e = newEnv(t)
	release2, entered2 := make(chan struct{}), make(chan struct{})
	var bodyDone atomic.Bool
	e.register(t, toolDef("slow", func(ctx context.Context, rc *RunContext) (any, error) {
		close(entered2)
		<-release2
		bodyDone.Store(true)
		return "late", rc.DeferContext(ctxMsg("late", "slow"))
	}))
	e.hooks.WrapExecute(func(wctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
		go next.Call(wctx) //dshvet:allow nextonce the wrapper lets the body run on after it returned, on purpose
		<-entered2
		go func() { time.Sleep(5 * time.Millisecond); close(release2) }() //dshvet:allow ctxblock the release comes late on purpose
		return dsh.NewToolFailure(dsh.ToolError{Message: "timed out", Info: &dsh.ToolErrorInfo{Name: "TimeoutError", Code: "TOOL_TIMEOUT"}})
	})
	r = e.exec(context.Background(), "slow", `{}`)
	if !bodyDone.Load() {
		t.Error("Execute returned before the started body settled")
	}
	wantInfo(t, r, "TimeoutError", "TOOL_TIMEOUT")
	if !slices.Equal(contextIDs(r), []string{"late"}) {
		t.Errorf("contexts %v", contextIDs(r))
	}
}

// Scenario 97: a finalizer truncating to 32 characters applies to the failure of a
// throwing presentationMeta, once.
func TestFinalizeAfterMetaFailure(t *testing.T) {
	e := newEnv(t)
	calls := 0
	def := toolDef("throwing-meta", func(ctx context.Context, rc *RunContext) (any, error) { return "body", nil })
	def.Output.PresentationMeta = func(args, value json.RawMessage) (json.RawMessage, error) {
		panic("snapshot failed: snapshot failed: snapshot failed: ")
	}
	def.FinalizeContent = func(exec dsh.ToolExecution, r dsh.ToolExecutionResult) ([]dsh.ContentBlock, error) {
		calls++
		f := r.(dsh.ToolFailure)
		return []dsh.ContentBlock{dsh.TextBlock{Text: f.Content[0].(dsh.TextBlock).Text[:32]}}, nil
	}
	e.register(t, def)
	r := e.exec(context.Background(), "throwing-meta", `{}`)
	if got := text(r); got != `Error: tool "throwing-meta" retu` || len(got) != 32 || calls != 1 || !r.IsError() {
		t.Errorf("text %q (%d) calls %d", got, len(got), calls)
	}
}

// Scenario 98: a failing finalizer gives exactly the failure of its error, called once;
// returning nil keeps the content.
func TestThrowingFinalizer(t *testing.T) {
	e := newEnv(t)
	calls := 0
	def := echoDef()
	def.Name = "throwing-finalizer"
	def.FinalizeContent = func(dsh.ToolExecution, dsh.ToolExecutionResult) ([]dsh.ContentBlock, error) {
		calls++
		return nil, errors.New("finalizer violated its total contract")
	}
	e.register(t, def)
	wantOutcome(t, e.exec(context.Background(), "throwing-finalizer", `{}`),
		`{"kind":"failure","error":{"message":"finalizer violated its total contract"},"content":[{"kind":"text","text":"Error: finalizer violated its total contract"}]}`)
	if calls != 1 {
		t.Errorf("finalizer calls %d", calls)
	}

	def = echoDef()
	def.Name = "identity-finalizer"
	def.FinalizeContent = func(dsh.ToolExecution, dsh.ToolExecutionResult) ([]dsh.ContentBlock, error) { calls++; return nil, nil }
	e.register(t, def)
	wantOutcome(t, e.exec(context.Background(), "identity-finalizer", `{}`),
		`{"kind":"success","value":"","content":[{"kind":"text","text":""}]}`)

	def.Name = "panicking-finalizer"
	def.FinalizeContent = func(dsh.ToolExecution, dsh.ToolExecutionResult) ([]dsh.ContentBlock, error) { panic("no") }
	e.register(t, def)
	if r := e.exec(context.Background(), "panicking-finalizer", `{}`); text(r) != "Error: panic: no" {
		t.Errorf("panicking finalizer: %q", text(r))
	}
}

// Scenario 99: the finalizer captured at creation runs although the tool is unregistered
// during pre-execute, which then fails with a structured error.
func TestCapturedFinalizer(t *testing.T) {
	e := newEnv(t)
	unregister := e.register(t, Definition{Name: "bounded",
		Run: func(ctx context.Context, rc *RunContext) (any, error) { return "body", nil },
		FinalizeContent: func(exec dsh.ToolExecution, r dsh.ToolExecutionResult) ([]dsh.ContentBlock, error) {
			if exec.Name != "bounded" || r.Kind() != dsh.ToolFailureKind {
				t.Errorf("finalizer got %s %s", exec.Name, r.Kind())
			}
			return []dsh.ContentBlock{dsh.TextBlock{Text: "bounded failure"}}, nil
		}})
	e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		unregister()
		return nil, NewError("POLICY_FAILED", "policy failed")
	})
	wantOutcome(t, e.exec(context.Background(), "bounded", `{}`),
		`{"kind":"failure","error":{"message":"policy failed","info":{"name":"HarnessError","code":"POLICY_FAILED"}},
		"content":[{"kind":"text","text":"bounded failure"}]}`)
}

// Scenario 100: a nested call gets no meta; a composite forwards a nested conclusion; a
// nested result blocked by post-execute carries none.
func TestNestedCalls(t *testing.T) {
	e := newEnv(t)
	def := echoDef()
	def.Name = "meta-suppression"
	def.Output.PresentationMeta = func(args, value json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"card":true}`), nil
	}
	e.register(t, def)
	direct := e.exec(context.Background(), "meta-suppression", `{}`)
	nested := e.rt.Execute(context.Background(), Input{CallID: "nested", Name: "meta-suppression", Arguments: json.RawMessage(`{}`), Parent: dsh.NewToken()})
	if string(successOf(t, direct).Meta) != `{"card":true}` || successOf(t, nested).Meta != nil {
		t.Errorf("direct meta %s, nested meta %s", successOf(t, direct).Meta, successOf(t, nested).Meta)
	}

	e.register(t, toolDef("terminal-nested", func(ctx context.Context, rc *RunContext) (any, error) {
		rc.ConcludeTurn()
		return "terminal", rc.DeferContext(ctxMsg("inner", "inner"))
	}))
	var parents []dsh.Token
	var roots []string
	e.hooks.OnToolResult(func(ctx context.Context, p *dsh.ToolResultPayload) {
		if p.Exec.Name == "terminal-nested" {
			parents, roots = append(parents, p.Exec.Parent), append(roots, p.Exec.RootCallID)
		}
	})
	var tokens []dsh.Token
	e.register(t, toolDef("composite", func(ctx context.Context, rc *RunContext) (any, error) {
		tokens = append(tokens, rc.Exec().Token)
		r := rc.Execute(ctx, Input{CallID: "nested-1", Name: "terminal-nested", Arguments: json.RawMessage(`{}`)})
		if err := rc.Forward(r); err != nil {
			return nil, err
		}
		if r.IsError() {
			return "nested failed, composite recovered", nil
		}
		return "nested succeeded", nil
	}))
	ok := e.rt.Execute(context.Background(), Input{CallID: "composite-ok", Name: "composite", Arguments: json.RawMessage(`{}`), AgentID: "a1"})
	if !ok.ConcludesTurn() || text(ok) != "nested succeeded" || !slices.Equal(contextIDs(ok), []string{"inner"}) {
		t.Errorf("composite: %s", outcomeJSON(t, ok))
	}
	if len(parents) != 1 || parents[0] != tokens[0] || roots[0] != "composite-ok" {
		t.Errorf("nested parent/root = %v %v", parents, roots)
	}

	veto := e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		if p.Exec.Name != "terminal-nested" {
			return next.Call(ctx)
		}
		return dsh.NewPostToolBlock([]dsh.ContentBlock{dsh.TextBlock{Text: "nested success rejected"}}), nil
	})
	defer veto()
	recovered := e.exec(context.Background(), "composite", `{}`)
	if recovered.IsError() || recovered.ConcludesTurn() || text(recovered) != "nested failed, composite recovered" {
		t.Errorf("vetoed composite: %s", outcomeJSON(t, recovered))
	}
}

// Scenario 101: every phase of one call sees the same token; calls get distinct tokens;
// the body's arguments are a copy of the caller's, and the caller's stay untouched.
func TestTokensAndFrozenArguments(t *testing.T) {
	e := newEnv(t)
	var rec recorder
	tokens := map[string][]dsh.Token{}
	add := func(phase string, tok dsh.Token) {
		rec.add(phase)
		tokens[phase] = append(tokens[phase], tok)
	}
	e.register(t, Definition{Name: "probe", Run: func(ctx context.Context, rc *RunContext) (any, error) {
		add("body", rc.Exec().Token)
		args := rc.Arguments()
		args[2] = 'X' // mutating the body's copy changes nothing else
		return "ok", nil
	}})
	e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		add("pre", p.Exec.Token)
		p.Exec.Arguments[2] = 'Y' //dshvet:allow payloadwrite the test checks that writing the payload changes nothing
		return next.Call(ctx)
	})
	e.hooks.Guard(func(ctx context.Context, p *dsh.GuardPayload) dsh.GuardVerdict {
		add("guard", p.Exec.Token)
		if string(p.Exec.Arguments) != `{"a":1}` {
			t.Errorf("guard saw %s", p.Exec.Arguments)
		}
		return dsh.GuardAbstain{}
	})
	e.hooks.WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
		add("execute", p.Exec.Token)
		return next.Call(ctx)
	})
	e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		add("post", p.Exec.Token)
		return next.Call(ctx)
	})
	args := json.RawMessage(`{"a":1}`)
	r1 := e.rt.Execute(context.Background(), Input{CallID: "c1", Name: "probe", Arguments: args})
	r2 := e.rt.Execute(context.Background(), Input{CallID: "c2", Name: "probe", Arguments: args})
	for phase, toks := range tokens {
		if len(toks) != 2 || toks[0] != r1.Exec.Token || toks[1] != r2.Exec.Token {
			t.Errorf("%s tokens %v, want [%v %v]", phase, toks, r1.Exec.Token, r2.Exec.Token)
		}
	}
	if r1.Exec.Token == r2.Exec.Token || r1.Exec.Token.IsZero() {
		t.Error("tokens are not distinct")
	}
	if string(args) != `{"a":1}` || string(r1.Exec.Arguments) != `{"a":1}` {
		t.Errorf("arguments changed: caller %s, exec %s", args, r1.Exec.Arguments)
	}
}
