package codex

import (
	"context"
	"strings"
	"testing"

	"github.com/dshkit/dsh/bridges/hookproto"
)

// Codex runs shell-form hooks under $SHELL -c, else /bin/sh -c.
func TestRulesShell(t *testing.T) {
	env := func(v string) func(string) string { return func(string) string { return v } }
	if got := Rules.ShellArgv(env("")); strings.Join(got, " ") != "/bin/sh -c" {
		t.Errorf("without SHELL: %q", got)
	}
	if got := Rules.ShellArgv(env("/bin/bash")); strings.Join(got, " ") != "/bin/bash -c" {
		t.Errorf("with SHELL: %q", got)
	}
	r := hookproto.Run(context.Background(), hookproto.Command{Shell: Rules.ShellArgv(env("")), Command: "echo login-shell"})
	if !strings.HasSuffix(string(r.Stdout), "login-shell\n") {
		t.Errorf("shell form: %q %v", r.Stdout, r.SpawnErr)
	}
}
