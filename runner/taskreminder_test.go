package runner_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runner"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/session"
)

// Claude Code's task reminder (spec/toolsets' task_reminder), as measured in
// tools/notebook and tools/task-reminder: a TaskCreate call, then ten assistant blocks
// (five responses of a text and a call) bring the reminder, with the task list, after the
// last tool result of the next request; it comes again ten blocks later, not before; a
// reasoning block is not counted.
func TestTaskReminder(t *testing.T) {
	ws := t.TempDir()
	hooks := filepath.Join(t.TempDir(), "settings.json")
	if err := os.WriteFile(hooks, []byte(`{"hooks":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	log, err := session.Open(context.Background(), session.NewMemory())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	create, _ := json.Marshal(map[string]any{"subject": "Write the notes", "description": "d"})
	create2, _ := json.Marshal(map[string]any{"subject": "Check them", "description": "e"})
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("a note\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	read, _ := json.Marshal(map[string]any{"file_path": filepath.Join(ws, "notes.txt")})
	script := []llm.ScriptedResponse{{Text: "planning", ToolCalls: []llm.ScriptedToolCall{{Name: "TaskCreate", Arguments: create}, {Name: "TaskCreate", Arguments: create2}}}}
	for i := range 10 {
		r := llm.ScriptedResponse{Text: "working", ToolCalls: []llm.ScriptedToolCall{{Name: "Read", Arguments: read}}}
		if i < 2 {
			r.Reasoning = "thinking"
		}
		script = append(script, r)
	}
	script = append(script, llm.ScriptedResponse{Text: "done"})
	model := llm.NewScripted(script...).RecordRequests()
	s := claudeSession(t, ws, hooks, log, model, "claude-sonnet-4-5")
	turn(t, s, "go")
	reqs := model.Requests()
	if len(reqs) != len(script) {
		t.Fatalf("%d requests, want %d", len(reqs), len(script))
	}
	const words = "The task tools haven't been used recently."
	var at []int
	for i, r := range reqs {
		if strings.Contains(lastUserText(r), words) {
			at = append(at, i)
		}
	}
	if !slices.Equal(at, []int{6, 11}) {
		t.Fatalf("the reminder came with requests %v, want [6 11]", at)
	}
	want := "<system-reminder>\n" + words + " If you're working on tasks that would benefit from tracking progress, consider using TaskCreate to add new tasks and TaskUpdate to update task status (set to in_progress when starting, completed when done). Also consider cleaning up the task list if it has become stale. Only use these if relevant to the current work. This is just a gentle reminder - ignore if not applicable.\n\n\nHere are the existing tasks:\n\n#1. [pending] Write the notes\n#2. [pending] Check them\n</system-reminder>"
	if got := lastUserText(reqs[6]); !strings.HasSuffix(got, want) {
		t.Errorf("the reminder reads %q, want it to end with %q", got, want)
	}
}

// A resumed session counts on from its log (as claude -p --continue does:
// tools/task-reminder-continue): a turn that ends at the tenth block brings the reminder
// with the next prompt, before the prompt's text, in the resumed session's first request.
func TestTaskReminderResumed(t *testing.T) {
	ws := t.TempDir()
	hooks := filepath.Join(t.TempDir(), "settings.json")
	if err := os.WriteFile(hooks, []byte(`{"hooks":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("a note\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	read, _ := json.Marshal(map[string]any{"file_path": filepath.Join(ws, "notes.txt")})
	store := session.NewMemory()
	var log *session.Log
	open := func(rs ...llm.ScriptedResponse) (*runner.Session, *llm.Scripted) {
		var err error
		if log, err = session.Open(context.Background(), store); err != nil {
			t.Fatal(err)
		}
		l := log
		t.Cleanup(func() { l.Close() })
		model := llm.NewScripted(rs...).RecordRequests()
		s := claudeSession(t, ws, hooks, log, model, "claude-sonnet-4-5")
		return s, model
	}
	var script []llm.ScriptedResponse
	for range 4 {
		script = append(script, llm.ScriptedResponse{Text: "more", ToolCalls: []llm.ScriptedToolCall{{Name: "Read", Arguments: read}}})
	}
	script = append(script, llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{Name: "Read", Arguments: read}}}, llm.ScriptedResponse{Text: "first done"})
	s1, m1 := open(script...)
	a := turn(t, s1, "go")
	const words = "The task tools haven't been used recently."
	for i, r := range m1.Requests() {
		if strings.Contains(lastUserText(r), words) {
			t.Errorf("the first run's request %d carries the reminder at nine blocks", i)
		}
	}
	_ = a.Close()
	s1.Close()
	log.Close()
	s2, m2 := open(llm.ScriptedResponse{Text: "second done"})
	a2, err := s2.Start(context.Background(), "main", true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a2.Close() })
	msg := dsh.UserMessage{ID: "p2", Role: dsh.UserMessageRoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "Next task."}}, Source: dsh.SourceUser{}}
	if err := a2.Followup(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	if err := a2.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	reqs := m2.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests after the resume, want 1", len(reqs))
	}
	// The user side after the last response: the reminder and the prompt, in order.
	var got string
	for i := len(reqs[0].Messages) - 1; i >= 0 && reqs[0].Messages[i].Role == llm.RoleUser; i-- {
		got = lastUserText(llm.Request{Messages: reqs[0].Messages[i : i+1]}) + "|" + got
	}
	r, p := strings.Index(got, words), strings.Index(got, "Next task.")
	if r < 0 || p < 0 || r > p || strings.Contains(got, "Here are the existing tasks") {
		t.Errorf("the resumed session's first request ends with %q, want the reminder (no task list) before the prompt", got)
	}
	if strings.Count(got, words) != 1 {
		t.Errorf("the reminder came %d times", strings.Count(got, words))
	}
}

// A step that continues a turn after its final answer (a Stop hook's feedback) carries no
// reminder, though one is due then: Claude Code adds it to a prompt or to tool results
// only (handler/prompt-stop-not-ok).
func TestTaskReminderNotAtStopFeedback(t *testing.T) {
	ws := t.TempDir()
	hooks := filepath.Join(t.TempDir(), "settings.json")
	block := `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"echo '{\"decision\":\"block\",\"reason\":\"not yet\"}'"}]}]}}`
	if err := os.WriteFile(hooks, []byte(block), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("a note\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	read, _ := json.Marshal(map[string]any{"file_path": filepath.Join(ws, "notes.txt")})
	calls := []llm.ScriptedToolCall{{Name: "Read", Arguments: read}, {Name: "Read", Arguments: read}}
	// Three responses of three blocks, then answers of one: the tenth block is the first
	// answer, after which every step is a Stop hook's continuation.
	var script []llm.ScriptedResponse
	for range 3 {
		script = append(script, llm.ScriptedResponse{Text: "working", ToolCalls: calls})
	}
	for range 12 {
		script = append(script, llm.ScriptedResponse{Text: "done"})
	}
	log, err := session.Open(context.Background(), session.NewMemory())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	model := llm.NewScripted(script...).RecordRequests()
	s := claudeSession(t, ws, hooks, log, model, "claude-sonnet-4-5")
	turn(t, s, "go")
	reqs := model.Requests()
	if len(reqs) < 6 {
		t.Fatalf("%d requests: the Stop hook did not continue the turn", len(reqs))
	}
	for i, r := range reqs {
		if strings.Contains(lastUserText(r), "The task tools haven't been used recently.") {
			t.Errorf("request %d carries the reminder: %q", i, lastUserText(r))
		}
	}
	if !strings.Contains(lastUserText(reqs[4]), "not yet") {
		t.Errorf("request 4 is not the Stop hook's continuation: %q", lastUserText(reqs[4]))
	}
}
