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
	s, err := runner.New(context.Background(), runner.Config{Workspace: ws, SessionID: "ses_test", Log: log,
		Hooks: runner.Hooks{Dialect: "claude-code", File: hooks, Trust: true},
		OpenModel: func(string, runner.ContextPlacement) (llm.Model, dsh.LLMCallConfig, error) {
			return model, dsh.LLMCallConfig{Provider: "scripted", Model: "claude-sonnet-4-5"}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
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
