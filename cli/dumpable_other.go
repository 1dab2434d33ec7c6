//go:build !linux

package cli

// hideProcess does nothing where PR_SET_DUMPABLE does not exist: there /proc/<pid>/environ
// is absent or readable only as the operating system allows.
func hideProcess() error { return nil }
