//go:build unix

package pgtest

import "syscall"

// apply makes the command run as c (nothing if c is nil).
func (c *credential) apply(a *syscall.SysProcAttr) {
	if c != nil {
		a.Credential = &syscall.Credential{Uid: uint32(c.uid), Gid: uint32(c.gid), Groups: []uint32{}}
	}
}
