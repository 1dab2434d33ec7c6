//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrustFileOwner: a trust file another user owns is refused in one line naming it
// and its owner, whatever it says; the user's own is read.
func TestTrustFileOwner(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	path := filepath.Join(dir, "dsh", "trusted.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"trusted": ["`+dir+`"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if ok, err := trustedProject(dir); !ok || err != nil {
		t.Fatalf("the user's own trust file: trusted %v, err %v", ok, err)
	}
	if os.Geteuid() != 0 {
		t.Skip("giving the file to another user needs root")
	}
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	ok, err := trustedProject(dir)
	if ok || err == nil || !strings.Contains(err.Error(), path+": owned by uid 65534, not by you (uid 0)") {
		t.Fatalf("another user's trust file: trusted %v, err %v", ok, err)
	}
	code, stdout, stderr := runDSH("trust", "--list")
	if code != 1 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "owned by uid 65534") {
		t.Fatalf("dsh trust --list: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
