package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshkit/dsh/examples/rmguard"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runner"
)

// namedGuard is a compiled-in plugin with a Name: it denies every Write.
type namedGuard struct{}

func (namedGuard) Name() string { return "no-writes" }

func (namedGuard) Register(r *dsh.Registrar) func() {
	return r.Guard(func(ctx context.Context, p *dsh.GuardPayload) dsh.GuardVerdict {
		if p.Exec.Name == "Write" {
			return dsh.GuardDeny{Reason: "writes are off"}
		}
		return dsh.GuardAbstain{}
	})
}

// TestWithPlugins: the plugins of WithPlugins run in dsh run (and are named by Name() or
// their package), without --demo; without the option the same session runs unguarded.
func TestWithPlugins(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "s.json")
	os.WriteFile(script, []byte(`{"responses": [{"toolCalls": [
		{"id": "rm", "name": "Bash", "arguments": {"command": "rm -rf build"}},
		{"id": "w", "name": "Write", "arguments": {"file_path": "x.txt", "content": "x"}}]},
		{"text": "done"}]}`), 0o644)
	for _, plugins := range [][]Plugin{nil, {&rmguard.Plugin{}, namedGuard{}}} {
		ws := filepath.Join(dir, "ws")
		os.RemoveAll(ws)
		os.MkdirAll(filepath.Join(ws, "build"), 0o755)
		logPath := filepath.Join(dir, "s.jsonl")
		os.Remove(logPath)
		var stdout, stderr bytes.Buffer
		args := []string{"run", "--model", "scripted:" + script, "--workspace", ws, "--log", logPath, "go"}
		if code := Run(context.Background(), args, nil, &stdout, &stderr, WithPlugins(plugins...)); code != 0 {
			t.Fatalf("exit %d\n%s", code, &stderr)
		}
		res := toolResults(t, logPath)
		_, buildErr := os.Stat(filepath.Join(ws, "build"))
		_, writeErr := os.Stat(filepath.Join(ws, "x.txt"))
		guarded := plugins != nil
		if res["rm"].isError != guarded || (buildErr == nil) != guarded || res["w"].isError != guarded || (writeErr != nil) != guarded {
			t.Errorf("plugins %v: rm %+v (build kept %v), write %+v (written %v)", plugins, res["rm"], buildErr == nil, res["w"], writeErr == nil)
		}
		if guarded && (!strings.Contains(res["w"].text, "writes are off") || !strings.Contains(res["rm"].text, "rm -rf")) {
			t.Errorf("denials: %+v", res)
		}
	}
	if got := runner.PluginName(&rmguard.Plugin{}); got != "rmguard" {
		t.Errorf("PluginName(rmguard) = %q", got)
	}
	if got := runner.PluginName(namedGuard{}); got != "no-writes" {
		t.Errorf("PluginName(namedGuard) = %q", got)
	}
}
