package ir

import "testing"

func TestGoName(t *testing.T) {
	for in, want := range map[string]string{
		"callId": "CallID", "session_id": "SessionID", "max-tokens": "MaxTokens",
		"durationMs": "DurationMS", "tool_use_id": "ToolUseID", "hookSpecificOutput": "HookSpecificOutput",
		"sourceEventSeqs": "SourceEventSeqs", "url": "URL", "kind": "Kind", "allowed-once": "AllowedOnce",
		"droppedMessageIds": "DroppedMessageIDs", "agent/pre-step": "AgentPreStep", "ok": "OK",
	} {
		if got := GoName(in); got != want {
			t.Errorf("GoName(%q) = %q, want %q", in, got, want)
		}
	}
}
