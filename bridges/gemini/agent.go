package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/dshkit/dsh/generated/wire/gemini"
	"github.com/dshkit/dsh/runtime/subagent"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// agentRow is the gemini toolset's agent tool (invoke_agent): its name, how the engine's
// hooks see its result, and the termination reason of a child that ended without its
// answer tool.
type agentRow struct {
	name     string
	progress *builtin.ProgressShape
	missing  string
}

// agentTool is the gemini toolset's agent row (none when it has no progress shape, or
// the toolsets do not load: their tests check them).
var agentTool = sync.OnceValue(func() agentRow {
	row, ok, err := builtin.AgentRow(builtin.StyleGemini)
	if err != nil || !ok || row.Agent.Progress == nil {
		return agentRow{}
	}
	a := agentRow{name: row.Name, progress: row.Agent.Progress}
	if c := row.Agent.Completion; c != nil {
		a.missing = c.Missing
	}
	return a
})

// progressCall is a tool call of recentActivity, in the engine's key order.
type progressCall struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	Content     string `json:"content"`
	DisplayName string `json:"displayName,omitempty"`
	Description string `json:"description,omitempty"`
	Args        string `json:"args"`
	Status      string `json:"status"`
}

// progressThought is a thought of recentActivity.
type progressThought struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Content string `json:"content"`
	Status  string `json:"status"`
}

// agentResponse is AfterTool's tool_response of an invoke_agent call that ran a child
// (value, a subagent.Value; text the result the model read), as Gemini CLI 0.61.0 writes
// it: llmContent a text part, returnDisplay the subagent's progress. ok is false for any
// other call or value.
func agentResponse(tool string, value json.RawMessage, text string) (gemini.ToolResponse, bool) {
	a := agentTool()
	if a.progress == nil || tool != a.name {
		return gemini.ToolResponse{}, false
	}
	v, err := subagent.DecodeValue(value)
	if err != nil || v.AgentID == "" || v.Reason == "" {
		return gemini.ToolResponse{}, false
	}
	p := a.progress
	activity := []any{}
	for _, c := range v.Calls {
		status := "completed"
		if c.Failed {
			status = "error"
		}
		activity = append(activity, progressCall{ID: fmt.Sprintf("%s#%d-%d", v.AgentID, c.Step, c.Index), Type: "tool_call",
			Content: c.Name, DisplayName: p.Names[c.Name], Description: describe(p.Descriptions[c.Name], c.Args),
			Args: compact(c.Args), Status: status})
		if c.Failed {
			activity = append(activity, progressThought{ID: subagent.NewUUID(), Type: "thought",
				Content: strings.ReplaceAll(p.Failed, "{error}", c.Error), Status: "error"})
		}
	}
	if v.Reason == a.missing {
		for _, t := range p.Missing {
			activity = append(activity, progressThought{ID: subagent.NewUUID(), Type: "thought", Content: t.Content, Status: t.Status})
		}
	}
	display := struct {
		IsSubagentProgress bool   `json:"isSubagentProgress"`
		AgentName          string `json:"agentName"`
		RecentActivity     []any  `json:"recentActivity"`
		State              string `json:"state"`
		Result             string `json:"result"`
		TerminateReason    string `json:"terminateReason"`
	}{true, v.Type, activity, "completed", v.Answer, v.Reason}
	var r gemini.ToolResponse
	r.LLMContent, _ = json.Marshal([]map[string]string{{"text": text}})
	r.ReturnDisplay, _ = json.Marshal(display)
	return r, true
}

// describe is a call's description by template: {key} stands for the input key's string
// value.
func describe(template string, args json.RawMessage) string {
	if !strings.Contains(template, "{") {
		return template
	}
	var in map[string]any
	_ = json.Unmarshal(args, &in)
	for k, v := range in {
		if s, ok := v.(string); ok {
			template = strings.ReplaceAll(template, "{"+k+"}", s)
		}
	}
	return template
}

// compact is args as JSON.stringify writes it ("{}" when there are none).
func compact(args json.RawMessage) string {
	var b bytes.Buffer
	if len(args) == 0 || json.Compact(&b, args) != nil {
		return "{}"
	}
	return b.String()
}
