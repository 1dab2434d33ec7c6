package claudecode

import (
	"strings"
	"testing"
)

// Claude Code runs shell-form hooks under sh -c, whatever $SHELL says.
func TestRulesShell(t *testing.T) {
	if got := Rules.ShellArgv(func(string) string { return "/bin/zsh" }); strings.Join(got, " ") != "sh -c" {
		t.Errorf("shell %q", got)
	}
}
