//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package session

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// The open flags of a log file: never through a symbolic link, and never blocking on a
// FIFO (which is then refused as not a regular file).
const (
	oNoFollow = syscall.O_NOFOLLOW
	oNonBlock = syscall.O_NONBLOCK
)

// isSymlinkErr reports whether err is the error of an O_NOFOLLOW open of a symbolic
// link.
func isSymlinkErr(err error) bool { return errors.Is(err, syscall.ELOOP) }

// lockFile takes an exclusive advisory lock on f, released when f is closed or the
// process dies.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return fmt.Errorf("%w: %s", ErrLocked, f.Name())
		default:
			return fmt.Errorf("session: lock %s: %w", f.Name(), err)
		}
	}
}

// syncDir makes the entries of dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
