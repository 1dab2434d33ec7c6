package builtin_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

const notRead = "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>"

// logCall appends to log a model's call of name with args and its result (failed or not),
// as the loop logs them.
func logCall(t *testing.T, log *session.Log, id, name, args string, failed bool) {
	t.Helper()
	ctx := context.Background()
	if _, err := log.Append(ctx, dsh.AssistantMessageLogged{Turn: 1, Step: 1, Message: dsh.AssistantMessage{Role: dsh.AssistantMessageRoleAssistant,
		Content: []dsh.ContentBlock{dsh.ToolCallBlock{ID: id, Name: name, Arguments: args}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := log.Append(ctx, dsh.ToolResultLogged{Turn: 1, Step: 1, Message: dsh.UserMessage{Role: dsh.UserMessageRoleUser,
		Content: []dsh.ContentBlock{dsh.ToolResultBlock{ToolCallID: id, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "x"}}, IsError: failed}},
		Source:  dsh.SourceTool{CallID: id}}}); err != nil {
		t.Fatal(err)
	}
}

// TestReadFirst replays tools/read-first and tools/notebook: under the claude-code
// toolset an Edit, a Write over an existing file and a NotebookEdit are refused in the
// engine's words until the run's log holds a successful Read (or Write) of the file; a
// Write of a new file, and a NotebookEdit of a file that is no notebook, are not; a failed
// Read counts for nothing; a read before the run's start (Watch's from) does not count.
func TestReadFirst(t *testing.T) {
	ws := t.TempDir()
	for name, data := range map[string]string{"nb.ipynb": notebook, "notes.txt": "alpha\n", "w.txt": "old\n", "nb.txt": "text\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	log, err := session.Open(ctx, session.NewMemory())
	if err != nil {
		t.Fatal(err)
	}
	// A read in an earlier run: the engine forgets it.
	logCall(t, log, "old", "Read", `{"file_path":"`+filepath.Join(ws, "w.txt")+`"}`, false)
	reads := builtin.NewReadLog(builtin.StyleClaudeCode, ws)
	if reads == nil {
		t.Fatal("the claude-code toolset has no rows that read")
	}
	cancel, err := reads.Watch("main", log, log.Len())
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	reg := tools.NewRegistry()
	if _, err := builtin.Register(reg, builtin.Options{Workspace: ws, Style: builtin.StyleClaudeCode, Model: "claude-sonnet-4-5", ReadFiles: reads}); err != nil {
		t.Fatal(err)
	}
	rt := tools.New(reg, dsh.NewRegistry())
	call := func(name string, args map[string]any) tools.Result {
		raw, _ := json.Marshal(args)
		return rt.Execute(ctx, tools.Input{CallID: "c", Name: name, Arguments: raw, AgentID: "main"})
	}
	p := func(name string) string { return filepath.Join(ws, name) }
	for _, step := range []struct {
		what string
		name string
		args map[string]any
		want string // "": succeeds
	}{
		{"an Edit of a file not read", "Edit", map[string]any{"file_path": p("notes.txt"), "old_string": "alpha", "new_string": "gamma"}, notRead},
		{"a Write over a file read in an earlier run", "Write", map[string]any{"file_path": p("w.txt"), "content": "new\n"}, notRead},
		{"a NotebookEdit of a notebook not read", "NotebookEdit", map[string]any{"notebook_path": p("nb.ipynb"), "cell_id": "c1", "new_source": "x"}, notRead},
		{"a NotebookEdit of a missing notebook", "NotebookEdit", map[string]any{"notebook_path": p("none.ipynb"), "cell_id": "c1", "new_source": "x"}, notRead},
		{"a NotebookEdit of a file that is no notebook", "NotebookEdit", map[string]any{"notebook_path": p("nb.txt"), "cell_id": "c1", "new_source": "x"},
			"<tool_use_error>File must be a Jupyter notebook (.ipynb file). For editing other file types, use the FileEdit tool.</tool_use_error>"},
		{"a Write of a new file", "Write", map[string]any{"file_path": p("new.txt"), "content": "n\n"}, ""},
	} {
		r := call(step.name, step.args)
		switch {
		case step.want == "" && r.IsError():
			t.Errorf("%s: failed: %s", step.what, text(r))
		case step.want != "" && (!r.IsError() || text(r) != step.want):
			t.Errorf("%s: %q (error %v), want %q", step.what, text(r), r.IsError(), step.want)
		}
	}
	if b, _ := os.ReadFile(p("notes.txt")); string(b) != "alpha\n" {
		t.Errorf("the refused Edit changed notes.txt: %q", b)
	}
	// A failed Read counts for nothing; a successful one (relative or absolute) does.
	logCall(t, log, "r1", "Read", `{"file_path":"`+p("notes.txt")+`"}`, true)
	if r := call("Edit", map[string]any{"file_path": p("notes.txt"), "old_string": "alpha", "new_string": "gamma"}); text(r) != notRead {
		t.Errorf("an Edit after a failed Read: %q", text(r))
	}
	logCall(t, log, "r2", "Read", `{"file_path":"notes.txt"}`, false)
	logCall(t, log, "r3", "Read", `{"file_path":"`+p("nb.ipynb")+`"}`, false)
	logCall(t, log, "w1", "Write", `{"file_path":"`+p("w.txt")+`","content":"x"}`, false)
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"Edit", map[string]any{"file_path": p("notes.txt"), "old_string": "alpha", "new_string": "gamma"}},
		{"NotebookEdit", map[string]any{"notebook_path": p("nb.ipynb"), "cell_id": "c1", "new_source": "print(2)"}},
		{"Write", map[string]any{"file_path": p("w.txt"), "content": "newer\n"}},
	} {
		if r := call(c.name, c.args); r.IsError() {
			t.Errorf("%s after a read: %s", c.name, text(r))
		}
	}
	// Another agent's conversation (one the ReadLog does not watch) is not checked.
	raw, _ := json.Marshal(map[string]any{"file_path": p("new.txt"), "content": "child\n"})
	if r := rt.Execute(ctx, tools.Input{CallID: "c", Name: "Write", Arguments: raw, AgentID: "child"}); r.IsError() {
		t.Errorf("an unwatched agent's Write: %s", text(r))
	}
}
