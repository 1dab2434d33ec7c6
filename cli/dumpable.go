package cli

// hideSession makes dsh's process non-dumpable (hideProcess) before any session's tool,
// hook or MCP server runs, whatever the sandbox: the sandbox's helper is started through
// a launcher, a fresh program, so a non-dumpable dsh still starts it
// (docs/decisions/0020-non-dumpable.md).
func hideSession() error { return hideProcess() }
