package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/approval"
)

// TestFailureTable_Section3_2 checks every tools row of docs/design/SEMANTICS.md#32-what-a-failing-listener-becomes: what a
// failure at each point becomes, and which later phases still run.
func TestFailureTable_Section3_2(t *testing.T) {
	type row struct {
		name string
		// install makes the point fail with err.
		install func(e *env, err error)
		// phases are the phases that run, in order, besides the body.
		phases []string
		// body says whether the body runs.
		body bool
		// contexts are the contexts the result keeps (the body defers "d").
		contexts []string
		want     string
	}
	rows := []row{
		{"pre-execute", func(e *env, err error) {
			e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
				return nil, err
			})
		}, []string{"finalize", "result"}, false, nil, "Error: point failed"},
		{"approval", func(e *env, err error) {
			e.rt.approver = approval.ApproverFunc(func(context.Context, approval.Request) (dsh.ApprovalOutcome, error) { return "", err })
			e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
				return dsh.NewPreToolAsk(), nil
			})
		}, []string{"finalize", "result"}, false, nil, "Error: point failed"},
		{"guard", func(e *env, err error) {
			e.hooks.Guard(func(ctx context.Context, p *dsh.GuardPayload) dsh.GuardVerdict { panic(err) })
		}, []string{"finalize", "result"}, false, nil, "Error: panic: point failed"},
		{"tools/execute", func(e *env, err error) {
			e.hooks.WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
				next.Call(ctx)
				panic(err)
			})
		}, []string{"finalize", "result"}, true, []string{"d"}, "Error: panic: point failed"},
		{"post-execute", func(e *env, err error) {
			e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
				return dsh.PostToolAccept{AdditionalContexts: []dsh.UserMessage{ctxMsg("p", "post")}}, err
			})
		}, []string{"post", "finalize", "result"}, true, []string{"d"}, "Error: point failed"},
		{"finalizeContent", nil, []string{"post", "finalize", "result"}, true, []string{"d"}, "Error: point failed"},
		{"tools/result", func(e *env, err error) {
			e.hooks.OnToolResult(func(ctx context.Context, p *dsh.ToolResultPayload) { panic(err) })
		}, []string{"post", "finalize", "result"}, true, []string{"d"}, "ok"},
	}
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			var rec recorder
			pointErr := errors.New("point failed")
			def := toolDef("t", func(ctx context.Context, rc *RunContext) (any, error) {
				rec.add("body")
				return "ok", rc.DeferContext(ctxMsg("d", "body"))
			})
			def.FinalizeContent = func(dsh.ToolExecution, dsh.ToolExecutionResult) ([]dsh.ContentBlock, error) {
				rec.add("finalize")
				if tc.name == "finalizeContent" {
					return nil, pointErr
				}
				return nil, nil
			}
			e.register(t, def)
			e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
				rec.add("post")
				return next.Call(ctx)
			})
			e.hooks.OnToolResult(func(ctx context.Context, p *dsh.ToolResultPayload) { rec.add("result") })
			if tc.install != nil {
				tc.install(e, pointErr)
			}
			r := e.rt.Execute(context.Background(), Input{CallID: "c1", Name: "t", Arguments: json.RawMessage(`{}`), AgentID: "a1"})
			want := tc.phases
			if tc.body {
				want = append([]string{"body"}, want...)
			}
			if got := rec.get(); !slices.Equal(got, want) {
				t.Errorf("phases = %v, want %v", got, want)
			}
			if text(r) != tc.want {
				t.Errorf("text %q, want %q", text(r), tc.want)
			}
			if got := contextIDs(r); !slices.Equal(got, tc.contexts) {
				t.Errorf("contexts = %v, want %v", got, tc.contexts)
			}
			if tc.name != "tools/result" && failureOfResult(t, r).Error.Info != nil {
				t.Errorf("a plain error got info %+v", failureOfResult(t, r).Error.Info)
			}
		})
	}
}

// Part A item 1: the body's context is cancelled by the caller's context and by the one
// the wrapper passed to next; a wrapper cannot detach the body from the caller.
func TestPartA1_BodyContextFusion(t *testing.T) {
	for _, tc := range []string{"caller", "wrapper"} {
		t.Run(tc, func(t *testing.T) {
			e := newEnv(t)
			entered := make(chan struct{})
			e.register(t, toolDef("t", func(ctx context.Context, rc *RunContext) (any, error) {
				close(entered)
				<-ctx.Done()
				return nil, context.Cause(ctx)
			}))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			wctx, wcancel := context.WithCancel(context.Background()) // detached from the caller
			defer wcancel()
			e.hooks.WrapExecute(func(_ context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
				return next.Call(wctx)
			})
			go func() {
				<-entered
				if tc == "caller" {
					cancel()
				} else {
					wcancel()
				}
			}()
			r := e.exec(ctx, "t", `{}`)
			if text(r) != "Error: context canceled" {
				t.Errorf("text %q", text(r))
			}
		})
	}
}

// Part A item 2: a second call of next is that listener's failure; nothing is skipped and
// the body runs once.
func TestPartA2_NextReused(t *testing.T) {
	for _, phase := range []string{"pre", "execute", "post"} {
		t.Run(phase, func(t *testing.T) {
			e := newEnv(t)
			runs := 0
			e.register(t, toolDef("t", func(ctx context.Context, rc *RunContext) (any, error) { runs++; return "ok", nil }))
			switch phase {
			case "pre":
				e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
					next.Call(ctx)
					return next.Call(ctx) //dshvet:allow nextonce the test checks that a second call fails
				})
			case "execute":
				e.hooks.WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
					r := next.Call(ctx)
					next.Call(ctx) //dshvet:allow nextonce the test checks that a second call fails
					return r
				})
			case "post":
				e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
					d, _ := next.Call(ctx)
					next.Call(ctx) //dshvet:allow nextonce the test checks that a second call fails
					return d, nil
				})
			}
			r := e.exec(context.Background(), "t", `{}`)
			if text(r) != "Error: "+dsh.ErrNextReused.Error() {
				t.Errorf("text %q", text(r))
			}
			if want := map[string]int{"pre": 0, "execute": 1, "post": 1}[phase]; runs != want {
				t.Errorf("body ran %d times, want %d", runs, want)
			}
		})
	}
}

// Part A item 3 (every listener of an awaited notification runs) concerns
// agent/turn-stopping; its tools analogue: every tools/result observer runs even when an
// earlier one panics, and the outcome is unchanged.
func TestPartA3_EveryObserverRuns(t *testing.T) {
	e := newEnv(t)
	e.register(t, echoDef())
	var rec recorder
	e.hooks.OnToolResult(func(ctx context.Context, p *dsh.ToolResultPayload) { rec.add("1"); panic("observer broke") })
	e.hooks.OnToolResult(func(ctx context.Context, p *dsh.ToolResultPayload) { rec.add("2") })
	r := e.exec(context.Background(), "echo", `{"text":"hi"}`)
	if text(r) != "hi" || !slices.Equal(rec.get(), []string{"1", "2"}) {
		t.Errorf("text %q observers %v", text(r), rec.get())
	}
}

// Part A item 4: a panic at any point is the failure a returned error there becomes, with
// the panic value in the message.
func TestPartA4_PanicsAreFailures(t *testing.T) {
	boom := NewError("BOOM", "boom")
	for _, tc := range []struct {
		name    string
		install func(e *env, def *Definition)
		want    string
	}{
		{"pre-execute", func(e *env, _ *Definition) {
			e.hooks.OnPreTool(func(context.Context, *dsh.PreToolPayload, dsh.PreToolNext) (dsh.PreToolDecision, error) { panic(boom) })
		}, "panic: boom"},
		{"approver", func(e *env, _ *Definition) {
			e.rt.approver = approval.ApproverFunc(func(context.Context, approval.Request) (dsh.ApprovalOutcome, error) { panic(boom) })
			e.hooks.OnPreTool(func(context.Context, *dsh.PreToolPayload, dsh.PreToolNext) (dsh.PreToolDecision, error) {
				return dsh.NewPreToolAsk(), nil
			})
		}, "panic: boom"},
		{"guard", func(e *env, _ *Definition) {
			e.hooks.Guard(func(context.Context, *dsh.GuardPayload) dsh.GuardVerdict { panic(boom) })
		}, "panic: boom"},
		{"wrapper", func(e *env, _ *Definition) {
			e.hooks.WrapExecute(func(context.Context, *dsh.ExecutePayload, dsh.ExecuteNext) dsh.ToolExecutionResult { panic(boom) })
		}, "panic: boom"},
		{"body", func(e *env, def *Definition) {
			def.Run = func(context.Context, *RunContext) (any, error) { panic(boom) }
		}, "panic: boom"},
		{"render", func(e *env, def *Definition) {
			def.Output.Render = func(args, value json.RawMessage) ([]dsh.ContentBlock, error) { panic(boom) }
		}, `tool "t" returned invalid output: output.render failed: panic: boom`},
		{"post-execute", func(e *env, _ *Definition) {
			e.hooks.OnPostTool(func(context.Context, *dsh.PostToolPayload, dsh.PostToolNext) (dsh.PostToolDecision, error) {
				panic(boom)
			})
		}, "panic: boom"},
		{"finalizer", func(e *env, def *Definition) {
			def.FinalizeContent = func(dsh.ToolExecution, dsh.ToolExecutionResult) ([]dsh.ContentBlock, error) { panic(boom) }
		}, "panic: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			def := toolDef("t", func(context.Context, *RunContext) (any, error) { return "ok", nil })
			tc.install(e, &def)
			e.register(t, def)
			r := e.rt.Execute(context.Background(), Input{CallID: "c1", Name: "t", Arguments: json.RawMessage(`{}`), AgentID: "a1"})
			f := failureOfResult(t, r)
			if f.Error.Message != tc.want {
				t.Errorf("message %q, want %q", f.Error.Message, tc.want)
			}
			// A panicking *Error keeps its info, like the returned error would.
			if !strings.HasPrefix(tc.want, "tool") && (f.Error.Info == nil || f.Error.Info.Code != "BOOM") {
				t.Errorf("info %+v", f.Error.Info)
			}
		})
	}
}

// Part A item 5: deferred contexts survive a failing wrapper, a failing finalizer and a
// failing post-execute listener; only a block replaces them.
func TestPartA5_DeferredContextsSurvive(t *testing.T) {
	for _, tc := range []struct {
		name    string
		install func(e *env, def *Definition)
		want    []string
	}{
		{"wrapper-fails", func(e *env, _ *Definition) {
			e.hooks.WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
				next.Call(ctx)
				return nil // a nil result is the wrapper's failure
			})
		}, []string{"d"}},
		{"wrapper-invalid-success", func(e *env, _ *Definition) {
			e.hooks.WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
				next.Call(ctx)
				return dsh.ToolSuccess{Value: json.RawMessage(`42`)}
			})
		}, []string{"d"}},
		{"finalizer-fails", func(e *env, def *Definition) {
			def.FinalizeContent = func(dsh.ToolExecution, dsh.ToolExecutionResult) ([]dsh.ContentBlock, error) {
				return nil, errors.New("no")
			}
		}, []string{"d"}},
		{"post-fails", func(e *env, _ *Definition) {
			e.hooks.OnPostTool(func(context.Context, *dsh.PostToolPayload, dsh.PostToolNext) (dsh.PostToolDecision, error) {
				return nil, errors.New("no")
			})
		}, []string{"d"}},
		{"post-accept-both", func(e *env, _ *Definition) {
			e.hooks.OnPostTool(func(context.Context, *dsh.PostToolPayload, dsh.PostToolNext) (dsh.PostToolDecision, error) {
				return dsh.PostToolAccept{Value: json.RawMessage(`"v"`), Content: []dsh.ContentBlock{}}, nil
			})
		}, []string{"d"}},
		{"post-block-replaces", func(e *env, _ *Definition) {
			e.hooks.OnPostTool(func(context.Context, *dsh.PostToolPayload, dsh.PostToolNext) (dsh.PostToolDecision, error) {
				return dsh.PostToolBlock{Feedback: []dsh.ContentBlock{}, AdditionalContexts: []dsh.UserMessage{ctxMsg("b", "blocker")}}, nil
			})
		}, []string{"b"}},
		{"post-block-then-finalizer-fails", func(e *env, def *Definition) {
			e.hooks.OnPostTool(func(context.Context, *dsh.PostToolPayload, dsh.PostToolNext) (dsh.PostToolDecision, error) {
				return dsh.NewPostToolBlock(nil), nil
			})
			def.FinalizeContent = func(dsh.ToolExecution, dsh.ToolExecutionResult) ([]dsh.ContentBlock, error) {
				return nil, errors.New("no")
			}
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			def := toolDef("t", func(ctx context.Context, rc *RunContext) (any, error) {
				return "ok", rc.DeferContext(ctxMsg("d", "body"))
			})
			tc.install(e, &def)
			e.register(t, def)
			r := e.exec(context.Background(), "t", `{}`)
			failureOfResult(t, r)
			if got := contextIDs(r); !slices.Equal(got, tc.want) {
				t.Errorf("contexts = %v, want %v", got, tc.want)
			}
		})
	}
}

// Part A item 7: a pre-execute halt denies the call with its reason and still reaches
// post-execute; a post-execute halt keeps the result. Both are reported on the Result.
func TestHalt(t *testing.T) {
	e := newEnv(t)
	e.register(t, echoDef())
	posts := 0
	var preHalt, postHalt bool
	e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		if preHalt {
			return dsh.NewPreToolHalt("stop the run"), nil
		}
		return next.Call(ctx)
	})
	e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		posts++
		if postHalt {
			return dsh.NewPostToolHalt("enough"), nil
		}
		return next.Call(ctx)
	})
	preHalt = true
	r := e.exec(context.Background(), "echo", `{"text":"hi"}`)
	if text(r) != "Error: stop the run" || posts != 1 || r.Halt == nil || *r.Halt != (Halt{Reason: "stop the run", Point: HaltPreExecute}) {
		t.Errorf("pre halt: text %q posts %d halt %+v", text(r), posts, r.Halt)
	}
	preHalt, postHalt = false, true
	r = e.exec(context.Background(), "echo", `{"text":"hi"}`)
	if text(r) != "hi" || r.Halt == nil || *r.Halt != (Halt{Reason: "enough", Point: HaltPostExecute}) {
		t.Errorf("post halt: text %q halt %+v", text(r), r.Halt)
	}
	preHalt = true // the first halt wins
	if r = e.exec(context.Background(), "echo", `{}`); r.Halt.Point != HaltPreExecute {
		t.Errorf("halt %+v", r.Halt)
	}
	if data, err := json.Marshal(r); err != nil || !strings.Contains(string(data), `"halt":{"reason":"stop the run","point":"tools/pre-execute"}`) {
		t.Errorf("result JSON %s %v", data, err)
	}
}

// Arguments are validated against the input schema at creation, before any policy: a
// violation is a final INVALID_ARGS failure that no policy phase sees.
func TestInvalidArgumentsBeforePolicy(t *testing.T) {
	e := newEnv(t)
	var rec recorder
	e.phaseCounter(&rec)
	e.register(t, Definition{Name: "reader",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}},
			"color":{"enum":["red","green"]},"bag":{"type":"object"}},"required":["path"]}`),
		Run: func(ctx context.Context, rc *RunContext) (any, error) { rec.add("body"); return "ok", nil }})
	for _, tc := range []struct{ args, want string }{
		{`{}`, `invalid arguments: missing required property "path"`},
		{`{"path":1}`, `invalid arguments: "path" must be a string`},
		{`{"path":"p","tags":["a",2]}`, `invalid arguments: "tags[1]" must be a string`},
		{`{"path":"p","color":"blue"}`, `invalid arguments: "color" must be one of ["red","green"]`},
		{`{"path":"p","bag":5}`, `invalid arguments: "bag" must be an object`},
		{`"not json"`, `invalid arguments: arguments must be an object`},
	} {
		r := e.exec(context.Background(), "reader", tc.args)
		f := failureOfResult(t, r)
		if f.Error.Message != tc.want {
			t.Errorf("%s: message %q, want %q", tc.args, f.Error.Message, tc.want)
		}
		wantInfo(t, r, NameToolArgs, CodeInvalidArgs)
		if string(r.Exec.Arguments) != tc.args {
			t.Errorf("exec.Arguments = %s", r.Exec.Arguments)
		}
	}
	if got := rec.get(); len(got) != 6 || rec.count("result") != 6 {
		t.Errorf("phases = %v, want only tools/result", got)
	}
	successOf(t, e.exec(context.Background(), "reader", `{"path":"/x","tags":["a"]}`))
}

// The captured finalizer runs exactly once on every outcome, including those that bypass
// post-execute.
func TestFinalizeRunsOncePerOutcome(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		args    string
		install func(e *env)
	}{
		{"success", context.Background(), `{}`, nil},
		{"not-json", context.Background(), `{`, nil},
		{"invalid-args", context.Background(), `[]`, nil},
		{"pre-aborted", cancelled, `{}`, nil},
		{"denied", context.Background(), `{}`, func(e *env) {
			e.hooks.OnPreTool(func(context.Context, *dsh.PreToolPayload, dsh.PreToolNext) (dsh.PreToolDecision, error) {
				return dsh.NewPreToolDeny("no"), nil
			})
		}},
		{"wrapper-fails", context.Background(), `{}`, func(e *env) {
			e.hooks.WrapExecute(func(context.Context, *dsh.ExecutePayload, dsh.ExecuteNext) dsh.ToolExecutionResult { panic("w") })
		}},
		{"post-fails", context.Background(), `{}`, func(e *env) {
			e.hooks.OnPostTool(func(context.Context, *dsh.PostToolPayload, dsh.PostToolNext) (dsh.PostToolDecision, error) {
				return nil, errors.New("p")
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			calls := 0
			def := toolDef("t", func(context.Context, *RunContext) (any, error) { return "ok", nil })
			def.InputSchema = json.RawMessage(`{"type":"object"}`)
			def.FinalizeContent = func(dsh.ToolExecution, dsh.ToolExecutionResult) ([]dsh.ContentBlock, error) {
				calls++
				return nil, nil
			}
			e.register(t, def)
			if tc.install != nil {
				tc.install(e)
			}
			e.exec(tc.ctx, "t", tc.args)
			if calls != 1 {
				t.Errorf("finalizer ran %d times", calls)
			}
		})
	}
}

// Types that embed a variant satisfy a union's interface without being one of its
// variants.
type (
	embedsAllow   struct{ dsh.PreToolAllow }
	embedsAbstain struct{ dsh.GuardAbstain }
	embedsAccept  struct{ dsh.PostToolAccept }
	embedsSuccess struct{ dsh.ToolSuccess }
)

// TestBadDecisions: a listener, guard or wrapper that returns nil, a nil pointer variant
// or a value of a type that is not a variant fails at its point like a returned error
// (B §3.2): the result is that final failure, a guard in particular
// does not abstain, and the body runs only if the failing point is after it.
func TestBadDecisions(t *testing.T) {
	const (
		nilDecision = "Error: dsh: nil decision"
		unknown     = "Error: dsh: a decision or result of an unknown type"
	)
	pre := func(d dsh.PreToolDecision) func(e *env) {
		return func(e *env) {
			e.hooks.OnPreTool(func(context.Context, *dsh.PreToolPayload, dsh.PreToolNext) (dsh.PreToolDecision, error) {
				return d, nil
			})
		}
	}
	guard := func(v dsh.GuardVerdict) func(e *env) {
		return func(e *env) { e.hooks.Guard(func(context.Context, *dsh.GuardPayload) dsh.GuardVerdict { return v }) }
	}
	wrapper := func(r dsh.ToolExecutionResult) func(e *env) {
		return func(e *env) {
			e.hooks.WrapExecute(func(ctx context.Context, _ *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
				next.Call(ctx)
				return r
			})
		}
	}
	post := func(d dsh.PostToolDecision) func(e *env) {
		return func(e *env) {
			e.hooks.OnPostTool(func(context.Context, *dsh.PostToolPayload, dsh.PostToolNext) (dsh.PostToolDecision, error) {
				return d, nil
			})
		}
	}
	for _, tc := range []struct {
		name    string
		install func(e *env)
		body    bool
		want    string
	}{
		{"pre-execute nil", pre(nil), false, nilDecision},
		{"pre-execute nil pointer", pre((*dsh.PreToolDeny)(nil)), false, nilDecision},
		{"pre-execute unknown", pre(embedsAllow{}), false, unknown},
		{"guard nil", guard(nil), false, nilDecision},
		{"guard unknown", guard(embedsAbstain{}), false, unknown},
		{"wrapper nil", wrapper(nil), true, nilDecision},
		{"wrapper unknown", wrapper(embedsSuccess{dsh.ToolSuccess{Value: json.RawMessage(`"x"`)}}), true, unknown},
		{"post-execute nil", post(nil), true, nilDecision},
		{"post-execute unknown", post(embedsAccept{}), true, unknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			ran := false
			e.register(t, toolDef("t", func(ctx context.Context, rc *RunContext) (any, error) {
				ran = true
				return "ok", rc.DeferContext(ctxMsg("d", "body"))
			}))
			tc.install(e)
			r := e.exec(context.Background(), "t", `{}`)
			wantJSONSafe(t, r)
			if text(r) != tc.want {
				t.Errorf("result %s, want %q", outcomeJSON(t, r), tc.want)
			}
			if ran != tc.body {
				t.Errorf("body ran: %v, want %v", ran, tc.body)
			}
			if ids := contextIDs(r); tc.body != (len(ids) == 1 && ids[0] == "d") {
				t.Errorf("contexts %v (the body's deferred context survives every failure after it)", ids)
			}
		})
	}
}

// TestNestingLimit: a composite that keeps calling itself through RunContext.Execute gets,
// MaxNesting calls down, a final failure instead of a body run (nothing below it runs:
// neither pre-execute nor the body), and every level above unwinds normally.
func TestNestingLimit(t *testing.T) {
	e := newEnv(t)
	var (
		mu     sync.Mutex
		bodies int
		pres   int
	)
	e.register(t, toolDef("loop", func(ctx context.Context, rc *RunContext) (any, error) {
		mu.Lock()
		bodies++
		mu.Unlock()
		r := rc.Execute(ctx, Input{CallID: "again", Name: "loop", Arguments: json.RawMessage(`{}`)})
		return text(r), nil
	}))
	e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		mu.Lock()
		pres++
		mu.Unlock()
		return next.Call(ctx)
	})
	r := e.exec(context.Background(), "loop", `{}`)
	want := `Error: tool "loop" is nested more than 64 calls deep`
	if got := text(r); got != want {
		t.Fatalf("result %q, want %q", got, want)
	}
	if bodies != MaxNesting+1 || pres != MaxNesting+1 {
		t.Errorf("%d bodies and %d pre-execute runs, want %d of each (the top-level call and %d nested)",
			bodies, pres, MaxNesting+1, MaxNesting)
	}

	// The failure itself, from a direct nested call at the limit.
	var nested Result
	e.register(t, toolDef("deep", func(ctx context.Context, rc *RunContext) (any, error) {
		rc.c.depth = MaxNesting // as if MaxNesting calls above it
		nested = rc.Execute(ctx, Input{CallID: "n", Name: "deep", Arguments: json.RawMessage(`{}`)})
		return "ok", nil
	}))
	e.exec(context.Background(), "deep", `{}`)
	wantInfo(t, nested, NameHarnessError, CodeNestingTooDeep)
}

// nestedContent is content of one tool-result block nested depth deep around a text block.
func nestedContent(depth int) []dsh.ContentBlock {
	c := []dsh.ContentBlock{dsh.TextBlock{Text: "leaf"}}
	for range depth {
		c = []dsh.ContentBlock{dsh.ToolResultBlock{ToolCallID: "c", Content: c}}
	}
	return c
}

// TestCyclicContent: content that holds itself (through a tool-result block) or nests
// tool-result blocks more than 64 deep is not lossless (B §0 rejects cycles): a listener
// that supplies it gets the not-lossless failure, DeferContext refuses it, and nothing
// recurses without end.
func TestCyclicContent(t *testing.T) {
	cyclic := make([]dsh.ContentBlock, 1)
	cyclic[0] = dsh.ToolResultBlock{ToolCallID: "c", Content: cyclic}
	for _, tc := range []struct {
		name    string
		content []dsh.ContentBlock
		ok      bool
	}{
		{"cycle", cyclic, false},
		{"too deep", nestedContent(maxContentDepth + 1), false},
		{"deep", nestedContent(maxContentDepth), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			var deferErr error
			e.register(t, toolDef("t", func(ctx context.Context, rc *RunContext) (any, error) {
				deferErr = rc.DeferContext(dsh.UserMessage{Source: dsh.SourceUser{}, Content: tc.content})
				return "ok", nil
			}))
			e.hooks.OnPostTool(func(context.Context, *dsh.PostToolPayload, dsh.PostToolNext) (dsh.PostToolDecision, error) {
				return dsh.PostToolAccept{Content: tc.content}, nil
			})
			r := e.exec(context.Background(), "t", `{}`)
			if tc.ok {
				if deferErr != nil || len(successOf(t, r).Content) != 1 {
					t.Errorf("DeferContext: %v; result %s", deferErr, outcomeJSON(t, r))
				}
				return
			}
			if !errors.Is(deferErr, errNotLossless) {
				t.Errorf("DeferContext = %v, want not lossless", deferErr)
			}
			if text(r) != "Error: "+msgResultNotJSON {
				t.Errorf("result %s", outcomeJSON(t, r))
			}
		})
	}
}

// A failing tools/result observer is logged (at debug level); a healthy one is not.
func TestFailedResultObserverIsLogged(t *testing.T) {
	for _, fail := range []bool{false, true} {
		var logs bytes.Buffer
		tools := NewRegistry()
		hooks := dsh.NewRegistry(dsh.WithLogger(quietLogger()))
		rt := New(tools, hooks, WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
		if _, err := tools.Register(echoDef()); err != nil {
			t.Fatal(err)
		}
		hooks.OnToolResult(func(ctx context.Context, p *dsh.ToolResultPayload) {
			if fail {
				panic("observer broke")
			}
		})
		if r := rt.Execute(context.Background(), Input{CallID: "c1", Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)}); r.IsError() {
			t.Fatalf("fail=%v: %s", fail, text(r))
		}
		if logged := strings.Contains(logs.String(), "tools/result observer failed"); logged != fail {
			t.Errorf("fail=%v: logged %v: %s", fail, logged, logs.String())
		}
	}
}

// A failure a tools/execute wrapper returns is materialized whole: meta that is not
// lossless JSON makes it the final materialization failure, however valid its content.
func TestWrapperFailureMetaIsMaterialized(t *testing.T) {
	for meta, lossless := range map[string]bool{`{"a":1}`: true, `{"a":`: false, `[1e999]`: false} {
		e := newEnv(t)
		e.register(t, echoDef())
		e.hooks.WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
			return dsh.ToolFailure{Error: dsh.ToolError{Message: "wrapped"},
				Content: []dsh.ContentBlock{dsh.TextBlock{Text: "wrapped"}}, Meta: json.RawMessage(meta)}
		})
		f := failureOfResult(t, e.exec(context.Background(), "echo", `{"text":"hi"}`))
		switch {
		case lossless && (f.Error.Message != "wrapped" || string(f.Meta) != meta):
			t.Errorf("meta %s: got %+v, want the wrapper's failure", meta, f)
		case !lossless && f.Error.Message != msgResultNotJSON:
			t.Errorf("meta %s: got %q, want %q", meta, f.Error.Message, msgResultNotJSON)
		}
	}
}

// The info of a tool's error is made JSON-safe field by field: an invalid code alone is
// cleaned, as is an invalid name alone.
func TestErrorInfoIsMadeJSONSafe(t *testing.T) {
	for _, c := range []struct{ name, code, wantName, wantCode string }{
		{NameHarnessError, "BAD\xff", NameHarnessError, "BAD\uFFFD"},
		{"Name\xfe", "OK", "Name\uFFFD", "OK"},
		{NameHarnessError, "OK", NameHarnessError, "OK"},
	} {
		e := newEnv(t)
		e.register(t, toolDef("t", func(ctx context.Context, rc *RunContext) (any, error) {
			return nil, &Error{Name: c.name, Code: c.code, Message: "failed"}
		}))
		wantInfo(t, e.exec(context.Background(), "t", `{}`), c.wantName, c.wantCode)
	}
}
