package builtin_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// The tests of this file pin rules that a mutation pass (docs/testing.md) showed no other
// test to check.

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

// Bash's rendering: stdout then stderr on a line of its own, the truncation and the exit
// code noted, "(no output)" for none; output that fills the cap exactly is not truncated.
func TestBashRendering(t *testing.T) {
	rt, _ := setup(t, builtin.Options{MaxOutput: 5})
	for cmd, want := range map[string]string{
		"printf abcde":               "abcde",
		"printf abcdef":              "abcde\n[output truncated]",
		"printf out; printf err >&2": "out\nerr",
		"echo out; printf err >&2":   "out\nerr",
		"printf err >&2":             "err",
		"true":                       "(no output)",
		"printf x; exit 4":           "x\n[exit code 4]",
		"echo x; exit 4":             "x\n[exit code 4]", // no blank line before the code
		"exit 4":                     "[exit code 4]",
	} {
		args := `{"command":` + strconv.Quote(cmd) + `}`
		if got := text(run(t, rt, "Bash", args)); got != want {
			t.Errorf("Bash %q = %q, want %q", cmd, got, want)
		}
	}
}

// Bash runs commands under bash when there is one, in the environment Options.Env gives.
func TestBashShellAndEnv(t *testing.T) {
	rt, _ := setup(t, builtin.Options{Env: []string{"DSH_PIN=from-options", "PATH=" + os.Getenv("PATH")}})
	if got := text(run(t, rt, "Bash", `{"command":"printf %s \"$DSH_PIN\""}`)); got != "from-options" {
		t.Errorf("Options.Env: %q", got)
	}
	if _, err := exec.LookPath("bash"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("bash is not installed")
		}
		t.Skip("bash is not installed")
	}
	if got := text(run(t, rt, "Bash", `{"command":"printf %s \"${BASH_VERSION:+bash}\""}`)); got != "bash" {
		t.Errorf("the command did not run under bash: %q", got)
	}
}
