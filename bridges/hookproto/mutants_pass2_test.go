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
		out := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":` + tc.input + `}}`
		v := Decode(cc, event(t, cc, "PreToolUse"), exited(0, out, ""))
		if len(v.Notices) != tc.notices {
			t.Errorf("updatedInput %s: notices %q, want %d", tc.input, v.Notices, tc.notices)
		}
	}
}
