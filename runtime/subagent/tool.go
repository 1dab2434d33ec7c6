package subagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/loop"
	"github.com/dshkit/dsh/runtime/tools"
)

// Fields names where the agent tool's input holds the task and the agent type, as the
// dialect's engine shapes the call (Claude Code's Agent: prompt and subagent_type).
type Fields struct {
	// Task is the input key of the child's prompt.
	Task string
	// Type is the input key of the agent type ("": the call names none, and the child is
	// general-purpose).
	Type string
	// Description is the input key of the call's short description of the task ("":
	// none).
	Description string
	// Background is the input key of the call's choice to run the child in the
	// background (a boolean), and BackgroundByDefault the choice of a call that makes
	// none; "" runs every child in the foreground.
	Background          string
	BackgroundByDefault bool
	// TypeAtCreation refuses a call naming no agent type when the call is created, before
	// any policy or hook (tools.Definition.Precheck), as Gemini CLI 0.61.0 refuses it while
	// it builds the call; false refuses it when the call runs.
	TypeAtCreation bool
}

// ClaudeCode are the fields of Claude Code's Agent tool.
var ClaudeCode = Fields{Task: "prompt", Type: "subagent_type"}

// CodeSubagent is the code of an agent tool call whose child could not start or did not
// complete.
const CodeSubagent = "SUBAGENT_FAILED"

// Definition returns the agent tool reading its input by f. A call in the foreground runs
// a child and waits for it: its result is the child's final answer, and a child that could
// not start, or did not complete, fails the call with a message that says which and why. A
// call in the background starts the child and returns at once (Value.Async); when the
// child ends, a message of Config.Notice wakes the calling agent (Steer). The caller sets
// the tool's name, description and schema (a toolset row's).
func (r *Runner) Definition(f Fields) tools.Definition {
	r.mu.Lock()
	r.fields = &f
	r.mu.Unlock()
	var check func(json.RawMessage) error
	if f.TypeAtCreation && f.Type != "" {
		check = func(args json.RawMessage) error {
			var in map[string]any
			if json.Unmarshal(args, &in) != nil {
				return nil // the call's run says what is wrong with it
			}
			typ, _ := in[f.Type].(string)
			if r.hasType(typ) {
				return nil
			}
			err := error(&UnknownTypeError{Type: typ, Types: r.typeNames()})
			if r.cfg.Refusal != nil {
				return tools.NewError(CodeSubagent, r.cfg.Refusal(err))
			}
			return tools.NewError(CodeSubagent, err.Error())
		}
	}
	return tools.Definition{
		Name:     r.cfg.ToolName,
		Precheck: check,
		Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
			var in map[string]any
			if err := rc.BindArguments(&in); err != nil {
				return nil, tools.NewError(CodeSubagent, "bad input: "+err.Error())
			}
			task, _ := in[f.Task].(string)
			if task == "" {
				return nil, tools.NewError(CodeSubagent, fmt.Sprintf("%s is empty: the agent has no task", f.Task))
			}
			typ := ""
			if f.Type != "" {
				typ, _ = in[f.Type].(string)
			}
			exec := rc.Exec()
			req := Request{CallID: exec.CallID, Type: typ, Task: task, ParentLineage: exec.Lineage}
			if exec.AgentID != nil {
				req.ParentAgentID = *exec.AgentID
			}
			if f.Description != "" {
				req.Description, _ = in[f.Description].(string)
			}
			if f.Background != "" {
				bg, set := in[f.Background].(bool)
				if !set {
					bg = f.BackgroundByDefault
				}
				if bg || r.runsInBackground(req) {
					return r.startBackground(ctx, req)
				}
			}
			res, err := r.Run(ctx, req)
			if err != nil {
				msg := err.Error()
				if r.cfg.Refusal != nil {
					msg = r.cfg.Refusal(err)
				}
				return nil, tools.NewError(CodeSubagent, msg)
			}
			var none *NoToolsError
			switch {
			case r.cfg.Completion != nil && errors.Is(res.Err, ErrNoCompletion):
				// The call answers the child's end in the engine's words, as a result.
				res.Answer = r.cfg.Completion.MissingAnswer
			case res.Outcome != dsh.SubagentOutcomeCompleted && errors.As(res.Err, &none) && r.cfg.Refusal != nil:
				return nil, tools.NewError(CodeSubagent, r.cfg.Refusal(none))
			case res.Outcome != dsh.SubagentOutcomeCompleted:
				return nil, tools.NewError(CodeSubagent, fmt.Sprintf("the %s agent %s %s: %v", req.typeName(), res.AgentID, res.Outcome, res.Err))
			}
			var calls []ChildCall
			if r.cfg.Completion != nil {
				calls = res.Calls // what Gemini CLI's hooks see of the child (its recentActivity)
			}
			return Value{AgentID: res.AgentID, Type: res.Type, Answer: res.Answer, ToolsUsed: res.ToolsUsed,
				ToolUses: res.ToolUses, Tokens: res.Tokens, DurationMS: res.Duration.Milliseconds(), Task: req.Task,
				Model: res.Model, Usage: res.Usage, ToolStats: res.ToolStats, TurnLimit: res.TurnLimit, Reason: res.Reason, Calls: calls}, nil
		},
		// Several agent calls of one step run at once, as the engines run them.
		IsConcurrencySafe: func(json.RawMessage) bool { return true },
		// A call a crash left without a result runs again on resume: a child that
		// finished answers from the parent's log, one that did not runs anew.
		Resumable: true,
		// The model reads the answer; a host words it as its engine does (Output.Render).
		Output: &tools.Output{Render: func(args, value json.RawMessage) ([]dsh.ContentBlock, error) {
			v, err := DecodeValue(value)
			if err != nil {
				return nil, err
			}
			if v.Async {
				return []dsh.ContentBlock{dsh.TextBlock{Text: fmt.Sprintf("The %s agent %s runs in the background: its answer comes in a message of its own when it ends.", v.Type, v.AgentID)}}, nil
			}
			return []dsh.ContentBlock{dsh.TextBlock{Text: v.Answer}}, nil
		}},
	}
}

// startBackground starts req's child in the background: the call's value says so, and the
// child's end wakes the calling agent with its notice.
func (r *Runner) startBackground(ctx context.Context, req Request) (any, error) {
	parent, ok := loop.AgentFromContext(ctx)
	if !ok {
		return nil, tools.NewError(CodeSubagent, "a child in the background needs the calling agent, and the call has none")
	}
	c, err := r.Spawn(ctx, req, func(c *Child) { r.notify(ctx, parent, c) })
	if err != nil {
		return nil, tools.NewError(CodeSubagent, err.Error())
	}
	return Value{AgentID: c.ID, Type: c.Type, Async: true, Description: c.Description, OutputFile: c.OutputFile,
		Task: c.Task, Model: c.Model}, nil
}

// notify wakes parent with the notice of c's end, unless the Runner was closed (the
// parent's session is ending, and the child was cancelled with it).
func (r *Runner) notify(ctx context.Context, parent dsh.Agent, c *Child) {
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return
	}
	res, err := c.res, c.err
	if err != nil && res.Err == nil {
		res.Outcome, res.Err = dsh.SubagentOutcomeFailed, err
	}
	var content []dsh.ContentBlock
	if r.cfg.Notice != nil {
		content = r.cfg.Notice(c, res)
	} else {
		text := res.Answer
		if res.Outcome != dsh.SubagentOutcomeCompleted {
			text = fmt.Sprintf("the %s agent %s %s: %v", c.Type, c.ID, res.Outcome, res.Err)
		}
		content = []dsh.ContentBlock{dsh.TextBlock{Text: text}}
	}
	msg := dsh.UserMessage{ID: noticeID(c.ID), Role: dsh.UserMessageRoleUser, Content: content,
		Source: dsh.SourceTool{CallID: c.CallID}}
	if err := parent.Steer(context.WithoutCancel(ctx), msg); err != nil {
		r.cfg.Logger.Warn("subagent: the end of a child in the background did not reach its parent",
			"agentId", c.ID, "callId", c.CallID, "error", err)
	}
}

// outputFile is where the output of child id can be read ("" when unknown).
func (r *Runner) outputFile(id string) string {
	if r.cfg.OutputFile == nil {
		return ""
	}
	return r.cfg.OutputFile(id)
}

// Value is the agent tool's value: the child that ran and what it answered.
type Value struct {
	// AgentID is the child's id, Type its agent type.
	AgentID string `json:"agentId"`
	Type    string `json:"agentType"`
	// Answer is its final text.
	Answer string `json:"answer"`
	// ToolsUsed are the tools it called, in first-call order; ToolUses how many calls.
	ToolsUsed []string `json:"toolsUsed,omitempty"`
	ToolUses  int      `json:"toolUses"`
	// Tokens are its last response's input and output tokens.
	Tokens int `json:"tokens"`
	// DurationMS is how long it ran, in milliseconds (0 for an answer replayed from the
	// log).
	DurationMS int64 `json:"durationMs"`
	// Async says the child runs in the background: the call returned when it started,
	// and Answer and the figures are empty.
	Async bool `json:"async,omitempty"`
	// Description is the call's description of the task.
	Description string `json:"description,omitempty"`
	// OutputFile is where the child's output can be read ("": unknown).
	OutputFile string `json:"outputFile,omitempty"`
	// Task is the child's prompt.
	Task string `json:"task,omitempty"`
	// Model is the model the child calls ("": unknown).
	Model string `json:"model,omitempty"`
	// Usage is its last response's token accounting (nil: none reported, or the answer
	// was replayed from the log).
	Usage *dsh.Usage `json:"usage,omitempty"`
	// ToolStats counts its calls by kind (nil: none counted).
	ToolStats *ToolStats `json:"toolStats,omitempty"`
	// TurnLimit is the limit of model steps the child stopped at (0: none): its answer is
	// partial.
	TurnLimit int `json:"turnLimit,omitempty"`
	// Reason is its termination reason (Config.Completion's words; "": none).
	Reason string `json:"reason,omitempty"`
	// Calls are the calls it made (none for an answer replayed from the log).
	Calls []ChildCall `json:"calls,omitempty"`
}

// DecodeValue decodes the agent tool's value.
func DecodeValue(raw []byte) (Value, error) {
	var v Value
	if err := json.Unmarshal(raw, &v); err != nil {
		return Value{}, fmt.Errorf("subagent: the agent tool's value: %w", err)
	}
	return v, nil
}

// typeName is the request's agent type, general-purpose when it names none.
func (req Request) typeName() string {
	if req.Type == "" {
		return GeneralPurpose
	}
	return req.Type
}
