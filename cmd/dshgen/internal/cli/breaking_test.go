package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// repoRoot is the root of the git work tree holding this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("git rev-parse --show-toplevel: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func run(t *testing.T, dir string, env []string, name string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out), 0
}

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	args = append([]string{"-c", "user.name=dsh test", "-c", "user.email=test@dsh.invalid", "-c", "commit.gpgsign=false"}, args...)
	if out, code := run(t, dir, nil, "git", args...); code != 0 {
		t.Fatalf("git %v: exit %d\n%s", args, code, out)
	}
}

// copyTree copies directory src over dst (files only, recursively).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, fi.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

func edit(t *testing.T, file, old, new string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(old)) {
		t.Fatalf("%s: %q not found", file, old)
	}
	if err := os.WriteFile(file, bytes.Replace(data, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCIRejectsAnUnannouncedBreakingChange clones the repository, brings the working
// tree's spec, baseline and scripts into the clone, commits a breaking edit (a field
// removed from a session-log event) and runs the CI step (scripts/spec-compat): it fails
// naming the rule. A major bump without a CHANGELOG entry still fails; with the entry it
// passes. On the way, dshgen breaking --against HEAD and HEAD~1 read commits through git.
func TestCIRejectsAnUnannouncedBreakingChange(t *testing.T) {
	root := repoRoot(t)
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "dshgen")
	if out, code := run(t, root, nil, "go", "build", "-o", bin, "./cmd/dshgen"); code != 0 {
		t.Fatalf("go build: %s", out)
	}
	clone := filepath.Join(tmp, "clone")
	gitIn(t, tmp, "clone", "--quiet", "--no-checkout", root, clone)
	gitIn(t, clone, "checkout", "--quiet", "HEAD", "--", ".")
	for _, p := range []string{"spec", "testdata/released-spec", "scripts"} {
		copyTree(t, filepath.Join(root, p), filepath.Join(clone, p))
	}
	gitIn(t, clone, "add", "-A")
	gitIn(t, clone, "commit", "--quiet", "--allow-empty", "-m", "the working tree's spec")
	env := []string{"DSHGEN=" + bin}

	if out, code := run(t, clone, env, "scripts/spec-compat"); code != 0 {
		t.Fatalf("spec-compat on the unchanged spec: exit %d\n%s", code, out)
	}

	session := filepath.Join(clone, "spec", "session.cue")
	edit(t, session, "\t// workspace is the working directory of the session, when it has one.\n\tworkspace?: string\n", "")
	if out, code := run(t, clone, nil, bin, "breaking", "--against", "HEAD"); code != 1 || !strings.Contains(out, "WIRE_FIELD_REMOVED") {
		t.Fatalf("breaking --against HEAD on the dirty tree: exit %d\n%s", code, out)
	}
	if out, _ := run(t, clone, nil, "git", "status", "--porcelain", "--untracked-files=all", "--ignored"); out != " M spec/session.cue\n" {
		t.Fatalf("breaking wrote to the tree: git status\n%s", out)
	}
	gitIn(t, clone, "commit", "--quiet", "-am", "drop session/created's workspace")
	out, code := run(t, clone, env, "scripts/spec-compat")
	if code != 1 || !strings.Contains(out, "spec/session.cue:") || !strings.Contains(out, "WIRE_FIELD_REMOVED") || !strings.Contains(out, "major version bump") {
		t.Fatalf("spec-compat after an unannounced breaking change: exit %d, want 1 naming the rule\n%s", code, out)
	}
	if out, code := run(t, clone, nil, bin, "breaking", "--against", "HEAD~1"); code != 1 || !strings.Contains(out, "GO_FIELD_REMOVED") {
		t.Fatalf("breaking --against HEAD~1: exit %d\n%s", code, out)
	}

	cur := specVersion(t, clone)
	major, err := strconv.Atoi(cur[:strings.Index(cur, ".")])
	if err != nil {
		t.Fatalf("spec version %q: %v", cur, err)
	}
	next := strconv.Itoa(major+1) + ".0.0" // the next major, whatever the spec's is
	edit(t, filepath.Join(clone, "spec", "version.cue"), `version: "`+cur+`"`, `version: "`+next+`"`)
	if out, code := run(t, clone, env, "scripts/spec-compat"); code != 1 || !strings.Contains(out, `"## `+next+`"`) {
		t.Fatalf("spec-compat with a bump but no CHANGELOG entry: exit %d\n%s", code, out)
	}
	edit(t, filepath.Join(clone, "spec", "CHANGELOG.md"), "## 1.0.0", "## "+next+"\n\nsession/created loses workspace.\n\n## 1.0.0")
	gitIn(t, clone, "commit", "--quiet", "-am", "spec "+next)
	if out, code := run(t, clone, env, "scripts/spec-compat"); code != 0 || !strings.Contains(out, "announced") {
		t.Fatalf("spec-compat after an announced breaking change: exit %d\n%s", code, out)
	}
}

// TestBreakingBadRefs: a REF that does not exist, holds no spec, or holds a spec that does
// not load is one line and exit 2; a working-tree spec that does not load prints its CUE
// position.
func TestBreakingBadRefs(t *testing.T) {
	root := repoRoot(t)
	tmp := t.TempDir()
	empty := filepath.Join(tmp, "empty")
	bad := filepath.Join(tmp, "bad")
	for _, d := range []string{empty, bad} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bad, "x.cue"), []byte("package dsh\n\n#A: {\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	specDir := filepath.Join(root, "spec")
	for _, c := range []struct {
		name, ref, want string
	}{
		{"missing", "no-such-ref-or-dir", "neither a directory nor a git ref"},
		{"no spec", empty, "holds no spec"},
		{"bad spec", bad, "the spec there does not load: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Main(context.Background(), []string{"breaking", "--spec", specDir, "--against", c.ref}, &stdout, &stderr)
			msg := stderr.String()
			if code != 2 || !strings.Contains(msg, c.want) || strings.Count(msg, "\n") != 1 || stdout.Len() != 0 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", code, stdout.String(), msg, c.want)
			}
		})
	}
	t.Run("bad working tree", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		code := Main(context.Background(), []string{"breaking", "--spec", bad, "--against", specDir}, &stdout, &stderr)
		if code != 2 || !strings.HasPrefix(stderr.String(), filepath.ToSlash(bad)+"/x.cue:") {
			t.Fatalf("exit %d, stderr %q; want exit 2 and the CUE position", code, stderr.String())
		}
	})
}

// TestBreakingJSON compares the spec with its own directory: exit 0, and --format json
// says nothing breaks.
func TestBreakingJSON(t *testing.T) {
	specDir := filepath.Join(repoRoot(t), "spec")
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"breaking", "--spec", specDir, "--against", specDir, "--format", "json", "--verbose"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var got struct {
		Breaking   bool              `json:"breaking"`
		Findings   []json.RawMessage `json:"findings"`
		NewVersion string            `json:"newVersion"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	if got.Breaking || len(got.Findings) != 0 || got.NewVersion != specVersion(t, repoRoot(t)) {
		t.Fatalf("unchanged spec: %s", stdout.String())
	}
}

// specVersion is the version spec/version.cue of the tree at root declares.
func specVersion(t *testing.T, root string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "spec", "version.cue"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^version: "([^"]+)"`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("spec/version.cue declares no version:\n%s", data)
	}
	return string(m[1])
}
