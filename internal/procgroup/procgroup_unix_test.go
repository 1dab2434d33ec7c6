//go:build unix

package procgroup

import (
	"bufio"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startWithGrandchild starts a shell that starts a long sleep in the background and
// prints its pid, and returns the group and the grandchild's pid.
func startWithGrandchild(t *testing.T) (*Group, *exec.Cmd, int) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", "sleep 300 & echo $!; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	g, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	return g, cmd, pid
}

// gone waits until pid no longer exists (or is a zombie nobody reaped: kill(0) then
// still succeeds, so a reaped or re-parented process is what we wait for).
func gone(pid int) bool {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

func TestKillEndsTheGrandchild(t *testing.T) {
	g, cmd, grandchild := startWithGrandchild(t)
	if g.Pid() != cmd.Process.Pid {
		t.Fatalf("Pid() = %d, want %d", g.Pid(), cmd.Process.Pid)
	}
	g.Kill()
	_ = cmd.Wait()
	if !gone(grandchild) {
		t.Fatalf("grandchild %d still runs after Kill", grandchild)
	}
	g.Kill() // a second Kill is harmless
}

func TestTerminateEndsTheGrandchild(t *testing.T) {
	g, cmd, grandchild := startWithGrandchild(t)
	g.Terminate()
	err := cmd.Wait()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		t.Fatalf("Wait after Terminate = %v, want the shell ended by a signal", err)
	}
	if !gone(grandchild) {
		t.Fatalf("grandchild %d still runs after Terminate", grandchild)
	}
}

func TestStartKeepsSysProcAttr(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "exit 0")
	attr := &syscall.SysProcAttr{}
	cmd.SysProcAttr = attr
	g, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Kill()
	if cmd.SysProcAttr != attr || !attr.Setpgid {
		t.Fatalf("SysProcAttr = %+v, want the caller's, with Setpgid set", cmd.SysProcAttr)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
}

func TestNilGroup(t *testing.T) {
	var g *Group
	g.Kill()
	g.Terminate()
	if g.Pid() != 0 {
		t.Fatal("nil group has a pid")
	}
}

func TestStartErrorRunsNothing(t *testing.T) {
	if g, err := Start(exec.Command("/nonexistent/dsh-procgroup")); err == nil || g != nil {
		t.Fatalf("Start = %v, %v; want an error and no group", g, err)
	}
}
