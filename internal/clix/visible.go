package clix

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Visible returns s as dsh shows text it did not write (a model's words, a tool's output, a
// hook's stderr, a file name) to a person: every control character but newline and tab
// is written out, so that none reaches the terminal as a control. C0 controls, DEL and
// a byte that is not UTF-8 become \xHH (ESC is \x1b, a bare carriage return \x0d); C1
// controls (U+0080 to U+009F, which some terminals obey as ESC sequences) become \u0080
// to \u009f. A string without them is returned as it is.
func Visible(s string) string {
	return escape(s, func(r rune, b byte) string {
		if r == utf8.RuneError {
			return fmt.Sprintf(`\x%02x`, b)
		}
		if r < 0x80 {
			return fmt.Sprintf(`\x%02x`, r)
		}
		return fmt.Sprintf(`\u%04x`, r)
	})
}

// VisibleJSON is Visible for a line that holds JSON (dsh log --raw): JSON's encoder already
// escapes the C0 controls a string holds, and what it lets through, DEL and the C1
// controls, is written as the JSON escape \u00HH, so that the line still decodes to the
// same value.
func VisibleJSON(s string) string {
	return escape(s, func(r rune, b byte) string {
		if r == utf8.RuneError {
			return `\ufffd`
		}
		return fmt.Sprintf(`\u%04x`, r)
	})
}

// escape replaces each control rune of s (each byte that is not UTF-8, as RuneError and
// the byte) by what esc returns; newline and tab stay.
func escape(s string, esc func(r rune, b byte) string) string {
	if !hasControl(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(esc(r, s[i]))
		case isControl(r):
			b.WriteString(esc(r, 0))
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// hasControl reports whether s holds a rune Visible rewrites.
func hasControl(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || isControl(r) {
			return true
		}
		i += n
	}
	return false
}

// isControl reports whether r is a C0 control other than newline and tab, DEL, or a C1
// control.
func isControl(r rune) bool {
	return (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f)
}
