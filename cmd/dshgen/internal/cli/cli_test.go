package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/dshkit/dsh/spec"
)

// TestBadSpecExitCodes runs generate and check on every bad-spec case of gen/testdata:
// both exit 2, print the CUE position first, and write nothing.
func TestBadSpecExitCodes(t *testing.T) {
	cases, err := filepath.Glob("../../../../gen/testdata/badspec/*.txtar")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no bad-spec cases: %v", err)
	}
	meta, err := spec.FS.ReadFile("meta.cue")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(filepath.Base(c), ".txtar"), func(t *testing.T) {
			a, err := txtar.ParseFile(c)
			if err != nil {
				t.Fatal(err)
			}
			work := t.TempDir()
			t.Chdir(work)
			if err := os.Mkdir("spec", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile("spec/meta.cue", meta, 0o644); err != nil {
				t.Fatal(err)
			}
			var want string
			for _, f := range a.Files {
				if f.Name == "want" {
					want = strings.TrimSpace(string(f.Data))
				} else if err := os.WriteFile(filepath.Join("spec", f.Name), f.Data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, cmd := range []string{"generate", "check"} {
				var stdout, stderr bytes.Buffer
				code := Main(context.Background(), []string{cmd}, &stdout, &stderr)
				if code != exitUsage {
					t.Errorf("%s: exit %d, want %d; stderr:\n%s", cmd, code, exitUsage, &stderr)
				}
				first, _, _ := strings.Cut(stderr.String(), "\n")
				if !regexp.MustCompile(want).MatchString(first) {
					t.Errorf("%s: first line of stderr %q does not match %q", cmd, first, want)
				}
				if stdout.Len() != 0 {
					t.Errorf("%s: wrote to stdout: %s", cmd, &stdout)
				}
			}
			if _, err := os.Stat("generated"); !os.IsNotExist(err) {
				t.Errorf("a failed generate created generated/ (stat: %v)", err)
			}
		})
	}
}

// TestCheckExitCodes: 0 when fresh, 1 when stale.
func TestCheckExitCodes(t *testing.T) {
	work := t.TempDir()
	t.Chdir(work)
	if err := os.Mkdir("spec", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"meta.cue", "tools.cue", "messages.cue", "subagent.cue"} {
		data, err := spec.FS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("spec", name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) int {
		var out, errb bytes.Buffer
		return Main(context.Background(), args, &out, &errb)
	}
	if code := run("check"); code != exitStale {
		t.Errorf("check on an empty tree: exit %d, want %d", code, exitStale)
	}
	if code := run("generate"); code != exitOK {
		t.Fatalf("generate: exit %d", code)
	}
	if code := run("check"); code != exitOK {
		t.Errorf("check after generate: exit %d, want 0", code)
	}
	if code := run("generate", "-bogus"); code != exitUsage {
		t.Errorf("bad flag: exit %d, want %d", code, exitUsage)
	}
}
