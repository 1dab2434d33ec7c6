package tools

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
)

// Staged calls let a scheduler run pre-dispatch serially, bodies concurrently and
// finishing in model order (docs/design/SEMANTICS.md#54-tool-batch-scheduling-and-ordering; scenarios 51, 53, 54 at the runtime
// level): pre-execute, post-execute and tools/result are observed as [c1, c2, c3] whatever
// the settlement order, and all bodies run at once.
func TestStagedCallsKeepModelOrder(t *testing.T) {
	e := newEnv(t)
	var rec recorder
	started := make(chan string, 3)
	release := map[string]chan struct{}{"c1": make(chan struct{}), "c2": make(chan struct{}), "c3": make(chan struct{})}
	e.register(t, toolDef("slow", func(ctx context.Context, rc *RunContext) (any, error) {
		started <- rc.Exec().CallID
		<-release[rc.Exec().CallID]
		rec.add("settled:" + rc.Exec().CallID)
		return rc.Exec().CallID, nil
	}))
	e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		rec.add("pre:" + p.Exec.CallID)
		return next.Call(ctx)
	})
	e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		rec.add("post:" + p.Exec.CallID)
		return next.Call(ctx)
	})
	e.hooks.OnToolResult(func(ctx context.Context, p *dsh.ToolResultPayload) { rec.add("result:" + p.Exec.CallID) })

	ids := []string{"c1", "c2", "c3"}
	calls := make([]*Call, len(ids))
	for i, id := range ids {
		calls[i] = e.rt.Start(context.Background(), Input{CallID: id, Name: "slow", Arguments: json.RawMessage(`{}`)})
		calls[i].PreDispatch()
	}
	var wg sync.WaitGroup
	for _, k := range calls {
		wg.Go(k.Dispatch)
	}
	for range ids {
		<-started // every body has started before any settles
	}
	close(release["c2"])
	close(release["c3"])
	close(release["c1"])
	wg.Wait()
	for i, k := range calls {
		if r := k.Finish(); text(r) != ids[i] {
			t.Errorf("%s: %q", ids[i], text(r))
		}
	}
	var pre, post, result []string
	for _, s := range rec.get() {
		switch {
		case s[:4] == "pre:":
			pre = append(pre, s[4:])
		case s[:5] == "post:":
			post = append(post, s[5:])
		case len(s) > 7 && s[:7] == "result:":
			result = append(result, s[7:])
		}
	}
	if !slices.Equal(pre, ids) || !slices.Equal(post, ids) || !slices.Equal(result, ids) {
		t.Errorf("pre %v post %v result %v", pre, post, result)
	}
	if got := calls[0].Finish(); text(got) != "c1" {
		t.Error("Finish is not idempotent")
	}
}

// A pre-execute halt is visible after PreDispatch, so that the scheduler starts no further
// call; the halted call itself never dispatches.
func TestStagedHaltAfterPreDispatch(t *testing.T) {
	e := newEnv(t)
	ran := false
	e.register(t, toolDef("t", func(context.Context, *RunContext) (any, error) { ran = true; return "", nil }))
	e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		return dsh.NewPreToolHalt("stop"), nil
	})
	k := e.rt.Start(context.Background(), Input{CallID: "c1", Name: "t", Arguments: json.RawMessage(`{}`), AgentID: "a1"})
	if k.Halt() != nil {
		t.Error("halt before pre-dispatch")
	}
	k.PreDispatch()
	if h := k.Halt(); h == nil || h.Reason != "stop" || h.Point != HaltPreExecute {
		t.Fatalf("halt %+v", h)
	}
	k.Dispatch()
	r := k.Finish()
	if ran || text(r) != "Error: stop" || r.Halt == nil {
		t.Errorf("ran %v text %q halt %+v", ran, text(r), r.Halt)
	}
	if ex := k.Exec(); ex.CallID != "c1" || *ex.AgentID != "a1" || ex.Token != r.Exec.Token {
		t.Errorf("exec %+v", ex)
	}
}

// A staged call's Exec is a copy: no agent id for an agent-less call, and a private one
// otherwise.
func TestStagedExecIsACopy(t *testing.T) {
	e := newEnv(t)
	e.register(t, echoDef())
	if id := e.rt.Start(context.Background(), Input{CallID: "c1", Name: "echo", Arguments: json.RawMessage(`{}`)}).Exec().AgentID; id != nil {
		t.Errorf("agent-less call: agent id %q", *id)
	}
	k := e.rt.Start(context.Background(), Input{CallID: "c2", Name: "echo", Arguments: json.RawMessage(`{}`), AgentID: "a1"})
	first := k.Exec()
	*first.AgentID = "changed"
	if id := k.Exec().AgentID; id == nil || *id != "a1" {
		t.Errorf("after changing a copy: agent id %v, want a1", id)
	}
	k.PreDispatch()
	k.Dispatch()
	k.Finish()
}
