package runner_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runner"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/session"
)

// newWith builds a session of cfg over a memory log and a scripted model answering "done".
func newWith(t *testing.T, cfg runner.Config) (*runner.Session, error) {
	t.Helper()
	log, err := session.Open(context.Background(), session.NewMemory())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	cfg.Log, cfg.SessionID = log, "ses_test"
	if cfg.Workspace == "" {
		cfg.Workspace = t.TempDir()
	}
	cfg.OpenModel = func(string, runner.ContextPlacement) (llm.Model, dsh.LLMCallConfig, error) {
		return llm.NewScripted(llm.ScriptedResponse{Text: "done"}), dsh.LLMCallConfig{Provider: "scripted", Model: "test"}, nil
	}
	s, err := runner.New(context.Background(), cfg)
	if s != nil {
		t.Cleanup(s.Close)
	}
	return s, err
}

// A permission setting dsh cannot apply stops the session: a rule that does not parse
// (named by file and JSON path), a mode or rules the dialect does not have.
func TestPermissionErrors(t *testing.T) {
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(ws, ".claude", "settings.json")
	if err := os.WriteFile(bad, []byte(`{"permissions":{"deny":["Bash(rm *"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// The project's deny rules are read whatever the trust: a bad one stops the run.
	_, err := newWith(t, runner.Config{Workspace: ws})
	if !errors.Is(err, runner.ErrPermissions) || !strings.Contains(err.Error(), bad+": permissions.deny[0]: permission rule \"Bash(rm *\"") {
		t.Errorf("bad project rule: %v", err)
	}
	for _, tc := range []struct {
		name string
		cfg  runner.Config
		want string
	}{
		{"flag rule", runner.Config{Permissions: runner.Permissions{Disallowed: []string{"Edit("}}}, `--disallowedTools[0]: permission rule "Edit("`},
		{"mode", runner.Config{Permissions: runner.Permissions{Mode: "yolo"}}, `"yolo" is not a permission mode`},
		{"codex mode", runner.Config{Hooks: runner.Hooks{Dialect: "codex"}, Permissions: runner.Permissions{Mode: "plan"}}, "the codex dialect has the modes default and bypassPermissions only"},
		{"codex rules", runner.Config{Hooks: runner.Hooks{Dialect: "codex"}, Permissions: runner.Permissions{Allowed: []string{"Bash"}}}, "the codex dialect has no permission rules"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newWith(t, tc.cfg)
			if !errors.Is(err, runner.ErrPermissions) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want ErrPermissions with %q", err, tc.want)
			}
		})
	}
	if _, err := newWith(t, runner.Config{Permissions: runner.Permissions{Mode: "plan", Allowed: []string{"Bash(git *)"}}}); err != nil {
		t.Errorf("a good configuration: %v", err)
	}
}
