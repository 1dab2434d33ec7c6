//go:build unix

package builtin_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// TestCodexSessionsEndWithRegister: Register's unregister func kills the commands
// exec_command left running (the session's end), instead of leaving them to outlive it.
func TestCodexSessionsEndWithRegister(t *testing.T) {
	reg := tools.NewRegistry()
	unregister, err := builtin.Register(reg, builtin.Options{Workspace: t.TempDir(), Style: builtin.StyleCodex})
	if err != nil {
		t.Fatal(err)
	}
	rt := tools.New(reg, dsh.NewRegistry())
	r := rt.Execute(context.Background(), tools.Input{CallID: "c1", Name: "exec_command", Arguments: json.RawMessage(`{"cmd":"echo $$; exec sleep 30","yield_time_ms":500}`)})
	status, _, _, out := chunk(t, text(r))
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if status != "running" || err != nil {
		t.Fatalf("%q", text(r))
	}
	unregister()
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d still runs after unregister", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
