package subagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/subagent"
	"github.com/dshkit/dsh/runtime/tools"
)

// uuidV7 is the shape of Codex's ids (NewCodexID).
var uuidV7 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// wait runs wait_agent on id and returns its text.
func (h *codexHarness) waitFor(t *testing.T, call, id string) string {
	t.Helper()
	out, failed := h.call(t, call, subagent.WaitAgent, map[string]any{"targets": []string{id}, "timeout_ms": 30000})
	if failed {
		t.Fatalf("wait_agent = %q", out)
	}
	return out
}

// sendInput runs send_input and checks its value is {"submission_id": UUIDv7}.
func (h *codexHarness) sendInput(t *testing.T, call, id, msg string) {
	t.Helper()
	out, failed := h.call(t, call, subagent.SendInput, map[string]any{"target": id, "message": msg})
	if failed || !strings.HasPrefix(out, `{"submission_id":"`) || !uuidV7.MatchString(strings.TrimSuffix(strings.TrimPrefix(out, `{"submission_id":"`), `"}`)) {
		t.Fatalf("send_input = %q (failed %v), want {\"submission_id\":\"<uuid v7>\"}", out, failed)
	}
}

// texts are the texts of a request's messages, one string per message.
func texts(req llm.Request) []string {
	var out []string
	for _, m := range req.Messages {
		var b strings.Builder
		for _, c := range m.Content {
			if tb, ok := c.(dsh.TextBlock); ok {
				b.WriteString(tb.Text)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// send_input to a finished child answers a submission id at once and runs the child
// again: its request carries its history and the message as a new user turn; it ends
// with a second agent/subagent-stop and no second agent/subagent-start, and a second
// wait_agent answers its new answer. No notification follows the continued turn, as in
// Codex 0.169.0 (codex/subagent-send-input). The parent's log records one start and an
// end per turn; the child's log holds both turns.
func TestCodexSendInputContinuesChild(t *testing.T) {
	model := llm.NewScripted(llm.ScriptedResponse{Text: "child first answer"}, llm.ScriptedResponse{Text: "child second answer"}).RecordRequests()
	h := newCodexHarness(t, model)
	id := h.spawn(t, "call_s", "say hi")
	if out := h.waitFor(t, "call_w", id); out != `{"status":{"`+id+`":{"completed":"child first answer"}},"timed_out":false}` {
		t.Errorf("wait_agent = %q", out)
	}
	<-h.noticed
	h.sendInput(t, "call_i", id, "again")
	if out := h.waitFor(t, "call_w2", id); out != `{"status":{"`+id+`":{"completed":"child second answer"}},"timed_out":false}` {
		t.Errorf("the second wait_agent = %q", out)
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the child sent %d requests, want 2", len(reqs))
	}
	got := texts(reqs[1])
	if n := len(got); n < 3 || got[n-3] != "say hi" || got[n-2] != "child first answer" || got[n-1] != "again" {
		t.Errorf("the continued child's request's messages = %q, want its history then the message", got)
	}
	h.mu.Lock()
	var starts, stops []string
	for _, e := range h.events {
		switch {
		case strings.HasPrefix(e, "subagent-start"):
			starts = append(starts, e)
		case strings.HasPrefix(e, "subagent-stop"):
			stops = append(stops, e)
		}
	}
	h.mu.Unlock()
	if len(starts) != 1 || strings.Join(stops, "|") != "subagent-stop call_s child first answer|subagent-stop call_s child second answer" {
		t.Errorf("subagent-start %q, subagent-stop %q; want one start and a stop per turn", starts, stops)
	}
	select {
	case <-h.noticed:
		t.Errorf("the continued turn notified the parent: %q", h.notices)
	case <-time.After(100 * time.Millisecond):
	}
	if s := recordsOf[dsh.SubagentStarted](t, h.log); len(s) != 1 {
		t.Errorf("subagent/started = %+v, want one", s)
	}
	fin := recordsOf[dsh.SubagentFinished](t, h.log)
	if len(fin) != 2 || fin[1].CallID != "call_s" || fin[1].AgentID != id || fin[1].Answer == nil || *fin[1].Answer != "child second answer" {
		t.Errorf("subagent/finished = %+v, want one per turn, the second the call_s child's second answer", fin)
	}
	child, ok := h.logs.Log(recordsOf[dsh.SubagentStarted](t, h.log)[0].SessionID)
	if !ok {
		t.Fatal("no child log")
	}
	var ends []string
	for _, e := range recordsOf[dsh.TurnEnd](t, child) {
		ends = append(ends, string(e.Reason.Kind()))
	}
	if created := recordsOf[dsh.SessionCreated](t, child); len(created) != 1 || strings.Join(ends, ",") != "completed,completed" {
		t.Errorf("the child's log: %d session/created, turn ends %v; want one log of two completed turns", len(created), ends)
	}
}

// After close_agent, resume_agent reopens the child ({"status":"pending_init"}), and
// send_input runs it again; the end of that turn notifies the parent again (Codex
// 0.169.0: codex/subagent-resume).
func TestCodexResumeClosedChild(t *testing.T) {
	model := llm.NewScripted(llm.ScriptedResponse{Text: "child first answer"}, llm.ScriptedResponse{Text: "child second answer"})
	h := newCodexHarness(t, model)
	id := h.spawn(t, "call_s", "say hi")
	h.waitFor(t, "call_w", id)
	<-h.noticed
	if out, _ := h.call(t, "call_c", subagent.CloseAgent, map[string]any{"target": id}); out != `{"previous_status":{"completed":"child first answer"}}` {
		t.Fatalf("close_agent = %q", out)
	}
	if out, failed := h.call(t, "call_r", subagent.ResumeAgent, map[string]any{"id": id}); failed || out != `{"status":"pending_init"}` {
		t.Errorf("resume_agent of a closed child = %q (failed %v)", out, failed)
	}
	h.sendInput(t, "call_i", id, "again")
	if out := h.waitFor(t, "call_w2", id); out != `{"status":{"`+id+`":{"completed":"child second answer"}},"timed_out":false}` {
		t.Errorf("the second wait_agent = %q", out)
	}
	select {
	case <-h.noticed:
	case <-time.After(10 * time.Second):
		t.Fatal("no notification of the resumed child's end")
	}
	h.nmu.Lock()
	defer h.nmu.Unlock()
	if want := "call_s <subagent_notification>\n{\"agent_path\":\"" + id + "\",\"status\":{\"completed\":\"child second answer\"}}\n</subagent_notification>"; len(h.notices) != 2 || h.notices[1] != want {
		t.Errorf("notices = %q, want the second %q", h.notices, want)
	}
}

// send_input to a child whose turn is running answers a submission id at once, and the
// child reads the message at its turn's next step: no new turn, one agent/subagent-stop,
// and wait_agent answers that turn's answer (Codex 0.169.0: codex/subagent-send-running).
func TestCodexSendInputRunningChild(t *testing.T) {
	model := llm.NewScripted(llm.ScriptedResponse{Text: "child first", DelayMS: 500}, llm.ScriptedResponse{Text: "child answer after input"}).RecordRequests()
	h := newCodexHarness(t, model)
	id := h.spawn(t, "call_s", "say hi")
	for deadline := time.Now().Add(10 * time.Second); len(model.Requests()) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the child sent no request")
		}
	}
	// The turn may still be starting (the loop's running turn not yet steerable): again.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		out, failed := h.call(t, "call_i", subagent.SendInput, map[string]any{"target": id, "message": "again"})
		if !failed {
			if !uuidV7.MatchString(strings.TrimSuffix(strings.TrimPrefix(out, `{"submission_id":"`), `"}`)) {
				t.Fatalf("send_input = %q", out)
			}
			break
		}
		if !strings.Contains(out, "starting or ending its turn") || time.Now().After(deadline) {
			t.Fatalf("send_input to a running child = %q", out)
		}
	}
	if out := h.waitFor(t, "call_w", id); out != `{"status":{"`+id+`":{"completed":"child answer after input"}},"timed_out":false}` {
		t.Errorf("wait_agent = %q", out)
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the child sent %d requests, want 2", len(reqs))
	}
	if got := texts(reqs[1]); len(got) < 3 || got[len(got)-3] != "say hi" || got[len(got)-2] != "child first" || got[len(got)-1] != "again" {
		t.Errorf("the child's second request's messages = %q, want the message after its first answer", got)
	}
	h.mu.Lock()
	stops := 0
	for _, e := range h.events {
		if strings.HasPrefix(e, "subagent-stop") {
			stops++
		}
	}
	h.mu.Unlock()
	child, _ := h.logs.Log(recordsOf[dsh.SubagentStarted](t, h.log)[0].SessionID)
	if turns := len(recordsOf[dsh.TurnEnd](t, child)); stops != 1 || turns != 1 {
		t.Errorf("%d subagent-stop, %d turns: want the message read in the running turn", stops, turns)
	}
	if fin := recordsOf[dsh.SubagentFinished](t, h.log); len(fin) != 1 {
		t.Errorf("subagent/finished = %+v, want one", fin)
	}
}

// send_input to a child closed and not resumed fails as Codex 0.169.0 fails it ("agent
// with id X not found": codex/subagent-continue-edges) and runs nothing; resume_agent of a
// child never closed answers its status (measured there for a finished child).
func TestCodexSendInputRefusals(t *testing.T) {
	model := llm.NewScripted(llm.ScriptedResponse{Text: "thinking", Hang: true})
	h := newCodexHarness(t, model)
	started := make(chan struct{})
	h.hooks.Plugin("watch").OnSubagentStart(func(ctx context.Context, p *dsh.SubagentStartPayload) error {
		close(started)
		return nil
	})
	id := h.spawn(t, "call_s", "hang")
	<-started
	if out, failed := h.call(t, "call_r", subagent.ResumeAgent, map[string]any{"id": id}); failed || out != `{"status":"running"}` {
		t.Errorf("resume_agent of a child never closed = %q (failed %v)", out, failed)
	}
	if out, _ := h.call(t, "call_c", subagent.CloseAgent, map[string]any{"target": id}); out != `{"previous_status":"running"}` {
		t.Fatalf("close_agent = %q", out)
	}
	out, failed := h.call(t, "call_i2", subagent.SendInput, map[string]any{"target": id, "message": "more"})
	if !failed || !strings.HasSuffix(out, "agent with id "+id+" not found") {
		t.Errorf("send_input to a closed child = %q (failed %v)", out, failed)
	}
	if n := len(recordsOf[dsh.SubagentFinished](t, h.log)); n != 1 {
		t.Errorf("%d subagent/finished, want the closed turn's only", n)
	}
}

// Runner.Continue refuses an id no child has and Logs that cannot reopen a log, naming
// each.
func TestContinueRefusals(t *testing.T) {
	ctx := context.Background()
	log, _ := session.Open(ctx, session.NewMemory())
	h := newHarness(t, log, llm.NewScripted(), false)
	msg := dsh.UserText(dsh.SourceUser{}, "more")
	if _, err := h.runner.Continue(ctx, "nope", msg, subagent.ContinueOptions{}, nil); !errors.Is(err, subagent.ErrUnknownAgent) || !strings.Contains(err.Error(), "nope") {
		t.Errorf("Continue of an unknown id: %v", err)
	}
	noReopen := struct{ subagent.Logs }{&subagent.MemoryLogs{}}
	log2, _ := session.Open(ctx, session.NewMemory())
	h2 := newHarness(t, log2, llm.NewScripted(), false, func(cfg *subagent.Config) { cfg.Logs = noReopen })
	if _, err := h2.runner.Continue(ctx, "any", msg, subagent.ContinueOptions{}, nil); !errors.Is(err, subagent.ErrNotReopenable) {
		t.Errorf("Continue over Logs without Reopen: %v", err)
	}
}

// A parent that crashed after a child's continued turn finished, resumed from its log
// (the children's logs files), answers wait_agent with that turn's answer without running
// the child, and a send_input then runs one more turn on the whole history: no finished
// turn runs twice.
func TestCodexCrashAfterContinuedChild(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	files := func(cfg *subagent.Config) { cfg.Logs = subagent.FileLogs{Dir: dir} }
	store := session.NewMemory()
	log, _ := session.Open(ctx, store)
	model := llm.NewScripted(llm.ScriptedResponse{Text: "child first answer"}, llm.ScriptedResponse{Text: "child second answer"})
	h := newCodexHarnessOn(t, log, false, model, files)
	id := h.spawn(t, "call_s", "say hi")
	h.waitFor(t, "call_w", id)
	h.sendInput(t, "call_i", id, "again")
	h.waitFor(t, "call_w2", id)
	crashed, err := session.Open(ctx, store.Clone()) // the process dies here
	if err != nil {
		t.Fatal(err)
	}
	h.parent.Cancel(dsh.CancelUser{}, false)

	again := llm.NewScripted(llm.ScriptedResponse{Text: "child third answer"}).RecordRequests()
	r := newCodexHarnessOn(t, crashed, true, again, files)
	if out := r.waitFor(t, "call_w3", id); out != `{"status":{"`+id+`":{"completed":"child second answer"}},"timed_out":false}` {
		t.Errorf("wait_agent after the restart = %q, want the continued turn's answer", out)
	}
	if n := len(again.Requests()); n != 0 {
		t.Fatalf("the finished child sent %d requests after the restart, want none", n)
	}
	r.sendInput(t, "call_i2", id, "once more")
	if out := r.waitFor(t, "call_w4", id); out != `{"status":{"`+id+`":{"completed":"child third answer"}},"timed_out":false}` {
		t.Errorf("wait_agent of the third turn = %q", out)
	}
	reqs := again.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the child sent %d requests for its third turn, want 1", len(reqs))
	}
	got := strings.Join(texts(reqs[0]), "|")
	if !strings.HasSuffix(got, "say hi|child first answer|again|child second answer|once more") {
		t.Errorf("the third turn's request = %q, want the two turns once each, then the message", got)
	}
	if n := len(recordsOf[dsh.SubagentFinished](t, crashed)); n != 3 {
		t.Errorf("%d subagent/finished in the parent's log, want one per turn (3)", n)
	}
}

// send_input with interrupt to a child whose turn runs a call aborts that turn: the call
// ends ABORTED (its body's context cancelled), and another turn starts whose request
// carries, after the aborted call's result, the note and then the message; one
// agent/subagent-stop, at the end of that turn, whose answer wait_agent answers (Codex
// 0.169.0: codex/subagent-send-interrupt). With interrupt to a child whose turn has
// ended, the message starts its next turn alone.
func TestCodexSendInputInterrupt(t *testing.T) {
	model := llm.NewScripted(
		llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{ID: "call_slow", Name: "Slow", Arguments: json.RawMessage(`{}`)}}},
		llm.ScriptedResponse{Text: "child answer after interrupt"},
		llm.ScriptedResponse{Text: "child third answer"}).RecordRequests()
	h := newCodexHarness(t, model)
	started, cancelled := make(chan struct{}), make(chan error, 1)
	if _, err := h.reg.Register(tools.Definition{Name: "Slow", Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
		close(started)
		select {
		case <-ctx.Done():
			cancelled <- context.Cause(ctx)
			return "cancelled", nil
		case <-time.After(20 * time.Second):
			return "ran to its end", nil
		}
	}}); err != nil {
		t.Fatal(err)
	}
	id := h.spawn(t, "call_s", "say hi")
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the child's call did not start")
	}
	began := time.Now()
	out, failed := h.call(t, "call_i", subagent.SendInput, map[string]any{"target": id, "message": "again", "interrupt": true})
	if failed || !uuidV7.MatchString(strings.TrimSuffix(strings.TrimPrefix(out, `{"submission_id":"`), `"}`)) {
		t.Fatalf("send_input with interrupt = %q (failed %v)", out, failed)
	}
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the running call was not cancelled")
	}
	if out := h.waitFor(t, "call_w", id); out != `{"status":{"`+id+`":{"completed":"child answer after interrupt"}},"timed_out":false}` {
		t.Errorf("wait_agent = %q", out)
	}
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("the interrupted child took %v to answer", took)
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the child sent %d requests, want 2", len(reqs))
	}
	second := reqs[1].Messages
	if n := len(second); n < 4 {
		t.Fatalf("the child's second request has %d messages", n)
	}
	got := texts(reqs[1])
	n := len(got)
	if got[n-2] != interruptedNote || got[n-1] != "again" {
		t.Errorf("the child's second request ends with %q, want the note, then the message", got[n-2:])
	}
	var result *dsh.ToolResultBlock
	for _, c := range second[n-3].Content {
		if tr, ok := c.(dsh.ToolResultBlock); ok {
			result = &tr
		}
	}
	if result == nil || result.ToolCallID != "call_slow" || !result.IsError || !strings.Contains(blocktextOf(result.Content), "aborted") {
		t.Errorf("before the note: %+v, want the aborted call's failed result", second[n-3])
	}
	child, _ := h.logs.Log(recordsOf[dsh.SubagentStarted](t, h.log)[0].SessionID)
	ends := recordsOf[dsh.TurnEnd](t, child)
	if len(ends) != 2 {
		t.Fatalf("the child's log has %d turn ends, want 2", len(ends))
	}
	if ab, ok := ends[0].Reason.(dsh.TurnEndAborted); !ok {
		t.Errorf("the interrupted turn ended %#v, want aborted", ends[0].Reason)
	} else if _, user := ab.Reason.(dsh.CancelUser); !user {
		t.Errorf("the interrupted turn's cause is %#v, want the user's", ab.Reason)
	}
	h.mu.Lock()
	stops := 0
	for _, e := range h.events {
		if strings.HasPrefix(e, "subagent-stop") {
			stops++
		}
	}
	h.mu.Unlock()
	if stops != 1 {
		t.Errorf("%d subagent-stop, want one, at the end of the turn after the interrupt", stops)
	}
	if fin := recordsOf[dsh.SubagentFinished](t, h.log); len(fin) != 1 {
		t.Errorf("subagent/finished = %+v, want one", fin)
	}

	// The child's turn has ended: interrupt has nothing to abort, and no note is given.
	<-h.noticed
	out, failed = h.call(t, "call_i2", subagent.SendInput, map[string]any{"target": id, "message": "once more", "interrupt": true})
	if failed {
		t.Fatalf("send_input with interrupt to a finished child = %q", out)
	}
	if out := h.waitFor(t, "call_w2", id); out != `{"status":{"`+id+`":{"completed":"child third answer"}},"timed_out":false}` {
		t.Errorf("the second wait_agent = %q", out)
	}
	reqs = model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("the child sent %d requests, want 3", len(reqs))
	}
	if got := texts(reqs[2]); got[len(got)-1] != "once more" || got[len(got)-2] != "child answer after interrupt" {
		t.Errorf("the third request ends with %q, want the answer, then the message alone", got[len(got)-2:])
	}
}

// blocktextOf is the text of content's text blocks.
func blocktextOf(content []dsh.ContentBlock) string {
	var b strings.Builder
	for _, c := range content {
		if tb, ok := c.(dsh.TextBlock); ok {
			b.WriteString(tb.Text)
		}
	}
	return b.String()
}
