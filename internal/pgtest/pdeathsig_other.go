//go:build !linux

package pgtest

import "syscall"

// setPdeathsig does nothing where the platform has no parent-death signal.
func setPdeathsig(*syscall.SysProcAttr) {}
