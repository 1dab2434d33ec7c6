package cli

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// hideProcess makes dsh's process non-dumpable (PR_SET_DUMPABLE 0) before a session
// starts any tool, hook or MCP server: /proc/<dsh>/environ, mem and maps then belong to
// root, so a command running as the user (a Bash call reading /proc/$PPID/environ) cannot
// read dsh's environment, the variables --env-deny keeps away from it and the API keys
// included, and no core dump holds them. A child is dumpable again once it executes its
// program, so Bash, hooks and MCP servers are as before. The sandbox's namespaces are made
// by a launcher, a fresh program, so a non-dumpable dsh still starts it
// (docs/decisions/0020-non-dumpable.md).
func hideProcess() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE, 0): %w", err)
	}
	return nil
}
