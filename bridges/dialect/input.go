package dialect

import (
	"encoding/json"
	"fmt"

	"github.com/dshkit/dsh/generated/dsh"
)

// Input is what dsh hooks run reads from one hook's stdin, whatever the dialect's wire
// shape: the fields the payload of the event's extension point is built from. Unknown
// fields are ignored (a real engine's input carries more).
type Input struct {
	// HookEventName is the event the input names ("" when it names none).
	HookEventName string `json:"hook_event_name"`
	// SessionID, TranscriptPath, CWD, Model and PermissionMode describe the session.
	SessionID      string  `json:"session_id"`
	TranscriptPath *string `json:"transcript_path"`
	CWD            string  `json:"cwd"`
	Model          string  `json:"model"`
	PermissionMode string  `json:"permission_mode"`
	// TurnID is the turn, a positive number when dsh wrote it.
	TurnID string `json:"turn_id"`
	// Source is the session-start source.
	Source string `json:"source"`
	// Prompt is the user's prompt (agent/pre-step); nil when the input has none.
	Prompt *string `json:"prompt"`
	// ToolName, ToolInput and ToolUseID describe the call of a tool event.
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	ToolUseID string          `json:"tool_use_id"`
	// ToolResponse is the tool's result value (tools/post-execute).
	ToolResponse json.RawMessage `json:"tool_response"`
	// ToolText is the result's text as the model reads it; "" means ToolResponse's (its
	// string, else its JSON).
	ToolText string `json:"-"`
	// Error is the message of a failed call (tools/post-execute); nil when the input
	// says the call did not fail.
	Error *string `json:"error"`
	// IsInterrupt says the failed call was cancelled while it ran.
	IsInterrupt bool `json:"is_interrupt"`
	// StopHookActive is the turn-stopping flag: a hook already continued the turn.
	StopHookActive bool `json:"stop_hook_active"`
	// AgentID and AgentType name the subagent an event fires in (Claude Code's agent_id
	// and agent_type); "" at the top.
	AgentID   string `json:"agent_id"`
	AgentType string `json:"agent_type"`
	// LastAssistantMessage is the model's last text of the turn.
	LastAssistantMessage *string `json:"last_assistant_message"`
	// Reason is the session-end reason, in the dialect's words.
	Reason string `json:"reason"`
	// Trigger is what started a compaction: "manual" or "auto".
	Trigger string `json:"trigger"`
	// CustomInstructions are the user's instructions of a manual compaction.
	CustomInstructions *string `json:"custom_instructions"`
	// CompactSummary is the summary a compaction committed.
	CompactSummary string `json:"compact_summary"`
	// ToolCalls are the settled calls of a step's tool batch (agent/post-batch).
	ToolCalls []BatchCall `json:"tool_calls"`
	// FilePath, MemoryType, LoadReason and ParentFilePath describe a loaded instruction
	// file (Claude Code's InstructionsLoaded).
	FilePath       string  `json:"file_path"`
	MemoryType     string  `json:"memory_type"`
	LoadReason     string  `json:"load_reason"`
	ParentFilePath *string `json:"parent_file_path"`
	// Request is the model request of a model-call event (agent/request,
	// agent/response); nil when the dialect's input carries none.
	Request *dsh.ModelRequest `json:"-"`
	// Response is the model response of agent/response; nil when the input carries none.
	Response *dsh.ModelResponse `json:"-"`
}

// BatchCall is one call of a batch input's tool_calls.
type BatchCall struct {
	// ToolName, ToolInput and ToolUseID describe the call.
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	ToolUseID string          `json:"tool_use_id"`
	// ToolResponse is its result (a string: the text the model reads).
	ToolResponse json.RawMessage `json:"tool_response"`
}

// ReadInput reads the fields of data that every dialect names alike (Claude Code's and
// Codex's stdin): what a Descriptor without its own ReadInput reads.
func ReadInput(data []byte) (Input, error) {
	var in Input
	if err := json.Unmarshal(data, &in); err != nil {
		return Input{}, fmt.Errorf("the input is not a hook input JSON object: %v", err)
	}
	return in, nil
}

// ReadInput reads one hook input of event in the dialect's shape: the Descriptor's own
// reader (ReadStdin), else the common one.
func (d *Descriptor) ReadInput(event string, data []byte) (Input, error) {
	if d.ReadStdin != nil {
		return d.ReadStdin(event, data)
	}
	return ReadInput(data)
}
