package subagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dshkit/dsh/generated/dsh"
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
}

// ClaudeCode are the fields of Claude Code's Agent tool.
var ClaudeCode = Fields{Task: "prompt", Type: "subagent_type"}

// CodeSubagent is the code of an agent tool call whose child could not start or did not
// complete.
const CodeSubagent = "SUBAGENT_FAILED"

// Definition returns the agent tool reading its input by f: a call runs a child (in the
// foreground: the call waits for it) and its result is the child's final answer. A child
// that could not start, or did not complete, fails the call with a message that says
// which and why. The caller sets the tool's name, description and schema (a toolset
// row's).
func (r *Runner) Definition(f Fields) tools.Definition {
	return tools.Definition{
		Name: r.cfg.ToolName,
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
			case res.Outcome != dsh.SubagentOutcomeCompleted && errors.As(res.Err, &none) && r.cfg.Refusal != nil:
				return nil, tools.NewError(CodeSubagent, r.cfg.Refusal(none))
			case res.Outcome != dsh.SubagentOutcomeCompleted:
				return nil, tools.NewError(CodeSubagent, fmt.Sprintf("the %s agent %s %s: %v", req.typeName(), res.AgentID, res.Outcome, res.Err))
			}
			return Value{AgentID: res.AgentID, Type: res.Type, Answer: res.Answer, ToolsUsed: res.ToolsUsed,
				ToolUses: res.ToolUses, Tokens: res.Tokens, DurationMS: res.Duration.Milliseconds()}, nil
		},
		// Several agent calls of one step run at once, as the engines run them.
		IsConcurrencySafe: func(json.RawMessage) bool { return true },
		// The model reads the answer; a host words it as its engine does (Output.Render).
		Output: &tools.Output{Render: func(args, value json.RawMessage) ([]dsh.ContentBlock, error) {
			v, err := DecodeValue(value)
			if err != nil {
				return nil, err
			}
			return []dsh.ContentBlock{dsh.TextBlock{Text: v.Answer}}, nil
		}},
	}
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
