package builtin

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
)

// TaskReminderShape is how an engine reminds its model of its task tools (a toolset's
// task_reminder; Claude Code 2.1.328's, measured in tools/notebook and
// tools/task-reminder): before a model request, when the agent is offered Offered, After
// or more assistant content blocks (each text and each call; reasoning not counted) came
// since its last call of one of Tools, and Between or more since the last reminder (or
// since the conversation began), the request carries Text, followed, when the task list
// has tasks, by Tasks ("{tasks}" their Task lines, one a line: "{id}", "{status}",
// "{subject}"), as a context after the last tool result.
type TaskReminderShape struct {
	// Tools are the calls that restart the count (TaskCreate, TaskUpdate).
	Tools []string `json:"tools"`
	// Offered is the tool the agent must be offered for the reminder to come.
	Offered string `json:"offered"`
	// After is the count of blocks since the last call of Tools.
	After int `json:"after"`
	// Between is the count of blocks since the last reminder.
	Between int `json:"between"`
	// Text is the reminder's words.
	Text string `json:"text"`
	// Tasks follows Text when the list has tasks: "{tasks}" the lines.
	Tasks string `json:"tasks"`
	// Task is one task's line.
	Task string `json:"task"`
}

// TaskReminder adds the toolset's task reminder (TaskReminderShape) to an agent's
// requests, counting each agent's blocks apart (a subagent's conversation is its own; the
// engine's reminders inside a subagent are not measured). It counts what the
// agent/response listeners before its own left of each response, and adds the reminder
// at agent/pre-step, after the other listeners, as a message of the step's batch (after
// the results of the step before, or before the turn's prompt); the provider sends it as
// the dialect's contexts are sent. The counts are in memory; a session resumed from its
// log replays the log first (Replay).
type TaskReminder struct {
	shape  TaskReminderShape
	tasks  *TaskList
	reg    *tools.Registry
	plugin string

	mu     sync.Mutex
	agents map[string]*taskCounts
}

// taskCounts are one agent's blocks since its last task call and since its last
// reminder.
type taskCounts struct {
	sinceCall, sinceReminder int
	// afterCalls says the agent's last response called tools: its next step carries their
	// results, where the engine adds its reminders (as it does to a prompt); a step that
	// continues a turn after a final answer (a Stop hook's feedback) gets none.
	afterCalls bool
}

// NewTaskReminder returns the task reminder of o's style's toolset, reading the task list
// o.Tasks (the one the task tools share) and the tools reg offers each agent; plugin names
// the reminder's messages' source. It returns nil, nil when the toolset has no reminder.
func NewTaskReminder(o Options, reg *tools.Registry, plugin string) (*TaskReminder, error) {
	all, err := Toolsets()
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(all, func(ts Toolset) bool { return ts.Style == o.Style })
	if i < 0 || all[i].TaskReminder == nil {
		return nil, nil
	}
	shape := *all[i].TaskReminder
	switch {
	case o.Tasks == nil:
		return nil, errors.New("builtin: the task reminder needs Options.Tasks, the task tools' list")
	case reg == nil:
		return nil, errors.New("builtin: the task reminder needs the tool registry")
	case shape.Offered == "" || len(shape.Tools) == 0 || shape.Text == "":
		return nil, fmt.Errorf("spec/toolsets: the %s toolset's task_reminder needs offered, tools and text", all[i].Dialect)
	case shape.After < 1 || shape.Between < 1:
		return nil, fmt.Errorf("spec/toolsets: the %s toolset's task_reminder: after %d and between %d must be 1 or more", all[i].Dialect, shape.After, shape.Between)
	}
	return &TaskReminder{shape: shape, tasks: o.Tasks, reg: reg, plugin: plugin, agents: map[string]*taskCounts{}}, nil
}

// Register registers the reminder's listeners on r and returns a func that unregisters
// them.
func (t *TaskReminder) Register(r *dsh.Registrar) (unregister func()) {
	u1 := r.OnResponse(t.observe)
	u2 := r.OnPreStep(t.preStep)
	return func() { u1(); u2() }
}

// observe counts the blocks of a response.
func (t *TaskReminder) observe(_ context.Context, p *dsh.ResponsePayload) (dsh.ResponseDecision, error) {
	t.count(p.AgentID, p.Response.Content)
	return dsh.ResponseAccept{}, nil
}

// Replay counts an event of agentID's session log as the agent's run counted it: a
// logged response's blocks, and a reminder the log holds. A session resumed from its log
// replays it first (as Claude Code 2.1.328 counts on after --continue:
// tools/task-reminder-continue).
func (t *TaskReminder) Replay(agentID string, e dsh.SessionEventData) {
	switch x := e.(type) {
	case dsh.AssistantMessageLogged:
		t.count(agentID, x.Message.Content)
	case dsh.UserMessageLogged:
		if strings.HasPrefix(x.Message.ID, reminderID) {
			t.mu.Lock()
			t.counts(agentID).sinceReminder = 0
			t.mu.Unlock()
		}
	default:
		// No other event is a block of the conversation or a reminder.
	}
}

// reminderID begins the id of every reminder message.
const reminderID = "task-reminder-"

// count counts the blocks of one response of agentID.
func (t *TaskReminder) count(agentID string, content []dsh.ContentBlock) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.counts(agentID)
	c.afterCalls = false
	for _, b := range content {
		if _, call := b.(dsh.ToolCallBlock); call {
			c.afterCalls = true
		}
		switch x := b.(type) {
		case dsh.ReasoningBlock:
			continue // the engine does not count a thinking block
		case dsh.ToolCallBlock:
			if slices.Contains(t.shape.Tools, x.Name) {
				c.sinceCall = 0
				c.sinceReminder++
				continue
			}
		default:
			// A text block (or any other a response holds) counts as the other calls do.
		}
		c.sinceCall++
		c.sinceReminder++
	}
}

func (t *TaskReminder) counts(agentID string) *taskCounts {
	c := t.agents[agentID]
	if c == nil {
		c = &taskCounts{}
		t.agents[agentID] = c
	}
	return c
}

// preStep adds the reminder to the step's batch when it is due: before the turn's prompt
// (measured: tools/task-reminder-continue), else after the batch (after the results of
// the step before: tools/task-reminder). A step that continues the turn after a final
// answer (a Stop hook's feedback) gets none, and the reminder stays due (measured:
// handler/prompt-stop-not-ok).
func (t *TaskReminder) preStep(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
	d, err := next.Call(ctx)
	enter, ok := d.(dsh.PreStepEnter)
	if err != nil || !ok {
		return d, err
	}
	if _, offered := t.reg.Lookup(p.AgentID, t.shape.Offered); !offered {
		return d, nil
	}
	t.mu.Lock()
	c := t.counts(p.AgentID)
	due := c.sinceCall >= t.shape.After && c.sinceReminder >= t.shape.Between && (p.Step == 1 || c.afterCalls)
	if due {
		c.sinceReminder = 0
	}
	t.mu.Unlock()
	if !due {
		return d, nil
	}
	summary := "task reminder"
	m := dsh.UserMessage{ID: reminderID + rand.Text(), Role: dsh.UserMessageRoleUser,
		Content: []dsh.ContentBlock{dsh.TextBlock{Text: "<system-reminder>\n" + t.Text() + "\n</system-reminder>"}},
		Source:  dsh.SourcePlugin{Plugin: t.plugin, Form: dsh.PluginFormNotice, Summary: &summary}}
	i := slices.IndexFunc(enter.Messages, func(m dsh.UserMessage) bool { return m.Source != nil && m.Source.Kind() == dsh.SourceUserKind })
	if i < 0 {
		i = len(enter.Messages)
	}
	return dsh.PreStepEnter{Messages: slices.Insert(slices.Clone(enter.Messages), i, m)}, nil
}

// Text is the reminder's words with the task list as it is now.
func (t *TaskReminder) Text() string {
	t.tasks.mu.Lock()
	lines := make([]string, len(t.tasks.tasks))
	for i, k := range t.tasks.tasks {
		lines[i] = strings.NewReplacer("{id}", k.ID, "{status}", k.Status, "{subject}", k.Subject).Replace(t.shape.Task)
	}
	t.tasks.mu.Unlock()
	text := t.shape.Text
	if len(lines) > 0 {
		text += strings.ReplaceAll(t.shape.Tasks, "{tasks}", strings.Join(lines, "\n"))
	}
	return text
}
