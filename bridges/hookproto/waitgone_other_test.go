//go:build !unix

package hookproto

import (
	"os"
	"testing"
	"time"
)

// waitGone fails the test unless process pid has exited within two seconds (where the
// process can no longer be found).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		p, err := os.FindProcess(pid)
		if err != nil {
			return
		}
		_ = p.Release()
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("process %d still running", pid)
}
