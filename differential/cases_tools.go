package differential

import "slices"

// toolCases are the cases of Claude Code's own tools beyond Bash, Read, Write and Edit:
// its deferred tools, loaded through ToolSearch, and what their calls send the model and
// the hooks.
func toolCases() []Case {
	claude := []string{"claude"}
	return []Case{
		// ToolSearch loads two deferred tools by name; the next turn calls one of them.
		{Name: "tools/search-select", Engines: claude, Turns: []Turn{
			{Text: "searching", Calls: []Call{{Name: "ToolSearch", Input: map[string]any{"query": "select:NotebookEdit,TaskCreate", "max_results": 5}}}},
			{Text: "creating", Calls: []Call{{Name: "TaskCreate", Input: map[string]any{"subject": "first task", "description": "do it"}}}},
			{Text: "listing", Calls: []Call{{Name: "TaskList", Input: map[string]any{}}}},
			{Text: "finished"}},
			Hooks: []Hook{h("PreToolUse", "exit 0"), h("PostToolUse", "exit 0"), h("PostToolUseFailure", "exit 0")}},
		// ToolSearch by keywords, by a name no tool has, and by the name of a tool it
		// loaded already; then a call to the tool the keywords found.
		{Name: "tools/search-keyword", Engines: claude, Turns: []Turn{
			{Text: "searching", Calls: []Call{{Name: "ToolSearch", Input: map[string]any{"query": "notebook jupyter", "max_results": 5}}}},
			{Text: "searching more", Calls: []Call{{Name: "ToolSearch", Input: map[string]any{"query": "task list", "max_results": 2}}}},
			{Text: "searching none", Calls: []Call{{Name: "ToolSearch", Input: map[string]any{"query": "select:NoSuchTool", "max_results": 5}}}},
			{Text: "searching loaded", Calls: []Call{{Name: "ToolSearch", Input: map[string]any{"query": "select:NotebookEdit,Read", "max_results": 5}}}},
			{Text: "finished"}},
			Hooks: []Hook{h("PostToolUse", "exit 0"), h("PostToolUseFailure", "exit 0")}},
		// The task tools: create, update, get, list (TodoWrite's successors in 2.1.328).
		{Name: "tools/tasks", Engines: claude, Turns: []Turn{
			{Text: "creating", Calls: []Call{{Name: "TaskCreate", Input: map[string]any{"subject": "first task", "description": "do it", "activeForm": "Doing it"}}}},
			{Text: "creating more", Calls: []Call{{Name: "TaskCreate", Input: map[string]any{"subject": "second task", "description": "then this"}}}},
			{Text: "updating", Calls: []Call{{Name: "TaskUpdate", Input: map[string]any{"taskId": "1", "status": "in_progress"}}}},
			{Text: "blocking", Calls: []Call{{Name: "TaskUpdate", Input: map[string]any{"taskId": "2", "addBlockedBy": []any{"1"}, "owner": "me"}}}},
			{Text: "getting", Calls: []Call{{Name: "TaskGet", Input: map[string]any{"taskId": "2"}}}},
			{Text: "listing", Calls: []Call{{Name: "TaskList", Input: map[string]any{}}}},
			{Text: "completing", Calls: []Call{{Name: "TaskUpdate", Input: map[string]any{"taskId": "1", "status": "completed"}}}},
			{Text: "deleting", Calls: []Call{{Name: "TaskUpdate", Input: map[string]any{"taskId": "2", "status": "deleted"}}}},
			{Text: "missing", Calls: []Call{{Name: "TaskGet", Input: map[string]any{"taskId": "9"}}}},
			{Text: "missing update", Calls: []Call{{Name: "TaskUpdate", Input: map[string]any{"taskId": "9", "status": "completed"}}}},
			{Text: "listing", Calls: []Call{{Name: "TaskList", Input: map[string]any{}}}},
			{Text: "finished"}},
			Hooks: []Hook{{Event: "PreToolUse", Matcher: "TaskCreate|TaskUpdate", Script: "exit 0"}, h("PostToolUse", "exit 0"), h("PostToolUseFailure", "exit 0")}},
		// The task tools under --permission-mode default: the engine lets them run without
		// asking, as Read; WebFetch asks.
		{Name: "tools/tasks-ask", Engines: claude, AskPermission: true, Turns: []Turn{
			{Text: "creating", Calls: []Call{{Name: "TaskCreate", Input: map[string]any{"subject": "first task", "description": "do it"}}}},
			{Text: "updating", Calls: []Call{{Name: "TaskUpdate", Input: map[string]any{"taskId": "1", "status": "in_progress"}}}},
			{Text: "getting", Calls: []Call{{Name: "TaskGet", Input: map[string]any{"taskId": "1"}}}},
			{Text: "listing", Calls: []Call{{Name: "TaskList", Input: map[string]any{}}}},
			{Text: "fetching", Calls: []Call{{Name: "WebFetch", Input: map[string]any{"url": "http://localhost:9/page", "prompt": "summarize"}}}},
			{Text: "finished"}},
			Hooks: []Hook{h("PermissionRequest", "exit 0"), h("PostToolUse", "exit 0")}},
		// A notebook: read it, edit a cell, delete one, then calls that fail (a cell id it
		// does not have, none, a file that is no notebook, a missing one). An inserted cell's
		// id is random, so no call inserts.
		{Name: "tools/notebook", Engines: claude, Files: map[string]string{"nb.ipynb": NB, "nb.txt": "text\n"},
			Turns: []Turn{
				{Text: "reading", Calls: []Call{{Name: "Read", Input: map[string]any{"file_path": "{{ws}}/nb.ipynb"}}}},
				{Text: "editing", Calls: []Call{{Name: "NotebookEdit", Input: map[string]any{"notebook_path": "{{ws}}/nb.ipynb", "cell_id": "c1", "new_source": "print(2)"}}}},
				{Text: "deleting", Calls: []Call{{Name: "NotebookEdit", Input: map[string]any{"notebook_path": "{{ws}}/nb.ipynb", "cell_id": "c2", "new_source": "", "edit_mode": "delete"}}}},
				{Text: "bad id", Calls: []Call{{Name: "NotebookEdit", Input: map[string]any{"notebook_path": "{{ws}}/nb.ipynb", "cell_id": "zz", "new_source": "y"}}}},
				{Text: "no cell id", Calls: []Call{{Name: "NotebookEdit", Input: map[string]any{"notebook_path": "{{ws}}/nb.ipynb", "new_source": "y"}}}},
				{Text: "not a notebook", Calls: []Call{{Name: "NotebookEdit", Input: map[string]any{"notebook_path": "{{ws}}/nb.txt", "cell_id": "c1", "new_source": "y"}}}},
				{Text: "missing", Calls: []Call{{Name: "NotebookEdit", Input: map[string]any{"notebook_path": "{{ws}}/none.ipynb", "cell_id": "c1", "new_source": "y"}}}},
				{Text: "finished"}},
			Hooks: []Hook{h("PreToolUse", "exit 0"), h("PostToolUse", "exit 0"), h("PostToolUseFailure", "exit 0")}},
		// Claude Code's periodic task-tools reminder: two TaskCreate calls, then ten
		// assistant content blocks (a text and a call a response) bring it, with the task
		// list, after the last tool result; ten more bring it again.
		{Name: "tools/task-reminder", Engines: claude,
			Turns: append(append([]Turn{{Text: "planning", Calls: []Call{{Name: "TaskCreate", Input: map[string]any{"subject": "Write the notes", "description": "d"}},
				{Name: "TaskCreate", Input: map[string]any{"subject": "Check them", "description": "e"}}}}},
				slices.Repeat([]Turn{{Text: "working", Bash: []string{"echo w"}}}, 10)...), Turn{Text: "done"}),
			Hooks: []Hook{h("PostToolUse", "exit 0")}},
		// No task calls: the turn ends at the tenth block, and the next prompt (claude -p
		// --continue) carries the reminder, before the prompt, with no task list (the
		// comparison does not see the contexts before a prompt: runner's
		// TestTaskReminderResumed checks dsh's).
		{Name: "tools/task-reminder-continue", Engines: claude, Prompts: []string{"Next task."},
			Turns: append(slices.Repeat([]Turn{{Text: "more", Bash: []string{"echo m"}}}, 4),
				Turn{Bash: []string{"echo last"}}, Turn{Text: "first done"}, Turn{Text: "second done"}),
			Hooks: []Hook{h("PostToolUse", "exit 0")}},
		// Which file tools refuse a file the conversation has not read: an Edit and a Write
		// of files never read, a NotebookEdit of a notebook never read, then of one Write
		// created (five requests: a sixth would bring the engine's task reminder).
		{Name: "tools/read-first", Engines: claude, Files: map[string]string{"nb.ipynb": NB, "notes.txt": "alpha\n", "w.txt": "old\n"},
			Turns: []Turn{
				{Text: "changing", Calls: []Call{{Name: "Edit", Input: map[string]any{"file_path": "{{ws}}/notes.txt", "old_string": "alpha", "new_string": "gamma"}},
					{Name: "Write", Input: map[string]any{"file_path": "{{ws}}/w.txt", "content": "new\n"}}}},
				{Text: "editing", Calls: []Call{{Name: "NotebookEdit", Input: map[string]any{"notebook_path": "{{ws}}/nb.ipynb", "cell_id": "c1", "new_source": "print(2)"}}}},
				{Text: "writing", Calls: []Call{{Name: "Write", Input: map[string]any{"file_path": "{{ws}}/nb2.ipynb", "content": NB}}}},
				{Text: "editing", Calls: []Call{{Name: "NotebookEdit", Input: map[string]any{"notebook_path": "{{ws}}/nb2.ipynb", "cell_id": "c1", "new_source": "print(3)"}}}},
				{Text: "finished"}},
			Hooks: []Hook{h("PostToolUse", "exit 0"), h("PostToolUseFailure", "exit 0")}},
		// A Read in one run and a NotebookEdit of the same notebook in the next
		// (claude -p --continue): whether the read survives the resume.
		{Name: "tools/read-first-resume", Engines: claude, Files: map[string]string{"nb.ipynb": NB}, Prompts: []string{"Next task."},
			Turns: []Turn{
				{Text: "reading", Calls: []Call{{Name: "Read", Input: map[string]any{"file_path": "{{ws}}/nb.ipynb"}}}},
				{Text: "read"},
				{Text: "editing", Calls: []Call{{Name: "NotebookEdit", Input: map[string]any{"notebook_path": "{{ws}}/nb.ipynb", "cell_id": "c1", "new_source": "print(2)"}}}},
				{Text: "finished"}},
			Hooks: []Hook{h("PostToolUse", "exit 0"), h("PostToolUseFailure", "exit 0")}},
		// Calls of tools the request does not offer: another engine's shell tool and a
		// made-up name. What the model reads, and whether any hook runs for them.
		{Name: "tools/unknown", Engines: claude, Turns: []Turn{
			{Text: "codex shell", Calls: []Call{{Name: "exec_command", Input: map[string]any{"cmd": "touch ran_x"}}}},
			{Text: "made up", Calls: []Call{{Name: "NoSuchTool", Input: map[string]any{"x": 1}}}},
			{Text: "finished"}},
			Hooks: []Hook{h("PreToolUse", "exit 0"), h("PostToolUse", "exit 0"), h("PostToolUseFailure", "exit 0")}},
		// WebFetch: a loopback URL, a dotless host, a bad URL. The engine asks
		// api.anthropic.com whether a domain is safe first unless skipWebFetchPreflight.
		{Name: "tools/webfetch", Engines: claude, Settings: map[string]any{"skipWebFetchPreflight": true}, Turns: []Turn{
			{Text: "fetching", Calls: []Call{{Name: "WebFetch", Input: map[string]any{"url": "http://127.0.0.1:9/page", "prompt": "summarize"}}}},
			{Text: "fetching local", Calls: []Call{{Name: "WebFetch", Input: map[string]any{"url": "http://localhost:9/page", "prompt": "summarize"}}}},
			{Text: "fetching bad", Calls: []Call{{Name: "WebFetch", Input: map[string]any{"url": "not a url", "prompt": "summarize"}}}},
			{Text: "finished"}},
			Hooks: []Hook{{Event: "PreToolUse", Matcher: "WebFetch", Script: "exit 0"}, {Event: "PostToolUseFailure", Matcher: "WebFetch", Script: "exit 0"},
				{Event: "PreToolUse", Matcher: "Grep|Glob", Script: "exit 0"}}},
	}
}

// NB is a small Jupyter notebook of two cells (ids c1 and c2).
const NB = `{"cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "source": ["print(1)\n"], "outputs": [], "execution_count": null}, {"cell_type": "markdown", "id": "c2", "metadata": {}, "source": ["# Title"]}], "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}` + "\n"
