package loop

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
)

// The inbox and the context FIFO: what the scenarios of spec/conformance/loop_inbox.cue do
// not check (a synchronous wake, copies of injected messages, splice positions, nested
// calls, invalid and failed sends).

func TestSteerWakesAndContinues(t *testing.T) {
	e := newEnv(t, text("one"), text("two"))
	g := newGate(e.script)
	e.model = g
	a := e.agent()
	if err := a.Steer(context.Background(), pluginMsg("a", "a")); err != nil {
		t.Fatal(err)
	}
	// Synchronous wake: running, and turn/start is already logged.
	diff(t, "status", dsh.AgentStatusRunning, a.Status())
	diff(t, "turn/start", 1, len(records[dsh.TurnStart](t, e.log)))
	await(t, g.entered, "request 1")
	if err := a.Steer(context.Background(), pluginMsg("b", "b")); err != nil {
		t.Fatal(err)
	}
	g.release <- struct{}{}
	await(t, g.entered, "request 2")
	g.release <- struct{}{}
	wait(t, a)
	reqs := e.requests()
	diff(t, "request 1", []string{"user:a"}, texts(reqs[0]))
	diff(t, "request 2", []string{"user:a", "assistant:one", "user:b"}, texts(reqs[1]))
	diff(t, "boundaries", []string{"turn/start", "step/start", "step/end", "step/start", "step/end", "turn/end"},
		typesOf(e.log, boundaries...))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context spliced chunk*2 assistant step/end spliced step/start user chunk*2 assistant step/end turn/end")
}

func TestInjectedContextsFollowResults(t *testing.T) {
	e := newEnv(t, calls("c1:injector"), text("done"))
	var during []string
	e.register(toolDef("injector", false, func(ctx context.Context, rc *tools.RunContext) (any, error) {
		a, _ := AgentFromContext(ctx)
		n1 := pluginMsg("n1", "note one")
		if err := a.Inject(ctx, n1); err != nil {
			return nil, err
		}
		n1.Content[0] = dsh.TextBlock{Text: "changed after inject"}
		if err := a.Inject(ctx, pluginMsg("n2", "note two")); err != nil {
			return nil, err
		}
		during = userTexts(t, e.log)
		return "ok", nil
	}))
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "user/message during the body", []string{"go"}, during)
	diff(t, "user/message", []string{"go", "note one", "note two"}, userTexts(t, e.log))
	diff(t, "request 2", []string{"user:go", "assistant:[call c1]", "user:[result c1]ok", "user:note one", "user:note two"},
		texts(e.requests()[1]))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant call spliced*2 result step/end spliced step/start user*2 chunk*2 assistant step/end turn/end")
}

// contextPerCall is a post-execute listener adding the context "ctx-<callId>".
func contextPerCall(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
	if _, err := next.Call(ctx); err != nil {
		return nil, err
	}
	id := "ctx-" + p.Exec.CallID
	return dsh.PostToolAccept{AdditionalContexts: []dsh.UserMessage{pluginMsg(id, id)}}, nil
}

func TestContextsAfterAllResults(t *testing.T) {
	e := newEnv(t, calls("c1:echo", "c2:echo"), text("done"))
	e.register(okTool("echo", false))
	e.reg.OnPostTool(contextPerCall)
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "order", []string{"tool/result", "tool/result", "user/message", "user/message"},
		typesOf(e.log, dsh.ToolResultLoggedType, dsh.UserMessageLoggedType)[1:])
	diff(t, "contexts", []string{"go", "ctx-c1", "ctx-c2"}, userTexts(t, e.log))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*3 assistant call result call result spliced step/end spliced step/start user*2 chunk*2 assistant step/end turn/end")
}

func TestParallelContextsInModelOrder(t *testing.T) {
	e := newEnv(t, calls("c1:slow", "c2:fast"), text("done"))
	fastDone := make(chan struct{})
	e.register(toolDef("slow", true, func(ctx context.Context, rc *tools.RunContext) (any, error) {
		<-fastDone
		return "slow", nil
	}))
	e.register(toolDef("fast", true, func(ctx context.Context, rc *tools.RunContext) (any, error) {
		defer close(fastDone)
		return "fast", nil
	}))
	e.reg.OnPostTool(contextPerCall)
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "results", []string{"c1", "c2"}, fields(t, e.log, func(r dsh.ToolResultLogged) string { return r.Message.Source.(dsh.SourceTool).CallID }))
	diff(t, "contexts", []string{"go", "ctx-c1", "ctx-c2"}, userTexts(t, e.log))
	evs := types(e.log)
	last := 0
	for i, typ := range evs {
		if typ == dsh.ToolResultLoggedType {
			last = i
		}
	}
	diff(t, "after the last tool/result", []string{"agent/inbox/spliced", "step/end", "agent/inbox/spliced", "step/start",
		"user/message", "user/message"}, evs[last+1:last+7])
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*3 assistant call*2 result*2 spliced step/end spliced step/start user*2 chunk*2 assistant step/end turn/end")
}

func TestCompositeDefersContexts(t *testing.T) {
	e := newEnv(t, calls("c1:composite"), text("done"))
	for _, name := range []string{"a", "b"} {
		e.register(toolDef("inner-"+name, false, func(ctx context.Context, rc *tools.RunContext) (any, error) {
			return name, rc.DeferContext(dsh.UserMessage{ID: name, Content: []dsh.ContentBlock{dsh.TextBlock{Text: name}},
				Source: dsh.SourcePlugin{Plugin: name}})
		}))
	}
	e.register(toolDef("composite", false, func(ctx context.Context, rc *tools.RunContext) (any, error) {
		for _, name := range []string{"a", "b"} {
			nested := rc.Execute(ctx, tools.Input{CallID: "n-" + name, Name: "inner-" + name, Arguments: json.RawMessage(`{}`)})
			if err := rc.Forward(nested); err != nil {
				return nil, err
			}
		}
		return "both", nil
	}))
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "sources after the result", []string{`{"kind":"user"}`, `{"kind":"plugin","plugin":"a"}`, `{"kind":"plugin","plugin":"b"}`},
		fields(t, e.log, func(r dsh.UserMessageLogged) string { return jsonOf(t, r.Message.Source) }))
	diff(t, "order", []string{"user/message", "tool/result", "user/message", "user/message"},
		typesOf(e.log, dsh.ToolResultLoggedType, dsh.UserMessageLoggedType))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant call result spliced step/end spliced step/start user*2 chunk*2 assistant step/end turn/end")
}

func TestInvalidInjectChangesNothing(t *testing.T) {
	e := newEnv(t)
	a := e.agent()
	before := e.log.Len()
	bad := dsh.UserMessage{ID: "x", Content: []dsh.ContentBlock{dsh.TextBlock{Text: "hi"}},
		Source: dsh.SourceModel{Provider: "p", Model: "m", ReplayState: json.RawMessage(`{not json`)}}
	if err := a.Inject(context.Background(), bad); err == nil {
		t.Fatal("Inject of a non-JSON source succeeded")
	}
	if err := a.Inject(context.Background(), userMsg("y", "bad \xff utf-8")); err == nil {
		t.Fatal("Inject of invalid UTF-8 succeeded")
	}
	if err := a.Inject(context.Background(), dsh.UserMessage{ID: "z", Content: []dsh.ContentBlock{dsh.TextBlock{Text: "hi"}}}); err == nil {
		t.Fatal("Inject without a source succeeded")
	}
	diff(t, "log length", before, e.log.Len())
	nextTurn, nextStep := a.Inbox()
	diff(t, "inbox", 0, len(nextTurn)+len(nextStep))
	checkLog(t, e.log, "")
}

func TestFailedFollowupAppend(t *testing.T) {
	e := newEnv(t, text("ok"))
	store := e.failingLog(t)
	a := e.agent()
	before := e.log.Len()
	store.setFail(true)
	if err := a.Followup(context.Background(), userMsg("u1", "hello")); err == nil {
		t.Fatal("Followup succeeded")
	}
	diff(t, "log length", before, e.log.Len())
	nextTurn, nextStep := a.Inbox()
	diff(t, "inbox", 0, len(nextTurn)+len(nextStep))
	diff(t, "status", dsh.AgentStatusIdle, a.Status())
	store.setFail(false)
	followup(t, a, "u2", "again")
	wait(t, a)
	diff(t, "reasons", []string{`{"kind":"completed"}`}, reasons(t, e.log))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant step/end turn/end")
}

func TestDuplicatePendingIDIsRefused(t *testing.T) {
	e := newEnv(t)
	a := e.agent()
	if err := a.Inject(context.Background(), pluginMsg("same", "one")); err != nil {
		t.Fatal(err)
	}
	if err := a.Followup(context.Background(), userMsg("same", "two")); !errors.Is(err, ErrDuplicateID) {
		t.Errorf("Followup with a pending id: %v", err)
	}
	checkLog(t, e.log, "spliced")
}
