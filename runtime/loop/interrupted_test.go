package loop

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
)

// A crash in the middle of a batch: on resume, the call of a Resumable tool runs again,
// every other call without a result gets an INTERRUPTED failure saying whether it had
// started, and none of them runs twice; the next request pairs every call with a result.
func TestResumeSettlesInterruptedBatch(t *testing.T) {
	e := newEnv(t, calls("c1:slow", "c2:fast", "c3:excl", "c4:again"))
	var runs [4]atomic.Int32
	running := make(chan struct{})
	e.register(toolDef("slow", true, func(ctx context.Context, rc *tools.RunContext) (any, error) {
		runs[0].Add(1)
		close(running)
		<-ctx.Done()
		return nil, ctx.Err()
	}))
	e.register(toolDef("fast", true, func(context.Context, *tools.RunContext) (any, error) { runs[1].Add(1); return "fast done", nil }))
	e.register(toolDef("excl", false, func(context.Context, *tools.RunContext) (any, error) { runs[2].Add(1); return "excl done", nil }))
	again := toolDef("again", true, func(context.Context, *tools.RunContext) (any, error) { runs[3].Add(1); return "again done", nil })
	again.Resumable = true
	e.register(again)
	a := e.agent()
	followup(t, a, "u1", "go")
	<-running
	waitFor(t, "fast to run", func() bool { return runs[1].Load() == 1 })
	crashed := e.store.Clone() // the process dies here
	a.Cancel(dsh.CancelUser{}, false)
	wait(t, a)

	// The restart over what the crash left.
	e.store = crashed
	e.log = e.openLog()
	e.script = llm.NewScripted(text("after")).RecordRequests()
	e.model = e.script
	b, err := Resume(context.Background(), e.config())
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, b)
	if got := [4]int32{runs[0].Load(), runs[1].Load(), runs[2].Load(), runs[3].Load()}; got != [4]int32{1, 1, 0, 1} {
		t.Errorf("bodies run (slow, fast, excl, again) = %v, want [1 1 0 1]: only the resumable call runs on resume", got)
	}
	results := map[string]string{}
	codes := map[string]string{}
	for r, err := range session.Of[dsh.ToolResultLogged](e.log.Events()) {
		if err != nil {
			t.Fatal(err)
		}
		tr := r.Message.Content[0].(dsh.ToolResultBlock)
		results[tr.ToolCallID] = textOf(tr.Content)
		if r.Error != nil {
			codes[tr.ToolCallID] = r.Error.Code
		}
	}
	want := map[string]string{
		"c1": "Error: " + msgInterrupted, "c2": "Error: " + msgInterrupted,
		"c3": "Error: " + msgInterruptedUnbegun, "c4": "again done",
	}
	diff(t, "results", want, results)
	diff(t, "codes", map[string]string{"c1": tools.CodeInterrupted, "c2": tools.CodeInterrupted, "c3": tools.CodeInterrupted}, codes)
	// One tool/call per call: the crash's are kept, the unstarted ones are logged.
	diff(t, "tool/call ids", []string{"c1", "c2", "c3", "c4"}, fields(t, e.log, func(c dsh.ToolCall) string { return c.CallID }))
	diff(t, "turn ends", []string{`{"kind":"interrupted"}`}, reasons(t, e.log))

	followup(t, b, "u2", "go on")
	wait(t, b)
	diff(t, "the next request", []string{"user:go", "assistant:[call c1][call c2][call c3][call c4]",
		"user:[result c1]Error: " + msgInterrupted, "user:[result c2]Error: " + msgInterrupted,
		"user:[result c3]Error: " + msgInterruptedUnbegun, "user:[result c4]again done", "user:go on"}, texts(e.requests()[0]))
}
