package loop

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
)

// The tool batch scheduler: what the scenarios of spec/conformance/loop_batch.cue do not
// check (the order of every result after an abort mid-pool, reclassification).

// resultIDs returns the call ids of the tool/result events.
func resultIDs(t *testing.T, e *env) []string {
	return fields(t, e.log, func(r dsh.ToolResultLogged) string { return r.Message.Source.(dsh.SourceTool).CallID })
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
