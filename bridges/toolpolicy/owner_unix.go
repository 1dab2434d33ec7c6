//go:build unix

package toolpolicy

import (
	"os"
	"syscall"
)

// ownerUID is the user id owning the file, when the system says.
func ownerUID(fi os.FileInfo) (int, bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), true
	}
	return 0, false
}
