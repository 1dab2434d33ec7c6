//go:build unix

package builtin_test

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// A background process that keeps stdout open does not stall Bash past its pipe grace,
// and it is killed with the command's group.
func TestBashBackgroundProcessIsReaped(t *testing.T) {
	rt, _ := setup(t, builtin.Options{})
	start := time.Now()
	r := run(t, rt, "Bash", `{"command":"sleep 30 & echo $!"}`)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Bash waited %s for a background process", d)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(text(r)))
	if err != nil {
		t.Fatalf("Bash = %q", text(r))
	}
	deadline := time.Now().Add(2 * time.Second)
	for !gone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("background process %d outlived the command", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// gone reports whether process pid has exited (a zombie counts: PID 1 of a container may
// never reap it).
func gone(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	}
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}
