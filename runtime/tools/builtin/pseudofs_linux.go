package builtin

import (
	"os"
	"syscall"
)

// The file system magic numbers of the kernel's pseudo-files (statfs(2)).
const (
	procSuperMagic = 0x9fa0
	sysfsMagic     = 0x62656572
)

// pseudoFS reports whether f is on procfs or sysfs.
func pseudoFS(f *os.File) bool {
	var st syscall.Statfs_t
	if err := syscall.Fstatfs(int(f.Fd()), &st); err != nil {
		return true // unknown: treat it as one
	}
	return st.Type == procSuperMagic || st.Type == sysfsMagic
}
