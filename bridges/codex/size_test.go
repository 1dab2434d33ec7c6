package codex_test

import (
	"strings"
	"testing"

	ht "github.com/dshkit/dsh/bridges/internal/hooktest"
	"github.com/dshkit/dsh/generated/dsh"
)

// A block is never lost to size: output over the runner's 1 MiB cap may lose
// its text, never a block. The claudecode bridge pins the same for its dialect.
func TestBlockSurvivesOutputCap(t *testing.T) {
	const deny = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"json says no"}}`
	tests := []struct {
		name, hook string
		want       dsh.PreToolDecisionKind
		reason     string // a substring of the reason
	}{
		{"exit 2 at the cap", `head -c 1048576 /dev/zero | tr '\0' x >&2; exit 2`, dsh.PreToolDenyKind, "xxx"},
		{"exit 2 one byte over", `head -c 1048577 /dev/zero | tr '\0' x >&2; exit 2`, dsh.PreToolDenyKind, "[truncated: the hook wrote more than 1048576 bytes to stderr"},
		{"exit 2 over the cap after blank stderr", `head -c 1048576 /dev/zero | tr '\0' ' ' >&2; echo late >&2; exit 2`, dsh.PreToolDenyKind, "[truncated"},
		{"deny JSON then 1.1 MB of spaces", `printf '%s' '` + deny + `'; head -c 1100000 /dev/zero | tr '\0' ' '`, dsh.PreToolDenyKind, "json says no"},
		{"deny JSON then huge stderr", `printf '%s' '` + deny + `'; head -c 2000000 /dev/zero | tr '\0' e >&2`, dsh.PreToolDenyKind, "json says no"},
		{"JSON over the cap: unreadable, fail closed", `printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"'; head -c 2000000 /dev/zero | tr '\0' r; printf '"}}'`, dsh.PreToolDenyKind, "could not be read"},
		{"plain stdout over the cap blocks nothing", `head -c 2000000 /dev/zero | tr '\0' p`, dsh.PreToolAllowKind, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := setup(t, ht.G("PreToolUse", "Bash", tt.hook))
			d, err := h.PreTool(ctx, h.Exec("Bash", `{"command":"rm -rf ~"}`))
			if err != nil {
				t.Fatal(err)
			}
			if d.Kind() != tt.want {
				t.Fatalf("decision %s, want %s", d.Kind(), tt.want)
			}
			if got := ht.Describe(d); !strings.Contains(got, tt.reason) {
				t.Errorf("decision %.200q, want a reason containing %q", got, tt.reason)
			}
		})
	}
}
