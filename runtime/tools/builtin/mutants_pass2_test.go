package builtin_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// The tests of this file pin rules that the second mutation pass over runtime/tools
// (docs/testing.md) showed no other test to check.

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
