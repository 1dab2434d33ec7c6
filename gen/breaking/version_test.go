package breaking_test

import (
	"strings"
	"testing"

	"github.com/dshkit/dsh/gen/breaking"
)

func TestAnnounced(t *testing.T) {
	changelog := []byte("# Spec changelog\n\n## [2.0.0] - 2027-01-01\n\nDropped x.\n\n## 1.0.0\n")
	broken := breaking.Report{Findings: []breaking.Finding{{Rule: breaking.WireFieldRemoved}}}
	for _, c := range []struct {
		old, new string
		ok       bool
		why      string
	}{
		{"1.0.0", "1.0.0", false, "needs a major version bump (the spec is 1.0.0, REF's is 1.0.0)"},
		{"1.0.0", "1.4.0", false, "needs a major version bump"},
		{"", "2.0.0", true, "announced: version 2.0.0 (from 1.0.0)"},
		{"1.2.0", "2.0.0", true, "announced"},
		{"1.0.0", "3.0.0", false, `needs an entry "## 3.0.0"`},
		{"2.0.0", "1.0.0", false, "needs a major version bump"},
	} {
		r := broken
		r.OldVersion, r.NewVersion = c.old, c.new
		ok, why := breaking.Announced(r, "REF", changelog, "spec/CHANGELOG.md")
		if ok != c.ok || !strings.Contains(why, c.why) {
			t.Errorf("%q -> %q: ok=%v %q, want ok=%v containing %q", c.old, c.new, ok, why, c.ok, c.why)
		}
	}
}

func TestChangelogHas(t *testing.T) {
	log := []byte("## v1.2.0\n### 1.3.0\n## 1.4.0 (2027)\n text ## 1.5.0\n")
	for v, want := range map[string]bool{"1.2.0": true, "1.3.0": false, "1.4.0": true, "1.5.0": false, "1.2": false} {
		if got := breaking.ChangelogHas(log, v); got != want {
			t.Errorf("ChangelogHas(%s) = %v, want %v", v, got, want)
		}
	}
}
