//go:build unix

package mcp_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshkit/dsh/bridges/mcp"
)

func TestCloseReapsTheProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	set, errs := mcp.Start(context.Background(), []mcp.ServerConfig{fakeConfig(t, "g", "DSH_MCP_FAKE_CHILD="+pidFile)},
		mcp.Options{StopGrace: 200 * time.Millisecond})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b))
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("child not running before Close: %v", err)
	}
	set.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		// The grandchild's parent (the server) is gone, so init reaps it once killed.
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			break
		}
		if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && strings.Contains(string(stat), ") Z ") {
			break // a zombie: killed, waiting for its reaper
		}
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d still alive after Close", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
