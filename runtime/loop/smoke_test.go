package loop

import (
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
)

func TestCanonicalTextTurn(t *testing.T) {
	e := newEnv(t, text("hi there"))
	a := e.agent()
	followup(t, a, "u1", "hello")
	wait(t, a)
	diff(t, "reasons", []string{`{"kind":"completed"}`}, reasons(t, e.log))
	if got := a.Status(); got != dsh.AgentStatusIdle {
		t.Errorf("status %s", got)
	}
	checkLog(t, e.log, "spliced turn/start spliced step/start user header context chunk*3 assistant step/end turn/end")
}
