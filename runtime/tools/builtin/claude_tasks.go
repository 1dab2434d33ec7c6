package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dshkit/dsh/runtime/tools"
)

// TaskList is the session's task list of Claude Code's task tools (TaskCreate, TaskGet,
// TaskList, TaskUpdate): in memory, shared by the tools of one [Definitions] call, so one
// session's (Options.Tasks shares it with the task reminder). Its zero value is an empty
// list. Claude Code 2.1.328 keeps its list on disk under ~/.claude/tasks; dsh keeps
// it for the session only.
type TaskList struct {
	mu    sync.Mutex
	next  int
	tasks []*task
}

// task is one task of a TaskList.
type task struct {
	ID          string
	Subject     string
	Description string
	ActiveForm  string
	Status      string // pending, in_progress or completed
	Owner       string
	Blocks      []string
	BlockedBy   []string
	Metadata    map[string]any
}

func (l *TaskList) find(id string) *task {
	i := slices.IndexFunc(l.tasks, func(t *task) bool { return t.ID == id })
	if i < 0 {
		return nil
	}
	return l.tasks[i]
}

// The task tools' values, Claude Code's (its PostToolUse hooks read them as tool_response).
type (
	taskCreated struct {
		Task taskRef `json:"task"`
	}
	taskRef struct {
		ID          string `json:"id"`
		Subject     string `json:"subject"`
		Description string `json:"description"`
	}
	taskGot struct {
		Task *taskDetail `json:"task"` // null when no task has the id
	}
	taskDetail struct {
		ID          string   `json:"id"`
		Subject     string   `json:"subject"`
		Description string   `json:"description"`
		Status      string   `json:"status"`
		Blocks      []string `json:"blocks"`
		BlockedBy   []string `json:"blockedBy"`
	}
	taskListed struct {
		Tasks []taskSummary `json:"tasks"`
	}
	taskSummary struct {
		ID        string   `json:"id"`
		Subject   string   `json:"subject"`
		Status    string   `json:"status"`
		Owner     string   `json:"owner,omitempty"`
		BlockedBy []string `json:"blockedBy"` // the blocking tasks not completed
	}
	taskUpdated struct {
		Success       bool          `json:"success"`
		TaskID        string        `json:"taskId"`
		UpdatedFields []string      `json:"updatedFields"`
		Error         string        `json:"error,omitempty"`
		StatusChange  *statusChange `json:"statusChange,omitempty"`
	}
	statusChange struct {
		From string `json:"from"`
		To   string `json:"to"`
	}
)

// The task tools' inputs.
type (
	taskCreateInput struct {
		Subject     string         `json:"subject"`
		Description string         `json:"description"`
		ActiveForm  string         `json:"activeForm"`
		Metadata    map[string]any `json:"metadata"`
	}
	taskIDInput struct {
		TaskID string `json:"taskId"`
	}
	taskUpdateInput struct {
		TaskID       string          `json:"taskId"`
		Subject      *string         `json:"subject"`
		Description  *string         `json:"description"`
		ActiveForm   *string         `json:"activeForm"`
		Status       *string         `json:"status"`
		AddBlocks    []string        `json:"addBlocks"`
		AddBlockedBy []string        `json:"addBlockedBy"`
		Owner        *string         `json:"owner"`
		Metadata     json.RawMessage `json:"metadata"`
	}
)

// taskSchema is the task tools' own input schema (the toolset's row replaces it).
const taskSchema = `{"type": "object"}`

func claudeTaskCreate(o Options) tools.Definition {
	l := o.Tasks
	return tools.Definition{
		Name:        "TaskCreate",
		Description: "Creates a task in the session's task list.",
		InputSchema: json.RawMessage(taskSchema),
		Output: &tools.Output{Render: renderText(func(r taskCreated) string {
			return "Task #" + r.Task.ID + " created successfully: " + r.Task.Subject
		})},
		Run: runWith(func(_ context.Context, in taskCreateInput) (taskCreated, error) {
			if strings.TrimSpace(in.Subject) == "" {
				return taskCreated{}, tools.NewError(CodeBadInput, "subject is empty")
			}
			l.mu.Lock()
			defer l.mu.Unlock()
			l.next++
			t := &task{ID: strconv.Itoa(l.next), Subject: in.Subject, Description: in.Description, ActiveForm: in.ActiveForm,
				Status: "pending", Blocks: []string{}, BlockedBy: []string{}, Metadata: in.Metadata}
			l.tasks = append(l.tasks, t)
			return taskCreated{Task: taskRef{ID: t.ID, Subject: t.Subject, Description: t.Description}}, nil
		}),
	}
}

func claudeTaskGet(o Options) tools.Definition {
	l := o.Tasks
	return tools.Definition{
		Name:              "TaskGet",
		Description:       "Returns a task of the session's task list by its id.",
		InputSchema:       json.RawMessage(taskSchema),
		IsConcurrencySafe: func(json.RawMessage) bool { return true },
		Output: &tools.Output{Render: renderText(func(r taskGot) string {
			if r.Task == nil {
				return "Task not found"
			}
			t := r.Task
			lines := []string{"Task #" + t.ID + ": " + t.Subject, "Status: " + t.Status, "Description: " + t.Description}
			if len(t.BlockedBy) > 0 {
				lines = append(lines, "Blocked by: "+taskRefs(t.BlockedBy))
			}
			if len(t.Blocks) > 0 {
				lines = append(lines, "Blocks: "+taskRefs(t.Blocks))
			}
			return strings.Join(lines, "\n")
		})},
		Run: runWith(func(_ context.Context, in taskIDInput) (taskGot, error) {
			l.mu.Lock()
			defer l.mu.Unlock()
			t := l.find(in.TaskID)
			if t == nil {
				return taskGot{}, nil
			}
			return taskGot{Task: &taskDetail{ID: t.ID, Subject: t.Subject, Description: t.Description, Status: t.Status,
				Blocks: slices.Clone(t.Blocks), BlockedBy: slices.Clone(t.BlockedBy)}}, nil
		}),
	}
}

func claudeTaskList(o Options) tools.Definition {
	l := o.Tasks
	return tools.Definition{
		Name:              "TaskList",
		Description:       "Lists the session's task list.",
		InputSchema:       json.RawMessage(taskSchema),
		IsConcurrencySafe: func(json.RawMessage) bool { return true },
		Output: &tools.Output{Render: renderText(func(r taskListed) string {
			if len(r.Tasks) == 0 {
				return "No tasks found"
			}
			lines := make([]string, len(r.Tasks))
			for i, t := range r.Tasks {
				line := "#" + t.ID + " [" + t.Status + "] " + t.Subject
				if t.Owner != "" {
					line += " (" + t.Owner + ")"
				}
				if len(t.BlockedBy) > 0 {
					line += " [blocked by " + taskRefs(t.BlockedBy) + "]"
				}
				lines[i] = line
			}
			return strings.Join(lines, "\n")
		})},
		Run: runWith(func(_ context.Context, _ struct{}) (taskListed, error) {
			l.mu.Lock()
			defer l.mu.Unlock()
			out := taskListed{Tasks: []taskSummary{}}
			for _, t := range l.tasks {
				open := []string{}
				for _, b := range t.BlockedBy {
					if bt := l.find(b); bt == nil || bt.Status != "completed" {
						open = append(open, b)
					}
				}
				out.Tasks = append(out.Tasks, taskSummary{ID: t.ID, Subject: t.Subject, Status: t.Status, Owner: t.Owner, BlockedBy: open})
			}
			return out, nil
		}),
	}
}

func claudeTaskUpdate(o Options) tools.Definition {
	l := o.Tasks
	return tools.Definition{
		Name:        "TaskUpdate",
		Description: "Updates a task of the session's task list.",
		InputSchema: json.RawMessage(taskSchema),
		Output: &tools.Output{Render: renderText(func(r taskUpdated) string {
			if !r.Success {
				if r.Error != "" {
					return r.Error
				}
				return "Task #" + r.TaskID + " not found"
			}
			return "Updated task #" + r.TaskID + " " + strings.Join(r.UpdatedFields, ", ")
		})},
		Run: runWith(func(_ context.Context, in taskUpdateInput) (taskUpdated, error) {
			l.mu.Lock()
			defer l.mu.Unlock()
			return l.update(in)
		}),
	}
}

// update applies in as Claude Code 2.1.328 does: a field that changes is listed in
// updatedFields in the order subject, description, activeForm, owner, metadata, status
// (deleted removes the task and is listed alone), then blocks and blockedBy for the ids
// not there yet; an unknown id is no failure but success false, "Task not found".
func (l *TaskList) update(in taskUpdateInput) (taskUpdated, error) {
	t := l.find(in.TaskID)
	if t == nil {
		return taskUpdated{TaskID: in.TaskID, UpdatedFields: []string{}, Error: "Task not found"}, nil
	}
	res := taskUpdated{Success: true, TaskID: t.ID, UpdatedFields: []string{}}
	set := func(field string, p *string, v *string) {
		if p != nil && *p != *v {
			*v = *p
			res.UpdatedFields = append(res.UpdatedFields, field)
		}
	}
	set("subject", in.Subject, &t.Subject)
	set("description", in.Description, &t.Description)
	set("activeForm", in.ActiveForm, &t.ActiveForm)
	set("owner", in.Owner, &t.Owner)
	if len(in.Metadata) > 0 {
		var m map[string]any
		if err := json.Unmarshal(in.Metadata, &m); err != nil {
			return taskUpdated{}, tools.NewError(CodeBadInput, "metadata: "+err.Error())
		}
		if t.Metadata == nil {
			t.Metadata = map[string]any{}
		}
		for k, v := range m {
			if v == nil {
				delete(t.Metadata, k)
			} else {
				t.Metadata[k] = v
			}
		}
		res.UpdatedFields = append(res.UpdatedFields, "metadata")
	}
	if in.Status != nil {
		switch s := *in.Status; s {
		case "deleted":
			l.remove(t.ID)
			return taskUpdated{Success: true, TaskID: t.ID, UpdatedFields: []string{"deleted"}, StatusChange: &statusChange{From: t.Status, To: "deleted"}}, nil
		case "pending", "in_progress", "completed":
			if s != t.Status {
				res.StatusChange = &statusChange{From: t.Status, To: s}
				t.Status = s
				res.UpdatedFields = append(res.UpdatedFields, "status")
			}
		default:
			return taskUpdated{}, tools.NewError(CodeBadInput, fmt.Sprintf("status %q: want pending, in_progress, completed or deleted", s))
		}
	}
	if l.link(t, in.AddBlocks, false) {
		res.UpdatedFields = append(res.UpdatedFields, "blocks")
	}
	if l.link(t, in.AddBlockedBy, true) {
		res.UpdatedFields = append(res.UpdatedFields, "blockedBy")
	}
	return res, nil
}

// link records that t blocks each of ids (t is blocked by each, with blockedBy) that it
// does not yet, on both tasks, and says whether there was one.
func (l *TaskList) link(t *task, ids []string, blockedBy bool) bool {
	added := false
	for _, id := range ids {
		own := &t.Blocks
		if blockedBy {
			own = &t.BlockedBy
		}
		if slices.Contains(*own, id) {
			continue
		}
		*own = append(*own, id)
		added = true
		if other := l.find(id); other != nil {
			if blockedBy {
				other.Blocks = appendNew(other.Blocks, t.ID)
			} else {
				other.BlockedBy = appendNew(other.BlockedBy, t.ID)
			}
		}
	}
	return added
}

// remove deletes the task id and every reference to it.
func (l *TaskList) remove(id string) {
	l.tasks = slices.DeleteFunc(l.tasks, func(t *task) bool { return t.ID == id })
	for _, t := range l.tasks {
		t.Blocks = slices.DeleteFunc(t.Blocks, func(s string) bool { return s == id })
		t.BlockedBy = slices.DeleteFunc(t.BlockedBy, func(s string) bool { return s == id })
	}
}

func appendNew(s []string, v string) []string {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

// taskRefs writes ids as Claude Code lists them: "#1, #2".
func taskRefs(ids []string) string {
	refs := make([]string, len(ids))
	for i, id := range ids {
		refs[i] = "#" + id
	}
	return strings.Join(refs, ", ")
}
