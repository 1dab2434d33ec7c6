package breaking_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dshkit/dsh/gen/breaking"
)

func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	args = append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@dsh.invalid", "-c", "commit.gpgsign=false"}, args...)
	if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestGitFS reads a spec directory of a commit without touching the work tree: the files
// as committed (not as edited since), under paths relative to the directory; a missing
// ref and a commit without the directory are told apart.
func TestGitFS(t *testing.T) {
	repo := t.TempDir()
	gitRun(t, repo, "init", "--quiet")
	if err := os.MkdirAll(filepath.Join(repo, "sub", "spec", "wire"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(repo, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README", "no spec here\n")
	gitRun(t, repo, "add", "-A")
	gitRun(t, repo, "commit", "--quiet", "-m", "no spec")
	write("sub/spec/a.cue", "package dsh\n")
	write("sub/spec/wire/b.cue", "package b\n\n// binary-ish: \x00\xff\n")
	gitRun(t, repo, "add", "-A")
	gitRun(t, repo, "commit", "--quiet", "-m", "spec")
	write("sub/spec/a.cue", "package dsh // edited\n")

	ctx := context.Background()
	specDir := filepath.Join(repo, "sub", "spec")
	prefix, err := breaking.GitPrefix(ctx, specDir)
	if err != nil || prefix != "sub/spec" {
		t.Fatalf("GitPrefix = %q, %v", prefix, err)
	}
	fsys, err := breaking.GitFS(ctx, specDir, "HEAD", prefix)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a.cue": "package dsh\n", "wire/b.cue": "package b\n\n// binary-ish: \x00\xff\n"} {
		got, err := fs.ReadFile(fsys, name)
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := breaking.GitFS(ctx, specDir, "HEAD~1", prefix); !errors.Is(err, breaking.ErrNoSpec) {
		t.Errorf("a commit without the spec: %v, want ErrNoSpec", err)
	}
	if _, err := breaking.GitFS(ctx, specDir, "no-such-branch", prefix); !errors.Is(err, breaking.ErrNoRef) {
		t.Errorf("a missing ref: %v, want ErrNoRef", err)
	}
	if data, _ := os.ReadFile(filepath.Join(repo, "sub/spec/a.cue")); string(data) != "package dsh // edited\n" {
		t.Errorf("the work tree changed: %q", data)
	}
}
