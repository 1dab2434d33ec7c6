package builtin

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshkit/dsh/runtime/tools"
)

// TestOpenAfterSwapStaysInside: a path checked while its directory was real is opened
// after the directory became a symlink to outside; the open (os.Root) refuses it, for
// reading and for creating, and nothing appears outside. This is the check-then-use race
// made deterministic.
func TestOpenAfterSwapStaysInside(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	ws, _ = filepath.EvalSymlinks(ws)
	d := filepath.Join(ws, "d")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "f.txt"), []byte("inside"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "f.txt"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		flag int
	}{
		{"d/f.txt", os.O_RDONLY},
		{"d/f.txt", os.O_RDWR | os.O_CREATE},
		{"d/new.txt", os.O_RDWR | os.O_CREATE},
	} {
		rel, err := workspaceRel(ws, c.path)
		if err != nil {
			t.Fatal(err)
		}
		// The swap, between the check and the open.
		if err := os.Rename(d, d+".real"); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, d); err != nil {
			t.Fatal(err)
		}
		wf, err := openRel(ws, rel, c.path, c.flag, 0o644)
		if err == nil {
			wf.f.Close()
			t.Errorf("%s (flag %#x) opened through the swapped-in link", c.path, c.flag)
		}
		var te *tools.Error
		if !errors.As(err, &te) || te.Code != CodeOutsideWorkspace {
			t.Errorf("%s: %v, want %s", c.path, err, CodeOutsideWorkspace)
		}
		if err := os.Remove(d); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(d+".real", d); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("a file was created outside the workspace")
	}
}
