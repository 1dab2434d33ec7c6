package cli

import (
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
)

// payloadAt names, per extension point, the event whose payload fireEvent builds there
// (its input fields are common to the dialects: tool_name, tool_input, prompt, source,
// stop_hook_active, ...). A dialect's own event name (Gemini's BeforeTool) is fired
// through the payload of its table row's point.
var payloadAt = map[string]string{
	dsh.SessionStartEventName:   "SessionStart",
	dsh.PreStepEventName:        "UserPromptSubmit",
	dsh.PreToolEventName:        "PreToolUse",
	dsh.PostToolEventName:       "PostToolUse",
	dsh.TurnStoppingEventName:   "Stop",
	dsh.ApprovalAnswerEventName: "PermissionRequest",
	dsh.ApprovalPromptEventName: "Notification",
}

// payloadEvent is the event whose payload dsh hooks run builds for ev: ev's own when
// fireEvent builds one for it, else the one of its extension point; ev's own (which
// fireEvent reports as not supported) for a point it does not drive, such as the model
// call's.
func payloadEvent(ev hookmap.Event) string {
	if _, own := built[ev.Name]; own {
		return ev.Name
	}
	if name, ok := payloadAt[ev.Point]; ok {
		return name
	}
	return ev.Name
}

// built are the events fireEvent builds a payload for.
var built = map[string]struct{}{"SessionStart": {}, "UserPromptSubmit": {}, "PreToolUse": {}, "PostToolUse": {},
	"PostToolUseFailure": {}, "PermissionRequest": {}, "Notification": {}, "Stop": {}}
