//go:build !linux && !darwin

package sandbox

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
)

// supported refuses every confined mode: the sandbox is implemented on Linux (Landlock
// and namespaces) and macOS (Seatbelt) only.
func supported(context.Context, *Sandbox) error {
	return fmt.Errorf("the sandbox is implemented on Linux and macOS only, not on %s", runtime.GOOS)
}

func probe(context.Context, *Sandbox) error { return nil }

func wrap(*Sandbox, *exec.Cmd) error { return supported(context.Background(), nil) }

// zygotes is empty: there is no session helper here.
type zygotes struct{}

func (s *Sandbox) closeZygotes() {}

func start(*Sandbox, *exec.Cmd) (running, error) { return nil, supported(context.Background(), nil) }
