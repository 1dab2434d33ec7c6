package loop

import (
	"context"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
)

func TestPreStepPanicEndsTurnError(t *testing.T) {
	e := newEnv(t, text("never"))
	e.reg.OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		panic("pre-step panicked")
	})
	var errs []dsh.LLMFailure
	e.reg.OnAgentError(func(ctx context.Context, p *dsh.AgentErrorPayload) { errs = append(errs, p.Error) })
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	want := dsh.LLMFailure{Message: "panic: pre-step panicked", Code: "UNKNOWN"}
	diff(t, "agent/error", []dsh.LLMFailure{want}, errs)
	diff(t, "turn/end", []dsh.TurnEnd{{Turn: 1, Reason: dsh.TurnEndError{Error: want}}}, records[dsh.TurnEnd](t, e.log))
	checkLog(t, e.log, "spliced turn/start spliced turn/end")
}

func TestLogFailureMidTurn(t *testing.T) {
	e := newEnv(t, calls("c1:breaker"), text("recovered"))
	store := &failingStore{Memory: session.NewMemory()}
	l, err := session.Open(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	e.log = l
	e.register(toolDef("breaker", false, func(ctx context.Context, rc *tools.RunContext) (any, error) {
		store.setFail(true) // the disk fills up while the tool runs
		return "ok", nil
	}))
	var errs []string
	e.reg.OnAgentError(func(ctx context.Context, p *dsh.AgentErrorPayload) { errs = append(errs, p.Error.Code) })
	a := e.agent()
	if err := a.Followup(context.Background(), dsh.UserMessage{Content: []dsh.ContentBlock{dsh.TextBlock{Text: "go"}}}); err != nil {
		t.Fatal(err)
	}
	wait(t, a)
	diff(t, "agent/error", []string{"UNKNOWN"}, errs)
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant call")
	store.setFail(false)
	followup(t, a, "u2", "again")
	wait(t, a)
	// The failed turn's turn/end is appended before the next turn starts.
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant call spliced turn/end turn/start spliced step/start user chunk*2 assistant step/end turn/end")
	if _, err := session.Replay(e.log.Events()); err != nil {
		t.Errorf("replay: %v", err)
	}
	diff(t, "ids are minted", true, strings.HasPrefix(records[dsh.UserMessageLogged](t, e.log)[0].Message.ID, "msg_"))
}
