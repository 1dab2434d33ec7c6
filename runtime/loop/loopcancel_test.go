package loop

import (
	"context"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
)

// Loop cancellation: what the scenarios of spec/conformance/loop_cancel.cue do not check
// (splice outcomes, signal causes, cancels from a log observer, splice positions, disposal),
// and Part A item 11.

const abortedUser = `{"kind":"aborted","reason":{"kind":"user"}}`

// hang is a scripted response that streams text and then hangs until cancelled.
func hang(text string) llm.ScriptedResponse { return llm.ScriptedResponse{Text: text, Hang: true} }

func TestCancelHangingStream(t *testing.T) {
	e := newEnv(t, hang("partial answer"))
	a := e.agent()
	followup(t, a, "u1", "go")
	waitFor(t, "the stream", func() bool { return len(records[dsh.AssistantChunkLogged](t, e.log)) == 2 })
	a.Cancel(dsh.CancelUser{}, false)
	wait(t, a)
	diff(t, "reasons", []string{abortedUser}, reasons(t, e.log))
	// B §5.3 step 2: the visible prefix is kept as an interrupted message.
	diff(t, "assistant/message", []string{`{"turn":1,"step":1,"message":{"role":"assistant","content":[{"kind":"text","text":"partial answer"}]},"interrupted":true}`},
		fields(t, e.log, func(r dsh.AssistantMessageLogged) string { return jsonOf(t, r) }))
	diff(t, "log tail", []string{"assistant/chunk", "assistant/chunk", "assistant/chunk", "assistant/message", "step/end", "turn/end"},
		types(e.log)[7:])
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*3 assistant step/end turn/end")
}

func TestImmediateCancelBeforeAnyStep(t *testing.T) {
	e := newEnv(t, text("never"))
	entered := make(chan struct{}, 1)
	e.reg.OnPreStep(blockPreStepUntilCancel(entered))
	a := e.agent()
	followup(t, a, "u1", "first")
	followup(t, a, "u2", "second")
	await(t, entered, "pre-step")
	a.Cancel(dsh.CancelUser{}, false)
	wait(t, a)
	diff(t, "splice outcomes", []string{"", "", "", "canceled"},
		fields(t, e.log, func(r dsh.InboxSpliced) string { return string(r.Outcome) }))
	diff(t, "reasons", []string{abortedUser}, reasons(t, e.log))
	diff(t, "status", dsh.AgentStatusIdle, a.Status())
	diff(t, "requests", 0, len(e.requests()))
	checkLog(t, e.log, "spliced turn/start spliced*3 turn/end")
}

func TestKeepInboxCancelAfterClaim(t *testing.T) {
	e := newEnv(t, text("never"))
	entered := make(chan struct{}, 1)
	e.reg.OnPreStep(blockPreStepUntilCancel(entered))
	a := e.agent()
	followup(t, a, "u1", "go")
	await(t, entered, "pre-step")
	a.Cancel(dsh.CancelUser{}, true)
	wait(t, a)
	diff(t, "splice outcomes", []string{"", ""}, fields(t, e.log, func(r dsh.InboxSpliced) string { return string(r.Outcome) }))
	diff(t, "requests", 0, len(e.requests()))
	diff(t, "reasons", []string{abortedUser}, reasons(t, e.log))
	checkLog(t, e.log, "spliced turn/start spliced turn/end")
}

func TestFirstCancelCauseWins(t *testing.T) {
	e := newEnv(t, text("never"))
	entered := make(chan struct{}, 1)
	causes := make(chan error, 1)
	e.reg.OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		entered <- struct{}{}
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return next.Call(ctx)
	})
	a := e.agent()
	followup(t, a, "u1", "go")
	await(t, entered, "pre-step")
	a.Cancel(dsh.CancelParent{}, false)
	a.Cancel(dsh.CancelUser{}, false)
	wait(t, a)
	diff(t, "reasons", []string{`{"kind":"aborted","reason":{"kind":"parent"}}`}, reasons(t, e.log))
	diff(t, "signal cause", "loop: turn cancelled (parent)", (<-causes).Error())
	checkLog(t, e.log, "spliced turn/start spliced turn/end")
}

func TestCancelFromAssistantMessageObserver(t *testing.T) {
	e := newEnv(t, calls("c1:echo"), text("next turn"))
	ran := false
	e.register(toolDef("echo", false, func(context.Context, *tools.RunContext) (any, error) { ran = true; return "x", nil }))
	a := e.agent()
	cancelled := false
	stopObs := e.log.Subscribe(func(ev session.Event) {
		if ev.Type == dsh.AssistantMessageLoggedType && !cancelled {
			cancelled = true
			a.Cancel(dsh.CancelUser{}, false)
		}
	})
	defer stopObs()
	followup(t, a, "u1", "go")
	wait(t, a)
	if ran {
		t.Error("the body ran")
	}
	diff(t, "tail", []string{"assistant/message", "tool/call", "tool/result", "step/end", "turn/end"}, types(e.log)[9:])
	diff(t, "tool/result", []string{`{"turn":1,"step":1,"message":{"id":"tr_1_1_c1","role":"user","content":[{"kind":"tool-result","toolCallId":"c1","content":[{"kind":"text","text":"Error: tool call aborted before dispatch"}],"isError":true}],"source":{"kind":"tool","callId":"c1"}},"error":{"name":"AbortError","code":"ABORTED_BEFORE_DISPATCH"}}`},
		fields(t, e.log, func(r dsh.ToolResultLogged) string { return jsonOf(t, r) }))
	followup(t, a, "u2", "again")
	wait(t, a)
	diff(t, "request of the next turn", []string{"user:go", "assistant:[call c1]",
		"user:[result c1]Error: tool call aborted before dispatch", "user:again"}, texts(e.requests()[1]))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant call result step/end turn/end spliced turn/start spliced step/start user chunk*3 assistant step/end turn/end")
}

// injectThenCancel is a tool whose body injects "injected" and then cancels the turn.
func injectThenCancel(keepInbox bool) tools.Definition {
	return toolDef("canceller", false, func(ctx context.Context, rc *tools.RunContext) (any, error) {
		a, _ := AgentFromContext(ctx)
		if err := a.Inject(ctx, pluginMsg("inj", "injected")); err != nil {
			return nil, err
		}
		a.Cancel(dsh.CancelUser{}, keepInbox)
		return "cancelled", nil
	})
}

// addX is a post-execute listener adding the context X.
func addX(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
	if _, err := next.Call(ctx); err != nil {
		return nil, err
	}
	return dsh.PostToolAccept{AdditionalContexts: []dsh.UserMessage{pluginMsg("X", "X")}}, nil
}

func TestKeepInboxParksContexts(t *testing.T) {
	e := newEnv(t, calls("c1:canceller"), text("after wake"))
	e.register(injectThenCancel(true))
	e.reg.OnPostTool(addX)
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	evs := types(e.log)
	diff(t, "log tail", []string{"tool/result", "agent/inbox/spliced", "step/end", "turn/end"}, evs[len(evs)-4:])
	_, nextStep := a.Inbox()
	diff(t, "nextStep", []string{"injected", "X"}, msgTexts(nextStep))
	followup(t, a, "u2", "wake")
	wait(t, a)
	diff(t, "plugin user/message", []string{"injected", "X"},
		userTextsBySource(t, e.log, dsh.SourcePluginKind))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant call spliced result spliced step/end turn/end spliced turn/start spliced*2 step/start user*3 chunk*3 assistant step/end turn/end")
}

// userTextsBySource returns the texts of the user/message events whose source is kind.
func userTextsBySource(t *testing.T, l *session.Log, kind dsh.MessageSourceKind) []string {
	var out []string
	for _, r := range records[dsh.UserMessageLogged](t, l) {
		if r.Message.Source.Kind() == kind {
			out = append(out, textOf(r.Message.Content))
		}
	}
	return out
}

func TestDisposalWhileToolWaits(t *testing.T) {
	e := newEnv(t, calls("c1:waiter"), text("never"))
	started := make(chan struct{})
	e.register(toolDef("waiter", false, func(ctx context.Context, rc *tools.RunContext) (any, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}))
	e.reg.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		if _, err := next.Call(ctx); err != nil {
			return nil, err
		}
		return dsh.PostToolAccept{AdditionalContexts: []dsh.UserMessage{pluginMsg("Y", "Y")}}, nil
	})
	a := e.agent()
	followup(t, a, "u1", "go")
	<-started
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	diff(t, "reasons", []string{`{"kind":"aborted","reason":{"kind":"disposed"}}`}, reasons(t, e.log))
	diff(t, "turns", 1, len(records[dsh.TurnStart](t, e.log)))
	diff(t, "plugin user/message", []string(nil), userTextsBySource(t, e.log, dsh.SourcePluginKind))
	// Disposal keeps the inbox (for a later Resume): Y is parked, never entered.
	_, nextStep := a.Inbox()
	diff(t, "nextStep", []string{"Y"}, msgTexts(nextStep))
	if err := a.Followup(context.Background(), userMsg("u2", "late")); err != ErrClosed {
		t.Errorf("Followup after Close = %v", err)
	}
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant call result spliced step/end turn/end")
}

func TestPartA11_CancelDiscardsContextsBeforeAndAfter(t *testing.T) {
	e := newEnv(t, calls("c1:fast", "c2:slow"), text("never"))
	c1Done := make(chan struct{})
	e.register(toolDef("fast", true, func(ctx context.Context, rc *tools.RunContext) (any, error) {
		defer close(c1Done)
		return "fast", rc.DeferContext(pluginMsg("ctx-c1", "ctx-c1"))
	}))
	e.register(toolDef("slow", true, func(ctx context.Context, rc *tools.RunContext) (any, error) {
		<-c1Done
		a, _ := AgentFromContext(ctx)
		a.Cancel(dsh.CancelUser{}, false) // c1's context was accepted before, c2's is after
		return "slow", rc.DeferContext(pluginMsg("ctx-c2", "ctx-c2"))
	}))
	var discarded recorder
	e.reg.OnInboxDiscarded(func(ctx context.Context, p *dsh.InboxDiscardedPayload) {
		discarded.add(textOf(p.Message.Content))
	})
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	_, nextStep := a.Inbox()
	diff(t, "nextStep", 0, len(nextStep))
	diff(t, "discarded", []string{"ctx-c1", "ctx-c2"}, discarded.list())
	diff(t, "tool results", []string{"c1", "c2"}, fields(t, e.log, func(r dsh.ToolResultLogged) string {
		return r.Message.Source.(dsh.SourceTool).CallID
	}))
	diff(t, "reasons", []string{abortedUser}, reasons(t, e.log))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*3 assistant call*2 result*2 step/end turn/end")
}

func TestCancelLatchesWakingSend(t *testing.T) {
	// B §5.1 and §5.5: a waking send between the abort and idle goes to next-turn and is
	// replayed once the driver is idle.
	e := newEnv(t, calls("c1:stuck"), text("latched"))
	started, release := make(chan struct{}), make(chan struct{})
	e.register(toolDef("stuck", false, func(ctx context.Context, rc *tools.RunContext) (any, error) {
		close(started)
		<-release // uncooperative: the turn cannot end before it returns
		return "late", nil
	}))
	var statuses recorder
	e.reg.OnStatus(func(ctx context.Context, p *dsh.StatusPayload) { statuses.add(string(p.Status)) })
	a := e.agent()
	followup(t, a, "u1", "go")
	<-started
	a.Cancel(dsh.CancelUser{}, false)
	if err := a.Steer(context.Background(), pluginMsg("s", "steered while aborting")); err != nil {
		t.Fatal(err)
	}
	nextTurn, nextStep := a.Inbox()
	diff(t, "redirected", []string{"steered while aborting"}, msgTexts(nextTurn))
	diff(t, "nextStep", 0, len(nextStep))
	close(release)
	waitFor(t, "the replayed turn", func() bool { return len(records[dsh.TurnEnd](t, e.log)) == 2 })
	wait(t, a)
	diff(t, "reasons", []string{abortedUser, `{"kind":"completed"}`}, reasons(t, e.log))
	diff(t, "statuses", []string{"running", "idle", "running", "idle"}, statuses.list())
	diff(t, "request 2", []string{"user:go", "assistant:[call c1]", "user:[result c1]Error: tool call aborted", "user:steered while aborting"},
		texts(e.requests()[1]))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant call spliced result step/end turn/end turn/start spliced step/start user chunk*2 assistant step/end turn/end")
}

func TestHaltFromToolBody(t *testing.T) {
	e := newEnv(t, calls("c1:halter", "c2:halter"), text("never"))
	var bodies recorder
	e.register(toolDef("halter", false, func(ctx context.Context, rc *tools.RunContext) (any, error) {
		bodies.add(rc.Exec().CallID)
		a, _ := AgentFromContext(ctx)
		a.Halt("tool says stop")
		return "ok", nil
	}))
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "bodies", []string{"c1"}, bodies.list())
	diff(t, "reasons", []string{`{"kind":"aborted","reason":{"kind":"hook","reason":"tool says stop"}}`}, reasons(t, e.log))
	diff(t, "results", []string{"ok", "Error: tool call aborted before dispatch"},
		fields(t, e.log, func(r dsh.ToolResultLogged) string { return textOf(r.Message.Content) }))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*3 assistant call result call result step/end turn/end")
}
