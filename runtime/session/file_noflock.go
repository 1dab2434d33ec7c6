//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package session

import "os"

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
