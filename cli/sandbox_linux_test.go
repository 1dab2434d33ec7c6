package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSandboxBadInputsUnderDshRun runs the real dsh run, in each mode, with a scripted
// model whose Bash calls try every escape the sandbox must stop: writes outside the
// workspace (an absolute path, "..", a symlink made inside, a hard link to an outside
// file, /proc/self/root, /proc/<pid>/cwd, and its mode and times), a write into .git, a
// TCP connection to 127.0.0.1 and a DNS lookup with the network off, a setuid binary,
// ptrace of dsh's parent (this test), unshare, a fork bomb and a process left running.
// In read-only and workspace-write the run ends normally (each refusal is the command's
// output), nothing outside changes, no connection arrives, the fork bomb stops, and
// nothing is left running. Under danger-full-access the escapes that are safe to let
// through (the writes, the mode and times, .git, the connection) succeed, so each check
// can fail. (runtime/sandbox's tests check each one's words, through Sandbox.Start.)
func TestSandboxBadInputsUnderDshRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs dsh")
	}
	base := t.TempDir()
	bin := buildDsh(t, base)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	connected := make(chan struct{}, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			connected <- struct{}{}
			c.Close()
		}
	}()
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	const mark = "4321.125" // the sleep a command leaves running
	_, strace := exec.LookPath("strace")
	if strace != nil {
		t.Logf("no strace: the ptrace escape is not tried (%v)", strace)
	}
	for _, mode := range []string{"read-only", "workspace-write", "danger-full-access"} {
		t.Run(mode, func(t *testing.T) {
			confined := mode != "danger-full-access"
			root := filepath.Join(base, mode)
			ws, out := filepath.Join(root, "ws"), filepath.Join(root, "outside")
			for _, d := range []string{filepath.Join(ws, ".git", "hooks"), out} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			secret := filepath.Join(out, "secret")
			if err := os.WriteFile(secret, []byte("original\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			before, err := os.Stat(secret)
			if err != nil {
				t.Fatal(err)
			}
			// The escapes that also run unconfined: what they change stays in this
			// test's directories and listener.
			escapes := []string{
				`echo pwned > ` + secret,
				`echo pwned > ../outside/new`,
				`ln -s ` + out + ` link; echo pwned > link/new`,
				`ln ` + secret + ` hlink && echo pwned >> hlink`,
				`echo pwned > /proc/self/root` + secret,
				`echo pwned > /proc/$$/cwd/../outside/new`,
				`chmod 666 ` + secret + `; touch -d 2001-01-01 ` + secret,
				`echo evil > .git/hooks/pre-commit`,
				`exec 3<>/dev/tcp/127.0.0.1/` + port + ` && echo connected`,
			}
			if confined {
				escapes = append(escapes,
					`getent hosts example.com && echo resolved`,
					`cp "$(command -v cat)" ./suid-cat && chmod u+s ./suid-cat && ./suid-cat /proc/self/status | sed -n 's/^NoNewPrivs:/suid-cat NoNewPrivs:/p'`,
					`unshare -Urm sh -c 'umount -l / 2>/dev/null; echo pwned > `+secret+`'`,
					`exec /bin/sh -c 'i=0; while [ $i -lt 1000 ]; do sleep 30 & i=$((i+1)); done; echo started $i'`,
					`setsid sleep `+mark+` >/dev/null 2>&1 < /dev/null & sleep 0.3; echo left`,
				)
				if strace == nil {
					escapes = append(escapes, `timeout 5 strace -e trace=none -p `+strconv.Itoa(os.Getpid())+` 2>&1; exit 0`)
				}
			}
			var calls []map[string]any
			for i, c := range escapes {
				calls = append(calls, map[string]any{"id": fmt.Sprintf("c%d", i), "name": "Bash", "arguments": map[string]string{"command": c}})
			}
			script, _ := json.Marshal(map[string]any{"responses": []any{map[string]any{"toolCalls": calls}, map[string]any{"text": "done"}}})
			model := filepath.Join(root, "model.json")
			if err := os.WriteFile(model, script, 0o644); err != nil {
				t.Fatal(err)
			}
			logFile := filepath.Join(root, "s.jsonl")
			cmd := exec.Command(bin, "run", "--model", "scripted:"+model, "--workspace", ws, "--log", logFile, "--sandbox", mode, "--output-format", "json", "go")
			cmd.Dir = ws
			cmd.WaitDelay = time.Minute
			res, err := cmd.Output()
			if err != nil || !strings.Contains(string(res), `"is_error":false`) {
				t.Fatalf("dsh run: %v\n%s", err, res)
			}
			logData, _ := os.ReadFile(logFile)
			log := string(logData)
			if n := strings.Count(log, `"type":"tool/result"`); n != len(escapes) {
				t.Errorf("%d tool results, want %d", n, len(escapes))
			}
			b, _ := os.ReadFile(secret)
			after, _ := os.Stat(secret)
			ents, _ := os.ReadDir(out)
			_, hookErr := os.Stat(filepath.Join(ws, ".git", "hooks", "pre-commit"))
			var conn bool
			select {
			case <-connected:
				conn = true
			default:
			}
			if !confined {
				// The same checks see every escape that was let through.
				if string(b) == "original\n" || after.Mode() == before.Mode() || after.ModTime().Equal(before.ModTime()) ||
					len(ents) == 1 || hookErr != nil || !conn || !strings.Contains(log, `"text":"connected`) {
					t.Errorf("unconfined, an escape failed: secret %q %v %v, %d entries outside, hook %v, connected %v",
						b, after.Mode(), after.ModTime(), len(ents), hookErr, conn)
				}
				return
			}
			if string(b) != "original\n" {
				t.Errorf("the secret outside is now %q", b)
			}
			if after.Mode() != before.Mode() || !after.ModTime().Equal(before.ModTime()) {
				t.Errorf("the secret outside is now %v, %v; was %v, %v", after.Mode(), after.ModTime(), before.Mode(), before.ModTime())
			}
			if len(ents) != 1 {
				t.Errorf("the directory outside holds %d entries, want the secret alone", len(ents))
			}
			if hookErr == nil {
				t.Error("a git hook was written")
			}
			if conn {
				t.Error("a command connected to 127.0.0.1 with the network off")
			}
			for _, bad := range []string{"connected", "resolved", "started 1000"} {
				if strings.Contains(log, `"text":"`+bad) {
					t.Errorf("the log holds %q: an escape succeeded", bad)
				}
			}
			// The setuid binary ran, where it could be made, with no_new_privs set.
			if mode == "workspace-write" && !strings.Contains(log, `suid-cat NoNewPrivs:\t1`) {
				t.Errorf("the setuid copy did not run with no_new_privs; log:\n%s", log)
			}
			if strace == nil && strings.Contains(log, " attached") {
				t.Errorf("strace attached to a process outside the sandbox; log:\n%s", log)
			}
			// Nothing the commands left is running once dsh has exited.
			procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
			for _, p := range procs {
				if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), mark) {
					t.Errorf("a process the commands left is still running: %s", p)
				}
			}
		})
	}
}

// TestSandboxRefusesWhereNamespacesAreRefused runs dsh run where the kernel refuses new
// user namespaces (a user namespace of the test's own whose max_user_namespaces is 0):
// read-only and workspace-write, the default, refuse to start, with one line that says why
// and names --sandbox danger-full-access, and run no command; danger-full-access runs.
func TestSandboxRefusesWhereNamespacesAreRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs dsh")
	}
	base := t.TempDir()
	bin := buildDsh(t, base)
	ws := filepath.Join(base, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(base, "model.json")
	if err := os.WriteFile(model, []byte(`{"responses": [
  {"toolCalls": [{"id": "c1", "name": "Bash", "arguments": {"command": "echo ran > marker"}}]},
  {"text": "done"}
]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// dsh run, in a user namespace that may hold no other.
	run := func(args ...string) (stderr string, code int) {
		cmd := exec.Command("/bin/sh", append([]string{"-c", `echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"`, "sh",
			bin, "run", "--model", "scripted:" + model, "--workspace", ws}, append(args, "go")...)...)
		uid, gid := os.Getuid(), os.Getgid()
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}}}
		var errBuf strings.Builder
		cmd.Stderr = &errBuf
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			if os.Getenv("CI") == "true" {
				t.Fatalf("starting dsh in a user namespace: %v", err)
			}
			t.Skipf("this system cannot start a user namespace: %v", err)
		}
		return errBuf.String(), cmd.ProcessState.ExitCode()
	}
	for _, args := range [][]string{nil, {"--sandbox", "read-only"}} {
		stderr, code := run(args...)
		if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "cannot run here") ||
			!strings.Contains(stderr, "user namespaces") || !strings.Contains(stderr, "choose --sandbox danger-full-access") {
			t.Errorf("dsh run %v: exit %d, stderr %q; want exit 1 and one line saying why, naming --sandbox danger-full-access", args, code, stderr)
		}
		if _, err := os.Stat(filepath.Join(ws, "marker")); err == nil {
			t.Fatalf("dsh run %v ran the command", args)
		}
	}
	if stderr, code := run("--sandbox", "danger-full-access"); code != 0 {
		t.Fatalf("danger-full-access: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "marker")); err != nil {
		t.Errorf("danger-full-access did not run the command: %v", err)
	}
}
