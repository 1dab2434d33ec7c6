package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestWrite: a new file, a replaced file, an unchanged file left alone
// (same modification time), and no temporary file left behind.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "sub", "f.go")
	if err := Write(name, []byte("one")); err == nil {
		t.Fatal("writing into a missing directory succeeded")
	}
	if err := os.Mkdir(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Write(name, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := Write(name, []byte("two")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(name); string(b) != "two" {
		t.Fatalf("content %q, want two", b)
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(name, old, old); err != nil {
		t.Fatal(err)
	}
	if err := Write(name, []byte("two")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(name); !fi.ModTime().Equal(old) {
		t.Errorf("an unchanged file was rewritten: mtime %v, want %v", fi.ModTime(), old)
	}
	if fi, _ := os.Stat(name); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(filepath.Dir(name))
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only f.go: %v", len(entries), entries)
	}
	if err := Write(filepath.Join(name, "x"), []byte("x")); err == nil {
		t.Error("writing below a regular file succeeded")
	}
}
