package hookproto

import (
	"errors"
	"strings"
	"testing"
)

// In Claude Code a pattern of letters, digits, _, -, space, comma and | is an exact list
// (it matches only the names it lists), whatever letters or digits it holds; any other
// character makes it a regular expression.
func TestClaudeCodeExactListCharacters(t *testing.T) {
	for _, c := range []struct {
		pattern, subject string
		want             bool
	}{
		{"a", "Bash", false}, {"z", "Fizz", false}, {"A", "AB", false}, {"Z", "ZZ", false},
		{"0", "10", false}, {"9", "99", false}, {"a_-9", "xa_-9", false}, {"a", "a", true},
		{"a.", "Bash.", true}, // "." makes it a regular expression
	} {
		m, err := Compile(ClaudeCode, c.pattern)
		if err != nil {
			t.Fatalf("Compile(%q): %v", c.pattern, err)
		}
		if got := m.Match(c.subject); got != c.want {
			t.Errorf("%q matches %q: %v, want %v", c.pattern, c.subject, got, c.want)
		}
	}
}

// Every backreference digit, 1 to 9, is named as a JavaScript-only construct.
func TestMatcherNamesEveryBackreferenceDigit(t *testing.T) {
	for _, p := range []string{`(a)\1`, `(a)(b)(c)(d)(e)(f)(g)(h)(i)\9`} {
		_, err := Compile(Codex, p)
		if want := `backreference "\\` + p[len(p)-1:] + `"`; !errors.Is(err, ErrJSOnlySyntax) || !strings.Contains(err.Error(), want) {
			t.Errorf("Compile(%q) = %v, want %s named", p, err, want)
		}
	}
}
