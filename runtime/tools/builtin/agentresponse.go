package builtin

import "encoding/json"

// AgentHookResponse is the agent tool's value as an engine's hooks see it (Claude Code's
// PostToolUse tool_response): JSON templates rendered from the child's figures by
// runtime/subagent (Value.Wire, which lists the placeholders).
type AgentHookResponse struct {
	// Completed is the value of a foreground call whose child completed, Async that of a
	// call that started its child in the background.
	Completed json.RawMessage `json:"completed"`
	Async     json.RawMessage `json:"async,omitempty"`
	// ToolsUsedNote is the text block that leads the value's content when the child
	// called tools: {tools} their names, joined with ", ".
	ToolsUsedNote string `json:"toolsUsedNote,omitempty"`
}

// ToolKind is how one tool's calls count in a child's tool statistics: Kind "read",
// "search", "bash", "edit" or "none" (not counted; a tool with no row counts as other),
// and for an edit the input keys whose text's lines it adds and removes.
type ToolKind struct {
	Kind    string   `json:"kind"`
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
}
