package loop

import (
	"context"
	"errors"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/approval"
	"github.com/dshkit/dsh/runtime/tools"
)

func TestApprovalRecorderLogsToTheAgent(t *testing.T) {
	e := newEnv(t, calls("c1:echo"), text("done"))
	svc := approval.NewService(approval.WithRecorder(ApprovalRecorder()), approval.WithLogger(quiet),
		approval.WithIDs(func() string { return "apr-1" }))
	svc.AddAnswerer(approval.AnswererFunc(func(ctx context.Context, req approval.Request) (dsh.ApprovalOutcome, error) {
		return dsh.ApprovalOutcomeAllowedOnce, nil
	}))
	e.rt = tools.New(e.tools, e.reg, tools.WithLogger(quiet), tools.WithApprover(svc))
	e.cfg.Tools = e.rt
	e.register(okTool("echo", false))
	e.reg.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		return dsh.PreToolAsk{}, nil
	})
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*2 assistant call approval/asked approval/decided result step/end step/start chunk*2 assistant step/end turn/end")
	diff(t, "result", []string{"ok"}, fields(t, e.log, func(r dsh.ToolResultLogged) string { return textOf(r.Message.Content) }))
	// Outside a turn the recorder refuses, as the seam must.
	if err := ApprovalRecorder().Record(context.Background(), dsh.SessionEndSeed{}); !errors.Is(err, ErrNoTurn) {
		t.Errorf("Record outside a turn: %v", err)
	}
}
