package builtin

import (
	"fmt"
	"strings"

	"github.com/rogpeppe/go-internal/diff"
)

// hunk is one hunk of a structured patch, as Claude Code's structuredPatch has it: the
// line ranges (from 1) on each side and the lines, each prefixed " ", "-" or "+"
// ("\ No newline at end of file" after a last line without one).
type hunk struct {
	OldStart int      `json:"oldStart"`
	OldLines int      `json:"oldLines"`
	NewStart int      `json:"newStart"`
	NewLines int      `json:"newLines"`
	Lines    []string `json:"lines"`
}

// patch returns the hunks (3 lines of context) that turn old into new; none when they
// are equal.
func patch(old, new string) []hunk {
	out := []hunk{}
	text := diff.Diff("old", []byte(old), "new", []byte(new))
	var cur *hunk
	for _, l := range strings.SplitAfter(string(text), "\n") {
		l = strings.TrimSuffix(l, "\n")
		switch {
		case strings.HasPrefix(l, "@@ "):
			var h hunk
			if _, err := fmt.Sscanf(l, "@@ -%d,%d +%d,%d @@", &h.OldStart, &h.OldLines, &h.NewStart, &h.NewLines); err != nil {
				cur = nil
				continue
			}
			h.Lines = []string{}
			out = append(out, h)
			cur = &out[len(out)-1]
		case cur == nil:
		case l == "":
		case l[0] == ' ' || l[0] == '-' || l[0] == '+' || l[0] == '\\':
			cur.Lines = append(cur.Lines, l)
		}
	}
	return out
}
