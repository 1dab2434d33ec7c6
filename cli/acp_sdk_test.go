package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The npm packages the ACP tests run against, pinned.
const (
	acpSDKPackage  = "@agentclientprotocol/sdk@2.4.0"
	mcpFSPackage   = "@modelcontextprotocol/server-filesystem@2026.8.31"
	ajvPackage     = "ajv@8.17.1"
	npmCacheSubdir = "acp-test-sdk2.4.0-fs2026.8.31-ajv8.17.1"
)

// npmPackages installs the pinned packages once into $DSH_CACHE (or ./.cache at the
// module root) with npm install --prefix and returns the prefix. Outside CI a missing
// node or npm, or a failed install, skips the test; with CI set it fails it.
func npmPackages(t *testing.T) string {
	t.Helper()
	unavailable := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CI") != "" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format+" (skipped outside CI)", args...)
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			unavailable("%s is needed for the ACP SDK client test: %v", tool, err)
		}
	}
	cache := os.Getenv("DSH_CACHE")
	if cache == "" {
		root, err := filepath.Abs("..")
		if err != nil {
			t.Fatal(err)
		}
		cache = filepath.Join(root, ".cache")
	}
	prefix := filepath.Join(cache, npmCacheSubdir)
	marker := filepath.Join(prefix, ".installed")
	if _, err := os.Stat(marker); err == nil {
		return prefix
	}
	if err := os.MkdirAll(prefix, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("npm", "install", "--prefix", prefix, "--no-audit", "--no-fund", "--loglevel=error",
		acpSDKPackage, mcpFSPackage, ajvPackage)
	out, err := cmd.CombinedOutput()
	if err != nil {
		unavailable("npm install %s %s %s into %s failed: %v\n%s", acpSDKPackage, mcpFSPackage, ajvPackage, prefix, err, out)
	}
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return prefix
}

// buildDsh puts a dsh binary into dir: this test binary itself, which runs as dsh when
// its name is dsh (TestMain: testscript dispatches on the program's name, to the same
// Run as cmd/dsh's main) and can be re-executed as the sandbox's helper (which runs while
// the program is initialized). It is a hard link where the file system allows one, else
// a copy; linking cmd/dsh anew cost each test several seconds of CPU.
func buildDsh(t *testing.T, dir string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "dsh")
	if os.Link(exe, bin) == nil {
		return bin
	}
	src, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(bin, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestACPWithOfficialSDKClient drives dsh acp with a client written on the official ACP
// TypeScript SDK (testdata/acp/client.mjs): initialize, session/new with the npm MCP
// filesystem server mounted, a prompt whose scripted model calls Write (allowed), Bash
// (rejected), Bash (allowed), the server's read_text_file (read-only), write_file (denied
// by a Claude Code PreToolUse hook on mcp__.*) and create_directory (allowed); a cancel
// while a Bash call runs; a prompt after it; then a second dsh acp process that loads the
// session from its log and continues it. The client validates every frame of both
// processes, both directions, against the ACP JSON Schema shipped in the SDK.
func TestACPWithOfficialSDKClient(t *testing.T) {
	prefix := npmPackages(t)
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := buildDsh(t, dir)
	script1 := map[string]any{"responses": []any{
		map[string]any{"reasoning": "Let me plan this.", "text": "Writing files.", "toolCalls": []any{
			map[string]any{"id": "w1", "name": "Write", "arguments": map[string]any{"file_path": "hello.txt", "content": "hello\n"}},
			map[string]any{"id": "b1", "name": "Bash", "arguments": map[string]any{"command": "echo no > bash.txt"}},
			map[string]any{"id": "e1", "name": "Bash", "arguments": map[string]any{"command": "echo fenced"}},
		}},
		map[string]any{"toolCalls": []any{
			map[string]any{"id": "m1", "name": "mcp__fs__read_text_file", "arguments": map[string]any{"path": filepath.Join(work, "hello.txt")}},
			map[string]any{"id": "m2", "name": "mcp__fs__write_file", "arguments": map[string]any{"path": filepath.Join(work, "mcp.txt"), "content": "x"}},
			map[string]any{"id": "m3", "name": "mcp__fs__create_directory", "arguments": map[string]any{"path": filepath.Join(work, "made")}},
		}},
		map[string]any{"text": "Done."},
		map[string]any{"text": "Waiting.", "toolCalls": []any{
			map[string]any{"id": "s1", "name": "Bash", "arguments": map[string]any{"command": "sleep 30"}},
		}},
		map[string]any{"text": "Still here."},
	}}
	script2 := map[string]any{"responses": []any{map[string]any{"text": "Resumed and continued."}}}
	hooks := map[string]any{"hooks": map[string]any{"PreToolUse": []any{map[string]any{
		"matcher": "mcp__.*",
		"hooks": []any{map[string]any{"type": "command",
			"command": `if grep -q write_file; then echo "no MCP writes" >&2; exit 2; fi`}},
	}}}}
	writeJSON := func(name string, v any) string {
		p := filepath.Join(dir, name)
		b, _ := json.Marshal(v)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var report struct {
		CancelToResponse float64           `json:"cancelToResponseMs"`
		ReplayedUpdates  int               `json:"replayedUpdates"`
		Phases           map[string]phases `json:"phases"`
	}
	runClient(t, dir, prefix, "client.mjs", 90*time.Second, "", &report,
		"DSH_BIN="+bin, "WORK="+work, "SESSIONS="+filepath.Join(dir, "sessions"),
		"SCRIPT1="+writeJSON("script1.json", script1), "SCRIPT2="+writeJSON("script2.json", script2),
		"HOOKS="+writeJSON("hooks.json", hooks),
		"FS_SERVER="+filepath.Join(prefix, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"),
		"SCHEMA="+filepath.Join(prefix, "node_modules/@agentclientprotocol/sdk/schema/v1/schema.json"))
	for name, p := range report.Phases {
		if p.FramesFromAgent == 0 || p.FramesToAgent == 0 {
			t.Errorf("%s: no frames validated: %+v", name, p)
		}
		t.Logf("%s: %d frames from dsh and %d to it validated against the ACP schema", name, p.FramesFromAgent, p.FramesToAgent)
	}
	if report.ReplayedUpdates == 0 {
		t.Error("session/load replayed nothing")
	}
	t.Logf("session/cancel → cancelled response with Bash running: %.1f ms; load replayed %d updates", report.CancelToResponse, report.ReplayedUpdates)
}

type phases struct {
	FramesToAgent   int `json:"framesToAgent"`
	FramesFromAgent int `json:"framesFromAgent"`
}

// runClient runs the ACP client testdata/acp/NAME with node, from a directory of dir next
// to the node_modules of prefix (so that its imports resolve), with env added to the
// environment, and decodes the JSON report it prints last into report. It fails t when
// the client does not finish within limit (hint says what may have wedged it), when the
// report cannot be read, for every failure the report lists, and when the client failed
// without listing any.
func runClient(t *testing.T, dir, prefix, name string, limit time.Duration, hint string, report any, env ...string) {
	t.Helper()
	client, err := os.ReadFile(filepath.Join("testdata", "acp", name))
	if err != nil {
		t.Fatal(err)
	}
	clientDir := filepath.Join(dir, "client")
	os.MkdirAll(clientDir, 0o755)
	os.WriteFile(filepath.Join(clientDir, name), client, 0o644)
	if err := os.Symlink(filepath.Join(prefix, "node_modules"), filepath.Join(clientDir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(clientDir, name))
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the client did not finish%s\nstdout: %s\nstderr: %s", hint, stdout.String(), stderr.String())
	}
	var failures struct {
		Failures []string `json:"failures"`
	}
	last := bytes.TrimSpace(lastLine(stdout.Bytes()))
	if jerr := errors.Join(json.Unmarshal(last, &failures), json.Unmarshal(last, report)); jerr != nil {
		t.Fatalf("client: %v (%v)\nstdout: %s\nstderr: %s", err, jerr, stdout.String(), stderr.String())
	}
	for _, f := range failures.Failures {
		t.Error(f)
	}
	if err != nil && len(failures.Failures) == 0 {
		t.Errorf("client: %v\nstderr: %s", err, stderr.String())
	}
}

func lastLine(b []byte) []byte {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return []byte(lines[len(lines)-1])
}

// TestACPPreviewShowsNothingUnread drives dsh acp with a client on the official ACP SDK
// (testdata/acp/preview.mjs) that rejects every permission. The scripted model asks to
// Write a file outside the workspace, a link in the workspace to it, /proc/self/environ,
// /proc/self/pagemap and a FIFO in the workspace: nothing of the outside file or of dsh's
// environment may reach the client (the diff preview reads only what the Write tool
// itself could read), and the FIFO and pagemap must not wedge the prompt. Then loading a
// damaged log and a log that is a symbolic link must answer errors and change nothing.
func TestACPPreviewShowsNothingUnread(t *testing.T) {
	prefix := npmPackages(t)
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	sessions := filepath.Join(dir, "sessions")
	for _, d := range []string{work, sessions} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const secret, envSecret = "OUTSIDE-SECRET-7f3a9c", "ENV-SECRET-b81d44"
	outside := filepath.Join(dir, "outside.txt")
	if err := os.WriteFile(outside, []byte("password="+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(work, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := mkfifo(filepath.Join(work, "fifo")); errors.Is(err, errors.ErrUnsupported) {
		t.Skip("this platform has no FIFOs (the test is about Linux's /proc and FIFOs)")
	} else if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "inside.txt"), []byte("old inside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := buildDsh(t, dir)
	write := func(id, path string) map[string]any {
		return map[string]any{"id": id, "name": "Write", "arguments": map[string]any{"file_path": path, "content": "new\n"}}
	}
	script := map[string]any{"responses": []any{
		map[string]any{"toolCalls": []any{
			write("outside", outside), write("link", "link.txt"), write("environ", "/proc/self/environ"),
			write("pagemap", "/proc/self/pagemap"), write("fifo", "fifo"), write("inside", "inside.txt"),
		}},
		map[string]any{"text": "Done."},
	}}
	scriptPath := filepath.Join(dir, "script.json")
	b, _ := json.Marshal(script)
	if err := os.WriteFile(scriptPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var report struct {
		DamagedLoadError string `json:"damagedLoadError"`
		LinkLoadError    string `json:"linkLoadError"`
		FramesBytes      int    `json:"framesBytes"`
	}
	runClient(t, dir, prefix, "preview.mjs", 60*time.Second, " (a preview read wedged the prompt?)", &report,
		"DSH_BIN="+bin, "WORK="+work, "SESSIONS="+sessions, "SCRIPT="+scriptPath,
		"OUTSIDE="+outside, "SECRET="+secret, "ENV_SECRET="+envSecret)
	t.Logf("%d bytes from dsh; damaged load: %s; link load: %s", report.FramesBytes, report.DamagedLoadError, report.LinkLoadError)
}
