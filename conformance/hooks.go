package conformance

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	sc "github.com/dshkit/dsh/generated/conformance"
)

// hookFiles is where the harness writes a scenario's hooks: the scripts, the gate files
// they and the harness share, the configuration, and the session's workspace.
type hookFiles struct {
	root, scripts, gates, workspace string
}

// gateFile is the path of a gate's marker file with the suffix ("reached" or "open").
func (h *hookFiles) gateFile(name, suffix string) string {
	return filepath.Join(h.gates, hex.EncodeToString([]byte(name))+"."+suffix)
}

// hooks writes the scenario's hook scripts and configuration under dir and attaches them
// to the runtime; every gate a script reaches is watched, so that `settle` steps see it.
func (r *run) hooks(dir string, hk sc.Hooks) error {
	hf := &hookFiles{root: dir, scripts: filepath.Join(dir, "hooks"), gates: filepath.Join(dir, "gates"),
		workspace: filepath.Join(dir, "workspace")}
	for _, d := range []string{hf.scripts, hf.gates, hf.workspace} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	r.mu.Lock()
	r.hookFiles = hf
	r.mu.Unlock()

	events := map[string][]any{}
	gates := map[string]bool{}
	names := make([]string, 0, len(hk.Events))
	for ev := range hk.Events {
		names = append(names, ev)
	}
	sort.Strings(names)
	for _, ev := range names {
		groups := []any{}
		for _, g := range hk.Events[ev] {
			handlers := []any{}
			for _, s := range g.Hooks {
				path, err := hf.script(s)
				if err != nil {
					return err
				}
				h := map[string]any{"type": "command", "command": ". " + shellQuote(path)}
				if s.TimeoutSec != nil {
					h["timeout"] = *s.TimeoutSec
				}
				if s.Async != nil && *s.Async {
					h["async"] = true
				}
				if s.Gate != nil {
					gates[*s.Gate] = true
				}
				handlers = append(handlers, h)
			}
			group := map[string]any{"hooks": handlers}
			if g.Matcher != nil {
				group["matcher"] = *g.Matcher
			}
			groups = append(groups, group)
		}
		events[ev] = groups
	}
	data, err := json.MarshalIndent(map[string]any{"hooks": events}, "", "  ")
	if err != nil {
		return err
	}
	name := "settings.json"
	if hk.Dialect == sc.HooksDialectCodex {
		name = "hooks.json"
	}
	cfg := filepath.Join(dir, name)
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		return err
	}
	for g := range gates {
		go r.watchGate(g, hf.gateFile(g, "reached"))
	}
	return r.rt.AttachHooks(r.ctx, HookConfig{Dialect: string(hk.Dialect), ConfigPath: cfg, Workspace: hf.workspace,
		RevalidateAfterRewrite: hk.GetRevalidateAfterRewrite()})
}

// watchGate marks the gate reached once a hook created its marker file.
func (r *run) watchGate(name, marker string) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := os.Stat(marker); err == nil {
			r.arrive(name)
			return
		}
		select {
		case <-tick.C:
		case <-r.ctx.Done():
			return
		}
	}
}

// script writes the POSIX shell script of s (named after its content: identical scripts
// share one file) and returns its path. The handler's command sources it (`. path`), so
// that its exit and kill end the hook process itself.
func (h *hookFiles) script(s sc.HookScript) (string, error) {
	key, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(key)
	name := "h-" + hex.EncodeToString(sum[:8])
	path := filepath.Join(h.scripts, name+".sh")
	var b strings.Builder
	b.WriteString("# A conformance hook script (spec/conformance/schema.cue, #HookScript).\n")
	if s.StdinContains != nil {
		fmt.Fprintf(&b, "_in=$(cat)\ncase \"$_in\" in *%s*) ;; *) exit 0 ;; esac\n", shellQuote(*s.StdinContains))
	}
	if s.Times != nil {
		count := shellQuote(filepath.Join(h.scripts, name+".count"))
		fmt.Fprintf(&b, "_n=0\n[ -f %s ] && _n=$(cat %s)\n_n=$((_n + 1))\necho \"$_n\" > %s\n[ \"$_n\" -gt %d ] && exit 0\n",
			count, count, count, *s.Times)
	}
	if s.Gate != nil {
		fmt.Fprintf(&b, ": > %s\nwhile [ ! -e %s ]; do sleep 0.01; done\n",
			shellQuote(h.gateFile(*s.Gate, "reached")), shellQuote(h.gateFile(*s.Gate, "open")))
	}
	if s.DelayMS != nil && *s.DelayMS > 0 {
		fmt.Fprintf(&b, "sleep %s\n", strconv.FormatFloat(float64(*s.DelayMS)/1000, 'f', -1, 64))
	}
	if s.Stdout != nil {
		fmt.Fprintf(&b, "printf '%%s' %s\n", shellQuote(*s.Stdout))
	}
	if s.Stderr != nil {
		fmt.Fprintf(&b, "printf '%%s' %s >&2\n", shellQuote(*s.Stderr))
	}
	echo := "cat"
	if s.StdinContains != nil {
		echo = `printf '%s' "$_in"` // stdin was read into _in
	}
	switch s.EchoStdin {
	case sc.HookScriptEchoStdinStdout:
		b.WriteString(echo + "\n")
	case sc.HookScriptEchoStdinStderr:
		b.WriteString(echo + " >&2\n")
	}
	if s.Signal != "" {
		fmt.Fprintf(&b, "kill -s %s $$\n", s.Signal)
	}
	fmt.Fprintf(&b, "exit %d\n", s.Exit)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return "", err
	}
	return path, nil
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
