package hookproto

import (
	"slices"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/hookmap"
)

// The diagnostic of a field that makes a hook failed quotes a short string value (up to 40
// characters) and writes "(set)" for a longer one; a rule that names the value it matches
// quotes that; a blocking rule without its reason names the reason field.
func TestDecodeDiagnosticsDescribeTheField(t *testing.T) {
	cx := &hookmap.Codex
	forty := strings.Repeat("é", 40)
	for _, c := range []struct {
		name, stdout, want string
	}{
		{"short string", `{"stopReason":"short"}`, `stopReason "short" is not valid at PreToolUse`},
		{"40 characters", `{"stopReason":"` + forty + `"}`, `stopReason "` + forty + `" is not valid at PreToolUse`},
		{"41 characters", `{"stopReason":"` + forty + `x"}`, `stopReason (set) is not valid at PreToolUse`},
		{"matched value", `{"suppressOutput":true}`, `suppressOutput true is not valid at PreToolUse`},
		{"reason field", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"}}`,
			`hookSpecificOutput.permissionDecision "deny" needs a non-empty hookSpecificOutput.permissionDecisionReason`},
	} {
		v := Decode(cx, event(t, cx, "PreToolUse"), exited(0, c.stdout, ""))
		if v.Outcome != "failed" || !slices.Contains(v.Diagnostics, c.want) {
			t.Errorf("%s: outcome %q, diagnostics %q; want failed with %q", c.name, v.Outcome, v.Diagnostics, c.want)
		}
	}
	// A table rule that needs a reason but names no field asks for "reason".
	ev := *event(t, cx, "Stop")
	ev.Rules = []hookmap.Rule{{When: "decision", Is: `"block"`, Then: "block", NeedsReason: true}}
	v := Decode(cx, &ev, exited(0, `{"decision":"block"}`, ""))
	if want := `decision "block" needs a non-empty reason`; v.Outcome != "failed" || !slices.Contains(v.Diagnostics, want) {
		t.Errorf("custom rule: outcome %q, diagnostics %q; want failed with %q", v.Outcome, v.Diagnostics, want)
	}
}
