package hookproto

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// CapContext keeps as much text as fits with the note, which counts the omitted
// characters; when only the note would fit, the text is just cut.
func TestCapContextCounts(t *testing.T) {
	s := strings.Repeat("é", 100)
	note := func(omitted int) string { return fmt.Sprintf("\n[truncated: %d of 100 characters omitted]", omitted) }
	noteLen := utf8.RuneCountInString(note(100))
	for _, c := range []struct {
		max  int
		want string
	}{
		{100, s},
		{60, strings.Repeat("é", 60-noteLen) + note(100-(60-noteLen))},
		{noteLen + 1, "é" + note(99)},
		{noteLen, strings.Repeat("é", noteLen)},
		{10, strings.Repeat("é", 10)},
	} {
		if got := CapContext(s, c.max); got != c.want {
			t.Errorf("CapContext(100 runes, %d) = %q, want %q", c.max, got, c.want)
		}
	}
}
