// Package atomicfile writes files so that a reader sees either the old content or the new,
// never a half-written file: the data goes to a temporary file in the same directory, which
// is then renamed over the target. dshgen's generate and dshscaffold share it.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write writes data to name atomically with mode 0644; name's directory must exist. A file
// whose content already equals data is left untouched (its modification time too).
func Write(name string, data []byte) error {
	if old, err := os.ReadFile(name); err == nil && string(old) == string(data) {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}
