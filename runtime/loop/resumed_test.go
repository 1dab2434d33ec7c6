package loop

import (
	"context"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

// TestResumedContext: a resumed agent reports when the last response was logged and the
// context's size: the provider's usage of the last response (measured), then, after a
// compaction with no response since, the checkpoint's tokensAfter (not measured); an
// agent New created reports nothing.
func TestResumedContext(t *testing.T) {
	used := func(s string, in, out int) llm.ScriptedResponse {
		return llm.ScriptedResponse{Text: s, Usage: &dsh.Usage{InputTokens: in, OutputTokens: out}}
	}
	e := newEnv(t, used("one", 10, 5), used("two", 40, 7))
	a := e.agent()
	if rc := a.ResumedContext(); rc.OK {
		t.Fatalf("a new agent reports a resumed context: %+v", rc)
	}
	turns(t, a, filler("first", 300), "second")
	before := time.Now()
	_ = a.Close()
	_ = e.log.Close()

	e.log, e.model = e.openLog(), llm.NewScripted(text(filler("summary", 3))).RecordRequests()
	b, err := Resume(context.Background(), e.config())
	if err != nil {
		t.Fatal(err)
	}
	rc := b.ResumedContext()
	if !rc.OK || rc.Tokens != 47 || !rc.Measured {
		t.Fatalf("resumed context %+v, want ok, 47 tokens (40+7), measured", rc)
	}
	if rc.LastResponse.IsZero() || rc.LastResponse.After(before) {
		t.Fatalf("last response at %v, want a time before %v", rc.LastResponse, before)
	}
	at, tokens, measured, ok := b.ResumeStats()
	if !at.Equal(rc.LastResponse) || tokens != rc.Tokens || measured != rc.Measured || ok != rc.OK {
		t.Fatalf("ResumeStats %v %d %v %v disagrees with %+v", at, tokens, measured, ok, rc)
	}
	if _, err := b.Compact(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	checkpoints := records[dsh.CompactionCheckpoint](t, e.log)
	if len(checkpoints) != 1 {
		t.Fatalf("%d checkpoints, want 1", len(checkpoints))
	}
	_ = b.Close()
	_ = e.log.Close()

	e.log, e.model = e.openLog(), llm.NewScripted().RecordRequests()
	c, err := Resume(context.Background(), e.config())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rc2 := c.ResumedContext()
	if !rc2.OK || rc2.Measured || rc2.Tokens != checkpoints[0].TokensAfter {
		t.Fatalf("after a compaction: %+v, want ok, not measured, the checkpoint's %d tokens", rc2, checkpoints[0].TokensAfter)
	}
	// The summarizer's response is not the session's: the last response stays the same.
	if !rc2.LastResponse.Equal(rc.LastResponse) {
		t.Fatalf("after a compaction the last response is at %v, want %v", rc2.LastResponse, rc.LastResponse)
	}
}
