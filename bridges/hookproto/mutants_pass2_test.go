package hookproto

import (
	"testing"

	"github.com/dshkit/dsh/generated/hookmap"
)

// The tests of this file pin rules that the second mutation pass over bridges/hookproto
// (docs/testing.md) showed no other test to check.

// A notice whose field is present but empty (an empty object) is not given: an empty value
// counts as unset, as null and "" do.
func TestNoticeOfAnEmptyObjectIsNotGiven(t *testing.T) {
	cc := &hookmap.ClaudeCode
	for _, tc := range []struct {
		input   string
		notices int
	}{
		{`{}`, 0},
		{`null`, 0},
		{`{"command":"ls"}`, 1},
	} {
		out := `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":` + tc.input + `}}}`
		v := Decode(cc, event(t, cc, "PermissionRequest"), exited(0, out, ""))
		if len(v.Notices) != tc.notices {
			t.Errorf("updatedInput %s: notices %q, want %d", tc.input, v.Notices, tc.notices)
		}
	}
}

// On exit 2, Claude Code's JSON stdout supplies the reason when it blocks (or denies) with
// one; an allow's reason does not replace stderr's.
func TestExit2JSONReasonOnlyFromABlockOrDeny(t *testing.T) {
	cc := &hookmap.ClaudeCode
	for _, tc := range []struct {
		event, stdout, want string
	}{
		{"UserPromptSubmit", `{"decision":"block","reason":"json block"}`, "json block"},
		{"PreToolUse", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"fine"}}`, "stderr says no"},
	} {
		v := Decode(cc, event(t, cc, tc.event), exited(2, tc.stdout, "stderr says no"))
		if v.Reason != tc.want {
			t.Errorf("%s exit 2 with %s: reason %q, want %q", tc.event, tc.stdout, v.Reason, tc.want)
		}
	}
}

// A hook runs in the fire's directory when it names one, else in the engine's.
func TestHookRunsInTheFiresDirElseTheEngines(t *testing.T) {
	e := &Engine{Dir: "/engine"}
	if got := e.command(Handler{Command: "true"}, Fire{}).Dir; got != "/engine" {
		t.Errorf("no fire dir: %q, want the engine's", got)
	}
	if got := e.command(Handler{Command: "true"}, Fire{Dir: "/fire"}).Dir; got != "/fire" {
		t.Errorf("fire dir: %q, want the fire's", got)
	}
}
