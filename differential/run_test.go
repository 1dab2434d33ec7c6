//go:build unix

package differential

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunKillsProcessGroup: a run that times out (as when the suite's budget ends) is
// killed with everything it started, a background child included; so is a run that
// exits leaving a child behind.
func TestRunKillsProcessGroup(t *testing.T) {
	for name, script := range map[string]string{
		"timeout": `sleep 300 & echo $! > child.pid; sleep 300`,
		"exited":  `sleep 300 & echo $! > child.pid; exit 0`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			start := time.Now()
			r := run(context.Background(), dir, os.Environ(), 2*time.Second, "sh", "-c", script)
			if name == "timeout" && (r.Err == nil || time.Since(start) > 30*time.Second) {
				t.Fatalf("the run did not time out: %v after %v", r.Err, time.Since(start))
			}
			b, err := os.ReadFile(filepath.Join(dir, "child.pid"))
			if err != nil {
				t.Fatal(err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for syscall.Kill(pid, 0) == nil {
				if time.Now().After(deadline) {
					_ = syscall.Kill(pid, syscall.SIGKILL)
					t.Fatalf("the run's background child %d is still alive", pid)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}
