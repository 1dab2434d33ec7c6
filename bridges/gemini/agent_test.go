package gemini

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/dshkit/dsh/runtime/subagent"
)

// invoke_agent's tool_response is Gemini CLI 0.61.0's (gemini/subagent-invoke,
// gemini/subagent-deny-inside, gemini/subagent-nudge): a text part, and the progress with
// an entry per child call (its id the child's id, step and index), a thought after a
// failed call, and the measured thoughts of a child that never called complete_task.
func TestAgentResponse(t *testing.T) {
	uuid := regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`)
	id := "6cd37fbb-b2ea-4963-a50f-d17bb75fd7e6"
	value, _ := json.Marshal(subagent.Value{AgentID: id, Type: "generalist", Answer: "{\n  \"response\": \"child answer\"\n}", Reason: "GOAL",
		Calls: []subagent.ChildCall{
			{Step: 0, Index: 0, Name: "run_shell_command", Args: json.RawMessage(`{"command": "touch x", "description": "run"}`), Failed: true, Error: "Tool execution blocked: no"},
			{Step: 1, Index: 0, Name: "complete_task", Args: json.RawMessage(`{"result":{"response":"child answer"}}`)},
		}})
	r, ok := agentResponse("invoke_agent", value, "Subagent 'generalist' finished.")
	if !ok {
		t.Fatal("no response for invoke_agent")
	}
	if got, want := string(r.LLMContent), `[{"text":"Subagent 'generalist' finished."}]`; got != want {
		t.Errorf("llmContent = %s, want %s", got, want)
	}
	got := uuid.ReplaceAllString(string(r.ReturnDisplay), "<uuid>")
	want := `{"isSubagentProgress":true,"agentName":"generalist","recentActivity":[` +
		`{"id":"<uuid>#0-0","type":"tool_call","content":"run_shell_command","displayName":"Shell","description":"touch x","args":"{\"command\":\"touch x\",\"description\":\"run\"}","status":"error"},` +
		`{"id":"<uuid>","type":"thought","content":"Error: Tool execution blocked: no","status":"error"},` +
		`{"id":"<uuid>#1-0","type":"tool_call","content":"complete_task","displayName":"Complete Task","description":"Completing task and submitting results.","args":"{\"result\":{\"response\":\"child answer\"}}","status":"completed"}],` +
		`"state":"completed","result":"{\n  \"response\": \"child answer\"\n}","terminateReason":"GOAL"}`
	if got != want {
		t.Errorf("returnDisplay =\n%s\nwant\n%s", got, want)
	}

	missing, _ := json.Marshal(subagent.Value{AgentID: id, Type: "generalist", Answer: "Agent stopped calling tools but did not call 'complete_task'.",
		Reason: "ERROR_NO_COMPLETE_TASK_CALL"})
	r, ok = agentResponse("invoke_agent", missing, "x")
	var d struct {
		RecentActivity  []struct{ Type, Content, Status string } `json:"recentActivity"`
		TerminateReason string                                   `json:"terminateReason"`
	}
	if !ok || json.Unmarshal(r.ReturnDisplay, &d) != nil || len(d.RecentActivity) != 5 || d.TerminateReason != "ERROR_NO_COMPLETE_TASK_CALL" ||
		d.RecentActivity[1].Status != "running" || d.RecentActivity[4].Content != "Error: Agent stopped calling tools but did not call 'complete_task'." {
		t.Errorf("a child without complete_task: %s", r.ReturnDisplay)
	}

	if _, ok := agentResponse("run_shell_command", value, "x"); ok {
		t.Error("another tool's response is the agent's")
	}
	plain, _ := json.Marshal(subagent.Value{AgentID: "a1", Answer: "hi"})
	if _, ok := agentResponse("invoke_agent", plain, "x"); ok {
		t.Error("a value without a termination reason is rendered as progress")
	}
}
