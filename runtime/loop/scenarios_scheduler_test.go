package loop

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
)

// Scenarios 51-60 of docs/design/SEMANTICS.md#6-conformance-scenarios: the tool batch scheduler.

// resultIDs returns the call ids of the tool/result events.
func resultIDs(t *testing.T, e *env) []string {
	return fields(t, e.log, func(r dsh.ToolResultLogged) string { return r.Message.Source.(dsh.SourceTool).CallID })
}

func TestParallelBodiesOverlap(t *testing.T) {
	e := newEnv(t, calls("c1:p", "c2:p", "c3:p"), text("done"))
	var started sync.WaitGroup
	started.Add(3)
	all := make(chan struct{})
	go func() { started.Wait(); close(all) }()
	e.register(toolDef("p", true, func(ctx context.Context, rc *tools.RunContext) (any, error) {
		started.Done()
		select {
		case <-all: // every body started before any completes
			return "ok", nil
		case <-time.After(testTimeout):
			return nil, errors.New("the bodies did not overlap")
		}
	}))
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "results", []string{"ok", "ok", "ok"}, fields(t, e.log, func(r dsh.ToolResultLogged) string { return textOf(r.Message.Content) }))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*4 assistant call*3 result*3 step/end step/start chunk*2 assistant step/end turn/end")
}

func TestExclusiveCallIsABarrier(t *testing.T) {
	e := newEnv(t, calls("A1:r", "A2:w", "A3:r"), text("done"))
	var order recorder
	body := func(ctx context.Context, rc *tools.RunContext) (any, error) {
		id := rc.Exec().CallID
		order.add(rc.Exec().Name + "-" + id + " start")
		time.Sleep(5 * time.Millisecond) //dshvet:allow ctxblock the body holds its slot for a moment, to make calls overlap
		order.add(rc.Exec().Name + "-" + id + " end")
		return "ok", nil
	}
	e.register(toolDef("r", true, body))
	e.register(toolDef("w", false, body))
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "order", []string{"r-A1 start", "r-A1 end", "w-A2 start", "w-A2 end", "r-A3 start", "r-A3 end"}, order.list())
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*4 assistant call result call result call result step/end step/start chunk*2 assistant step/end turn/end")
}

func TestCommitWaitsForModelOrder(t *testing.T) {
	e := newEnv(t, calls("c1:slow", "c2:fast"), text("done"))
	c2Done, release := make(chan struct{}), make(chan struct{})
	e.register(toolDef("slow", true, func(ctx context.Context, rc *tools.RunContext) (any, error) {
		<-release
		return "slow", nil
	}))
	e.register(toolDef("fast", true, func(ctx context.Context, rc *tools.RunContext) (any, error) {
		defer close(c2Done)
		return "fast", nil
	}))
	a := e.agent()
	followup(t, a, "u1", "go")
	<-c2Done
	time.Sleep(20 * time.Millisecond) // give a wrong scheduler the time to commit c2
	diff(t, "tool/results while c1 runs", 0, len(records[dsh.ToolResultLogged](t, e.log)))
	close(release)
	wait(t, a)
	diff(t, "results", []string{"c1", "c2"}, resultIDs(t, e))
	diff(t, "history", []string{"user:go", "assistant:[call c1][call c2]", "user:[result c1]slow", "user:[result c2]fast"},
		texts(e.requests()[1]))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*3 assistant call*2 result*2 step/end step/start chunk*2 assistant step/end turn/end")
}

func TestPolicyObservedInModelOrder(t *testing.T) {
	e := newEnv(t, calls("c1:p", "c2:p", "c3:p"), text("done"))
	var pre, post recorder
	e.reg.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		pre.add(p.Exec.CallID)
		return next.Call(ctx)
	})
	e.reg.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		post.add(p.Exec.CallID)
		return next.Call(ctx)
	})
	delays := map[string]time.Duration{"c1": 30 * time.Millisecond, "c2": 15 * time.Millisecond, "c3": 0}
	e.register(toolDef("p", true, func(ctx context.Context, rc *tools.RunContext) (any, error) {
		time.Sleep(delays[rc.Exec().CallID]) //dshvet:allow ctxblock the bodies finish out of model order on purpose
		return "ok", nil
	}))
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "pre-execute", []string{"c1", "c2", "c3"}, pre.list())
	diff(t, "post-execute", []string{"c1", "c2", "c3"}, post.list())
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*4 assistant call*3 result*3 step/end step/start chunk*2 assistant step/end turn/end")
}

func TestDenyAndThrowAtPreExecute(t *testing.T) {
	e := newEnv(t, calls("c1:t", "c2:t", "c3:t"), text("done"))
	var bodies, post recorder
	e.register(toolDef("t", false, func(ctx context.Context, rc *tools.RunContext) (any, error) {
		bodies.add(rc.Exec().CallID)
		return "ran", nil
	}))
	e.reg.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		switch p.Exec.CallID {
		case "c2":
			return dsh.PreToolDeny{Reason: "blocked by policy"}, nil
		case "c3":
			return nil, errors.New("pre exploded")
		}
		return next.Call(ctx)
	})
	e.reg.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		post.add(p.Exec.CallID)
		return next.Call(ctx)
	})
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "bodies", []string{"c1"}, bodies.list())
	diff(t, "post-execute", []string{"c1", "c2"}, post.list())
	diff(t, "results", []string{"ran", "Error: blocked by policy", "Error: pre exploded"},
		fields(t, e.log, func(r dsh.ToolResultLogged) string { return textOf(r.Message.Content) }))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*4 assistant call result call result call result step/end step/start chunk*2 assistant step/end turn/end")
}

func TestMaxParallelOneIsSerial(t *testing.T) {
	e := newEnv(t, calls("c1:p", "c2:p", "c3:p"), text("done"))
	e.cfg.MaxParallelToolCalls = 1
	var inFlight, peak atomic.Int32
	e.register(toolDef("p", true, func(ctx context.Context, rc *tools.RunContext) (any, error) {
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond) //dshvet:allow ctxblock the body holds its slot for a moment, to measure the peak
		inFlight.Add(-1)
		return "ok", nil
	}))
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "peak concurrency", int32(1), peak.Load())
	diff(t, "results", []string{"c1", "c2", "c3"}, resultIDs(t, e))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*4 assistant call result call result call result step/end step/start chunk*2 assistant step/end turn/end")
}

func TestCapThenCancelThenRelease(t *testing.T) {
	e := newEnv(t, calls("c1:p", "c2:p", "c3:p", "c4:p"), text("after wake"))
	e.cfg.MaxParallelToolCalls = 2
	var started sync.WaitGroup
	started.Add(2)
	release := make(chan struct{})
	var bodies recorder
	e.register(toolDef("p", true, func(ctx context.Context, rc *tools.RunContext) (any, error) {
		bodies.add(rc.Exec().CallID)
		started.Done()
		<-release // uncooperative until released
		return "ok", nil
	}))
	e.reg.OnPostTool(contextPerCall)
	a := e.agent()
	followup(t, a, "u1", "go")
	started.Wait()
	// B keeps the contexts accepted after the cancel; under Part A item 11 only a
	// keepInbox cancel keeps them (a plain cancel: TestPartA11_...).
	a.Cancel(dsh.CancelUser{}, true)
	close(release)
	wait(t, a)
	diff(t, "bodies", []string{"c1", "c2"}, sortedCopy(bodies.list()))
	diff(t, "calls and results", []string{"tool/call", "tool/call", "tool/result", "tool/result", "tool/call", "tool/result",
		"tool/call", "tool/result"}, typesOf(e.log, dsh.ToolCallType, dsh.ToolResultLoggedType))
	diff(t, "results", []string{"c1", "c2", "c3", "c4"}, resultIDs(t, e))
	diff(t, "errors", []string{"ABORTED", "ABORTED", "ABORTED_BEFORE_DISPATCH", "ABORTED_BEFORE_DISPATCH"},
		fields(t, e.log, func(r dsh.ToolResultLogged) string { return r.Error.Code }))
	_, nextStep := a.Inbox()
	diff(t, "nextStep", []string{"ctx-c1", "ctx-c2"}, msgTexts(nextStep))
	followup(t, a, "u2", "wake")
	wait(t, a)
	diff(t, "plugin user/message", []string{"ctx-c1", "ctx-c2"}, userTextsBySource(t, e.log, dsh.SourcePluginKind))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*5 assistant call*2 result*2 call result call result spliced step/end turn/end spliced turn/start spliced*2 step/start user*3 chunk*3 assistant step/end turn/end")
}

func TestCancelDuringPreExecute(t *testing.T) {
	e := newEnv(t, calls("c1:p", "c2:p"), text("never"))
	ran := false
	e.register(toolDef("p", true, func(ctx context.Context, rc *tools.RunContext) (any, error) { ran = true; return "ok", nil }))
	entered := make(chan struct{}, 2)
	e.reg.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		entered <- struct{}{}
		<-ctx.Done() // still pending when the cancel comes; then allows
		return next.Call(ctx)
	})
	a := e.agent()
	followup(t, a, "u1", "go")
	await(t, entered, "pre-execute of c1")
	a.Cancel(dsh.CancelUser{}, false)
	wait(t, a)
	if ran {
		t.Error("a body ran")
	}
	diff(t, "errors", []string{"ABORTED_BEFORE_DISPATCH", "ABORTED_BEFORE_DISPATCH"},
		fields(t, e.log, func(r dsh.ToolResultLogged) string { return r.Error.Code }))
	diff(t, "results", []string{"c1", "c2"}, resultIDs(t, e))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*3 assistant call result call result step/end turn/end")
}

func TestAbortMidPoolSkipsBarrier(t *testing.T) {
	e := newEnv(t, calls("c1:p", "c2:p", "c3:x"), text("never"))
	var started sync.WaitGroup
	started.Add(2)
	e.register(toolDef("p", true, func(ctx context.Context, rc *tools.RunContext) (any, error) {
		started.Done()
		<-ctx.Done()
		return nil, ctx.Err()
	}))
	xRan := false
	e.register(toolDef("x", false, func(ctx context.Context, rc *tools.RunContext) (any, error) { xRan = true; return "x", nil }))
	a := e.agent()
	followup(t, a, "u1", "go")
	started.Wait()
	a.Cancel(dsh.CancelUser{}, false)
	wait(t, a)
	if xRan {
		t.Error("x ran")
	}
	diff(t, "results", []string{"c1", "c2", "c3"}, resultIDs(t, e))
	diff(t, "c3", "ABORTED_BEFORE_DISPATCH", records[dsh.ToolResultLogged](t, e.log)[2].Error.Code)
	diff(t, "reasons", []string{abortedUser}, reasons(t, e.log))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*4 assistant call*2 result*2 call result step/end turn/end")
}

func TestReclassifiedBeforeStart(t *testing.T) {
	e := newEnv(t, calls("c1:x", "c2:x", "c3:x"), text("done"))
	e.cfg.MaxParallelToolCalls = 2
	var order recorder
	def := toolDef("x", true, func(ctx context.Context, rc *tools.RunContext) (any, error) {
		id := rc.Exec().CallID
		order.add(id + " start")
		if id == "c2" {
			time.Sleep(20 * time.Millisecond) //dshvet:allow ctxblock c2 finishes last on purpose
		}
		order.add(id + " end")
		return "ok", nil
	})
	unregister := e.register(def)
	once := sync.Once{}
	e.reg.OnToolResult(func(ctx context.Context, p *dsh.ToolResultPayload) {
		if p.Exec.CallID != "c1" {
			return
		}
		once.Do(func() { // x becomes exclusive after c1
			unregister()
			excl := def
			excl.IsConcurrencySafe = nil
			e.register(excl)
		})
	})
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	got := order.list()
	idx := func(s string) int {
		for i, g := range got {
			if g == s {
				return i
			}
		}
		return -1
	}
	if idx("c3 start") < idx("c2 end") {
		t.Errorf("c3 started before c2 ended: %v", got)
	}
	diff(t, "results", []string{"c1", "c2", "c3"}, resultIDs(t, e))
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*4 assistant call*2 result*2 call result step/end step/start chunk*2 assistant step/end turn/end")
}
