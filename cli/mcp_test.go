package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/session"
)

// toolResults returns the tool/result text and error flag of every call in a log.
func toolResults(t *testing.T, path string) map[string]struct {
	text    string
	isError bool
} {
	t.Helper()
	f, _, err := session.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lg, err := session.Open(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	defer lg.Close()
	out := map[string]struct {
		text    string
		isError bool
	}{}
	for e := range lg.Events() {
		d, err := e.Decode()
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := d.(dsh.ToolResultLogged); ok {
			for _, b := range r.Message.Content {
				if tr, ok := b.(dsh.ToolResultBlock); ok {
					var parts []string
					for _, c := range tr.Content {
						if tb, ok := c.(dsh.TextBlock); ok {
							parts = append(parts, tb.Text)
						}
					}
					out[tr.ToolCallID] = struct {
						text    string
						isError bool
					}{strings.Join(parts, "\n"), tr.IsError}
				}
			}
		}
	}
	return out
}

// TestRunMCPConfig: dsh run --mcp-config mounts the npm filesystem MCP server; the
// scripted model calls its tools; a Claude Code PreToolUse hook on mcp__.* denies one;
// a malformed server of the same file is a warning naming the file and field, and the
// valid server still starts; the project's .mcp.json loads only with --trust.
func TestRunMCPConfig(t *testing.T) {
	prefix := npmPackages(t)
	server := filepath.Join(prefix, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(ws, 0o755)
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("remember the milk\n"), 0o644)
	write := func(name string, v any) string {
		p := filepath.Join(dir, name)
		b, _ := json.Marshal(v)
		os.WriteFile(p, b, 0o644)
		return p
	}
	cfg := write("mcp.json", map[string]any{"mcpServers": map[string]any{
		"fs":     map[string]any{"command": node, "args": []string{server, ws}},
		"broken": map[string]any{"type": "http"},
	}})
	hooks := write("hooks.json", map[string]any{"hooks": map[string]any{"PreToolUse": []any{map[string]any{
		"matcher": "mcp__.*",
		"hooks":   []any{map[string]any{"type": "command", "command": `if grep -q write_file; then echo "MCP writes are off" >&2; exit 2; fi`}},
	}}}})
	script := write("script.json", map[string]any{"responses": []any{
		map[string]any{"toolCalls": []any{
			map[string]any{"id": "read", "name": "mcp__fs__read_text_file", "arguments": map[string]any{"path": filepath.Join(ws, "notes.txt")}},
			map[string]any{"id": "write", "name": "mcp__fs__write_file", "arguments": map[string]any{"path": filepath.Join(ws, "out.txt"), "content": "x"}},
			map[string]any{"id": "bad", "name": "mcp__fs__read_text_file", "arguments": map[string]any{"nope": 1}},
		}},
		map[string]any{"text": "done"},
	}})
	logPath := filepath.Join(dir, "run.jsonl")
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"run", "--model", "scripted:" + script, "--workspace", ws, "--log", logPath,
		"--hooks", hooks, "--mcp-config", cfg, "read the notes"}, nil, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), cfg+": mcpServers.broken.url: a http server needs a url") {
		t.Errorf("no warning naming the file and field:\n%s", stderr.String())
	}
	res := toolResults(t, logPath)
	if r := res["read"]; r.isError || !strings.Contains(r.text, "remember the milk") {
		t.Errorf("read: %+v", r)
	}
	if r := res["write"]; !r.isError || !strings.Contains(r.text, "MCP writes are off") {
		t.Errorf("write: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(ws, "out.txt")); err == nil {
		t.Error("the denied MCP write ran")
	}
	if r := res["bad"]; !r.isError || !strings.Contains(r.text, "invalid arguments") {
		t.Errorf("schema: %+v", r)
	}

	// The project's .mcp.json: skipped (with a warning) unless --trust.
	proj := filepath.Join(dir, "proj")
	os.MkdirAll(proj, 0o755)
	os.WriteFile(filepath.Join(proj, ".mcp.json"), mustJSON(map[string]any{"mcpServers": map[string]any{
		"pfs": map[string]any{"command": node, "args": []string{server, ws}}}}), 0o644)
	script2 := write("script2.json", map[string]any{"responses": []any{
		map[string]any{"toolCalls": []any{map[string]any{"id": "p", "name": "mcp__pfs__list_allowed_directories"}}},
		map[string]any{"text": "ok"},
	}})
	for _, trust := range []bool{false, true} {
		logPath := filepath.Join(dir, "proj.jsonl")
		os.Remove(logPath)
		args := []string{"run", "--model", "scripted:" + script2, "--workspace", ws, "--project-dir", proj, "--log", logPath}
		if trust {
			args = append(args, "--trust")
		}
		stderr.Reset()
		if code := Run(context.Background(), append(args, "go"), nil, &stdout, &stderr); code != 0 {
			t.Fatalf("trust=%v: exit %d\n%s", trust, code, stderr.String())
		}
		r := toolResults(t, logPath)["p"]
		warned := strings.Contains(stderr.String(), "project MCP servers not started: the project is not trusted (pass --trust)")
		switch {
		case !trust && (!r.isError || !warned):
			t.Errorf("untrusted project: result %+v, warned %v\n%s", r, warned, stderr.String())
		case trust && (r.isError || !strings.Contains(r.text, ws)):
			t.Errorf("trusted project: result %+v\n%s", r, stderr.String())
		}
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
