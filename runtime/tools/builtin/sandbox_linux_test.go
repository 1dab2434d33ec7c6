package builtin_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/sandbox"
	"github.com/dshkit/dsh/runtime/tools"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// sandboxed returns the built-in tools over a fresh workspace with Bash confined under
// mode, and the workspace. Where the kernel cannot sandbox it fails under CI=true and
// skips elsewhere, saying why.
func sandboxed(tb testing.TB, mode sandbox.Mode, o builtin.Options) (*tools.Runtime, string) {
	tb.Helper()
	rt, ws, _ := sandboxedWith(tb, mode, o)
	return rt, ws
}

// sandboxedWith is sandboxed, and returns the sandbox too.
func sandboxedWith(tb testing.TB, mode sandbox.Mode, o builtin.Options) (*tools.Runtime, string, *sandbox.Sandbox) {
	tb.Helper()
	ws := tb.TempDir()
	sb, err := sandbox.New(context.Background(), sandbox.Policy{Mode: mode, Workspace: ws})
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("the sandbox must run in CI: %v", err)
		}
		tb.Skipf("this system cannot sandbox: %v", err)
	}
	tb.Cleanup(sb.Close)
	o.Workspace, o.Sandbox = ws, sb
	reg := tools.NewRegistry()
	if _, err := builtin.Register(reg, o); err != nil {
		tb.Fatal(err)
	}
	return tools.New(reg, dsh.NewRegistry()), ws, sb
}

// A write the sandbox refuses is the command's output, in the shell's words, not a
// failed call; under Claude Code's style it is the engine's "Exit code N" failure.
func TestSandboxedBashRefusalIsOutput(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("original"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []sandbox.Mode{sandbox.ReadOnly, sandbox.WorkspaceWrite} {
		rt, _ := sandboxed(t, mode, builtin.Options{})
		r := run(t, rt, "Bash", `{"command":"echo pwned > `+secret+`"}`)
		if r.IsError() || !strings.Contains(text(r), "Read-only file system") || !strings.Contains(text(r), "[exit code 1]") {
			t.Errorf("%s: error %v, %q; want the shell's Read-only file system as output", mode, r.IsError(), text(r))
		}
		rt, _ = sandboxed(t, mode, builtin.Options{Style: builtin.StyleClaudeCode})
		r = run(t, rt, "Bash", `{"command":"echo pwned > `+secret+`"}`)
		if errCode(r) != builtin.CodeBashExit || !strings.Contains(text(r), "Read-only file system") {
			t.Errorf("%s, claude-code: code %q, %q", mode, errCode(r), text(r))
		}
	}
	if b, _ := os.ReadFile(secret); string(b) != "original" {
		t.Errorf("the file outside became %q", b)
	}
}

// Under workspace-write the workspace is writable but its .git is not.
func TestSandboxedBashWorkspaceWrite(t *testing.T) {
	rt, ws := sandboxed(t, sandbox.WorkspaceWrite, builtin.Options{})
	if err := os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := run(t, rt, "Bash", `{"command":"echo ok > a && cat a && echo evil > .git/hooks/pre-commit"}`)
	if got := text(r); !strings.HasPrefix(got, "ok\n") || !strings.Contains(got, "Read-only file system") {
		t.Errorf("Bash = %q", got)
	}
	if _, err := os.Stat(filepath.Join(ws, ".git", "hooks", "pre-commit")); err == nil {
		t.Error("a hook was planted")
	}
}

// A background process the command leaves behind is killed with the call, and so is a
// command that times out, whatever it started.
func TestSandboxedBashBackgroundIsKilled(t *testing.T) {
	rt, ws := sandboxed(t, sandbox.WorkspaceWrite, builtin.Options{})
	r := run(t, rt, "Bash", `{"command":"(sleep 1; echo late > late) > /dev/null 2>&1 & setsid sh -c 'sleep 1; echo late > late2' > /dev/null 2>&1 & echo started"}`)
	if text(r) != "started\n" {
		t.Fatalf("Bash = %q", text(r))
	}
	start := time.Now()
	r = run(t, rt, "Bash", `{"command":"(sleep 1; echo late > late3) & sleep 60","timeout":300}`)
	if errCode(r) != builtin.CodeBashTimeout || time.Since(start) > 10*time.Second {
		t.Fatalf("a timed-out command: code %q after %s", errCode(r), time.Since(start))
	}
	time.Sleep(1500 * time.Millisecond)
	for _, name := range []string{"late", "late2", "late3"} {
		if _, err := os.Stat(filepath.Join(ws, name)); err == nil {
			t.Errorf("a background process outlived the call and wrote %s", name)
		}
	}
}

// BenchmarkBashSandbox runs `echo hi` through Bash unconfined (danger-full-access) and
// under workspace-write with the network off, in the same run: the difference is what
// the sandbox adds to a call (the helper's re-execution, its namespaces and rules). It
// reports the children's CPU time per call too.
func BenchmarkBashSandbox(b *testing.B) {
	for _, mode := range []sandbox.Mode{sandbox.DangerFullAccess, sandbox.ReadOnly, sandbox.WorkspaceWrite} {
		b.Run(string(mode), func(b *testing.B) {
			var before, after syscall.Rusage
			_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &before)
			// The sandbox's helper starts here, once a session; its start is part of the
			// figures, spread over the calls.
			rt, _, sb := sandboxedWith(b, mode, builtin.Options{})
			in := tools.Input{CallID: "c1", Name: "Bash", Arguments: []byte(`{"command":"echo hi"}`)}
			for b.Loop() {
				if r := rt.Execute(context.Background(), in); text(r) != "hi\n" {
					b.Fatalf("Bash = %q", text(r))
				}
			}
			// Closing the sandbox waits for its helper, which waited for the commands:
			// their CPU time then counts among this process's children's.
			sb.Close()
			_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &after)
			// The children's CPU time (user and system) per call: less sensitive than the
			// wall time to other work on the machine.
			cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "child-cpu-us/op")
		})
	}
}
