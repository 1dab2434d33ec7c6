package loop

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/tools"
)

// rewriteScript: two turns with a rewritten bash call each, then a turn without calls.
func rewriteScript() []llm.ScriptedResponse {
	call := func(id string) llm.ScriptedResponse {
		return llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{ID: id, Name: "bash", Arguments: json.RawMessage(`{"command":"make"}`)}}}
	}
	return []llm.ScriptedResponse{call("c1"), text("one"), call("c2"), text("two"), text("three")}
}

// rewriteEnv is an env with a bash tool echoing its command and a rewriter wrapping it,
// counting its runs.
func rewriteEnv(t *testing.T, runs *atomic.Int32, responses ...llm.ScriptedResponse) *env {
	e := newEnv(t, responses...)
	e.register(tools.Definition{Name: "bash", Description: "bash",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false}`),
		Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
			var in struct{ Command string }
			if err := rc.BindArguments(&in); err != nil {
				return nil, err
			}
			return "ran " + in.Command, nil
		}})
	e.reg.Plugin("wrap").OnRewriteInput(func(ctx context.Context, p *dsh.RewriteInputPayload) (dsh.RewriteDecision, error) {
		runs.Add(1)
		return dsh.RewriteReplace{Args: json.RawMessage(`{"command":"( cd w && make )"}`), Reason: ptrTo("sandbox")}, nil
	})
	return e
}

func ptrTo[T any](v T) *T { return &v }

// TestRewriteRecordAndHistory: scenario 3 in the loop: tool/call holds the effective
// arguments, the model's raw string and the chain; the body ran the effective arguments;
// the assistant message is verbatim, and the model sees the notice first in the result.
func TestRewriteRecordAndHistory(t *testing.T) {
	var runs atomic.Int32
	e := rewriteEnv(t, &runs, rewriteScript()[:2]...)
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	calls := records[dsh.ToolCall](t, e.log)
	if len(calls) != 1 {
		t.Fatalf("tool/call %+v", calls)
	}
	c := calls[0]
	if c.Arguments != `{"command":"( cd w && make )"}` || c.ModelArguments == nil || *c.ModelArguments != `{"command":"make"}` ||
		c.Rewrite == nil || len(c.Rewrite.Chain) != 1 || c.Rewrite.Chain[0].By != "wrap#1" || c.RewriteError != nil {
		t.Errorf("tool/call %s", jsonOf(t, c))
	}
	res := records[dsh.ToolResultLogged](t, e.log)
	if len(res) != 1 || res[0].RewriteNotice == nil || textOf(res[0].Message.Content) != "ran ( cd w && make )" {
		t.Fatalf("tool/result %s", jsonOf(t, res))
	}
	am := records[dsh.AssistantMessageLogged](t, e.log)[0]
	if blk := am.Message.Content[0].(dsh.ToolCallBlock); blk.Arguments != `{"command":"make"}` {
		t.Errorf("the assistant message changed: %s", blk.Arguments)
	}
	req := e.requests()[1]
	last := req.Messages[len(req.Messages)-1]
	tr := last.Content[0].(dsh.ToolResultBlock)
	want := `[dsh] The arguments of this call were rewritten by wrap#1 before it ran: "command" = "( cd w && make )".`
	if len(tr.Content) != 2 || tr.Content[0].(dsh.TextBlock).Text != want || tr.Content[1].(dsh.TextBlock).Text != "ran ( cd w && make )" {
		t.Errorf("the model saw %s", jsonOf(t, tr))
	}
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant call result step/end step/start chunk*2 assistant step/end turn/end")
}

// TestRewriteResume: scenario 22: resuming a session with rewritten calls sends
// byte-identical requests (the derived history, notices included) and runs no rewriter
// again.
func TestRewriteResume(t *testing.T) {
	var refRuns atomic.Int32
	ref := rewriteEnv(t, &refRuns, rewriteScript()...)
	ra := ref.agent()
	for _, p := range []string{"first", "second", "third"} {
		followup(t, ra, p, p)
		wait(t, ra)
	}

	var runs atomic.Int32
	e := rewriteEnv(t, &runs, rewriteScript()...)
	a := e.agent()
	for _, p := range []string{"first", "second"} {
		followup(t, a, p, p)
		wait(t, a)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.log.Close(); err != nil {
		t.Fatal(err)
	}
	before := runs.Load()
	if before != 2 {
		t.Fatalf("the rewriter ran %d times in two turns", before)
	}
	rest := llm.NewScripted(rewriteScript()[4:]...).RecordRequests()
	e.log, e.model = e.openLog(), rest
	b, err := Resume(context.Background(), e.config())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	followup(t, b, "third", "third")
	wait(t, b)
	if n := runs.Load(); n != before {
		t.Errorf("the rewriter ran %d more times after resume", n-before)
	}
	refReq, got := ref.requests()[4], rest.Requests()[0]
	want, err := json.Marshal(refReq.Messages)
	if err != nil {
		t.Fatal(err)
	}
	have, err := json.Marshal(got.Messages)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, have) {
		t.Errorf("the resumed request differs:\nwant %s\ngot  %s", want, have)
	}
	if n := strings.Count(string(have), "[dsh] The arguments of this call were rewritten by wrap#1"); n != 2 {
		t.Errorf("the resumed history has %d notices, want 2", n)
	}
}

// TestRewriteFailureInBatch: scenario 9 in the loop: the rewriter panics on call 2 of 3;
// call 2 fails closed (REWRITE_FAILED, its tool/call with the model's arguments and the
// rewriteError), calls 1 and 3 run, and the results stay in model order.
func TestRewriteFailureInBatch(t *testing.T) {
	args := func(cmd string) json.RawMessage { return json.RawMessage(`{"command":"` + cmd + `"}`) }
	e := newEnv(t, llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{
		{ID: "c1", Name: "bash", Arguments: args("one")},
		{ID: "c2", Name: "bash", Arguments: args("two")},
		{ID: "c3", Name: "bash", Arguments: args("three")},
	}}, text("done"))
	var ran recorder
	e.register(tools.Definition{Name: "bash", Description: "bash",
		IsConcurrencySafe: func(json.RawMessage) bool { return true },
		Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
			ran.add(string(rc.Exec().Arguments))
			return "ok", nil
		}})
	e.reg.Plugin("r").OnRewriteInput(func(ctx context.Context, p *dsh.RewriteInputPayload) (dsh.RewriteDecision, error) {
		if p.CallID == "c2" {
			panic("rewriter bug")
		}
		return dsh.RewriteMerge{Patch: json.RawMessage(`{"checked":true}`)}, nil
	})
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	diff(t, "ran", []string{`{"checked":true,"command":"one"}`, `{"checked":true,"command":"three"}`}, sortedCopy(ran.list()))
	calls := records[dsh.ToolCall](t, e.log)
	if calls[1].Arguments != `{"command":"two"}` || calls[1].ModelArguments != nil || calls[1].RewriteError == nil ||
		calls[1].RewriteError.Code != dsh.RewriteErrorCodeREWRITEFAILED || !strings.Contains(calls[1].RewriteError.Message, "rewriter bug") {
		t.Errorf("tool/call 2 %s", jsonOf(t, calls[1]))
	}
	diff(t, "result order", []string{"c1", "c2", "c3"}, fields(t, e.log, func(r dsh.ToolResultLogged) string { return r.Message.Source.(dsh.SourceTool).CallID }))
	diff(t, "result codes", []string{"", tools.CodeRewriteFailed, ""}, fields(t, e.log, func(r dsh.ToolResultLogged) string {
		if r.Error == nil {
			return ""
		}
		return r.Error.Code
	}))
}
