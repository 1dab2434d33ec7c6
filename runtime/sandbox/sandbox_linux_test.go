package sandbox_test

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshkit/dsh/internal/syncbuf"
	"github.com/dshkit/dsh/runtime/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}

// fixture is a workspace, a directory outside it holding a planted secret, and a sandbox.
type fixture struct {
	ws, out string
	sb      *sandbox.Sandbox
}

// newFixture makes a fixture under mode. Where the kernel cannot sandbox, it fails under
// CI=true and skips elsewhere, saying why.
func newFixture(t *testing.T, mode sandbox.Mode, p sandbox.Policy) fixture {
	t.Helper()
	root := t.TempDir()
	f := fixture{ws: filepath.Join(root, "ws"), out: filepath.Join(root, "outside")}
	for _, d := range []string{f.ws, f.out} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(f.out, "secret"), []byte("original\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p.Mode, p.Workspace = mode, f.ws
	sb, err := sandbox.New(context.Background(), p)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the sandbox must run in CI: %v", err)
		}
		t.Skipf("this system cannot sandbox: %v", err)
	}
	t.Cleanup(sb.Close)
	f.sb = sb
	return f
}

// run runs script with bash -c in the workspace, confined (Start: through the helper
// that serves the session's commands, as the Bash tool does), and returns its combined
// output and exit code.
func (f fixture) run(t *testing.T, script string, env ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = f.ws
	cmd.Env = append(os.Environ(), append([]string{"OUT=" + f.out, "WS=" + f.ws}, env...)...)
	cmd.WaitDelay = time.Second
	var out syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	p, err := f.sb.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Wait() }()
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		p.Kill()
		<-done
		t.Fatalf("%q timed out; output %q", script, out.String())
	}
	p.Kill()
	if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		t.Fatalf("%q: %v", script, err)
	}
	return out.String(), p.ExitCode()
}

// TestWrap: a command Wrap confines on its own (new namespaces and rules for it alone)
// writes the workspace but not outside it.
func TestWrap(t *testing.T) {
	f := newFixture(t, sandbox.WorkspaceWrite, sandbox.Policy{})
	cmd := exec.Command("bash", "-c", `echo in > inside; echo out > "$OUT/secret"`)
	cmd.Dir = f.ws
	cmd.Env = append(os.Environ(), "OUT="+f.out)
	if err := f.sb.Wrap(cmd); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 || !strings.Contains(string(out), "Read-only file system") {
		t.Errorf("a write outside under Wrap: %v, %q", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(f.out, "secret")); string(b) != "original\n" {
		t.Errorf("the secret outside is now %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws, "inside")); string(b) != "in\n" {
		t.Errorf("the workspace file is %q", b)
	}
}

// snapshot is every path beneath dir with its mode, modification time and content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		v := fi.Mode().String() + " " + fi.ModTime().String()
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(b)
		}
		m[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// unchanged fails the test when dir differs from before.
func unchanged(t *testing.T, dir string, before map[string]string) {
	t.Helper()
	after := snapshot(t, dir)
	for p, v := range after {
		if before[p] != v {
			t.Errorf("%s changed: %q, was %q", p, v, before[p])
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("%s was removed", p)
		}
	}
}

var confined = []sandbox.Mode{sandbox.ReadOnly, sandbox.WorkspaceWrite}

// Every way of writing outside the workspace is refused, with the shell's own error, and
// nothing outside changes.
func TestWritesOutsideTheWorkspaceAreRefused(t *testing.T) {
	for _, mode := range confined {
		t.Run(string(mode), func(t *testing.T) {
			f := newFixture(t, mode, sandbox.Policy{})
			before := snapshot(t, f.out)
			rel, err := filepath.Rel(f.ws, f.out)
			if err != nil {
				t.Fatal(err)
			}
			escapes := map[string]string{
				"absolute":      `echo pwned > "$OUT/secret"`,
				"absolute-new":  `echo pwned > "$OUT/new"`,
				"dotdot":        `echo pwned > ` + rel + `/new`,
				"symlink-dir":   `ln -s "$OUT" link; echo pwned > link/new`,
				"symlink-file":  `ln -s "$OUT/secret" slink; echo pwned > slink`,
				"hardlink":      `ln "$OUT/secret" hlink && echo pwned >> hlink`,
				"proc-root":     `echo pwned > "/proc/self/root$OUT/secret"`,
				"proc-cwd":      `echo pwned > /proc/self/cwd/` + rel + `/new`,
				"proc-pid-cwd":  `echo pwned > /proc/$$/cwd/` + rel + `/new`,
				"proc-1-root":   `echo pwned > "/proc/1/root$OUT/new"`,
				"truncate":      `truncate -s 0 "$OUT/secret"`,
				"rm":            `rm -f "$OUT/secret"`,
				"mv":            `mv "$OUT/secret" "$WS/stolen"`,
				"unshare":       `unshare -Urm sh -c 'umount -l / 2>/dev/null; echo pwned > "$OUT/secret"'`,
				"unshare-mount": `unshare -Urm sh -c 'mount -t tmpfs none "$OUT"' && echo pwned > "$OUT/new"`,
				"tmp-outside":   `echo pwned > /tmp/dsh-sandbox-escape-$$`,
				// Landlock does not control a file's metadata: the read-only mounts do.
				"chmod":     `chmod 666 "$OUT/secret"`,
				"chmod-dir": `chmod 777 "$OUT"`,
				"utimes":    `touch -d 2001-01-01 "$OUT/secret"`,
			}
			if _, err := exec.LookPath("python3"); err == nil {
				escapes["xattr"] = `python3 -c 'import os,sys; os.setxattr(sys.argv[1], "user.dsh", b"x")' "$OUT/secret"`
			}
			for name, script := range escapes {
				out, code := f.run(t, script)
				if code == 0 {
					t.Errorf("%s: %q exited 0: %q", name, script, out)
				}
				if name == "absolute" && !strings.Contains(out, "Read-only file system") {
					t.Errorf("%s: output %q, want the shell's Read-only file system", name, out)
				}
			}
			unchanged(t, f.out, before)
			// Reading outside is allowed in every mode, as in Codex.
			if out, code := f.run(t, `cat "$OUT/secret"`); code != 0 || out != "original\n" {
				t.Errorf("reading outside = %q, %d; want the secret", out, code)
			}
			out, code := f.run(t, `echo ok > inside && cat inside`)
			if mode == sandbox.WorkspaceWrite && (code != 0 || out != "ok\n") {
				t.Errorf("writing inside the workspace = %q, %d", out, code)
			}
			if mode == sandbox.ReadOnly && (code == 0 || !strings.Contains(out, "Read-only file system")) {
				t.Errorf("writing inside the workspace in read-only = %q, %d; want Read-only file system", out, code)
			}
		})
	}
}

// Under workspace-write the workspace's .git (and .dsh, .claude, .codex) stays read-only:
// no hook can be planted, nothing removed or renamed.
func TestReadOnlySubpaths(t *testing.T) {
	f := newFixture(t, sandbox.WorkspaceWrite, sandbox.Policy{})
	for _, d := range []string{".git/hooks", ".claude", ".codex", ".dsh"} {
		if err := os.MkdirAll(filepath.Join(f.ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(f.ws, ".git/config"), []byte("[core]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, f.ws)
	for _, script := range []string{
		`echo evil > .git/hooks/pre-commit`,
		`echo evil >> .git/config`,
		`rm -rf .git`,
		`mv .git moved`,
		`echo '{}' > .claude/settings.json`,
		`echo x > .codex/config.toml`,
		`echo x > .dsh/hooks.json`,
		`umount .git`,
	} {
		if out, code := f.run(t, script); code == 0 {
			t.Errorf("%q exited 0: %q", script, out)
		}
	}
	out, _ := f.run(t, `echo evil > .git/hooks/pre-commit`)
	if !strings.Contains(out, "Read-only file system") {
		t.Errorf("writing a hook: %q, want the shell's Read-only file system", out)
	}
	unchanged(t, f.ws, before)
}

// TestReadOnlySubpathMadeMidSession: a .git a command makes (git init) is writable by that
// command, as under Codex, and read-only for every later one: the helper serving the
// session's commands bind-mounts it read-only before the next command starts.
func TestReadOnlySubpathMadeMidSession(t *testing.T) {
	f := newFixture(t, sandbox.WorkspaceWrite, sandbox.Policy{})
	if out, code := f.run(t, `mkdir -p .git/hooks && echo made > .git/HEAD`); code != 0 {
		t.Fatalf("making .git: %d %q", code, out)
	}
	out, code := f.run(t, `echo evil > .git/hooks/pre-commit`)
	if code == 0 || !strings.Contains(out, "Read-only file system") {
		t.Errorf("writing a hook after .git was made: %d %q, want the shell's Read-only file system", code, out)
	}
	if _, err := os.Stat(filepath.Join(f.ws, ".git/hooks/pre-commit")); err == nil {
		t.Error("the hook was written")
	}
	if out, code := f.run(t, `echo still > notes`); code != 0 {
		t.Errorf("the workspace stays writable: %d %q", code, out)
	}
}

// A directory added with AddDirs is writable; the private TMPDIR is writable.
func TestAddDirsAndTmpdir(t *testing.T) {
	extra := t.TempDir()
	f := newFixture(t, sandbox.WorkspaceWrite, sandbox.Policy{AddDirs: []string{extra}})
	out, code := f.run(t, `echo a > "$EXTRA/a" && echo b > "$TMPDIR/b" && cat "$EXTRA/a" "$TMPDIR/b" && echo "$TMPDIR"`, "EXTRA="+extra)
	if code != 0 || !strings.HasPrefix(out, "a\nb\n") || !strings.Contains(out, f.sb.TempDir()) {
		t.Errorf("= %q, %d", out, code)
	}
}

// With the network off, no TCP connection reaches 127.0.0.1 and no name resolves; with
// it on, the connection is made.
func TestNetwork(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	connect := `exec 3<>/dev/tcp/127.0.0.1/` + port + ` && echo connected`
	for _, mode := range confined {
		t.Run(string(mode), func(t *testing.T) {
			f := newFixture(t, mode, sandbox.Policy{})
			out, code := f.run(t, connect)
			t.Logf("connecting with the network off: %q", out)
			if code == 0 || strings.Contains(out, "connected") {
				t.Errorf("connecting with the network off = %q, %d", out, code)
			}
			if !strings.Contains(out, "Permission denied") && !strings.Contains(out, "Network is unreachable") {
				t.Errorf("connecting: %q, want the shell's own error", out)
			}
			out, code = f.run(t, `unshare -Urn bash -c '`+connect+`'`)
			if code == 0 {
				t.Errorf("connecting from a nested namespace = %q, %d", out, code)
			}
			// The lookup runs only once no route is left, so that nothing leaves the machine.
			out, code = f.run(t, `[ -z "$(tail -n +2 /proc/net/route)" ] && [ ! -s /proc/net/ipv6_route ] || { echo has a route; exit 99; }
getent hosts example.com`)
			if code == 0 || code == 99 {
				t.Errorf("a DNS lookup with the network off = %q, %d", out, code)
			}
			select {
			case <-accepted:
				t.Error("the listener accepted a connection from the sandbox")
			case <-time.After(50 * time.Millisecond):
			}
			on := newFixture(t, mode, sandbox.Policy{Network: true})
			if out, code := on.run(t, connect); code != 0 || !strings.Contains(out, "connected") {
				t.Errorf("connecting with the network on = %q, %d", out, code)
			}
			<-accepted
		})
	}
}

// no_new_privs is set, so a setuid binary gains nothing; another process cannot be
// traced; nothing is mounted.
func TestPrivileges(t *testing.T) {
	f := newFixture(t, sandbox.WorkspaceWrite, sandbox.Policy{})
	out, code := f.run(t, `grep NoNewPrivs /proc/self/status`)
	if code != 0 || !strings.Contains(out, "1") {
		t.Errorf("NoNewPrivs = %q, %d", out, code)
	}
	uid := strconv.Itoa(os.Getuid())
	out, code = f.run(t, `cp "$(command -v id)" ./suid-id && chmod u+s ./suid-id && ./suid-id -u && ./suid-id -u -r`)
	if code != 0 || out != uid+"\n"+uid+"\n" {
		t.Errorf("a setuid copy of id = %q, %d; want uid %s twice", out, code, uid)
	}
	if _, err := exec.LookPath("strace"); err == nil {
		out, code = f.run(t, `timeout 5 strace -f -e trace=none -p `+strconv.Itoa(os.Getpid())+` 2>&1; exit 0`)
		if !strings.Contains(out, "Operation not permitted") && !strings.Contains(out, "No such process") {
			t.Errorf("tracing the test process = %q, %d", out, code)
		}
	}
	// The command sees its own processes only (where the kernel lets the helper mount a
	// /proc of its own).
	if out, code = f.run(t, `ls /proc | grep -c '^[0-9]'`); code != 0 || len(strings.TrimSpace(out)) > 1 {
		t.Errorf("processes in /proc = %q, %d; want the sandbox's few", out, code)
	}
	if out, code = f.run(t, `mount -t tmpfs none "$WS"`); code == 0 {
		t.Errorf("mount = %q, %d", out, code)
	}
}

// A fork bomb stops at the process limit and the call ends (run bounds it at 20 seconds);
// its processes go with it.
func TestForkBombIsBounded(t *testing.T) {
	for _, mode := range confined {
		t.Run(string(mode), func(t *testing.T) { forkBomb(t, mode) })
	}
}

func forkBomb(t *testing.T, mode sandbox.Mode) {
	f := newFixture(t, mode, sandbox.Policy{MaxProcesses: 301})
	// dash gives up at the first failed fork (bash retries for a long time).
	out, _ := f.run(t, `exec /bin/sh -c 'i=0; while [ $i -lt 1000 ]; do sleep 30 & i=$((i+1)); echo $i; done'`)
	lines := strings.Fields(out)
	n := 0
	for _, l := range lines {
		if v, err := strconv.Atoi(l); err == nil {
			n = v
		}
	}
	if n == 0 || n >= 400 {
		t.Errorf("started %d processes under a limit of 301; output ends %q", n, out[max(0, len(out)-200):])
	}
}

// A policy that cannot be enforced as given is an error, not a weaker sandbox.
func TestNewRejectsBadPolicies(t *testing.T) {
	ctx := context.Background()
	for name, p := range map[string]sandbox.Policy{
		"no workspace":      {Mode: sandbox.WorkspaceWrite},
		"missing workspace": {Workspace: filepath.Join(t.TempDir(), "missing")},
		"missing add-dir":   {Workspace: t.TempDir(), AddDirs: []string{filepath.Join(t.TempDir(), "missing")}},
		"file workspace":    {Workspace: "/dev/null"},
		"too few processes": {Workspace: t.TempDir(), MaxProcesses: 10},
		"unknown mode":      {Mode: "full", Workspace: t.TempDir()},
	} {
		if sb, err := sandbox.New(ctx, p); err == nil {
			sb.Close()
			t.Errorf("%s: New succeeded", name)
		}
	}
}

func TestParseMode(t *testing.T) {
	for _, m := range sandbox.Modes() {
		if got, err := sandbox.ParseMode(string(m)); err != nil || got != m {
			t.Errorf("ParseMode(%q) = %q, %v", m, got, err)
		}
	}
	if got, err := sandbox.ParseMode(""); err != nil || got != sandbox.WorkspaceWrite {
		t.Errorf(`ParseMode("") = %q, %v`, got, err)
	}
	_, err := sandbox.ParseMode("full")
	if err == nil || !strings.Contains(err.Error(), "workspace-write") {
		t.Errorf(`ParseMode("full") = %v`, err)
	}
}

// danger-full-access leaves the command as it is, on any system.
func TestDangerFullAccessWrapsNothing(t *testing.T) {
	sb, err := sandbox.New(context.Background(), sandbox.Policy{Mode: sandbox.DangerFullAccess})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("true")
	path := cmd.Path
	if err := sb.Wrap(cmd); err != nil || cmd.Path != path || cmd.SysProcAttr != nil {
		t.Errorf("Wrap changed the command: %v %q", err, cmd.Path)
	}
}

// BenchmarkStart attributes a confined command's start: /bin/true run directly, in the
// sandbox's namespaces without the helper, and through the helper (namespaces, rules, the
// program's re-execution).
func BenchmarkStart(b *testing.B) {
	root := b.TempDir()
	sb, err := sandbox.New(context.Background(), sandbox.Policy{Workspace: root})
	if err != nil {
		b.Skipf("this system cannot sandbox: %v", err)
	}
	defer sb.Close()
	for _, c := range []struct {
		name  string
		setup func(*exec.Cmd) error
	}{
		{"direct", func(*exec.Cmd) error { return nil }},
		{"namespaces", func(cmd *exec.Cmd) error {
			uid, gid := os.Getuid(), os.Getgid()
			cmd.SysProcAttr = &syscall.SysProcAttr{
				Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNS | syscall.CLONE_NEWNET,
				UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
				GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
			}
			return nil
		}},
		{"helper", sb.Wrap},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command("/bin/true")
				if err := c.setup(cmd); err != nil {
					b.Fatal(err)
				}
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestCommandEndEndsWhatItLeft: a process a command left running out of its process group
// (setsid) ends with the command, which is the first process of a PID namespace of its own,
// before Wait returns; so does one that a command killed with its group left.
func TestCommandEndEndsWhatItLeft(t *testing.T) {
	f := newFixture(t, sandbox.WorkspaceWrite, sandbox.Policy{})
	const mark = "987654.25"
	running := func() bool {
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), mark) {
				return true
			}
		}
		return false
	}
	// The command waits until the escapee has left its group and said so.
	out, code := f.run(t, `setsid sh -c 'echo up > up; exec sleep `+mark+`' >/dev/null 2>&1 < /dev/null & `+
		`while [ ! -e up ]; do sleep 0.05; done; echo started`)
	if code != 0 || !strings.Contains(out, "started") {
		t.Fatalf("starting the escapee: %d %q", code, out)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "up")); err != nil {
		t.Fatalf("the escapee never ran: %v", err)
	}
	if running() {
		t.Error("a process the command left out of its group is still running after the command ended")
	}
	f.sb.Close()
}
