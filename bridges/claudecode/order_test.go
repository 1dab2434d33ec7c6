package claudecode_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshkit/dsh/bridges/claudecode"
	ht "github.com/dshkit/dsh/bridges/internal/hooktest"
	"github.com/dshkit/dsh/generated/dsh"
)

// TestSessionStartCompactBeforePostCompact: as Claude Code 2.1.328 does (differential
// suite), the engine's rendering runs SessionStart[compact] hooks before the PostCompact
// hooks of a committed compaction, at compaction/post-compact, and injects their
// contexts first; agent/session-start{compact} then runs nothing more. Canonical mode
// keeps the canonical order (PostCompact, then SessionStart at agent/session-start).
func TestSessionStartCompactBeforePostCompact(t *testing.T) {
	for _, c := range []struct {
		canonical bool
		want      []string
	}{{false, []string{"SessionStart", "PostCompact"}}, {true, []string{"PostCompact", "SessionStart"}}} {
		dir := t.TempDir()
		order := filepath.Join(dir, "order")
		h, _ := setupIn(t, dir, claudecode.Config{Canonical: c.canonical, Files: []string{ht.Config(t, t.TempDir(), "settings.json",
			ht.G("PostCompact", "", `echo PostCompact >> `+order),
			ht.G("SessionStart", "compact", `echo SessionStart >> `+order+`; echo '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"after compact"}}'`))}})
		d, err := h.PostCompact(ctx, "cmp_1", dsh.CompactionOriginAuto, "S", 1)
		if err != nil || d.Kind() != dsh.PostCompactAcceptKind {
			t.Fatalf("canonical %v: PostCompact %s, %v", c.canonical, ht.Describe(d), err)
		}
		injectedAtPost := h.Agent.Injected()
		if err := h.SessionStartCompact(ctx, "cmp_1", 1); err != nil {
			t.Fatal(err)
		}
		injectedAtStart := h.Agent.Injected()
		data, _ := os.ReadFile(order)
		if got := strings.Fields(string(data)); !slices.Equal(got, c.want) {
			t.Errorf("canonical %v: hooks ran %v, want %v", c.canonical, got, c.want)
		}
		early, late := injectedAtPost, injectedAtStart
		if c.canonical {
			early, late = late, early
		}
		if len(early) != 1 || !strings.Contains(strings.Join(ht.Texts(early[0]), " "), "after compact") || len(late) != 0 {
			t.Errorf("canonical %v: injected at post-compact %+v, at session-start %+v", c.canonical, injectedAtPost, injectedAtStart)
		}
	}
}
