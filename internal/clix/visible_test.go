package clix

import (
	"encoding/json"
	"testing"
)

// TestVisible: every control but newline and tab is written out, in text and in JSON.
func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"plain\ttext\nnext":     "plain\ttext\nnext",
		"\x1b]52;c;aGk=\x07":    `\x1b]52;c;aGk=\x07`,
		"\x1b]0;title\x07":      `\x1b]0;title\x07`,
		"\x1b[2J":               `\x1b[2J`,
		"over\rwrite":           `over\x0dwrite`,
		"c1 \u009b2J, del \x7f": `c1 \u009b2J, del \x7f`,
		"raw byte \x9b":         `raw byte \x9b`,
		"ünïcode ✓ stays":       "ünïcode ✓ stays",
		"\x00nul":               `\x00nul`,
	} {
		if got := Visible(in); got != want {
			t.Errorf("Visible(%q) = %q, want %q", in, got, want)
		}
	}
	line := `{"text":"c1 ` + "\u009b" + ` del ` + "\x7f" + `"}`
	got := VisibleJSON(line)
	if got != `{"text":"c1 \u009b del \u007f"}` {
		t.Errorf("VisibleJSON(%q) = %q", line, got)
	}
	var a, b map[string]string
	if json.Unmarshal([]byte(line), &a) != nil || json.Unmarshal([]byte(got), &b) != nil || a["text"] != b["text"] {
		t.Errorf("VisibleJSON changed the value: %q, %q", a, b)
	}
}
