package tools_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
)

// TestWrapperFailsCleanly is a timeout plugin as its author writes it: a tools/execute
// wrapper that gives up on a slow body with tools.Fail. The call fails with the plugin's
// own message and code, finally: tools/post-execute does not run, tools/result does.
func TestWrapperFailsCleanly(t *testing.T) {
	registry := dsh.NewRegistry()
	p := registry.Plugin("timeout")
	p.WrapExecute(func(ctx context.Context, pl *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
		ctx2, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		res := next.Call(ctx2)
		if ctx2.Err() != nil {
			return tools.Fail(ctx, tools.NewError("TIMEOUT", pl.Exec.Name+" timed out"))
		}
		return res
	})
	postRan, resultSeen := false, false
	p.OnPostTool(func(ctx context.Context, pl *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		postRan = true
		return next.Call(ctx)
	})
	p.OnToolResult(func(ctx context.Context, pl *dsh.ToolResultPayload) {
		resultSeen = true
	})
	reg := tools.NewRegistry()
	reg.Register(tools.Definition{Name: "Slow", Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	reg.Register(tools.Definition{Name: "Fast", Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
		return "done", nil
	}})
	rt := tools.New(reg, registry)

	res := rt.Execute(context.Background(), tools.Input{CallID: "c1", Name: "Slow", Arguments: json.RawMessage(`{}`)})
	f, ok := res.Outcome.(dsh.ToolFailure)
	if !ok {
		t.Fatalf("outcome %T, want a failure", res.Outcome)
	}
	if f.Error.Message != "Slow timed out" || f.Error.Info == nil || f.Error.Info.Code != "TIMEOUT" {
		t.Errorf("error %+v (info %+v), want the plugin's message and code TIMEOUT", f.Error, f.Error.Info)
	}
	if len(f.Content) != 1 || f.Content[0] != (dsh.TextBlock{Text: "Error: Slow timed out"}) {
		t.Errorf("content %+v", f.Content)
	}
	if postRan {
		t.Error("tools/post-execute ran after a final failure")
	}
	if !resultSeen {
		t.Error("tools/result did not see the failure")
	}

	// A fast call is untouched, and post-execute runs for it.
	res = rt.Execute(context.Background(), tools.Input{CallID: "c2", Name: "Fast", Arguments: json.RawMessage(`{}`)})
	if res.IsError() || !postRan {
		t.Errorf("fast call: isError %v, post-execute ran %v", res.IsError(), postRan)
	}

	// Outside a pipeline, Fail just returns the failure (a wrapper unit-tested alone).
	r := tools.Fail(context.Background(), tools.NewError("TIMEOUT", "x"))
	if f, ok := r.(dsh.ToolFailure); !ok || f.Error.Message != "x" {
		t.Errorf("Fail outside a pipeline: %+v", r)
	}
}

// TestContextsWithoutIDOrRole: contexts a plugin builds with dsh.UserText (no ID, role
// user) or with no role at all, returned from a tools/execute wrapper (added to the result
// with AppendAdditionalContexts, no type switch) and from a post-execute accept, keep the
// call successful: the pipeline mints their IDs and fills the role, as DeferContext does.
// A context without a source still fails the call, and the log names the field.
func TestContextsWithoutIDOrRole(t *testing.T) {
	registry := dsh.NewRegistry()
	p := registry.Plugin("notes")
	p.WrapExecute(func(ctx context.Context, pl *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
		return next.Call(ctx).AppendAdditionalContexts(dsh.UserText(dsh.SourcePlugin{Plugin: "notes"}, "from the wrapper"))
	})
	p.OnPostTool(func(ctx context.Context, pl *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		if pl.Exec.Name == "NoSource" {
			return dsh.PostToolAccept{AdditionalContexts: []dsh.UserMessage{{Content: []dsh.ContentBlock{dsh.TextBlock{Text: "x"}}}}}, nil
		}
		// No ID and no role: filled in.
		return dsh.PostToolAccept{AdditionalContexts: []dsh.UserMessage{{
			Content: []dsh.ContentBlock{dsh.TextBlock{Text: "from post-execute"}}, Source: dsh.SourcePlugin{Plugin: "notes"}}}}, nil
	})
	var logged strings.Builder
	reg := tools.NewRegistry()
	for _, name := range []string{"Edit", "NoSource"} {
		reg.Register(tools.Definition{Name: name, Run: func(ctx context.Context, rc *tools.RunContext) (any, error) { return "edited", nil }})
	}
	rt := tools.New(reg, registry, tools.WithLogger(slog.New(slog.NewTextHandler(&logged, nil))))

	res := rt.Execute(context.Background(), tools.Input{CallID: "c1", Name: "Edit", Arguments: json.RawMessage(`{}`)})
	if res.IsError() {
		t.Fatalf("the call failed: %+v", res.Outcome)
	}
	got := res.Outcome.GetAdditionalContexts() // shared by every result variant
	if len(got) != 2 {
		t.Fatalf("contexts %+v", got)
	}
	for i, want := range []string{"from the wrapper", "from post-execute"} {
		m := got[i]
		if m.ID == "" || m.Role != dsh.UserMessageRoleUser || m.Content[0] != (dsh.TextBlock{Text: want}) {
			t.Errorf("context %d: %+v", i, m)
		}
	}
	if got[0].ID == got[1].ID {
		t.Errorf("minted IDs are not distinct: %q", got[0].ID)
	}

	res = rt.Execute(context.Background(), tools.Input{CallID: "c2", Name: "NoSource", Arguments: json.RawMessage(`{}`)})
	if !res.IsError() {
		t.Fatalf("a context without a source was accepted: %+v", res.Outcome)
	}
	if !strings.Contains(logged.String(), "source is missing") {
		t.Errorf("the log does not name the missing field:\n%s", logged.String())
	}
}

// TestOptionalFieldsWithoutPointers: optional reasons and agent ids read and set without
// pointers (Get<F>, With<F>); what the union variants share reads without a type switch.
func TestOptionalFieldsWithoutPointers(t *testing.T) {
	ask := dsh.PreToolAsk{}.WithReason("needs a human")
	if ask.Reason == nil || *ask.Reason != "needs a human" || ask.GetReason() != "needs a human" {
		t.Errorf("WithReason: %+v", ask)
	}
	if (dsh.PreToolAsk{}).GetReason() != "" {
		t.Error("GetReason of an absent reason is not empty")
	}
	var d dsh.PreToolDecision = ask // the variant is the decision
	if d.Kind() != dsh.PreToolAskKind {
		t.Errorf("kind %s", d.Kind())
	}

	exec := dsh.ToolExecution{Name: "Bash"}
	if exec.GetAgentID() != "" {
		t.Error("GetAgentID of an agent-less call")
	}
	exec = exec.WithAgentID("a1")
	if exec.GetAgentID() != "a1" || *exec.AgentID != "a1" {
		t.Errorf("WithAgentID: %+v", exec)
	}

	// Append never writes the variant's own slice.
	base := dsh.ToolSuccess{Content: make([]dsh.ContentBlock, 1, 4)}
	base.Content[0] = dsh.TextBlock{Text: "a"}
	r1 := base.AppendContent(dsh.TextBlock{Text: "b"})
	r2 := base.AppendContent(dsh.TextBlock{Text: "c"})
	if len(base.Content) != 1 || r1.GetContent()[1] != (dsh.TextBlock{Text: "b"}) || r2.GetContent()[1] != (dsh.TextBlock{Text: "c"}) {
		t.Errorf("AppendContent aliased: %+v %+v %+v", base.Content, r1.GetContent(), r2.GetContent())
	}
	var r dsh.ToolExecutionResult = dsh.ToolFailure{Error: dsh.ToolError{Message: "x"}, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "Error: x"}}}
	if len(r.GetContent()) != 1 || len(r.AppendAdditionalContexts(dsh.UserText(dsh.SourceUser{}, "hi")).GetAdditionalContexts()) != 1 {
		t.Errorf("union accessors on a failure: %+v", r)
	}
}

// TestScopedGuardReplacedDuringItsCall pins the timing recorded in docs/decisions/0002-runtime.md
// ("Scoped guard replacement"): a scoped guard that, while it runs, unregisters itself and
// registers its replacement (the last guard of its agent) is followed by the replacement
// in the same call, because a guard chain reads the registry as it is when it moves on.
// The reference harness defers the replacement to the next call.
func TestScopedGuardReplacedDuringItsCall(t *testing.T) {
	registry := dsh.NewRegistry()
	scoped := registry.Plugin("policy").ForAgent("a1")
	var ran []string
	var unregister func()
	unregister = scoped.Guard(func(ctx context.Context, pl *dsh.GuardPayload) dsh.GuardVerdict {
		ran = append(ran, "first")
		unregister()
		scoped.Guard(func(ctx context.Context, pl *dsh.GuardPayload) dsh.GuardVerdict {
			ran = append(ran, "replacement")
			return dsh.GuardDeny{Reason: "replaced"}
		})
		return dsh.GuardAbstain{}
	})
	reg := tools.NewRegistry()
	reg.Register(tools.Definition{Name: "T", Run: func(ctx context.Context, rc *tools.RunContext) (any, error) { return "ok", nil }})
	rt := tools.New(reg, registry)

	res := rt.Execute(context.Background(), tools.Input{CallID: "c1", Name: "T", AgentID: "a1", Arguments: json.RawMessage(`{}`)})
	if strings.Join(ran, ",") != "first,replacement" || !res.IsError() {
		t.Errorf("first call: guards ran %v, isError %v; want the replacement in the same call", ran, res.IsError())
	}
	ran = nil
	res = rt.Execute(context.Background(), tools.Input{CallID: "c2", Name: "T", AgentID: "a1", Arguments: json.RawMessage(`{}`)})
	if strings.Join(ran, ",") != "replacement" || !res.IsError() {
		t.Errorf("second call: guards ran %v", ran)
	}
}

// TestFinalizerFailureAsDocumented checks Definition.FinalizeContent's doc: an error gives
// a failure with the error's own message (an *Error keeps its code), a panic one of message
// "panic: <value>"; there is no other prefix.
func TestFinalizerFailureAsDocumented(t *testing.T) {
	for name, c := range map[string]struct {
		fin       func(dsh.ToolExecution, dsh.ToolExecutionResult) ([]dsh.ContentBlock, error)
		msg, code string
	}{
		"error": {func(dsh.ToolExecution, dsh.ToolExecutionResult) ([]dsh.ContentBlock, error) {
			return nil, tools.NewError("REDACT_FAILED", "cannot redact")
		}, "cannot redact", "REDACT_FAILED"},
		"panic": {func(dsh.ToolExecution, dsh.ToolExecutionResult) ([]dsh.ContentBlock, error) {
			panic("redactor broke")
		}, "panic: redactor broke", ""},
	} {
		reg := tools.NewRegistry()
		reg.Register(tools.Definition{Name: "T", FinalizeContent: c.fin,
			Run: func(ctx context.Context, rc *tools.RunContext) (any, error) { return "ok", nil }})
		res := tools.New(reg, dsh.NewRegistry(), tools.WithLogger(slog.New(slog.DiscardHandler))).Execute(context.Background(), tools.Input{CallID: "c", Name: "T", Arguments: json.RawMessage(`{}`)})
		f, ok := res.Outcome.(dsh.ToolFailure)
		if !ok {
			t.Fatalf("%s: outcome %T", name, res.Outcome)
		}
		code := ""
		if f.Error.Info != nil {
			code = f.Error.Info.Code
		}
		if f.Error.Message != c.msg || code != c.code || f.Content[0] != (dsh.TextBlock{Text: "Error: " + c.msg}) {
			t.Errorf("%s: error %q code %q content %+v; want %q %q", name, f.Error.Message, code, f.Content, c.msg, c.code)
		}
	}
}

// TestAddContextToAnyDecision: an outer post-execute listener adds a context to whatever
// the inner one decided, accept or block, with one type assertion and no switch.
func TestAddContextToAnyDecision(t *testing.T) {
	registry := dsh.NewRegistry()
	p := registry.Plugin("audit")
	p.OnPostTool(func(ctx context.Context, pl *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		d, err := next.Call(ctx)
		if w, ok := d.(dsh.PostToolDecisionWithAdditionalContexts); ok && err == nil {
			d = w.AppendAdditionalContexts(dsh.UserText(dsh.SourcePlugin{Plugin: "audit"}, "audited "+pl.Exec.Name))
		}
		return d, err
	})
	p.OnPostTool(func(ctx context.Context, pl *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		if pl.Exec.Name == "Blocked" {
			return dsh.PostToolBlock{Feedback: []dsh.ContentBlock{dsh.TextBlock{Text: "not now"}}}, nil
		}
		return next.Call(ctx)
	})
	reg := tools.NewRegistry()
	for _, name := range []string{"Fine", "Blocked"} {
		reg.Register(tools.Definition{Name: name, Run: func(ctx context.Context, rc *tools.RunContext) (any, error) { return "ok", nil }})
	}
	rt := tools.New(reg, registry)
	for name, isError := range map[string]bool{"Fine": false, "Blocked": true} {
		res := rt.Execute(context.Background(), tools.Input{CallID: "c", Name: name, Arguments: json.RawMessage(`{}`)})
		ctxs := res.AdditionalContexts()
		if res.IsError() != isError || len(ctxs) != 1 || ctxs[0].Content[0] != (dsh.TextBlock{Text: "audited " + name}) {
			t.Errorf("%s: isError %v, contexts %+v", name, res.IsError(), ctxs)
		}
	}
}
