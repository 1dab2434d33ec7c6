package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
)

// TestConcurrentExecutions runs 100 calls at once through shared listeners of every phase,
// global and scoped, and checks that each call's phases saw only that call.
func TestConcurrentExecutions(t *testing.T) {
	const n = 100
	e := newEnv(t)
	e.register(t, echoDef())
	var (
		mu     sync.Mutex
		tokens = map[string]map[string]dsh.Token{} // callID -> phase -> token
		guards atomic.Int64
	)
	see := func(phase string, exec dsh.ToolExecution) {
		mu.Lock()
		defer mu.Unlock()
		if tokens[exec.CallID] == nil {
			tokens[exec.CallID] = map[string]dsh.Token{}
		}
		if _, dup := tokens[exec.CallID][phase]; dup {
			t.Errorf("%s saw %s twice", phase, exec.CallID)
		}
		tokens[exec.CallID][phase] = exec.Token
	}
	e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		see("pre", p.Exec)
		return next.Call(ctx)
	})
	e.hooks.Plugin("scoped").ForAgent("even").Guard(func(ctx context.Context, p *dsh.GuardPayload) dsh.GuardVerdict {
		guards.Add(1)
		return dsh.GuardAbstain{}
	})
	e.hooks.WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
		see("execute", p.Exec)
		return next.Call(ctx)
	})
	e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		see("post", p.Exec)
		d, err := next.Call(ctx)
		if err != nil {
			return nil, err
		}
		a := d.(dsh.PostToolAccept)
		a.AdditionalContexts = append(a.AdditionalContexts, ctxMsg("ctx-"+p.Exec.CallID, "post"))
		return a, nil
	})
	e.hooks.OnToolResult(func(ctx context.Context, p *dsh.ToolResultPayload) { see("result", p.Exec) })

	results := make([]Result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			agent := "odd"
			if i%2 == 0 {
				agent = "even"
			}
			args, _ := json.Marshal(map[string]string{"text": fmt.Sprint("t", i)})
			results[i] = e.rt.Execute(context.Background(), Input{CallID: fmt.Sprint("c", i), Name: "echo", Arguments: args, AgentID: agent})
		}()
	}
	wg.Wait()
	for i, r := range results {
		id := fmt.Sprint("c", i)
		if text(r) != fmt.Sprint("t", i) || r.Exec.CallID != id {
			t.Errorf("%s: text %q", id, text(r))
		}
		if ids := contextIDs(r); len(ids) != 1 || ids[0] != "ctx-"+id {
			t.Errorf("%s: contexts %v", id, ids)
		}
		for phase, tok := range tokens[id] {
			if tok != r.Exec.Token {
				t.Errorf("%s: %s saw another call's token", id, phase)
			}
		}
		if len(tokens[id]) != 4 {
			t.Errorf("%s: phases %v", id, tokens[id])
		}
	}
	if guards.Load() != n/2 {
		t.Errorf("the scoped guard ran %d times, want %d", guards.Load(), n/2)
	}
}
