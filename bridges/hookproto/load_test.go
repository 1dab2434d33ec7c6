package hookproto

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/hookmap"
)

// The largest timeout a handler may set (a year) loads as given.
func TestLoadLargestTimeout(t *testing.T) {
	max := strconv.Itoa(maxTimeoutSeconds)
	c, ds := Load([]byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x","timeout":`+max+`}]}]}}`),
		LoadOptions{Dialect: "any", Events: []string{"Stop"}, Rules: &Rules{}})
	if len(ds) != 0 {
		t.Fatalf("timeout %s: %v", max, ds)
	}
	if hs := c.Handlers("Stop"); len(hs) != 1 || hs[0].Timeout != maxTimeoutSeconds*time.Second {
		t.Errorf("timeout %s: handlers %+v", max, hs)
	}
}

// A timeout past the largest (a year), one that would overflow a Duration, a negative
// one or NaN-like garbage is a diagnostic naming the field, and the handler keeps the
// default: never a wrapped, negative timeout.
func TestLoadTimeoutOutOfRange(t *testing.T) {
	for _, v := range []string{strconv.Itoa(maxTimeoutSeconds + 1), "9223372037", "1e300", "-1", "0", `"10"`} {
		c, ds := Load([]byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x","timeout":`+v+`}]}]}}`),
			LoadOptions{Dialect: "any", Events: []string{"Stop"}, Rules: &Rules{}})
		if len(ds) != 1 || !strings.HasSuffix(ds[0].Path, ".timeout") {
			t.Errorf("timeout %s: diagnostics %v, want one naming the field", v, ds)
		}
		if hs := c.Handlers("Stop"); len(hs) != 1 || hs[0].Timeout < 0 || hs[0].Timeout > maxTimeoutSeconds*time.Second {
			t.Errorf("timeout %s: handlers %+v", v, hs)
		}
	}
}

// An event of the table's Unfired loads with one diagnostic that skips nothing and says
// why it never fires; its hooks are not among the loaded ones. An event neither mapped
// nor unfired is still skipped, and so is an unfired one when no table is at hand.
func TestLoadUnfiredEvent(t *testing.T) {
	table := &hookmap.Bridge{Dialect: "any", Unfired: map[string]string{"SubagentStop": "it has no subagents"}}
	cfg := []byte(`{"hooks":{"SubagentStop":[{"hooks":[{"type":"command","command":"x"}]}],"Nope":[{"hooks":[{"type":"command","command":"y"}]}]}}`)
	c, ds := Load(cfg, LoadOptions{Dialect: "any", Source: "f.json", Events: []string{"Stop"}, Rules: &Rules{}, Table: table})
	if len(ds) != 2 {
		t.Fatalf("diagnostics %v, want two", ds)
	}
	un, bad := ds[1], ds[0] // in event-name order: Nope, SubagentStop
	if !errors.Is(un, ErrUnfiredEvent) || un.Skipped != "" || un.Event != "SubagentStop" ||
		un.Error() != "f.json: hooks.SubagentStop: hooks for SubagentStop never fire in dsh: it has no subagents" {
		t.Errorf("unfired diagnostic %q (skipped %q), want one that skips nothing", un.Error(), un.Skipped)
	}
	if !errors.Is(bad, ErrUnsupportedEvent) || bad.Skipped != "event" {
		t.Errorf("unknown event diagnostic %q (skipped %q)", bad.Error(), bad.Skipped)
	}
	if hs := c.Handlers("SubagentStop"); len(hs) != 0 {
		t.Errorf("handlers of an unfired event loaded: %+v", hs)
	}
	_, ds = Load(cfg, LoadOptions{Dialect: "any", Events: []string{"Stop"}, Rules: &Rules{}})
	for _, d := range ds {
		if errors.Is(d, ErrUnfiredEvent) || d.Skipped != "event" {
			t.Errorf("without a table: %q (skipped %q), want every event skipped", d.Error(), d.Skipped)
		}
	}
}

// A source's Data loads instead of its file, which then only names it: an agent
// definition's frontmatter hooks, no file of their own.
func TestLoadSourcesData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.md") // never written
	data := []byte(`{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "ok"}, {"type": "nope"}]}]}}`)
	c, diags := LoadSources([]Source{{Path: path, Data: data}},
		SourcesOptions{Dialect: ClaudeCode, Events: []string{"PreToolUse"}, Table: &hookmap.ClaudeCode})
	hs := c.Handlers("PreToolUse")
	if len(hs) != 1 || hs[0].Command != "ok" || hs[0].Source != path {
		t.Fatalf("handlers %+v", hs)
	}
	if len(diags) != 1 || diags[0].File != path {
		t.Fatalf("diagnostics %v, want one naming %s", diags, path)
	}
}
