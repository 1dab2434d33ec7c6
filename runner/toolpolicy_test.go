package runner_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runner"
)

// The gemini dialect reads tools.core and tools.exclude from the settings files it loads:
// a malformed list stops the session with an error naming the file and the field; a
// well-formed one registers the tool-settings plugin (at agent/request), and none without
// them.
func TestToolSettings(t *testing.T) {
	dir := t.TempDir()
	file := func(body string) string {
		p := filepath.Join(dir, "settings.json")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := file(`{"hooks":{},"tools":{"core":"list_directory"}}`)
	_, err := newWith(t, runner.Config{Hooks: runner.Hooks{Dialect: "gemini", File: bad}})
	if !errors.Is(err, runner.ErrPermissions) || !strings.Contains(err.Error(), bad+": tools.core: not a list of strings") {
		t.Errorf("a malformed tools.core: %v", err)
	}
	good := file(`{"hooks":{},"tools":{"exclude":["glob"]}}`)
	s, err := newWith(t, runner.Config{Hooks: runner.Hooks{Dialect: "gemini", File: good}})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Hooks.Listens(dsh.RequestEventName) {
		t.Error("tools.exclude set, yet no agent/request listener")
	}
	s, err = newWith(t, runner.Config{Hooks: runner.Hooks{Dialect: "gemini", File: file(`{"hooks":{}}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Hooks.Listens(dsh.RequestEventName) {
		t.Error("no tool settings, yet an agent/request listener")
	}
}

// The gemini dialect reads the policy files of $HOME/.gemini/policies: a malformed rule
// stops the session with an error naming the file and the rule; a rule registers the
// tool-settings plugin without any tools list.
func TestToolPolicyFiles(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	dir := filepath.Join(home, ".gemini", "policies")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(t.TempDir(), "settings.json")
	if err := os.WriteFile(settings, []byte(`{"hooks":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	policy := filepath.Join(dir, "p.toml")
	if err := os.WriteFile(policy, []byte("[[rule]]\ntoolName = \"glob\"\ndecision = \"deny\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := newWith(t, runner.Config{Hooks: runner.Hooks{Dialect: "gemini", File: settings}})
	if !errors.Is(err, runner.ErrPermissions) || !strings.Contains(err.Error(), policy+": rule #1: priority") {
		t.Errorf("a rule without a priority: %v", err)
	}
	if err := os.WriteFile(policy, []byte("[[rule]]\ntoolName = \"glob\"\ndecision = \"deny\"\npriority = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := newWith(t, runner.Config{Hooks: runner.Hooks{Dialect: "gemini", File: settings}})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Hooks.Listens(dsh.RequestEventName) {
		t.Error("a deny rule, yet no agent/request listener")
	}
}
