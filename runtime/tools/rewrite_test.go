package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/approval"
)

// bashDef is a Bash-like tool with a closed schema requiring command; its body returns the
// arguments it got, so a test sees exactly what ran.
func bashDef(ran *[]string) Definition {
	return Definition{
		Name: "bash",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},` +
			`"timeout":{"type":"number"}},"required":["command"],"additionalProperties":false}`),
		Output: &Output{Schema: json.RawMessage(`{"type":"string"}`)},
		Run: func(ctx context.Context, rc *RunContext) (any, error) {
			args := string(rc.Exec().Arguments)
			if ran != nil {
				*ran = append(*ran, args)
			}
			return args, nil
		},
	}
}

// replaceWith is a rewriter replacing the input with args.
func replaceWith(args string) dsh.RewriteInputListener {
	return func(ctx context.Context, p *dsh.RewriteInputPayload) (dsh.RewriteDecision, error) {
		return dsh.RewriteReplace{Args: json.RawMessage(args)}, nil
	}
}

// mergeWith is a rewriter merging patch into the input.
func mergeWith(patch string) dsh.RewriteInputListener {
	return func(ctx context.Context, p *dsh.RewriteInputPayload) (dsh.RewriteDecision, error) {
		return dsh.RewriteMerge{Patch: json.RawMessage(patch)}, nil
	}
}

func bashCall(k string) Input {
	return Input{CallID: "c1", Name: "bash", Arguments: ModelArguments(k), RawArguments: k, AgentID: "a1"}
}

// TestRewriteReplace: scenario 3 at the pipeline: the effective arguments reach
// pre-execute, the body and tools/result; ModelArguments holds the model's; the record
// has the chain with the digest of the output, and a notice naming the changed field.
func TestRewriteReplace(t *testing.T) {
	var ran []string
	e := newEnv(t)
	e.register(t, bashDef(&ran))
	e.hooks.Plugin("p").OnRewriteInput(replaceWith(`{"command":"( cd w && make )"}`))
	var pre, res dsh.ToolExecution
	e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		pre = p.Exec
		return next.Call(ctx)
	})
	e.hooks.OnToolResult(func(ctx context.Context, p *dsh.ToolResultPayload) { res = p.Exec })
	k := e.rt.Start(context.Background(), bashCall(`{"command":"make"}`))
	r := k.Finish()
	if r.IsError() || len(ran) != 1 || ran[0] != `{"command":"( cd w && make )"}` {
		t.Fatalf("ran %q, result %s", ran, outcomeJSON(t, r))
	}
	for _, x := range []dsh.ToolExecution{pre, res, r.Exec} {
		if string(x.Arguments) != `{"command":"( cd w && make )"}` || string(x.ModelArguments) != `{"command":"make"}` {
			t.Errorf("a phase saw arguments %s, model %s", x.Arguments, x.ModelArguments)
		}
	}
	rw := k.Rewritten()
	if !rw.Changed || rw.Arguments != `{"command":"( cd w && make )"}` || rw.Error != nil {
		t.Fatalf("rewritten %+v", rw)
	}
	if rw.Rewrite == nil || len(rw.Rewrite.Chain) != 1 || rw.Rewrite.Chain[0].By != "p#1" ||
		rw.Rewrite.Chain[0].Kind != dsh.RewriteStepKindReplace || rw.Rewrite.Chain[0].Digest != ArgsDigest(json.RawMessage(rw.Arguments)) ||
		rw.Rewrite.Disclosure != dsh.RewriteDisclosureNotice {
		t.Errorf("chain %+v", rw.Rewrite)
	}
	if rw.Notice == nil || len(rw.Notice.Fields) != 1 || rw.Notice.Fields[0].Name != "command" {
		t.Fatalf("notice %+v", rw.Notice)
	}
	want := `[dsh] The arguments of this call were rewritten by p#1 before it ran: "command" = "( cd w && make )".`
	if got := RewriteNoticeText(*rw.Notice); got != want {
		t.Errorf("notice text %q", got)
	}
}

// TestRewriteFold: scenario 4: B sees A's output and the untouched model input; the
// effective input is B(A(x)) and the chain is A, B with the digests of each output.
func TestRewriteFold(t *testing.T) {
	var ran []string
	e := newEnv(t)
	e.register(t, bashDef(&ran))
	e.hooks.Plugin("A").OnRewriteInput(replaceWith(`{"command":"ls"}`))
	var seenInput, seenModel string
	e.hooks.Plugin("B").OnRewriteInput(func(ctx context.Context, p *dsh.RewriteInputPayload) (dsh.RewriteDecision, error) {
		seenInput, seenModel = string(p.Input), string(p.ModelInput)
		var in struct{ Command string }
		json.Unmarshal(p.Input, &in)
		out, _ := json.Marshal(map[string]string{"command": in.Command + " -la"})
		return dsh.RewriteReplace{Args: out, Reason: ptr("long listing")}, nil
	})
	k := e.rt.Start(context.Background(), bashCall(`{"command":"dir"}`))
	k.Finish()
	if seenInput != `{"command":"ls"}` || seenModel != `{"command":"dir"}` {
		t.Errorf("B saw input %s, model %s", seenInput, seenModel)
	}
	if len(ran) != 1 || ran[0] != `{"command":"ls -la"}` {
		t.Errorf("ran %q", ran)
	}
	chain := k.Rewritten().Rewrite.Chain
	if len(chain) != 2 || chain[0].By != "A#1" || chain[1].By != "B#1" || chain[1].Reason == nil || *chain[1].Reason != "long listing" ||
		chain[0].Digest != ArgsDigest(json.RawMessage(`{"command":"ls"}`)) || chain[1].Digest != ArgsDigest(json.RawMessage(`{"command":"ls -la"}`)) {
		t.Errorf("chain %+v", chain)
	}
}

// TestRewriteConflict: scenario 5: A and B both set timeout: under ordered B wins and both
// are recorded; under fail the call fails closed with REWRITE_CONFLICT naming timeout.
func TestRewriteConflict(t *testing.T) {
	for _, policy := range []ConflictPolicy{ConflictOrdered, ConflictFail} {
		var ran []string
		preRan := false
		e := newEnv(t, WithRewriteConflict(policy))
		e.register(t, bashDef(&ran))
		e.hooks.Plugin("A").OnRewriteInput(mergeWith(`{"timeout":10}`))
		e.hooks.Plugin("B").OnRewriteInput(mergeWith(`{"timeout":20}`))
		e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
			preRan = true
			return next.Call(ctx)
		})
		k := e.rt.Start(context.Background(), bashCall(`{"command":"make"}`))
		r := k.Finish()
		rw := k.Rewritten()
		switch policy {
		case ConflictOrdered:
			if len(ran) != 1 || ran[0] != `{"command":"make","timeout":20}` || len(rw.Rewrite.Chain) != 2 ||
				rw.Rewrite.Chain[0].Kind != dsh.RewriteStepKindMerge {
				t.Errorf("ordered: ran %q, rewrite %+v", ran, rw.Rewrite)
			}
		case ConflictFail:
			if len(ran) != 0 || preRan || rw.Changed || rw.Error == nil || rw.Error.Code != dsh.RewriteErrorCodeREWRITECONFLICT ||
				!strings.Contains(rw.Error.Message, `"timeout"`) || errorCode(r) != CodeRewriteConflict {
				t.Errorf("fail: ran %q, pre %v, rewritten %+v, result %s", ran, preRan, rw, outcomeJSON(t, r))
			}
			if string(r.Exec.Arguments) != `{"command":"make"}` {
				t.Errorf("a failed rewrite's call has arguments %s", r.Exec.Arguments)
			}
		}
	}
}

// TestRewriteKeepAndNoop: scenarios 2 and 6: Keep leaves no trace; a rewrite equal to its
// input (after canonicalization) is a noop entry, no change and no notice.
func TestRewriteKeepAndNoop(t *testing.T) {
	e := newEnv(t)
	e.register(t, bashDef(nil))
	e.hooks.Plugin("keep").OnRewriteInput(func(context.Context, *dsh.RewriteInputPayload) (dsh.RewriteDecision, error) {
		return dsh.RewriteKeep{}, nil
	})
	k := e.rt.Start(context.Background(), bashCall(`{"command":"ls","timeout":1}`))
	k.Finish()
	if rw := k.Rewritten(); rw.Changed || rw.Rewrite != nil || rw.Notice != nil || rw.Error != nil || k.Exec().ModelArguments != nil {
		t.Errorf("keep: %+v", rw)
	}
	e.hooks.Plugin("same").OnRewriteInput(replaceWith(`{ "timeout": 1, "command": "ls" }`))
	k = e.rt.Start(context.Background(), bashCall(`{"command":"ls","timeout":1}`))
	k.Finish()
	rw := k.Rewritten()
	if rw.Changed || rw.Notice != nil || rw.Rewrite == nil || len(rw.Rewrite.Chain) != 1 || rw.Rewrite.Chain[0].Kind != dsh.RewriteStepKindNoop {
		t.Errorf("noop: %+v", rw)
	}
}

// TestRewriteFailsClosed: scenarios 7, 8 and the bad inputs: each failure is final with
// its code, before pre-execute and dispatch, with the model's arguments; finalization and
// tools/result still run.
func TestRewriteFailsClosed(t *testing.T) {
	boom := errors.New("boom")
	cases := []struct {
		name, code, mention string
		fn                  dsh.RewriteInputListener
		opts                []Option
	}{
		{"drops-required", CodeRewriteInvalid, `missing required property "command"`, replaceWith(`{"timeout":5}`), nil},
		{"unknown-field", CodeRewriteInvalid, `unknown property "env"`, mergeWith(`{"env":"X=1"}`), nil},
		{"not-lossless", CodeRewriteInvalid, "not lossless JSON", replaceWith(`{"command":1e999}`), nil},
		{"bad-json", CodeRewriteInvalid, "not lossless JSON", replaceWith(`{"command":`), nil},
		{"error", CodeRewriteFailed, "boom", func(context.Context, *dsh.RewriteInputPayload) (dsh.RewriteDecision, error) { return nil, boom }, nil},
		{"panic", CodeRewriteFailed, "panic: kaboom", func(context.Context, *dsh.RewriteInputPayload) (dsh.RewriteDecision, error) { panic("kaboom") }, nil},
		{"nil", CodeRewriteFailed, "nil decision", func(context.Context, *dsh.RewriteInputPayload) (dsh.RewriteDecision, error) { return nil, nil }, nil},
		{"overrun", CodeRewriteFailed, "overran its deadline", func(ctx context.Context, _ *dsh.RewriteInputPayload) (dsh.RewriteDecision, error) {
			time.Sleep(200 * time.Millisecond) //dshvet:allow ctxblock the listener ignores ctx and overruns its deadline on purpose
			return dsh.RewriteReplace{Args: json.RawMessage(`{"command":"late"}`)}, nil
		}, []Option{WithRewriteDeadline(20 * time.Millisecond)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ran []string
			var pre, finalized, observed atomic.Bool
			e := newEnv(t, c.opts...)
			def := bashDef(&ran)
			def.FinalizeContent = func(dsh.ToolExecution, dsh.ToolExecutionResult) ([]dsh.ContentBlock, error) {
				finalized.Store(true)
				return nil, nil
			}
			e.register(t, def)
			e.hooks.Plugin("r").OnRewriteInput(c.fn)
			e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
				pre.Store(true)
				return next.Call(ctx)
			})
			e.hooks.OnToolResult(func(context.Context, *dsh.ToolResultPayload) { observed.Store(true) })
			k := e.rt.Start(context.Background(), bashCall(`{"command":"make"}`))
			r := k.Finish()
			rw := k.Rewritten()
			if errorCode(r) != c.code || rw.Error == nil || string(rw.Error.Code) != c.code || !strings.Contains(rw.Error.Message, c.mention) {
				t.Fatalf("result %s, rewritten %+v", outcomeJSON(t, r), rw.Error)
			}
			if text(r) != "Error: "+rw.Error.Message {
				t.Errorf("content %q", text(r))
			}
			if pre.Load() || len(ran) != 0 || rw.Changed || rw.Rewrite != nil {
				t.Errorf("pre-execute %v, ran %q, rewritten %+v", pre.Load(), ran, rw)
			}
			if !finalized.Load() || !observed.Load() {
				t.Errorf("finalized %v, observed %v", finalized.Load(), observed.Load())
			}
			if rw.Error.By == nil || *rw.Error.By != "r#1" {
				t.Errorf("by %v", rw.Error.By)
			}
			if string(r.Exec.Arguments) != `{"command":"make"}` || r.Exec.ModelArguments != nil {
				t.Errorf("exec %s / %s", r.Exec.Arguments, r.Exec.ModelArguments)
			}
		})
	}
}

// TestRewriteRepairsRaw: scenario 10: broken model JSON arrives Raw; a repair is validated
// and dispatched, with the model's (string) arguments kept.
func TestRewriteRepairsRaw(t *testing.T) {
	var ran []string
	e := newEnv(t)
	e.register(t, bashDef(&ran))
	var raw, inRaw bool
	var input string
	e.hooks.Plugin("fix").OnRewriteInput(func(ctx context.Context, p *dsh.RewriteInputPayload) (dsh.RewriteDecision, error) {
		raw, inRaw, input = p.ModelRaw != nil && *p.ModelRaw, p.InputRaw != nil && *p.InputRaw, string(p.Input)
		return dsh.RewriteReplace{Args: json.RawMessage(`{"command":"ls"}`)}, nil
	})
	k := e.rt.Start(context.Background(), bashCall(`{"command": "ls"`))
	r := k.Finish()
	if !raw || !inRaw || input != `"{\"command\": \"ls\""` {
		t.Errorf("payload raw %v/%v input %s", raw, inRaw, input)
	}
	if r.IsError() || len(ran) != 1 || string(r.Exec.ModelArguments) != `"{\"command\": \"ls\""` {
		t.Errorf("ran %q, result %s, model %s", ran, outcomeJSON(t, r), r.Exec.ModelArguments)
	}
	if n := k.Rewritten().Notice; n == nil || n.Value == nil || *n.Value != `{"command":"ls"}` {
		t.Errorf("notice %+v", n)
	}
}

// TestRewriteCancelled: scenario 11: a cancellation while a rewriter waits leaves no partial
// rewrite; the call is ABORTED_BEFORE_DISPATCH with the model's arguments. A pre-cancelled
// call runs no rewriter.
func TestRewriteCancelled(t *testing.T) {
	e := newEnv(t)
	e.register(t, bashDef(nil))
	var runs atomic.Int32
	e.hooks.Plugin("wait").OnRewriteInput(func(ctx context.Context, p *dsh.RewriteInputPayload) (dsh.RewriteDecision, error) {
		runs.Add(1)
		<-ctx.Done()
		return dsh.RewriteReplace{Args: json.RawMessage(`{"command":"partial"}`)}, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	k := e.rt.Start(ctx, bashCall(`{"command":"make"}`))
	r := k.Finish()
	if errorCode(r) != CodeAbortedBeforeDispatch || k.Rewritten() != (Rewritten{}) || string(r.Exec.Arguments) != `{"command":"make"}` {
		t.Errorf("result %s, rewritten %+v, args %s", outcomeJSON(t, r), k.Rewritten(), r.Exec.Arguments)
	}
	k = e.rt.Start(ctx, bashCall(`{"command":"make"}`))
	if r := k.Finish(); errorCode(r) != CodeAbortedBeforeDispatch || runs.Load() != 1 {
		t.Errorf("pre-cancelled: %s, rewriter runs %d", outcomeJSON(t, r), runs.Load())
	}
}

// TestRewriteSilent: scenario 23 at the pipeline: silent keeps the chain, drops the notice.
func TestRewriteSilent(t *testing.T) {
	e := newEnv(t)
	e.register(t, bashDef(nil))
	e.hooks.Plugin("rtk").OnRewriteInput(func(context.Context, *dsh.RewriteInputPayload) (dsh.RewriteDecision, error) {
		return dsh.RewriteReplace{Args: json.RawMessage(`{"command":"rtk git status"}`), Disclosure: dsh.RewriteDisclosureSilent}, nil
	})
	k := e.rt.Start(context.Background(), bashCall(`{"command":"git status"}`))
	k.Finish()
	rw := k.Rewritten()
	if !rw.Changed || rw.Notice != nil || rw.Rewrite == nil || rw.Rewrite.Disclosure != dsh.RewriteDisclosureSilent {
		t.Errorf("%+v", rw)
	}
}

// TestRewriteMode: scenario 21 at the pipeline: the call is classified on its effective
// arguments.
func TestRewriteMode(t *testing.T) {
	e := newEnv(t)
	def := bashDef(nil)
	def.IsConcurrencySafe = func(args json.RawMessage) bool { return !strings.Contains(string(args), "rm") }
	e.register(t, def)
	e.hooks.Plugin("w").OnRewriteInput(replaceWith(`{"command":"rm x"}`))
	k := e.rt.Start(context.Background(), bashCall(`{"command":"ls"}`))
	if m := k.Mode(); m != ModeExclusive {
		t.Errorf("mode %s", m)
	}
	if m := e.rt.ExecutionMode("a1", "bash", ModelArguments(`{"command":"ls"}`)); m != ModeParallel {
		t.Errorf("model arguments classify %s", m)
	}
	k.Finish()
}

// TestRewriteApproval: scenario 13: approval/asked is for the effective arguments' digest;
// a matching allowed-once dispatches them; echoing the model's digest is APPROVAL_STALE.
func TestRewriteApproval(t *testing.T) {
	effective := `{"command":"( cd w && make )"}`
	for _, stale := range []bool{false, true} {
		var recorded []dsh.SessionEventData
		svc := approval.NewService(approval.WithRecorder(approval.RecorderFunc(func(_ context.Context, d dsh.SessionEventData) error {
			recorded = append(recorded, d)
			return nil
		})))
		var req approval.Request
		svc.AddAnswerer(digestAnswerer(func(r approval.Request) approval.Decision {
			req = r
			if stale {
				return approval.Decision{Outcome: dsh.ApprovalOutcomeAllowedOnce, ArgsDigest: ArgsDigest(r.ModelArguments)}
			}
			return approval.Decision{Outcome: dsh.ApprovalOutcomeAllowedOnce, ArgsDigest: r.ArgsDigest}
		}))
		var ran []string
		postRan := false
		e := newEnv(t, WithApprover(svc))
		e.register(t, bashDef(&ran))
		e.hooks.Plugin("p").OnRewriteInput(replaceWith(effective))
		e.hooks.OnPreTool(func(context.Context, *dsh.PreToolPayload, dsh.PreToolNext) (dsh.PreToolDecision, error) {
			return dsh.PreToolAsk{}, nil
		})
		e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
			postRan = true
			return next.Call(ctx)
		})
		r := e.rt.Execute(context.Background(), bashCall(`{"command":"make"}`))
		if string(req.Arguments) != effective || string(req.ModelArguments) != `{"command":"make"}` || req.ArgsDigest != ArgsDigest(json.RawMessage(effective)) {
			t.Errorf("request %+v", req)
		}
		asked := recorded[0].(dsh.ApprovalAsked)
		if asked.ArgsDigest == nil || *asked.ArgsDigest != req.ArgsDigest {
			t.Errorf("asked %+v", asked)
		}
		if !stale {
			if r.IsError() || len(ran) != 1 || ran[0] != effective {
				t.Errorf("allowed: ran %q, %s", ran, outcomeJSON(t, r))
			}
			continue
		}
		if errorCode(r) != CodeApprovalStale || len(ran) != 0 || !postRan {
			t.Errorf("stale: ran %q, post %v, %s", ran, postRan, outcomeJSON(t, r))
		}
		decided := recorded[1].(dsh.ApprovalDecided)
		if decided.ArgsDigest == nil || *decided.ArgsDigest == *asked.ArgsDigest {
			t.Errorf("decided %+v", decided)
		}
	}
}

type digestAnswerer func(approval.Request) approval.Decision

func (f digestAnswerer) Answer(ctx context.Context, r approval.Request) (dsh.ApprovalOutcome, error) {
	return f(r).Outcome, nil
}

func (f digestAnswerer) AnswerDigest(ctx context.Context, r approval.Request) (approval.Decision, error) {
	return f(r), nil
}

// errorCode is the structured code of a failed result ("" otherwise).
func errorCode(r Result) string {
	if f, ok := r.Outcome.(dsh.ToolFailure); ok && f.Error.Info != nil {
		return f.Error.Info.Code
	}
	return ""
}

// TestRewriteConflictLaterOptionWins: WithRewriteConflict(ConflictOrdered) after
// WithRewriteConflict(ConflictFail) restores the ordered policy (the later option wins, as
// for every Option): two listeners rewriting one field then succeed, the later value
// winning, instead of failing closed with REWRITE_CONFLICT.
func TestRewriteConflictLaterOptionWins(t *testing.T) {
	var ran []string
	e := newEnv(t, WithRewriteConflict(ConflictFail), WithRewriteConflict(ConflictOrdered))
	e.register(t, bashDef(&ran))
	e.hooks.Plugin("A").OnRewriteInput(mergeWith(`{"timeout":10}`))
	e.hooks.Plugin("B").OnRewriteInput(mergeWith(`{"timeout":20}`))
	k := e.rt.Start(context.Background(), bashCall(`{"command":"make"}`))
	r := k.Finish()
	rw := k.Rewritten()
	if rw.Error != nil || len(ran) != 1 || ran[0] != `{"command":"make","timeout":20}` {
		t.Fatalf("ran %q, rewrite error %+v, result %s", ran, rw.Error, outcomeJSON(t, r))
	}
}

// TestRewritePayloadCarriesModelInputAndSchema: every tools/rewrite-input listener sees
// the model's arguments as modelInput, the tool's input schema and the calling agent's id,
// the first one with input equal to modelInput, a later one with the input the earlier
// ones made.
func TestRewritePayloadCarriesModelInputAndSchema(t *testing.T) {
	e := newEnv(t)
	def := bashDef(nil)
	e.register(t, def)
	type seen struct{ input, model, schema, agent string }
	var got []seen
	record := func(p *dsh.RewriteInputPayload) {
		agent := "<nil>"
		if p.AgentID != nil {
			agent = *p.AgentID
		}
		got = append(got, seen{string(p.Input), string(p.ModelInput), string(p.Schema), agent})
	}
	e.hooks.Plugin("A").OnRewriteInput(func(ctx context.Context, p *dsh.RewriteInputPayload) (dsh.RewriteDecision, error) {
		record(p)
		return dsh.RewriteMerge{Patch: json.RawMessage(`{"timeout":10}`)}, nil
	})
	e.hooks.Plugin("B").OnRewriteInput(func(ctx context.Context, p *dsh.RewriteInputPayload) (dsh.RewriteDecision, error) {
		record(p)
		return dsh.RewriteKeep{}, nil
	})
	model := `{"command":"make"}`
	k := e.rt.Start(context.Background(), bashCall(model))
	k.Finish()
	want := []seen{
		{model, model, string(def.InputSchema), "a1"},
		{`{"command":"make","timeout":10}`, model, string(def.InputSchema), "a1"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d listeners ran, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].input != want[i].input || got[i].model != want[i].model || got[i].agent != want[i].agent || !jsonEqual(got[i].schema, want[i].schema) {
			t.Errorf("listener %d saw %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestRewriteFailureIsLogged: a failed rewrite phase is logged as a warning naming the
// tool, the call and the code.
func TestRewriteFailureIsLogged(t *testing.T) {
	var buf bytes.Buffer
	e := newEnv(t, WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
	e.register(t, bashDef(nil))
	e.hooks.Plugin("p").OnRewriteInput(replaceWith(`{"timeout":5}`))
	k := e.rt.Start(context.Background(), bashCall(`{"command":"make"}`))
	k.Finish()
	out := buf.String()
	for _, want := range []string{"level=WARN", `msg="tools: rewrite failed"`, "tool=bash", "callId=c1", "code=" + CodeRewriteInvalid} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %s:\n%s", want, out)
		}
	}
}

// TestBoundedNoticeValue: a notice value of noticeValueMax bytes is kept whole; a longer
// one is cut on a rune boundary and marked.
func TestBoundedNoticeValue(t *testing.T) {
	exact := strings.Repeat("a", noticeValueMax)
	if got := bounded(exact); got != exact {
		t.Errorf("bounded(%d bytes) = %q", len(exact), got)
	}
	long := strings.Repeat("a", noticeValueMax-1) + "éz" // é straddles the limit
	if got, want := bounded(long), strings.Repeat("a", noticeValueMax-1)+"…"; got != want {
		t.Errorf("bounded(long) = %q, want %q", got, want)
	}
}
