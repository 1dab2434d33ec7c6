package agentrec

import (
	"context"
	"slices"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
)

func TestAgentRecords(t *testing.T) {
	ctx := context.Background()
	a := &Agent{AgentID: "a"}
	inj, steer := dsh.UserText(dsh.SourceUser{}, "inject"), dsh.UserText(dsh.SourceUser{}, "steer")
	if err := a.Steer(ctx, steer); err != nil {
		t.Fatal(err)
	}
	if err := a.Inject(ctx, inj); err != nil {
		t.Fatal(err)
	}
	a.Halt("h")
	a.Cancel(nil, false)
	if turn, step := a.Inbox(); turn != nil || len(step) != 2 || step[0].Content[0] != inj.Content[0] || step[1].Content[0] != steer.Content[0] {
		t.Errorf("Inbox() = %v, %v; want the injected, then the steered message", turn, step)
	}
	if got := a.Halted(); !slices.Equal(got, []string{"h", "cancelled (user)"}) {
		t.Errorf("Halted() = %q", got)
	}
	if a.ID() != "a" || len(a.Injected()) != 1 || len(a.Steered()) != 1 {
		t.Error("ID, Injected or Steered")
	}
	if a.Halted() != nil || a.Injected() != nil || a.Steered() != nil {
		t.Error("what was returned is not forgotten")
	}
}
