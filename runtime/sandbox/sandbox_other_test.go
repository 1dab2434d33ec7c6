//go:build !linux && !darwin

package sandbox_test

import (
	"context"
	"strings"
	"testing"

	"github.com/dshkit/dsh/runtime/sandbox"
)

// Off Linux and macOS every confined mode is refused, naming danger-full-access; that mode runs.
func TestConfinedModesAreRefused(t *testing.T) {
	for _, mode := range []sandbox.Mode{sandbox.ReadOnly, sandbox.WorkspaceWrite} {
		_, err := sandbox.New(context.Background(), sandbox.Policy{Mode: mode, Workspace: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), "danger-full-access") {
			t.Errorf("%s: New = %v; want a refusal naming danger-full-access", mode, err)
		}
	}
	if _, err := sandbox.New(context.Background(), sandbox.Policy{Mode: sandbox.DangerFullAccess}); err != nil {
		t.Errorf("danger-full-access: %v", err)
	}
}
