//go:build !unix

package pgtest

import "syscall"

// apply does nothing: without Unix users there is no root to step down from (os.Geteuid
// is -1, so no credential is ever made).
func (c *credential) apply(*syscall.SysProcAttr) {}
