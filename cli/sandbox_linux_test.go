package cli

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSandboxBadInputsUnderDshRun runs the real dsh run, in each confining mode, with a
// scripted model whose Bash calls try every escape the sandbox must stop: writes outside
// the workspace (an absolute path, "..", a symlink made inside, a hard link to an outside
// file, /proc/self/root, /proc/<pid>/cwd), a write into .git, a TCP connection to
// 127.0.0.1 and a DNS lookup with the network off, a setuid binary, ptrace of dsh,
// unshare, a fork bomb and a process left running. The run ends normally (each refusal is
// the command's output), nothing outside changes, no connection arrives, and nothing is
// left running. (runtime/sandbox's tests check each one's words, through Sandbox.Start.)
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
	for _, mode := range []string{"read-only", "workspace-write"} {
		t.Run(mode, func(t *testing.T) {
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
			escapes := []string{
				`echo pwned > ` + secret,
				`echo pwned > ../outside/new`,
				`ln -s ` + out + ` link; echo pwned > link/new`,
				`ln ` + secret + ` hlink && echo pwned >> hlink`,
				`echo pwned > /proc/self/root` + secret,
				`echo pwned > /proc/$$/cwd/../outside/new`,
				`echo evil > .git/hooks/pre-commit`,
				`exec 3<>/dev/tcp/127.0.0.1/` + port + ` && echo connected`,
				`getent hosts example.com && echo resolved`,
				`cp "$(command -v id)" ./suid-id && chmod u+s ./suid-id && ./suid-id -u`,
				`timeout 5 strace -p $PPID 2>&1; exit 0`,
				`unshare -Urm sh -c 'umount -l / 2>/dev/null; echo pwned > ` + secret + `'`,
				`exec /bin/sh -c 'i=0; while [ $i -lt 1000 ]; do sleep 30 & i=$((i+1)); done; echo started $i'`,
				`setsid sleep ` + mark + ` >/dev/null 2>&1 < /dev/null & sleep 0.3; echo left`,
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
			if b, _ := os.ReadFile(secret); string(b) != "original\n" {
				t.Errorf("the secret outside is now %q", b)
			}
			if ents, _ := os.ReadDir(out); len(ents) != 1 {
				t.Errorf("the directory outside holds %d entries, want the secret alone", len(ents))
			}
			if _, err := os.Stat(filepath.Join(ws, ".git", "hooks", "pre-commit")); err == nil {
				t.Error("a git hook was written")
			}
			select {
			case <-connected:
				t.Error("a command connected to 127.0.0.1 with the network off")
			default:
			}
			log, _ := os.ReadFile(logFile)
			for _, bad := range []string{"connected", "resolved"} {
				if strings.Contains(string(log), `"text":"`+bad) {
					t.Errorf("the log holds %q: an escape succeeded", bad)
				}
			}
			if n := strings.Count(string(log), `"type":"tool/result"`); n != len(escapes) {
				t.Errorf("%d tool results, want %d", n, len(escapes))
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
