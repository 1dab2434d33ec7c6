//go:build unix

package cli

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// checkOwned refuses a trust file that another user owns or that others may write: it
// could make dsh run anyone's hooks.
func checkOwned(path string, st fs.FileInfo) error {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Geteuid() {
		return fmt.Errorf("%s: owned by uid %d, not by you (uid %d); refusing to trust anything from it", path, sys.Uid, os.Geteuid())
	}
	if st.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s: others may write it (mode %v); refusing to trust anything from it (chmod go-w)", path, st.Mode().Perm())
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file; refusing to trust anything from it", path)
	}
	return nil
}
