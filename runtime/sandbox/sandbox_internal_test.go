package sandbox

import (
	"errors"
	"strings"
	"testing"
)

// A refusal is one line that says why and names the mode that runs unconfined.
func TestRefusalSaysWhyAndNamesDangerFullAccess(t *testing.T) {
	err := refusal(WorkspaceWrite, errors.New("this kernel has no Landlock"))
	msg := err.Error()
	for _, want := range []string{"workspace-write", "this kernel has no Landlock", "--sandbox danger-full-access"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("%q is more than one line", msg)
	}
}
