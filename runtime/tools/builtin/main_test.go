package builtin_test

import (
	"os"
	"testing"

	"github.com/dshkit/dsh/runtime/sandbox"
)

// TestMain lets the test binary be the sandbox's helper: a confined Bash command runs
// through the binary re-executed.
func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}
