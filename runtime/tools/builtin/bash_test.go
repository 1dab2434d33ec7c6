package builtin_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// Under bash, Options.EnvFile is BASH_ENV: the bash scripts a command starts source it
// too, not only the command's own shell (here a variable the file sets without exporting
// it reaches a nested bash). Without bash, /bin/sh sources it before the command only.
func TestBashEnvFileIsBashEnv(t *testing.T) {
	envFile := filepath.Join(t.TempDir(), "env.sh")
	if err := os.WriteFile(envFile, []byte("NESTED_VAR=sourced\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rt, _ := setup(t, builtin.Options{EnvFile: envFile})
	r := run(t, rt, "Bash", `{"command":"echo \"[$NESTED_VAR]\"; bash -c 'echo \"[$NESTED_VAR]\"'"}`)
	lines := strings.Split(strings.TrimSpace(text(r)), "\n")
	if lines[0] != "[sourced]" {
		t.Errorf("the command's own shell: %q, want [sourced]", lines[0])
	}
	if _, err := exec.LookPath("bash"); err == nil && (len(lines) != 2 || lines[1] != "[sourced]") {
		t.Errorf("nested bash: %q, want [sourced]", lines[1:])
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
