package builtin_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// setup returns a runtime with the built-in tools over a fresh workspace.
func setup(t *testing.T, o builtin.Options) (*tools.Runtime, string) {
	t.Helper()
	ws := t.TempDir()
	o.Workspace = ws
	reg := tools.NewRegistry()
	if _, err := builtin.Register(reg, o); err != nil {
		t.Fatal(err)
	}
	return tools.New(reg, dsh.NewRegistry()), ws
}

func run(t *testing.T, rt *tools.Runtime, name, args string) tools.Result {
	t.Helper()
	return rt.Execute(context.Background(), tools.Input{CallID: "c1", Name: name, Arguments: json.RawMessage(args)})
}

func text(r tools.Result) string {
	var b strings.Builder
	for _, c := range r.Content() {
		if tb, ok := c.(dsh.TextBlock); ok {
			b.WriteString(tb.Text)
		}
	}
	return b.String()
}

func errCode(r tools.Result) string {
	if f, ok := r.Outcome.(dsh.ToolFailure); ok && f.Error.Info != nil {
		return f.Error.Info.Code
	}
	return ""
}

func TestWriteReadEdit(t *testing.T) {
	rt, ws := setup(t, builtin.Options{})
	if r := run(t, rt, "Write", `{"file_path":"sub/a.txt","content":"one\ntwo\nthree\n"}`); r.IsError() {
		t.Fatalf("Write: %s", text(r))
	}
	data, err := os.ReadFile(filepath.Join(ws, "sub", "a.txt"))
	if err != nil || string(data) != "one\ntwo\nthree\n" {
		t.Fatalf("file = %q, %v", data, err)
	}
	r := run(t, rt, "Read", `{"file_path":"`+filepath.Join(ws, "sub", "a.txt")+`","offset":2,"limit":1}`)
	if got := text(r); got != "     2\ttwo\n" {
		t.Errorf("Read = %q", got)
	}
	if r := run(t, rt, "Edit", `{"file_path":"sub/a.txt","old_string":"two","new_string":"2"}`); r.IsError() {
		t.Fatalf("Edit: %s", text(r))
	}
	if data, _ := os.ReadFile(filepath.Join(ws, "sub", "a.txt")); string(data) != "one\n2\nthree\n" {
		t.Errorf("after Edit: %q", data)
	}
	run(t, rt, "Write", `{"file_path":"b.txt","content":"x x x"}`)
	if r := run(t, rt, "Edit", `{"file_path":"b.txt","old_string":"x","new_string":"y"}`); errCode(r) != builtin.CodeEditAmbiguous {
		t.Errorf("ambiguous edit: code %q, %s", errCode(r), text(r))
	}
	if r := run(t, rt, "Edit", `{"file_path":"b.txt","old_string":"x","new_string":"y","replace_all":true}`); r.IsError() {
		t.Errorf("replace_all: %s", text(r))
	}
	if r := run(t, rt, "Edit", `{"file_path":"b.txt","old_string":"zzz","new_string":"y"}`); errCode(r) != builtin.CodeEditNoMatch {
		t.Errorf("no match: code %q", errCode(r))
	}
	if r := run(t, rt, "Read", `{"file_path":"missing.txt"}`); errCode(r) != builtin.CodeNotFound {
		t.Errorf("missing: code %q", errCode(r))
	}
}

func TestPathsAreConfined(t *testing.T) {
	rt, ws := setup(t, builtin.Options{})
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{
		`{"file_path":"/etc/passwd"}`,
		`{"file_path":"../escape.txt"}`,
		`{"file_path":"link/secret.txt"}`,
	} {
		if r := run(t, rt, "Read", args); errCode(r) != builtin.CodeOutsideWorkspace {
			t.Errorf("Read %s: code %q (%s)", args, errCode(r), text(r))
		}
	}
	r := run(t, rt, "Write", `{"file_path":"link/new.txt","content":"x"}`)
	if errCode(r) != builtin.CodeOutsideWorkspace {
		t.Errorf("Write through a link: code %q", errCode(r))
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("a file was written outside the workspace")
	}
}

func TestBash(t *testing.T) {
	rt, ws := setup(t, builtin.Options{MaxOutput: 100})
	r := run(t, rt, "Bash", `{"command":"pwd; echo err >&2; exit 3"}`)
	if r.IsError() {
		t.Fatalf("Bash: %s", text(r))
	}
	got := text(r)
	if !strings.Contains(got, ws) || !strings.Contains(got, "err") || !strings.Contains(got, "[exit code 3]") {
		t.Errorf("Bash output = %q", got)
	}
	if r := run(t, rt, "Bash", `{"command":"head -c 5000 /dev/zero | tr '\\0' x"}`); !strings.Contains(text(r), "[output truncated]") || len(text(r)) > 200 {
		t.Errorf("capped output: %d bytes %q", len(text(r)), text(r))
	}
	start := time.Now()
	r = run(t, rt, "Bash", `{"command":"sleep 30 & sleep 30","timeout":200}`)
	if errCode(r) != builtin.CodeBashTimeout {
		t.Errorf("timeout: code %q (%s)", errCode(r), text(r))
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("timeout took %s", d)
	}
}

// TestBashEnvFile: Options.EnvFile (Claude Code's CLAUDE_ENV_FILE) is sourced before
// every command once it exists; a missing file is no error.
func TestBashEnvFile(t *testing.T) {
	envFile := filepath.Join(t.TempDir(), "env.sh")
	rt, _ := setup(t, builtin.Options{EnvFile: envFile})
	if r := run(t, rt, "Bash", `{"command":"echo \"[$DIFF_VAR]\""}`); r.IsError() || strings.TrimSpace(text(r)) != "[]" {
		t.Fatalf("before: %s", text(r))
	}
	if err := os.WriteFile(envFile, []byte("export DIFF_VAR=set-by-hook\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, rt, "Bash", `{"command":"echo \"[$DIFF_VAR]\""}`); strings.TrimSpace(text(r)) != "[set-by-hook]" {
		t.Errorf("after: %s", text(r))
	}
}

// TestBashNoOutputText: an empty output reads "(no output)", or Options.NoOutputText.
func TestBashNoOutputText(t *testing.T) {
	rt, _ := setup(t, builtin.Options{})
	if r := run(t, rt, "Bash", `{"command":"true"}`); text(r) != "(no output)" {
		t.Errorf("default: %q", text(r))
	}
	rt, _ = setup(t, builtin.Options{NoOutputText: "(Bash completed with no output)"})
	if r := run(t, rt, "Bash", `{"command":"true"}`); text(r) != "(Bash completed with no output)" {
		t.Errorf("set: %q", text(r))
	}
}

func TestBashCancel(t *testing.T) {
	rt, _ := setup(t, builtin.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	start := time.Now()
	r := rt.Execute(ctx, tools.Input{CallID: "c1", Name: "Bash", Arguments: json.RawMessage(`{"command":"sleep 30"}`)})
	if !r.IsError() {
		t.Errorf("cancelled Bash succeeded: %s", text(r))
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("cancel took %s", d)
	}
}

func TestInputSchemas(t *testing.T) {
	rt, _ := setup(t, builtin.Options{})
	for name, args := range map[string]string{
		"Bash":  `{"cmd":"ls"}`,
		"Read":  `{"file_path":3}`,
		"Write": `{"file_path":"a"}`,
		"Edit":  `{"file_path":"a","old_string":"x"}`,
	} {
		r := run(t, rt, name, args)
		if f, ok := r.Outcome.(dsh.ToolFailure); !ok || f.Error.Info == nil || f.Error.Info.Code != "INVALID_ARGS" {
			t.Errorf("%s %s: want INVALID_ARGS, got %+v", name, args, r.Outcome)
		}
	}
}

// The defaults of the zero Options: a requested timeout is honoured up to a 10-minute
// cap, the output cap is large, and Read reads up to 2000 lines.
func TestZeroOptionsDefaults(t *testing.T) {
	rt, ws := setup(t, builtin.Options{})
	if r := run(t, rt, "Bash", `{"command":"echo hi","timeout":60000}`); r.IsError() || text(r) != "hi\n" {
		t.Errorf("Bash with a timeout: %q (error %v)", text(r), r.IsError())
	}
	lines := strings.Repeat("x\n", 2001)
	if err := os.WriteFile(filepath.Join(ws, "long.txt"), []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	got := text(run(t, rt, "Read", `{"file_path":"long.txt"}`))
	if n := strings.Count(got, "\n"); n != 2000 {
		t.Errorf("Read without a limit returned %d lines, want 2000", n)
	}
}

// Options override the defaults: the timeout cap, the default timeout and the read limit.
func TestOptionsOverrideTheDefaults(t *testing.T) {
	rt, ws := setup(t, builtin.Options{MaxBashTimeout: 300 * time.Millisecond, ReadLimit: 2})
	r := run(t, rt, "Bash", `{"command":"sleep 30","timeout":60000}`)
	if errCode(r) != builtin.CodeBashTimeout || !strings.Contains(text(r), "after 300ms") {
		t.Errorf("a timeout past the cap: code %q, %q", errCode(r), text(r))
	}
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := text(run(t, rt, "Read", `{"file_path":"a.txt"}`)); got != "     1\ta\n     2\tb\n" {
		t.Errorf("Read with ReadLimit 2 = %q", got)
	}

	rt, _ = setup(t, builtin.Options{BashTimeout: 300 * time.Millisecond})
	r = run(t, rt, "Bash", `{"command":"sleep 30"}`)
	if errCode(r) != builtin.CodeBashTimeout || !strings.Contains(text(r), "after 300ms") {
		t.Errorf("the default timeout: code %q, %q", errCode(r), text(r))
	}
}

// Read numbers every line of the file, without inventing an empty last line, and stops at
// offset+limit.
func TestReadLines(t *testing.T) {
	rt, ws := setup(t, builtin.Options{})
	for name, c := range map[string]struct{ content, args, want string }{
		"trailing newline": {"a\nb\nc\n", `{"file_path":"f"}`, "     1\ta\n     2\tb\n     3\tc\n"},
		"no final newline": {"a\nb", `{"file_path":"f"}`, "     1\ta\n     2\tb\n"},
		"empty":            {"", `{"file_path":"f"}`, ""},
		"window":           {"a\nb\nc\nd\n", `{"file_path":"f","offset":2,"limit":2}`, "     2\tb\n     3\tc\n"},
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(ws, "f"), []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := text(run(t, rt, "Read", c.args)); got != c.want {
				t.Errorf("Read = %q, want %q", got, c.want)
			}
		})
	}
}

// Write and Edit report what they did.
func TestWriteAndEditReports(t *testing.T) {
	rt, _ := setup(t, builtin.Options{})
	if got := text(run(t, rt, "Write", `{"file_path":"a.txt","content":"x y x"}`)); got != "wrote 5 bytes to a.txt" {
		t.Errorf("Write = %q", got)
	}
	if got := text(run(t, rt, "Edit", `{"file_path":"a.txt","old_string":"y","new_string":"z"}`)); got != "replaced 1 occurrence(s) in a.txt" {
		t.Errorf("Edit = %q", got)
	}
	if got := text(run(t, rt, "Edit", `{"file_path":"a.txt","old_string":"x","new_string":"w","replace_all":true}`)); got != "replaced 2 occurrence(s) in a.txt" {
		t.Errorf("Edit replace_all = %q", got)
	}
}
