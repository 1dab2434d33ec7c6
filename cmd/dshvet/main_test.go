package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dshkit/dsh/internal/oracle"
)

// TestNoCUE checks dshvet's import graph: a plugin module adds it as a tool, so it must not
// bring the spec toolchain (CUE, jennifer) with it.
func TestNoCUE(t *testing.T) {
	root := oracle.RepoRoot(t)
	cmd := exec.Command("go", "list", "-deps", "./cmd/dshvet")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/dshvet: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 || !contains(deps, "golang.org/x/tools/go/analysis/unitchecker") {
		t.Fatalf("go list -deps ./cmd/dshvet printed %d packages, without the unitchecker: %q", len(deps), out)
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "cuelang.org/") || strings.HasPrefix(d, "cuelabs.dev/") || strings.HasPrefix(d, "github.com/dave/jennifer") {
			t.Errorf("dshvet depends on %s", d)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var (
	vetOnce sync.Once
	vetBin  string
	vetErr  error
	vetDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if vetDir != "" {
		os.RemoveAll(vetDir)
	}
	os.Exit(code)
}

// buildVet builds dshvet once for the tests of the package and returns its path.
func buildVet(t *testing.T, root string) string {
	t.Helper()
	vetOnce.Do(func() {
		if vetDir, vetErr = os.MkdirTemp("", "dshvet-test-"); vetErr != nil {
			return
		}
		vetBin = filepath.Join(vetDir, "dshvet")
		cmd := exec.Command("go", "build", "-o", vetBin, "./cmd/dshvet")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			vetErr = fmt.Errorf("go build ./cmd/dshvet: %v\n%s", err, out)
		}
	})
	if vetErr != nil {
		t.Fatal(vetErr)
	}
	return vetBin
}

// goEnv is the environment of the go command run outside the repository: offline, on the
// local module and build caches.
func goEnv(t *testing.T) []string {
	t.Helper()
	env := os.Environ()
	for _, name := range []string{"GOMODCACHE", "GOCACHE"} {
		out, err := exec.Command("go", "env", name).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", name, err)
		}
		env = append(env, name+"="+strings.TrimSpace(string(out)))
	}
	return append(env, "GOPROXY=off", "GOSUMDB=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOWORK=off")
}

// TestExamplesClean: dshvet over examples/ reports nothing (under go vet).
func TestExamplesClean(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go vet over examples/")
	}
	root := oracle.RepoRoot(t)
	bin := buildVet(t, root)
	cmd := exec.Command("go", "vet", "-vettool="+bin, "./examples/...")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("go vet -vettool=dshvet ./examples/...: %v\n%s", err, out)
	}
}

// seeded is a plugin with one mistake of each kind, each on a line marked with the name of
// the analyzer that must report it (and only there): dshvet's five, and one of go vet's
// (printf), which dshvet runs too.
const seeded = `// Package seeded is a plugin with one mistake of each kind dshvet catches.
package seeded

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
)

// Plugin's Guard and OnPostTool are registered; OnPreTool was added after go generate.
type Plugin struct{}

func (p *Plugin) Guard(ctx context.Context, pl *dsh.GuardPayload) dsh.GuardVerdict {
	time.Sleep(10 * time.Millisecond)             // MISTAKE ctxblock
	pl.Exec.Name = strings.ToLower(pl.Exec.Name) // MISTAKE payloadwrite
	_ = fmt.Sprintf("%d", pl.Exec.Name)          // MISTAKE printf
	if pl.Exec.Name == "bash" {
		return dsh.GuardDeny{Reason: "no shell"}
	}
	return dsh.GuardAbstain{}
}

func (p *Plugin) OnPostTool(ctx context.Context, pl *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
	d, err := next.Call(ctx)
	if err != nil {
		return next.Call(ctx) // MISTAKE nextonce
	}
	switch d.(type) { // MISTAKE exhaustive
	case dsh.PostToolAccept:
		return d, nil
	}
	return d, nil
}

func (p *Plugin) OnPreTool(ctx context.Context, pl *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) { // MISTAKE staleregister
	return next.Call(ctx)
}
`

// mistake is a report: file, line and analyzer (or message, for what was printed).
type mistake struct {
	file string
	line int
	what string
}

// marked returns the mistakes marked in src.
func marked(file, src string) []mistake {
	var out []mistake
	for i, line := range strings.Split(src, "\n") {
		if _, what, ok := strings.Cut(line, "// MISTAKE "); ok {
			out = append(out, mistake{file, i + 1, what})
		}
	}
	return out
}

var diagLine = regexp.MustCompile(`^(\S+\.go):(\d+):(\d+): (.*)$`)

// reported parses the diagnostics dshvet printed.
func reported(t *testing.T, out []byte) []mistake {
	t.Helper()
	var ms []mistake
	for _, l := range strings.Split(string(out), "\n") {
		m := diagLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		ms = append(ms, mistake{filepath.Base(m[1]), n, m[4]})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].line < ms[j].line })
	return ms
}

// messageOf is a phrase every report of the analyzer has.
var messageOf = map[string]string{
	"ctxblock":      "time.Sleep in method Plugin.Guard, a listener (dsh.GuardListener), blocks without its context",
	"payloadwrite":  "the payload of a GuardListener is written (pl.Exec.Name assigned)",
	"nextonce":      "next can be called a second time on this path",
	"exhaustive":    "type switch over dsh.PostToolDecision misses dsh.PostToolBlock, dsh.PostToolHalt, dsh.PostToolTail and has no default",
	"printf":        "fmt.Sprintf format %d has arg pl.Exec.Name of wrong type string",
	"staleregister": "Plugin.OnPreTool has the type of dsh.PreToolListener but plugin_gen.go does not register it, so it never runs: add tools/pre-execute",
}

// seedModule writes the seeded plugin module outside the repository, with the glue
// dshscaffold writes for Guard and OnPostTool, and returns its directory.
func seedModule(t *testing.T, root string) string {
	t.Helper()
	dir := t.TempDir()
	gomod := "module example.com/seeded\n\ngo 1.26\n\nrequire github.com/dshkit/dsh v0.0.0\n\nreplace github.com/dshkit/dsh => " + root + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plugin.go"), []byte(seeded), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "./cmd/dshscaffold", "-type", "Plugin", "-events", "tools/guard,tools/post-execute",
		"-pkg", "seeded", "-out", filepath.Join(dir, "plugin_gen.go"))
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("dshscaffold: %v\n%s", err, out)
	}
	return dir
}

// TestSeededPlugin runs dshvet under go vet and standalone over a plugin module outside the
// repository seeded with one mistake of each kind: it reports exactly those, at their lines.
func TestSeededPlugin(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module outside the repository with the go command")
	}
	root := oracle.RepoRoot(t)
	bin := buildVet(t, root)
	dir := seedModule(t, root)
	want := marked("plugin.go", seeded)
	if len(want) != 6 {
		t.Fatalf("the seeded plugin marks %d mistakes, want one per analyzer of dshvet's and one of go vet's (6)", len(want))
	}
	for _, run := range []struct {
		name string
		args []string
	}{
		{"go vet -vettool", []string{"go", "vet", "-vettool=" + bin, "./..."}},
		{"standalone", []string{bin, "./..."}},
	} {
		t.Run(run.name, func(t *testing.T) {
			cmd := exec.Command(run.args[0], run.args[1:]...)
			cmd.Dir = dir
			cmd.Env = goEnv(t)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Run(); err == nil {
				t.Errorf("%s: exit status 0, want a failure for the reports", run.name)
			}
			got := reported(t, out.Bytes())
			if len(got) != len(want) {
				t.Fatalf("%s: %d reports, want %d:\n%s", run.name, len(got), len(want), out.Bytes())
			}
			for i, w := range want {
				g := got[i]
				if g.file != w.file || g.line != w.line || !strings.Contains(g.what, messageOf[w.what]) {
					t.Errorf("%s: report %d is %s:%d: %s\nwant %s:%d: ...%s...", run.name, i, g.file, g.line, g.what, w.file, w.line, messageOf[w.what])
				}
			}
		})
	}
}

// TestSeededStaleGlue: renaming a registered method after go generate leaves plugin_gen.go
// registering a method that no longer exists. go vet reports the compile error (the first
// one: vet runs no analyzer on a package that does not type-check); dshvet standalone also
// reports each stale registration.
func TestSeededStaleGlue(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module outside the repository with the go command")
	}
	root := oracle.RepoRoot(t)
	bin := buildVet(t, root)
	dir := seedModule(t, root)
	src := strings.Replace(seeded, "func (p *Plugin) Guard(", "func (p *Plugin) Deny(", 1)
	if err := os.WriteFile(filepath.Join(dir, "plugin.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	gen, err := os.ReadFile(filepath.Join(dir, "plugin_gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	var stale []int
	for i, l := range strings.Split(string(gen), "\n") {
		if strings.Contains(l, "p.Guard") {
			stale = append(stale, i+1)
		}
	}
	for _, run := range []struct {
		name string
		args []string
		want []string
	}{
		{"go vet -vettool", []string{"go", "vet", "-vettool=" + bin, "./..."}, []string{"p.Guard undefined"}},
		{"standalone", []string{bin, "./..."}, []string{"registers Plugin.Guard, which Plugin no longer has: the registration is stale; dshscaffold registers tools/guard's listener as a method named Guard"}},
	} {
		cmd := exec.Command(run.args[0], run.args[1:]...)
		cmd.Dir = dir
		cmd.Env = goEnv(t)
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Errorf("%s: exit status 0 over stale glue", run.name)
		}
		lines := stale
		if run.name != "standalone" {
			lines = stale[:1] // the type checker stops at the first error
		}
		for _, line := range lines {
			prefix := "plugin_gen.go:" + strconv.Itoa(line) + ":"
			found := false
			for _, l := range strings.Split(string(out), "\n") {
				found = found || strings.Contains(l, prefix) && strings.Contains(l, run.want[0])
			}
			if !found {
				t.Errorf("%s: no %q at %s in:\n%s", run.name, run.want[0], prefix, out)
			}
		}
	}
}
