//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package session

import "os"

// O_NOFOLLOW and O_NONBLOCK are not portable: the open follows links here, and the
// regular-file check after it is what stays.
const (
	oNoFollow = 0
	oNonBlock = 0
)

// isSymlinkErr reports false: no open refuses a link here.
func isSymlinkErr(error) bool { return false }

// lockFile does nothing where flock is unavailable: the caller must ensure a single
// writer.
func lockFile(f *os.File) error { return nil }

// syncDir is best effort where directories cannot be synced portably.
func syncDir(dir string) error {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
