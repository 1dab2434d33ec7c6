// Package oracle locates the test oracles that do not ship with the module: the published
// protocol schemas kept in shared/reference beside the repository. Only tests import it.
//
// The shared directory is $DSH_SHARED when set, else ../shared relative to the repository
// root (where CI's clean clone has it). A test whose oracle is missing fails when the
// environment variable CI is set (CI must run every cross-check) and skips, saying what is
// missing and how to provide it, otherwise: a fresh clone with nothing beside it passes.
package oracle

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// EnvShared names the environment variable that overrides where shared/ is.
const EnvShared = "DSH_SHARED"

// Dir returns the directory rel (slash-separated, e.g. "reference/codex-hook-schemas")
// inside shared/. When it does not exist the test fails under CI and skips elsewhere.
func Dir(t testing.TB, rel string) string {
	t.Helper()
	shared := os.Getenv(EnvShared)
	how := "$" + EnvShared
	if shared == "" {
		shared = filepath.Join(filepath.Dir(RepoRoot(t)), "shared")
		how = "../shared beside the repository"
	}
	dir := filepath.Join(shared, filepath.FromSlash(rel))
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		msg := "test oracle missing: " + dir + " (shared/" + rel + ", looked for via " + how +
			"); check out shared/ beside the repository or set " + EnvShared + " to it"
		if os.Getenv("CI") != "" {
			t.Fatalf("%s; CI is set, so the cross-check may not skip", msg)
		}
		t.Skipf("%s; skipping outside CI", msg)
	}
	return dir
}

// RepoRoot returns the directory of the go.mod of github.com/dshkit/dsh above the working
// directory, failing the test when there is none.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(data, []byte("module github.com/dshkit/dsh\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("cannot find the repository root (go.mod of github.com/dshkit/dsh)")
		}
		dir = parent
	}
}
