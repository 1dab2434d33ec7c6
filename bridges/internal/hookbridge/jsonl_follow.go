//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package hookbridge

// O_NOFOLLOW and O_NONBLOCK are not portable: here the Lstat before the open and the
// regular-file and content checks after it are what stay.
const (
	oNoFollow = 0
	oNonBlock = 0
)

// isSymlinkErr reports false: no open refuses a link here.
func isSymlinkErr(error) bool { return false }
