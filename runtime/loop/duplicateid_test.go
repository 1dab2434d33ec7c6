package loop

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/tools"
)

// TestDuplicateToolCallIDIsAModelError: a response whose two tool calls share an id is a
// bad response: the turn ends error (recorded, named), and neither call runs, since a
// result could not be told apart from the other's.
func TestDuplicateToolCallIDIsAModelError(t *testing.T) {
	e := newEnv(t, calls("dup:echo", "dup:echo"), text("never"))
	var ran atomic.Int32
	e.register(toolDef("echo", false, func(context.Context, *tools.RunContext) (any, error) {
		ran.Add(1)
		return "ok", nil
	}))
	var errs []dsh.LLMFailure
	e.reg.OnAgentError(func(ctx context.Context, p *dsh.AgentErrorPayload) { errs = append(errs, p.Error) })
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	if n := ran.Load(); n != 0 {
		t.Errorf("the tool ran %d times", n)
	}
	if len(errs) != 1 || errs[0].Code != llm.CodeBadResponse || !strings.Contains(errs[0].Message, `"dup"`) {
		t.Fatalf("agent/error %+v, want one %s naming the id", errs, llm.CodeBadResponse)
	}
	ends := records[dsh.TurnEnd](t, e.log)
	if len(ends) != 1 {
		t.Fatalf("turn/end %+v", ends)
	}
	if te, ok := ends[0].Reason.(dsh.TurnEndError); !ok || te.Error.Code != llm.CodeBadResponse {
		t.Errorf("turn/end %+v, want error %s", ends[0].Reason, llm.CodeBadResponse)
	}
	if calls := records[dsh.ToolCall](t, e.log); len(calls) != 0 {
		t.Errorf("tool/call records %+v", calls)
	}
}
