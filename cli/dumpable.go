package cli

import "github.com/dshkit/dsh/runtime/sandbox"

// hideSession makes dsh's process non-dumpable (hideProcess) for a session whose Bash
// runs with --sandbox mode, unless that sandbox confines Bash: a confined Bash runs in its
// own PID namespace and does not see dsh's process at all, while a non-dumpable dsh could
// not start it (the kernel lets an unprivileged user write a new user namespace's uid_map
// only from a dumpable process). Hooks and MCP servers, which the sandbox does not confine,
// can then read dsh's /proc/<pid>/environ (docs/decisions/0020-non-dumpable.md).
func hideSession(mode string) error {
	if m, err := sandbox.ParseMode(mode); err == nil && m != sandbox.DangerFullAccess {
		return nil
	}
	return hideProcess()
}
