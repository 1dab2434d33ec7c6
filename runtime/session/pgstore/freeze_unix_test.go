//go:build unix

package pgstore

import (
	"os"
	"syscall"
	"testing"
)

// freeze stops p (SIGSTOP): a hung or partitioned writer.
func freeze(t *testing.T, p *os.Process) {
	t.Helper()
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
}

// thaw lets a frozen p run again.
func thaw(p *os.Process) { _ = p.Signal(syscall.SIGCONT) }
