package builtin_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// Claude Code's session reminders (spec/toolsets/claude-code.json's session_reminders):
// the environment with the host's facts, the model by its name, the deferred tools in
// name order; a model the table does not name by its id; none under dsh's style.
func TestSessionReminders(t *testing.T) {
	ws := t.TempDir()
	h := builtin.Host{Platform: "linux", OSVersion: "Linux 6.1.0", Shell: "bash (login shell: sh)"}
	o := builtin.Options{Style: builtin.StyleClaudeCode, Workspace: ws, Model: "claude-sonnet-4-5"}
	got := builtin.SessionReminders(o, h, []string{"WebFetch", "NotebookEdit"})
	if len(got) != 3 {
		t.Fatalf("%d reminders, want 3: %q", len(got), got)
	}
	for _, want := range []string{"# Environment\nYou have been invoked in the following environment: \n - Primary working directory: " + ws + "\n",
		"\n - Is a git repository: false\n - Platform: linux\n - Shell: bash (login shell: sh)\n - OS Version: Linux 6.1.0\n - Downloaded files"} {
		if !strings.Contains(got[0], want) {
			t.Errorf("the environment reminder %q lacks %q", got[0], want)
		}
	}
	if want := "You are powered by the model named Sonnet 4.5. The exact model ID is claude-sonnet-4-5. Assistant knowledge cutoff is January 2025."; got[1] != want {
		t.Errorf("the model reminder %q, want %q", got[1], want)
	}
	if !strings.HasPrefix(got[2], "The following deferred tools are now available via ToolSearch.") || !strings.HasSuffix(got[2], ":\nNotebookEdit\nWebFetch") {
		t.Errorf("the deferred tools reminder %q", got[2])
	}

	// In a git repository (a .git above the workspace), a model the table does not name,
	// no deferred tools.
	sub := filepath.Join(ws, "sub")
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	o.Workspace, o.Model = sub, "some-model"
	got = builtin.SessionReminders(o, h, nil)
	if len(got) != 2 || !strings.Contains(got[0], " - Is a git repository: true\n") || got[1] != "You are powered by the model some-model." {
		t.Errorf("in a git repository, an unnamed model: %q", got)
	}
	if v := builtin.VerifierReminders(o); v != builtin.VerifierAfterFirstResults {
		t.Errorf("the verifier's reminders: %q", v)
	}

	o.Style = builtin.StyleDSH
	if got := builtin.SessionReminders(o, h, []string{"WebFetch"}); got != nil {
		t.Errorf("dsh's style: %q", got)
	}
	if v := builtin.VerifierReminders(o); v != "" {
		t.Errorf("dsh's style's verifier reminders: %q", v)
	}
}

// HostOf names the shell the Bash tool runs and the login shell when $SHELL (of the
// session's environment) names another.
func TestHostOf(t *testing.T) {
	run := "bash"
	if _, err := exec.LookPath(run); err != nil {
		run = "sh"
	}
	for env, want := range map[string]string{"SHELL=/bin/sh": run + " (login shell: sh)", "SHELL=/usr/bin/" + run: run, "HOME=/": run} {
		h := builtin.HostOf(builtin.Options{Env: []string{env}})
		if run == "sh" && env == "SHELL=/bin/sh" {
			want = "sh"
		}
		if h.Shell != want {
			t.Errorf("%s: shell %q, want %q", env, h.Shell, want)
		}
		if h.Platform != runtime.GOOS && !(runtime.GOOS == "windows" && h.Platform == "win32") {
			t.Errorf("platform %q", h.Platform)
		}
		if runtime.GOOS == "linux" && !strings.HasPrefix(h.OSVersion, "Linux ") {
			t.Errorf("OS version %q", h.OSVersion)
		}
	}
}
