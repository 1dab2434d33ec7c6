package cli

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// customBuildMain returns the README's custom build main (the fenced block after the
// `<!-- custombuild: PATH -->` marker) and its path.
func customBuildMain(t *testing.T, readme string) (path, src string) {
	t.Helper()
	path, src = readmeBlock(t, readme, func(line string) (string, bool) {
		p, ok := strings.CutPrefix(line, "<!-- custombuild: ")
		return strings.TrimSuffix(p, " -->"), ok && p != "commands -->"
	})
	return path, src
}

// customBuildCommands returns the README's commands that make the custom build (the
// fenced block after `<!-- custombuild: commands -->`), one per line, without their
// comments.
func customBuildCommands(t *testing.T, readme string) [][]string {
	t.Helper()
	_, src := readmeBlock(t, readme, func(line string) (string, bool) { return "", line == "<!-- custombuild: commands -->" })
	var out [][]string
	for _, line := range strings.Split(src, "\n") {
		line, _, _ = strings.Cut(line, "#")
		if words := strings.Fields(line); len(words) > 0 {
			out = append(out, words)
		}
	}
	return out
}

// readmeBlock returns the fenced block after the first line of readme that marker
// accepts, and what marker made of that line.
func readmeBlock(t *testing.T, readme string, marker func(string) (string, bool)) (name, src string) {
	t.Helper()
	f, err := os.Open(readme)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	found, in := false, false
	var block []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !found:
			name, found = marker(line)
		case !in && strings.HasPrefix(line, "```"):
			in = true
		case in && line == "```":
			return name, strings.Join(block, "\n") + "\n"
		case in:
			block = append(block, line)
		}
	}
	t.Fatalf("%s has no such custom build block", readme)
	return "", ""
}

// TestCustomBuild builds the README's custom build main in a new module outside the
// repository (a replace to this checkout; go mod tidy and go build with the user's own go
// environment), with a native plugin of that module, and runs it: the whole CLI is
// there (--help lists every command), and its dsh run registers the plugin, whose guard
// denies what it should.
func TestCustomBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module outside the repository with the go command")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	mainPath, mainSrc := customBuildMain(t, filepath.Join(root, "README.md"))
	dir := t.TempDir()
	write := func(name, data string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/myplugin\n\ngo 1.26\n\nrequire github.com/dshkit/dsh v0.0.0\n\nreplace github.com/dshkit/dsh => "+root+"\n")
	// The plugin, with its Register written out (dshscaffold writes the same).
	write("plugin.go", `// Package myplugin denies Bash commands that remove files.
package myplugin

import (
	"context"
	"strings"

	"github.com/dshkit/dsh/generated/dsh"
)

// Plugin is a guard.
type Plugin struct{}

// Register registers the guard.
func (p *Plugin) Register(r *dsh.Registrar) (unregister func()) { return r.Guard(p.Guard) }

// Guard denies a Bash call running rm.
func (p *Plugin) Guard(ctx context.Context, pl *dsh.GuardPayload) dsh.GuardVerdict {
	if pl.Exec.Name == "Bash" && strings.Contains(string(pl.Exec.Arguments), "rm ") {
		return dsh.GuardDeny{Reason: "myplugin: no removals"}
	}
	return dsh.GuardAbstain{}
}
`)
	write(mainPath, mainSrc)
	write("rm.json", `{"responses": [{"toolCalls": [{"id": "c1", "name": "Bash", "arguments": {"command": "rm -r build"}}]}, {"text": "done"}]}`)
	if err := os.MkdirAll(filepath.Join(dir, "ws", "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// The README's commands, as it gives them (go mod tidy, then go build).
	cmds := customBuildCommands(t, filepath.Join(root, "README.md"))
	if len(cmds) == 0 {
		t.Fatal("the README gives no commands for the custom build")
	}
	for _, c := range cmds {
		if c[0] != "go" {
			t.Fatalf("a README custom build command that is not go: %q", c)
		}
		run(goBin, c[1:]...)
	}
	bin := filepath.Join(dir, filepath.Base(filepath.Dir(mainPath)))
	help := run(bin, "--help")
	for _, c := range []string{"acp", "hooks", "log", "run"} {
		if !strings.Contains(help, "\n  "+c+" ") {
			t.Errorf("mydsh --help does not list %s:\n%s", c, help)
		}
	}
	out := run(bin, "run", "--model", "scripted:rm.json", "--workspace", "ws", "clean", "up")
	if !strings.Contains(out, "myplugin: no removals") {
		t.Errorf("the compiled-in guard did not deny:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "ws", "build")); err != nil {
		t.Errorf("the denied rm ran: %v", err)
	}
}
