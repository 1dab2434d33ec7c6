package subagent_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/subagent"
	"github.com/dshkit/dsh/runtime/tools"
)

// codexHarness is newHarness with Codex's agent functions registered, called directly (as
// the parent's model would call them), and the notifications they send.
type codexHarness struct {
	*harness
	rt    *tools.Runtime
	clock chan time.Time

	nmu     sync.Mutex
	notices []string
	noticed chan struct{}
}

// interruptedNote is the note the harness's send_input gives a child it interrupts.
const interruptedNote = "<turn_aborted>\ninterrupted on purpose\n</turn_aborted>"

func newCodexHarness(t *testing.T, model llm.Model) *codexHarness {
	t.Helper()
	log, _ := session.Open(context.Background(), session.NewMemory())
	return newCodexHarnessOn(t, log, false, model)
}

// newCodexHarnessOn is newCodexHarness over the parent's log (resumed from it when
// resume), with opts.
func newCodexHarnessOn(t *testing.T, log *session.Log, resume bool, model llm.Model, opts ...func(*subagent.Config)) *codexHarness {
	t.Helper()
	h := &codexHarness{harness: newHarness(t, log, model, resume, opts...), clock: make(chan time.Time, 1), noticed: make(chan struct{}, 8)}
	defs := h.runner.CodexTools(subagent.CodexOptions{
		Notify: func(ctx context.Context, callID, text string) error {
			h.nmu.Lock()
			h.notices = append(h.notices, callID+" "+text)
			h.nmu.Unlock()
			h.noticed <- struct{}{}
			return nil
		},
		Clock:       func(time.Duration) <-chan time.Time { return h.clock },
		Nicknames:   []string{"Euclid", "Hypatia"},
		UnknownType: "unknown agent_type '{type}'",
		Interrupted: interruptedNote,
	})
	for _, d := range defs {
		if _, err := h.reg.Register(d); err != nil {
			t.Fatal(err)
		}
	}
	h.rt = tools.New(h.reg, h.hooks)
	return h
}

// call runs the function name with in as the parent's call id, and returns its text and
// whether it failed.
func (h *codexHarness) call(t *testing.T, id, name string, in any) (string, bool) {
	t.Helper()
	res := h.rt.Execute(context.Background(), tools.Input{CallID: id, Name: name, Arguments: args(in), AgentID: "main"})
	var b strings.Builder
	for _, c := range res.Content() {
		if tb, ok := c.(dsh.TextBlock); ok {
			b.WriteString(tb.Text)
		}
	}
	return b.String(), res.IsError()
}

// spawn runs spawn_agent and returns the child's id.
func (h *codexHarness) spawn(t *testing.T, id, task string) string {
	t.Helper()
	out, failed := h.call(t, id, subagent.SpawnAgent, map[string]any{"message": task})
	var v struct {
		AgentID  string `json:"agent_id"`
		Nickname string `json:"nickname"`
	}
	if failed || json.Unmarshal([]byte(out), &v) != nil || v.AgentID == "" || (v.Nickname != "Euclid" && v.Nickname != "Hypatia") {
		t.Fatalf("spawn_agent = %q (failed %v)", out, failed)
	}
	if !strings.HasPrefix(out, `{"agent_id":`) {
		t.Errorf("spawn_agent's text %q does not start with agent_id, as Codex writes it", out)
	}
	return v.AgentID
}

// spawn_agent answers at once; wait_agent collects the child's answer; the parent is
// notified; close_agent of the finished child answers its previous status.
func TestCodexSpawnWaitClose(t *testing.T) {
	h := newCodexHarness(t, llm.NewScripted(llm.ScriptedResponse{Text: "child answer"}))
	id := h.spawn(t, "call_s", "say hi")
	out, failed := h.call(t, "call_w", subagent.WaitAgent, map[string]any{"targets": []string{id}, "timeout_ms": 30000})
	if failed || out != `{"status":{"`+id+`":{"completed":"child answer"}},"timed_out":false}` {
		t.Errorf("wait_agent = %q (failed %v)", out, failed)
	}
	select {
	case <-h.noticed:
	case <-time.After(10 * time.Second):
		t.Fatal("no notification of the child's end")
	}
	h.nmu.Lock()
	want := "call_s <subagent_notification>\n{\"agent_path\":\"" + id + "\",\"status\":{\"completed\":\"child answer\"}}\n</subagent_notification>"
	if len(h.notices) != 1 || h.notices[0] != want {
		t.Errorf("notices = %q, want %q", h.notices, want)
	}
	h.nmu.Unlock()
	out, failed = h.call(t, "call_c", subagent.CloseAgent, map[string]any{"target": id})
	if failed || out != `{"previous_status":{"completed":"child answer"}}` {
		t.Errorf("close_agent of a finished child = %q (failed %v)", out, failed)
	}
	// Closed, it is shut down.
	out, _ = h.call(t, "call_c2", subagent.CloseAgent, map[string]any{"target": id})
	if out != `{"previous_status":"shutdown"}` {
		t.Errorf("a second close_agent = %q", out)
	}
	// The child ran with Codex's lineage: started by call_s.
	var started []dsh.SubagentStarted
	for s, err := range session.Of[dsh.SubagentStarted](h.log.Events()) {
		if err != nil {
			t.Fatal(err)
		}
		started = append(started, s)
	}
	if len(started) != 1 || started[0].CallID != "call_s" || started[0].AgentID != id {
		t.Errorf("subagent/started = %+v", started)
	}
}

// wait_agent and close_agent of an id no spawn_agent gave fail, naming it; so do a wait
// without targets, a spawn without a task and one naming an agent type there is none of.
func TestCodexUnknownAgent(t *testing.T) {
	h := newCodexHarness(t, llm.NewScripted())
	for _, c := range []struct {
		name string
		in   any
		want string
	}{
		{subagent.WaitAgent, map[string]any{"targets": []string{"nope"}}, "agent with id nope not found"},
		{subagent.CloseAgent, map[string]any{"target": "nope"}, "agent with id nope not found"},
		{subagent.WaitAgent, map[string]any{"targets": []string{}}, "targets is empty"},
		{subagent.SpawnAgent, map[string]any{"message": ""}, "the agent has no task"},
		{subagent.SendInput, map[string]any{"target": "x", "message": "m"}, "agent with id x not found"},
		{subagent.ResumeAgent, map[string]any{"id": "x"}, "agent with id x not found"},
		// A role there is none of, in the words CodexOptions.UnknownType gives.
		{subagent.SpawnAgent, map[string]any{"message": "m", "agent_type": "nosuch"}, "unknown agent_type 'nosuch'"},
	} {
		out, failed := h.call(t, "call_x", c.name, c.in)
		if !failed || !strings.Contains(out, c.want) {
			t.Errorf("%s(%v) = %q (failed %v), want a failure with %q", c.name, c.in, out, failed, c.want)
		}
	}
}

// A wait whose timeout passes before the child ends answers an empty status, timed out;
// close_agent then cancels the running child, whose previous status is running, and no
// notification follows a closed child.
func TestCodexWaitTimeoutAndCloseRunning(t *testing.T) {
	h := newCodexHarness(t, llm.NewScripted(llm.ScriptedResponse{Text: "thinking", Hang: true}))
	started := make(chan struct{})
	h.hooks.Plugin("watch").OnSubagentStart(func(ctx context.Context, p *dsh.SubagentStartPayload) error {
		close(started)
		return nil
	})
	id := h.spawn(t, "call_s", "hang")
	<-started
	h.clock <- time.Now()
	out, failed := h.call(t, "call_w", subagent.WaitAgent, map[string]any{"targets": []string{id}, "timeout_ms": 1})
	if failed || out != `{"status":{},"timed_out":true}` {
		t.Errorf("wait_agent past its timeout = %q (failed %v)", out, failed)
	}
	out, failed = h.call(t, "call_c", subagent.CloseAgent, map[string]any{"target": id})
	if failed || out != `{"previous_status":"running"}` {
		t.Errorf("close_agent of a running child = %q (failed %v)", out, failed)
	}
	var fin []dsh.SubagentFinished
	for f, err := range session.Of[dsh.SubagentFinished](h.log.Events()) {
		if err != nil {
			t.Fatal(err)
		}
		fin = append(fin, f)
	}
	if len(fin) != 1 || fin[0].Outcome != dsh.SubagentOutcomeCancelled {
		t.Errorf("subagent/finished = %+v, want one cancelled", fin)
	}
	select {
	case <-h.noticed:
		t.Errorf("a closed child notified its parent: %q", h.notices)
	case <-time.After(200 * time.Millisecond):
	}
}
