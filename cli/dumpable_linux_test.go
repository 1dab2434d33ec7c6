package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestEnvDenyNotInProc: a variable --env-deny keeps away from Bash cannot be read back
// through dsh's own process either: a Bash call reading /proc/$PPID/environ (and every
// /proc/<pid>/environ it can, dsh's by its pid among them) finds it refused, and the
// denied value is nowhere in the tool result the log records; a hook reading dsh's environ
// is refused too, with the sandbox on or off. Root reads any process's environ, so as root
// dsh runs as nobody (65534), as the user the finding is about.
func TestEnvDenyNotInProc(t *testing.T) {
	base, err := os.MkdirTemp("", "dsh-dumpable-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	bin := buildDsh(t, base)
	ws := filepath.Join(base, "ws")
	if err := os.Mkdir(ws, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{base, ws} {
		if err := os.Chmod(p, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(base, "model.json")
	const cmd = `cat /proc/$PPID/environ; echo; echo ppid=$PPID; ` +
		`for p in /proc/[0-9]*; do [ "$p" = /proc/$$ ] || tr '\0' '\n' < $p/environ; done 2>/dev/null; echo; cat /proc/self/environ | tr '\0' '\n' | grep KEEP_ME; grep CapEff /proc/self/status`
	model := `{"responses": [{"toolCalls": [{"id": "c1", "name": "Bash", "arguments": {"command": ` + quoteJSON(cmd) + `}}]}, {"text": "done"}]}`
	if err := os.WriteFile(script, []byte(model), 0o644); err != nil {
		t.Fatal(err)
	}
	// A hook, which no sandbox confines, reads dsh's environ too (its $PPID is dsh).
	hookOut := filepath.Join(ws, "hook.out")
	hooks := filepath.Join(base, "hooks.json")
	hookCmd := `cat /proc/$PPID/environ > ` + hookOut + ` 2>&1; exit 0`
	if err := os.WriteFile(hooks, []byte(`{"hooks":{"PostToolUse":[{"matcher":"","hooks":[{"type":"command","command":`+quoteJSON(hookCmd)+`}]}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// Unconfined, Bash sees dsh's process; confined (the default), Bash, in its own PID
	// namespace, does not, and dsh hides itself once the sandbox's helper runs.
	for _, mode := range []string{"danger-full-access", "workspace-write"} {
		t.Run(mode, func(t *testing.T) {
			logFile := filepath.Join(ws, mode+".jsonl")
			c := exec.Command(bin, "run", "--model", "scripted:"+script, "--workspace", ws, "--log", logFile, "--env-deny", "SECRET_TOKEN",
				"--hooks", hooks, "--sandbox", mode, "go")
			c.Dir = ws
			c.Env = append(os.Environ(), "SECRET_TOKEN=denied-value-7f3a", "KEEP_ME=kept-value", "HOME="+ws)
			if os.Getuid() == 0 {
				c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			}
			out, err := c.CombinedOutput()
			if err != nil {
				t.Fatalf("dsh run: %v\n%s", err, out)
			}
			data, err := os.ReadFile(logFile)
			if err != nil {
				t.Fatal(err)
			}
			log := string(data)
			if !strings.Contains(log, `"type":"tool/result"`) || !strings.Contains(log, "KEEP_ME=kept-value") || !strings.Contains(log, "ppid=") {
				t.Fatalf("the Bash call did not run as scripted; log:\n%s", log)
			}
			if mode == "danger-full-access" && !strings.Contains(log, "Permission denied") {
				t.Errorf("reading /proc/$PPID/environ was not refused; log:\n%s", log)
			}
			// A command keeps no capability, in the sandbox (whose helper needed
			// CAP_SYS_ADMIN for its mounts) or out of it.
			if os.Getuid() == 0 && !strings.Contains(log, `CapEff:\t0000000000000000`) {
				t.Errorf("the command has capabilities; log:\n%s", log)
			}
			if strings.Contains(log, "denied-value-7f3a") {
				t.Errorf("the denied value was read back through /proc; log:\n%s", log)
			}
			hook, err := os.ReadFile(hookOut)
			if err != nil {
				t.Fatalf("the hook did not run: %v", err)
			}
			if !strings.Contains(string(hook), "Permission denied") || strings.Contains(string(hook), "denied-value-7f3a") {
				t.Errorf("the hook read dsh's environ: %q", hook)
			}
		})
	}
}

// quoteJSON is s as a JSON string.
func quoteJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
