package subagent_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/subagent"
	"github.com/dshkit/dsh/runtime/tools"
)

// geminiFields are the fields of Gemini CLI's invoke_agent.
var geminiFields = subagent.Fields{Task: "prompt", Type: "agent_name", TypeAtCreation: true}

// nudge is the message of a child that ended its turn without its answer tool.
const nudge = "You have stopped calling tools without finishing. Call `complete_task`."

// withCompletion makes the children end by complete_task, as Gemini CLI's generalist does.
func withCompletion(c *subagent.Config) {
	c.DefaultType = "generalist"
	c.Completion = &subagent.Completion{
		Tool: tools.Definition{Name: "complete_task", Description: "Submit the answer.",
			InputSchema: args(map[string]any{"type": "object", "properties": map[string]any{
				"result": map[string]any{"type": "object", "properties": map[string]any{"response": map[string]any{"type": "string"}}}},
				"required": []string{"result"}})},
		Field: "result", Text: "Output submitted and task completed.", Nudge: nudge, Nudges: 1,
		Goal: "GOAL", Missing: "ERROR_NO_COMPLETE_TASK_CALL", MissingAnswer: "Agent stopped calling tools but did not call 'complete_task'.",
	}
	c.Refusal = func(err error) string {
		var u *subagent.UnknownTypeError
		if errors.As(err, &u) {
			return "Subagent '" + u.Type + "' not found."
		}
		return err.Error()
	}
}

func invoke(id, agent string) llm.ScriptedResponse {
	return llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{ID: id, Name: "Agent",
		Arguments: args(map[string]any{"agent_name": agent, "prompt": "say hi"})}}}
}

func completeTask(id, answer string) llm.ScriptedResponse {
	return llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{ID: id, Name: "complete_task",
		Arguments: args(map[string]any{"result": map[string]any{"response": answer}})}}}
}

func toolNames(req llm.Request) []string {
	var out []string
	for _, t := range req.Tools {
		out = append(out, t.Name)
	}
	return out
}

// lastUserText is the text of req's last user message.
func lastUserText(req llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if m := req.Messages[i]; m.Role == llm.RoleUser {
			return jsonOf(m.Content)
		}
	}
	return ""
}

// A child that calls complete_task ends there: its answer is the tool's result, indented
// JSON, the call's value says GOAL, the tool is offered to the child only, and the child
// sends no request after it.
func TestCompletionEndsChild(t *testing.T) {
	model := llm.NewScripted(
		invoke("call_a", "generalist"),
		llm.ScriptedResponse{Text: "child running", ToolCalls: []llm.ScriptedToolCall{{ID: "call_e", Name: "Echo", Arguments: args(map[string]any{})}}},
		completeTask("call_done", "child answer"),
		llm.ScriptedResponse{Text: "parent done"},
	).RecordRequests()
	log, _ := session.Open(context.Background(), session.NewMemory())
	h := newHarnessWith(t, log, model, false, geminiFields, withCompletion)
	h.prompt(t, "delegate")

	if got, want := toolResults(t, log)["call_a"], "{\n  \"response\": \"child answer\"\n}"; got != want {
		t.Errorf("the invoke call's result = %q, want %q", got, want)
	}
	reqs := model.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4 (the child sends none after complete_task)", len(reqs))
	}
	if names := toolNames(reqs[0]); slices.Contains(names, "complete_task") {
		t.Errorf("the parent is offered %v", names)
	}
	for _, r := range reqs[1:3] {
		if names := toolNames(r); !slices.Contains(names, "complete_task") || slices.Contains(names, "Agent") {
			t.Errorf("the child is offered %v, want complete_task and not the agent tool", names)
		}
	}
	started := recordsOf[dsh.SubagentStarted](t, log)
	if len(started) != 1 {
		t.Fatalf("%d children", len(started))
	}
	child, _ := h.logs.Log(started[0].SessionID)
	if got := toolResults(t, child)["call_done"]; got != "Output submitted and task completed." {
		t.Errorf("complete_task's result = %q", got)
	}
	fin := recordsOf[dsh.SubagentFinished](t, log)
	if len(fin) != 1 || fin[0].Outcome != dsh.SubagentOutcomeCompleted || fin[0].Answer == nil || !strings.Contains(*fin[0].Answer, "child answer") {
		t.Errorf("subagent/finished = %+v", fin)
	}
	// After the child, no other agent is offered its answer tool.
	if _, ok := h.reg.Lookup(started[0].AgentID, "complete_task"); ok {
		t.Error("complete_task is still registered for the child that ended")
	}
}

// A child whose turn ends with text is nudged once; answering then is GOAL.
func TestCompletionNudgeThenAnswer(t *testing.T) {
	model := llm.NewScripted(
		llm.ScriptedResponse{Text: "child text"},
		completeTask("call_done", "late answer"),
	).RecordRequests()
	log, _ := session.Open(context.Background(), session.NewMemory())
	hooks, reg := dsh.NewRegistry(), tools.NewRegistry()
	cfg := subagent.Config{Registry: hooks, Tools: func() *tools.Runtime { return tools.New(reg, hooks) },
		Model: model, LLM: dsh.LLMCallConfig{Provider: "scripted", Model: "m"}, Logs: &subagent.MemoryLogs{}, ParentLog: log, ToolName: "Agent"}
	withCompletion(&cfg)
	r, err := subagent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res, err := r.Run(context.Background(), subagent.Request{CallID: "call_a", ParentAgentID: "main", Type: "generalist", Task: "say hi"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != dsh.SubagentOutcomeCompleted || res.Reason != "GOAL" || res.Answer != "{\n  \"response\": \"late answer\"\n}" {
		t.Errorf("result = %+v", res)
	}
	reqs := model.Requests()
	if len(reqs) != 2 || !strings.Contains(lastUserText(reqs[1]), "You have stopped calling tools") {
		t.Fatalf("%d requests, want 2, the second with the nudge", len(reqs))
	}
}

// A child that answers with text after the nudge too ends with the Completion's missing
// reason: the call's result says so in the engine's words (a result, not a failure), the
// parent's log records it, and a resumed parent answers the same without running it again.
func TestCompletionMissing(t *testing.T) {
	model := llm.NewScripted(
		invoke("call_a", "generalist"),
		llm.ScriptedResponse{Text: "child text"},
		llm.ScriptedResponse{Text: "child text again"},
		llm.ScriptedResponse{Text: "parent done"},
	).RecordRequests()
	log, _ := session.Open(context.Background(), session.NewMemory())
	h := newHarnessWith(t, log, model, false, geminiFields, withCompletion)
	h.prompt(t, "delegate")

	if got := toolResults(t, log)["call_a"]; got != "Agent stopped calling tools but did not call 'complete_task'." {
		t.Errorf("the invoke call's result = %q", got)
	}
	if n := len(model.Requests()); n != 4 {
		t.Errorf("%d requests, want 4 (one nudge, no second)", n)
	}
	fin := recordsOf[dsh.SubagentFinished](t, log)
	if len(fin) != 1 || fin[0].Outcome != dsh.SubagentOutcomeFailed || fin[0].Error == nil || *fin[0].Error != subagent.ErrNoCompletion.Error() {
		t.Fatalf("subagent/finished = %+v", fin)
	}
	// A resumed parent's runner replays it.
	cfg := subagent.Config{Registry: h.hooks, Tools: func() *tools.Runtime { return tools.New(h.reg, h.hooks) },
		Model: llm.NewScripted(), Logs: h.logs, ParentLog: log, ToolName: "Agent"}
	withCompletion(&cfg)
	r, err := subagent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res, err := r.Run(context.Background(), subagent.Request{CallID: "call_a", Type: "generalist", Task: "say hi"})
	if err != nil || !res.Replayed || res.Reason != "ERROR_NO_COMPLETE_TASK_CALL" || !errors.Is(res.Err, subagent.ErrNoCompletion) {
		t.Errorf("replayed = %+v, %v", res, err)
	}
}

// An agent name there is none of is refused when the call is created: no policy (no
// pre-tool) sees it, no child starts, and the model reads the refusal's words.
func TestUnknownTypeAtCreation(t *testing.T) {
	model := llm.NewScripted(invoke("call_u", "nosuch"), llm.ScriptedResponse{Text: "parent done"})
	log, _ := session.Open(context.Background(), session.NewMemory())
	h := newHarnessWith(t, log, model, false, geminiFields, withCompletion)
	h.prompt(t, "delegate")
	if got := toolResults(t, log)["call_u"]; !strings.Contains(got, "Subagent 'nosuch' not found.") {
		t.Errorf("the refusal = %q", got)
	}
	for _, e := range h.events {
		if strings.HasPrefix(e, "pre-tool Agent") {
			t.Errorf("a refused call reached policy: %s", e)
		}
	}
	if n := len(recordsOf[dsh.SubagentStarted](t, log)); n != 0 {
		t.Errorf("%d children started", n)
	}
}
