package dialects_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/dshkit/dsh/bridges/claudecode"
	"github.com/dshkit/dsh/bridges/codex"
	"github.com/dshkit/dsh/bridges/dialects"
	"github.com/dshkit/dsh/generated/hookmap"
)

// Every dialect is registered once, under its table's name, with what the commands need.
func TestAllDescribesEveryTable(t *testing.T) {
	reg := dialects.All()
	if got, want := len(reg), len(hookmap.Bridges); got != want {
		t.Fatalf("%d dialects registered, %d tables generated", got, want)
	}
	for _, tb := range hookmap.Bridges {
		d, ok := reg.Lookup(tb.Dialect)
		if !ok {
			t.Fatalf("no dialect %q", tb.Dialect)
		}
		if d.Table != tb || d.Name != tb.Dialect {
			t.Errorf("%s: table %p name %q", tb.Dialect, d.Table, d.Name)
		}
		if d.New == nil || d.NewTranscript == nil || d.TranscriptSuffix == "" || d.ToolStyle == "" || d.ContinuationCap <= 0 || d.ModelProvider == "" {
			t.Errorf("%s: incomplete descriptor %+v", d.Name, d)
		}
		if d.DefaultTimeout().Seconds() != float64(tb.DefaultTimeoutSec) {
			t.Errorf("%s: DefaultTimeout %v, table %d s", d.Name, d.DefaultTimeout(), tb.DefaultTimeoutSec)
		}
	}
	if _, ok := reg.Lookup("no-such-dialect"); ok {
		t.Error("Lookup found an unknown dialect")
	}
	if dialects.Default() != reg.Names()[0] {
		t.Errorf("Default %q, first %q", dialects.Default(), reg.Names()[0])
	}
}

// The project files the bridges discover are the descriptors' project-scope settings.
func TestProjectFilesFollowSettings(t *testing.T) {
	reg := dialects.All()
	cc, _ := reg.Lookup(hookmap.ClaudeCode.Dialect)
	cx, _ := reg.Lookup(hookmap.Codex.Dialect)
	if !slices.Equal(cc.ProjectFiles(), claudecode.ProjectFiles) || !slices.Equal(cc.ProjectFiles(), []string{".claude/settings.json", ".claude/settings.local.json"}) {
		t.Errorf("claude-code project files %v / %v", cc.ProjectFiles(), claudecode.ProjectFiles)
	}
	if !slices.Equal(cx.ProjectFiles(), codex.ProjectFiles) || !slices.Equal(cx.ProjectFiles(), []string{".codex/hooks.json"}) {
		t.Errorf("codex project files %v / %v", cx.ProjectFiles(), codex.ProjectFiles)
	}
	env := func(k string) string {
		if k == "CODEX_HOME" {
			return "/ch"
		}
		return ""
	}
	if got := cx.Settings[0].Path("/home/u", "/p", env); got != filepath.FromSlash("/ch/hooks.json") {
		t.Errorf("codex user hooks with CODEX_HOME: %s", got)
	}
	if got := cx.Settings[0].Path("/home/u", "/p", func(string) string { return "" }); got != filepath.FromSlash("/home/u/.codex/hooks.json") {
		t.Errorf("codex user hooks: %s", got)
	}
	if got := cc.Settings[2].Path("/home/u", "/p", nil); got != filepath.FromSlash("/p/.claude/settings.local.json") {
		t.Errorf("claude-code local settings: %s", got)
	}
	if !slices.Equal(cc.Sources(), []string{"user", "project", "local"}) {
		t.Errorf("claude-code sources %v", cc.Sources())
	}
}
