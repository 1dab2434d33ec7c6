//go:build !unix

package pgstore

import (
	"os"
	"testing"
)

// freeze cannot stop a process where there is no SIGSTOP.
func freeze(t *testing.T, _ *os.Process) {
	t.Helper()
	t.Skip("this platform cannot stop a process (no SIGSTOP)")
}

// thaw does nothing.
func thaw(*os.Process) {}
