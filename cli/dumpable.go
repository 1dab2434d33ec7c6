package cli

import "github.com/dshkit/dsh/runtime/sandbox"

// hideSession makes dsh's process non-dumpable (hideProcess) at once for a session whose
// Bash runs with --sandbox mode, unless that sandbox confines Bash: a non-dumpable dsh
// could not start the sandbox's helper (the kernel lets an unprivileged user write a new
// user namespace's uid_map only from a dumpable process). dsh run then hides itself once
// the helper runs (runner.Config.Confined); dsh acp, which starts a helper per session,
// stays dumpable, so that its hooks and MCP servers, which the sandbox does not confine,
// can read its /proc/<pid>/environ (docs/decisions/0020-non-dumpable.md).
func hideSession(mode string) error {
	if m, err := sandbox.ParseMode(mode); err == nil && m != sandbox.DangerFullAccess {
		return nil
	}
	return hideProcess()
}
