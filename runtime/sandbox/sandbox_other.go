//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
)

// supported refuses every confined mode: the sandbox is implemented on Linux only. macOS
// would take a Seatbelt profile through /usr/bin/sandbox-exec, which is not written yet.
func supported(context.Context, *Sandbox) error {
	if runtime.GOOS == "darwin" {
		return errors.New("the sandbox is implemented on Linux only (Seatbelt, through sandbox-exec, is not yet supported on macOS)")
	}
	return fmt.Errorf("the sandbox is implemented on Linux only, not on %s", runtime.GOOS)
}

func probe(context.Context, *Sandbox) error { return nil }

func wrap(*Sandbox, *exec.Cmd) error { return supported(context.Background(), nil) }

// zygotes is empty: there are no helpers off Linux.
type zygotes struct{}

func (s *Sandbox) closeZygotes() {}

func start(*Sandbox, *exec.Cmd) (running, error) { return nil, supported(context.Background(), nil) }
