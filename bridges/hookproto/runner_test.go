package hookproto

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
)

// script writes an executable /bin/sh script to a fresh temporary directory and returns
// its path.
func script(t testing.TB, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "hook.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// sh is a Claude Code style shell-form command running the script at path.
func sh(path string) Command {
	return Command{Shell: posixShell, Command: path}
}

func exitCode(r Result) string {
	if r.ExitCode == nil {
		return "none"
	}
	return strconv.Itoa(*r.ExitCode)
}

// pollPID waits up to a second for path to hold a pid.
func pollPID(path string) (int, bool) {
	for range 100 {
		b, err := os.ReadFile(path)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil {
			return pid, true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return 0, false
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	pid, ok := pollPID(path)
	if !ok {
		t.Fatalf("no pid in %s", path)
	}
	return pid
}

func TestRunExitCodes(t *testing.T) {
	ctx := context.Background()
	for _, code := range []int{0, 1, 2, 3} {
		t.Run("exit"+strconv.Itoa(code), func(t *testing.T) {
			r := Run(ctx, sh(script(t, "echo out; echo err >&2; exit "+strconv.Itoa(code))))
			if got := exitCode(r); got != strconv.Itoa(code) {
				t.Fatalf("exit code = %s, want %d (%+v)", got, code, r)
			}
			if string(r.Stdout) != "out\n" || string(r.Stderr) != "err\n" {
				t.Errorf("stdout %q stderr %q", r.Stdout, r.Stderr)
			}
			if r.SpawnErr != nil || r.Err != nil || r.TimedOut || r.Cancelled || r.Orphaned {
				t.Errorf("unexpected flags: %+v", r)
			}
			if _, settled := ProcessOutcome(r); settled {
				t.Errorf("ProcessOutcome settled a plain exit")
			}
		})
	}
	// Scenario 21: a missing script under sh is exit 127, an ordinary exit code.
	t.Run("missing-script-127", func(t *testing.T) {
		r := Run(ctx, sh("/nonexistent/hook.sh"))
		if exitCode(r) != "127" || r.SpawnErr != nil {
			t.Fatalf("got %+v, want exit 127 and no spawn error", r)
		}
		if !strings.Contains(string(r.Stderr), "nonexistent") {
			t.Errorf("stderr %q", r.Stderr)
		}
	})
}

func TestRunStdoutJSONAndStdin(t *testing.T) {
	hook := script(t, `read -r line; printf '{"decision":"block","reason":"%s"}\n' "$line"`)
	r := Run(context.Background(), Command{Shell: posixShell, Command: hook, Stdin: []byte("no way\n")})
	if want := `{"decision":"block","reason":"no way"}` + "\n"; string(r.Stdout) != want || exitCode(r) != "0" {
		t.Fatalf("stdout %q exit %s, want %q exit 0", r.Stdout, exitCode(r), want)
	}
}

func TestRunSpawnErrors(t *testing.T) {
	ctx := context.Background()
	tests := map[string]Command{
		"missing-shell": {Shell: []string{"/nonexistent/sh", "-c"}, Command: "true"},
		"missing-exec":  {Command: "/nonexistent/prog", Args: []string{}},
		"bad-workdir":   {Command: "true", Dir: "/nonexistent/dir"}, // scenario 28
	}
	for name, c := range tests {
		t.Run(name, func(t *testing.T) {
			r := Run(ctx, c)
			if r.SpawnErr == nil || r.ExitCode != nil {
				t.Fatalf("got %+v, want a spawn error and no exit code", r)
			}
			if o, ok := ProcessOutcome(r); !ok || o != dsh.HookOutcomeError {
				t.Errorf("ProcessOutcome = %q, %v", o, ok)
			}
		})
	}
}

func TestRunSignalDeath(t *testing.T) {
	r := Run(context.Background(), Command{Command: "/bin/sh", Args: []string{"-c", "kill -9 $$"}})
	if r.ExitCode != nil || r.Signal != syscall.SIGKILL {
		t.Fatalf("got exit %s signal %v, want no exit code and SIGKILL", exitCode(r), r.Signal)
	}
	if o, _ := ProcessOutcome(r); o != dsh.HookOutcomeError {
		t.Errorf("ProcessOutcome = %q, want error", o)
	}
}

func TestRunHugeOutputIsCapped(t *testing.T) {
	// 10 MB on stdout, 40 MB on stderr: what is kept (and allocated) must not grow with it.
	hook := script(t, "head -c 10485760 /dev/zero; head -c 41943040 /dev/zero >&2")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := Run(context.Background(), sh(hook))
	runtime.ReadMemStats(&after)
	if exitCode(r) != "0" {
		t.Fatalf("exit %s: %+v", exitCode(r), r.SpawnErr)
	}
	if len(r.Stdout) != DefaultOutputCap || !r.StdoutOverCap {
		t.Errorf("stdout %d bytes over=%v, want %d and over", len(r.Stdout), r.StdoutOverCap, DefaultOutputCap)
	}
	if len(r.Stderr) != DefaultOutputCap || !r.StderrOverCap {
		t.Errorf("stderr %d bytes over=%v, want %d and over", len(r.Stderr), r.StderrOverCap, DefaultOutputCap)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("allocated %d bytes for 50 MB of output; memory is not bounded", alloc)
	}
	if !r.StdoutLost || !r.StderrLost {
		t.Errorf("lost = %v, %v; want true, true (zero bytes are not white space)", r.StdoutLost, r.StderrLost)
	}
	if _, settled := ProcessOutcome(r); settled {
		t.Errorf("over-cap output settled the outcome; Decode decides it")
	}

	// Only white space past the cap: over, nothing lost.
	spaces := sh(script(t, `printf '{"decision":"block"}'; head -c 2000000 /dev/zero | tr '\0' ' '; printf '\n\t\r\n'`))
	if r := Run(context.Background(), spaces); !r.StdoutOverCap || r.StdoutLost || !strings.HasPrefix(string(r.Stdout), `{"decision":"block"}`) {
		t.Errorf("trailing spaces: over=%v lost=%v", r.StdoutOverCap, r.StdoutLost)
	}

	small := sh(script(t, "echo 0123456789abcdef"))
	small.MaxStdout = 10
	if r := Run(context.Background(), small); string(r.Stdout) != "0123456789" || !r.StdoutOverCap {
		t.Errorf("MaxStdout 10: %q over=%v", r.Stdout, r.StdoutOverCap)
	}
}

func TestRunNonUTF8(t *testing.T) {
	r := Run(context.Background(), sh(script(t, `printf 'bad \377\376 bytes\n' >&2; printf '\377'; exit 2`)))
	if !bytes.Equal(r.Stderr, []byte("bad \xff\xfe bytes\n")) || !bytes.Equal(r.Stdout, []byte{0xff}) {
		t.Fatalf("raw bytes not kept: stdout %q stderr %q", r.Stdout, r.Stderr)
	}
	if got, want := StderrSummary(r.Stderr, 0), "bad \uFFFD bytes"; got != want {
		t.Errorf("StderrSummary = %q, want %q", got, want)
	}
}

func TestRunTimeout(t *testing.T) {
	// Long enough for the shell to print "started" on a loaded 2-core machine.
	const timeout = 1500 * time.Millisecond
	for name, body := range map[string]string{
		"sleeps":       "echo started; sleep 30",
		"ignores-term": "trap '' TERM; echo started; sleep 30", // needs the SIGKILL after KillGrace
	} {
		t.Run(name, func(t *testing.T) {
			c := sh(script(t, body))
			c.Timeout = timeout
			start := time.Now()
			r := Run(context.Background(), c)
			if el := time.Since(start); el < timeout || el > timeout+2*time.Second {
				t.Errorf("returned after %v, want within [%v, %v]", el, timeout, timeout+2*time.Second)
			}
			if !r.TimedOut || r.Cancelled || r.ExitCode != nil {
				t.Errorf("got %+v, want TimedOut and no exit code", r)
			}
			if string(r.Stdout) != "started\n" {
				t.Errorf("stdout %q", r.Stdout)
			}
			if o, _ := ProcessOutcome(r); o != dsh.HookOutcomeTimeout {
				t.Errorf("ProcessOutcome = %q, want timeout", o)
			}
		})
	}
}

// A background grandchild that keeps stdout open must not stall the run (#77078), and it
// is killed with the group once the hook has exited.
func TestRunOrphanGrandchildHoldingStdout(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	c := sh(script(t, "sleep 30 & echo $! > "+pidFile+"; echo done; exit 0"))
	c.Timeout = 10 * time.Second
	start := time.Now()
	r := Run(context.Background(), c)
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("returned after %v, want promptly (pipe grace %v)", el, DefaultPipeGrace)
	}
	if exitCode(r) != "0" || string(r.Stdout) != "done\n" || !r.Orphaned || r.TimedOut {
		t.Errorf("got exit %s stdout %q orphaned=%v timedOut=%v", exitCode(r), r.Stdout, r.Orphaned, r.TimedOut)
	}
	waitGone(t, readPID(t, pidFile))
}

// A hook that never reads stdin must not block the runner, even with far more input
// than a pipe buffer holds (#90585).
func TestRunStdinNotRead(t *testing.T) {
	in := bytes.Repeat([]byte("x"), 1<<20)
	c := sh(script(t, "sleep 0.1; exit 3"))
	c.Stdin = in
	c.Timeout = 10 * time.Second
	start := time.Now()
	r := Run(context.Background(), c)
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("returned after %v", el)
	}
	if exitCode(r) != "3" || r.Err != nil || r.Orphaned {
		t.Errorf("got exit %s err %v orphaned %v, want exit 3", exitCode(r), r.Err, r.Orphaned)
	}
	// The same input is delivered whole to a hook that reads it.
	c = sh(script(t, "wc -c"))
	c.Stdin = in
	if r := Run(context.Background(), c); strings.TrimSpace(string(r.Stdout)) != "1048576" {
		t.Errorf("wc -c read %q", r.Stdout)
	}
}

func TestRunCancellation(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { pollPID(pidFile); cancel() }()
	start := time.Now()
	r := Run(ctx, sh(script(t, "sleep 30 & echo $! > "+pidFile+"; wait")))
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("returned after %v", el)
	}
	if !r.Cancelled || r.TimedOut || r.ExitCode != nil {
		t.Errorf("got %+v, want Cancelled and no exit code", r)
	}
	waitGone(t, readPID(t, pidFile))

	// Already cancelled: nothing starts.
	if r := Run(ctx, sh("touch "+filepath.Join(dir, "ran"))); !r.Cancelled {
		t.Errorf("got %+v, want Cancelled", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Errorf("a command ran under a cancelled context")
	}
}

func TestRunEnvAndDir(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOOKPROTO_INHERITED", "from-harness")
	c := sh(script(t, `pwd; echo "$HOOKPROTO_EXTRA $HOOKPROTO_INHERITED"`))
	c.Dir = dir
	c.Env = []string{"HOOKPROTO_EXTRA=extra"}
	r := Run(context.Background(), c)
	want, _ := filepath.EvalSymlinks(dir)
	if got := string(r.Stdout); got != want+"\nextra from-harness\n" {
		t.Errorf("stdout %q, want dir %q and both variables", got, want)
	}
}

func TestRunExecFormArgs(t *testing.T) {
	hook := script(t, `printf '%s|%s|%s\n' "$#" "$1" "$2"`)
	r := Run(context.Background(), Command{Command: "/bin/sh", Args: []string{hook, "a b", "$HOME;x"}})
	if got := string(r.Stdout); got != "2|a b|$HOME;x\n" {
		t.Errorf("stdout %q: the args were not passed verbatim", got)
	}
}

// BenchmarkRun compares a trivial hook run through plain os/exec with the same run
// through Run (process group, stdin goroutine, caps, timers, group kill).
func BenchmarkRun(b *testing.B) {
	hook := script(b, `cat >/dev/null; echo '{"continue":true}'`)
	stdin := []byte(`{"hook_event_name":"PreToolUse"}`)
	b.Run("raw-exec", func(b *testing.B) {
		for b.Loop() {
			var out bytes.Buffer
			cmd := exec.Command("sh", "-c", hook)
			cmd.Stdin, cmd.Stdout = bytes.NewReader(stdin), &out
			if err := cmd.Run(); err != nil || out.Len() == 0 {
				b.Fatal(err)
			}
		}
	})
	b.Run("runner", func(b *testing.B) {
		ctx := context.Background()
		for b.Loop() {
			r := Run(ctx, Command{Shell: posixShell, Command: hook, Stdin: stdin, Timeout: time.Minute})
			if exitCode(r) != "0" || len(r.Stdout) == 0 {
				b.Fatalf("%+v", r)
			}
		}
	})
}

// A cancelled (or timed-out) run sends SIGTERM to the hook's whole process group, not
// only to its leader, so that every process of the hook can clean up before the SIGKILL:
// here a child of the hook traps TERM and reports it, and the hook waits for that child.
// Were only the leader signalled, the child would never see TERM and would be killed
// after KillGrace without reporting.
func TestRunTermReachesTheWholeGroup(t *testing.T) {
	ready := filepath.Join(t.TempDir(), "ready")
	// The child traps TERM, reports it on stdout and exits; the hook (the group leader,
	// hence the exec form) waits for its child, also once it got TERM itself.
	child := `trap 'echo child-term; exit 0' TERM; echo $$ > ` + ready + `; while :; do sleep 0.05; done`
	hook := "sh -c '" + strings.ReplaceAll(child, "'", `'\''`) + "' &\n" +
		"trap 'wait $!; exit 0' TERM\n" +
		"wait"
	c := Command{Command: "/bin/sh", Args: []string{script(t, hook)}}
	c.KillGrace = 5 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { pollPID(ready); cancel() }()
	start := time.Now()
	r := Run(ctx, c)
	if !r.Cancelled {
		t.Fatalf("got %+v, want Cancelled", r)
	}
	if got := string(r.Stdout); got != "child-term\n" {
		t.Errorf("stdout %q, want %q: the hook's child never saw SIGTERM", got, "child-term\n")
	}
	if el := time.Since(start); el >= c.KillGrace {
		t.Errorf("returned after %v: the group needed the SIGKILL", el)
	}
	waitGone(t, readPID(t, ready))
}

// Output that fills the cap exactly is not over it; one byte more is.
func TestRunOutputCapBoundary(t *testing.T) {
	for out, over := range map[string]bool{"abcde": false, "abcdef": true} {
		c := Command{Command: "printf " + out, MaxStdout: 5}
		r := Run(context.Background(), c)
		if string(r.Stdout) != out[:5] || r.StdoutOverCap != over {
			t.Errorf("printf %s under a 5-byte cap: stdout %q, over %v; want %q, %v", out, r.Stdout, r.StdoutOverCap, out[:5], over)
		}
	}
}

// posixShell is the argv prefix of the shell-form commands of these tests.
var posixShell = []string{"sh", "-c"}
