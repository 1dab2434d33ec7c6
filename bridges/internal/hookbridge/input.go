package hookbridge

import (
	"encoding/json"
	"time"

	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/generated/dsh"
)

// Input is the dialect-neutral content of one event's stdin; the dialect encodes it as
// its wire input type.
type Input struct {
	// Event is the external event name.
	Event string
	// Session describes the session and turn.
	Session hookproto.Session
	// Turn is the 1-based turn number (0 outside a turn).
	Turn int
	// Source is the SessionStart source.
	Source string
	// Reason is the canonical SessionEnd reason (the dialect maps it to its own).
	Reason string
	// Trigger is the compaction's origin, "manual" or "auto" (PreCompact, PostCompact).
	Trigger string
	// Instruction is the instruction file loaded (InstructionsLoaded).
	Instruction *dsh.InstructionFile
	// CustomInstructions are the /compact instructions (PreCompact; nil for none).
	CustomInstructions *string
	// CompactSummary is the checkpoint text (PostCompact).
	CompactSummary string
	// Maintenance is the compaction attempt the event fires for (PreCompact,
	// PostCompact, SessionStart[compact]): the owner of its hook records.
	Maintenance string
	// Prompt is the UserPromptSubmit prompt text (UserPromptExpansion: as typed).
	Prompt string
	// ExpansionType, CommandName, CommandArgs and CommandSource describe the slash command
	// a prompt names (UserPromptExpansion).
	ExpansionType, CommandName, CommandArgs, CommandSource string
	// ToolName, ToolInput and ToolUseID describe the call (tool events).
	ToolName  string
	ToolInput json.RawMessage
	ToolUseID string
	// ToolResponse is the tool's result (PostToolUse).
	ToolResponse json.RawMessage
	// OriginalInput is the model's own arguments when a rewrite changed them (PostToolUse
	// dsh_original_tool_input); nil otherwise.
	OriginalInput json.RawMessage
	// OriginalName is, for a tail call, the name of the model's call it replaces (Gemini
	// original_request_name); "" otherwise.
	OriginalName string
	// StopHookActive is the Stop flag (SubagentStop's too).
	StopHookActive bool
	// Answer is a child's last message (SubagentStop's last_assistant_message; nil for
	// none).
	Answer *string
	// BackgroundTasks are the session's tasks running in the background (Stop and
	// SubagentStop background_tasks).
	BackgroundTasks []dsh.BackgroundTask
	// DurationMS is how long the call executed, in milliseconds (PostToolUse and
	// PostToolUseFailure; -1 when unknown).
	DurationMS int
	// Error is the failure's message (PostToolUseFailure).
	Error string
	// ErrorCode is the failure's machine-readable code, when it has one.
	ErrorCode string
	// IsInterrupt says the failed call was cancelled while it ran (PostToolUseFailure).
	IsInterrupt bool
	// NotificationType and Message describe a Notification.
	NotificationType, Message string
	// Resumed describes the context a resumed session starts from (SessionStart with
	// source resume; nil when the agent cannot say or the log held no model response).
	Resumed *Resumed
	// Request is the model request (a dialect's model-call events).
	Request *dsh.ModelRequest
	// Response is the model response (a dialect's model-call events).
	Response *dsh.ModelResponse
	// PromptResponse is the model's text of the turn (Gemini AfterAgent).
	PromptResponse string
	// ToolText is the text of the tool's result as the model reads it (PostToolUse).
	ToolText string
	// Failure is the failure that ended the turn (agent/error: Claude Code StopFailure).
	Failure *dsh.LLMFailure
	// Batch are the settled calls of a step's tool batch, in model order
	// (agent/post-batch: Claude Code PostToolBatch).
	Batch []BatchCall
}

// BatchCall is one settled call of a tool batch.
type BatchCall struct {
	// ToolName, ToolInput and ToolUseID describe the call (its effective arguments).
	ToolName  string
	ToolInput json.RawMessage
	ToolUseID string
	// ToolText is the text of its result as the model reads it.
	ToolText string
}

// Resumed is the context a resumed session starts from.
type Resumed struct {
	// SecondsSinceLastResponse is how long ago the last model response was logged,
	// rounded to the second.
	SecondsSinceLastResponse int
	// ContextTokens is the context's size (the last response's usage since the last
	// compaction, else the checkpoint's projected size, else an estimate).
	ContextTokens int
	// Measured is false right after a compaction: no response has cached the compacted
	// context yet.
	Measured bool
}

// resumeStater is what a resumed agent tells about its context (loop.Agent).
type resumeStater interface {
	ResumeStats() (lastResponse time.Time, tokens int, measured, ok bool)
}

// resumed returns what agent tells about the context it resumed from, at now; nil when
// it cannot say.
func resumed(agent dsh.Agent, now time.Time) *Resumed {
	rs, ok := agent.(resumeStater)
	if !ok {
		return nil
	}
	at, tokens, measured, ok := rs.ResumeStats()
	if !ok {
		return nil
	}
	secs := int(max(0, now.Sub(at).Round(time.Second)/time.Second))
	return &Resumed{SecondsSinceLastResponse: secs, ContextTokens: tokens, Measured: measured}
}
