package hookbridge

import (
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
)

// statAgent is an agent that describes its resumed context.
type statAgent struct {
	dsh.Agent
	at       time.Time
	tokens   int
	measured bool
	ok       bool
}

func (a statAgent) ResumeStats() (time.Time, int, bool, bool) {
	return a.at, a.tokens, a.measured, a.ok
}

// TestResumed: the seconds since the last response are rounded and never negative; an
// agent that cannot describe its context, or has nothing to describe, gives nil.
func TestResumed(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	r := resumed(statAgent{at: now.Add(-4600 * time.Millisecond), tokens: 15, measured: true, ok: true}, now)
	if r == nil || *r != (Resumed{SecondsSinceLastResponse: 5, ContextTokens: 15, Measured: true}) {
		t.Fatalf("resumed = %+v", r)
	}
	if r := resumed(statAgent{at: now.Add(time.Second), ok: true}, now); r == nil || r.SecondsSinceLastResponse != 0 {
		t.Fatalf("a response in the future: %+v, want 0 seconds", r)
	}
	if r := resumed(statAgent{at: now, ok: false}, now); r != nil {
		t.Fatalf("nothing to describe: %+v, want nil", r)
	}
	var plain struct{ dsh.Agent }
	if r := resumed(plain, now); r != nil {
		t.Fatalf("an agent without ResumeStats: %+v, want nil", r)
	}
}
