//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package hookbridge

import (
	"errors"
	"syscall"
)

// The open flags of a transcript, as of a session log: never through a symbolic link,
// and never blocking on a FIFO (which is then refused as not a regular file).
const (
	oNoFollow = syscall.O_NOFOLLOW
	oNonBlock = syscall.O_NONBLOCK
)

// isSymlinkErr reports whether err is the error of an O_NOFOLLOW open of a symbolic
// link.
func isSymlinkErr(err error) bool { return errors.Is(err, syscall.ELOOP) }
