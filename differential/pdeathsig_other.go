//go:build !linux

package differential

import "os/exec"

// setPdeathsig does nothing where the platform has no parent-death signal.
func setPdeathsig(*exec.Cmd) {}
