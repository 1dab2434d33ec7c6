package claudecode

import (
	"encoding/json"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/subagent"
)

// TestAgentToolResponse renders the agent tool's value as Claude Code 2.1.328's PostToolUse
// tool_response, byte for byte as the engine sent it (differential cases
// subagent/foreground, subagent/two and subagent/background, the run time and ids
// aside).
func TestAgentToolResponse(t *testing.T) {
	zero := 0
	usage := &dsh.Usage{InputTokens: 10, OutputTokens: 5, CacheReadTokens: &zero, CacheWriteTokens: &zero}
	const engineUsage = `"usage":{"output_tokens_details":{"thinking_tokens":0},"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":5,"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"service_tier":"standard","cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"inference_geo":"","iterations":[],"speed":"standard","fallback_credit":null}`
	for _, tc := range []struct {
		name  string
		value subagent.Value
		want  string
	}{
		{"foreground, a tool used", subagent.Value{AgentID: "ab81d2b9977a92f5c", Type: "general-purpose", Answer: "child answer",
			ToolsUsed: []string{"Bash"}, ToolUses: 1, Tokens: 15, DurationMS: 4293, Task: "CHILD-A: say hi", Model: "claude-sonnet-4-5",
			Usage: usage, ToolStats: &subagent.ToolStats{Bash: 1}},
			`{"status":"completed","prompt":"CHILD-A: say hi","agentId":"ab81d2b9977a92f5c","agentType":"general-purpose","toolsUsed":["Bash"],"harnessNoteCount":1,"harnessTailCount":0,"harnessSectionHash":"7d087e1088039e0e","content":[{"type":"text","text":"<tools-used-before-summary>Bash</tools-used-before-summary>\n"},{"type":"text","text":"child answer"}],"resolvedModel":"claude-sonnet-4-5","totalDurationMs":4293,"totalTokens":15,"totalToolUseCount":1,` +
				engineUsage + `,"toolStats":{"readCount":0,"searchCount":0,"bashCount":1,"editFileCount":0,"linesAdded":0,"linesRemoved":0,"otherToolCount":0},"canContinueAgent":true}`},
		{"foreground, no tool", subagent.Value{AgentID: "a845b857778c380f7", Type: "general-purpose", Answer: "child b answer",
			Tokens: 15, DurationMS: 1449, Task: "CHILD-B: say bye", Model: "claude-sonnet-4-5", Usage: usage},
			`{"status":"completed","prompt":"CHILD-B: say bye","agentId":"a845b857778c380f7","agentType":"general-purpose","harnessNoteCount":0,"harnessTailCount":0,"harnessSectionHash":"01e77aaae674ff4a","content":[{"type":"text","text":"child b answer"}],"resolvedModel":"claude-sonnet-4-5","totalDurationMs":1449,"totalTokens":15,"totalToolUseCount":0,` +
				engineUsage + `,"canContinueAgent":true}`},
		{"background", subagent.Value{AgentID: "a0b897d2885da1870", Type: "general-purpose", Async: true, Description: "probe",
			OutputFile: "/tmp/x/tasks/a0b897d2885da1870.output", Task: "CHILD-A: say hi", Model: "claude-sonnet-4-5"},
			`{"isAsync":true,"status":"async_launched","agentId":"a0b897d2885da1870","description":"probe","resolvedModel":"claude-sonnet-4-5","prompt":"CHILD-A: say hi","outputFile":"/tmp/x/tasks/a0b897d2885da1870.output","canReadOutputFile":true,"canContinueAgent":true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := json.Marshal(tc.value)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(ToolResponse("Agent", raw)); got != tc.want {
				t.Errorf("tool_response:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
	// Another tool's value is passed as it is.
	if got := string(ToolResponse("Read", json.RawMessage(`{"answer":"x"}`))); got != `{"answer":"x"}` {
		t.Errorf("Read's tool_response = %s", got)
	}
}
