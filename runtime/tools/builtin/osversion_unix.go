//go:build unix

package builtin

import "golang.org/x/sys/unix"

// osVersion is the system's name and release, as Node's os.type() and os.release().
func osVersion() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
}
