package hookproto

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ErrInvalidMatcher is wrapped by every matcher compilation error (see [MatcherError]).
var ErrInvalidMatcher = errors.New("invalid matcher")

// ErrJSOnlySyntax is wrapped by a [MatcherError] whose pattern uses regular-expression
// syntax that JavaScript has and RE2 lacks: lookahead, lookbehind or backreferences.
var ErrJSOnlySyntax = errors.New("JavaScript-only regex syntax")

// MatcherError reports a matcher pattern that does not compile. It unwraps to
// [ErrInvalidMatcher] and to its cause: [ErrJSOnlySyntax] or a *syntax.Error from RE2.
type MatcherError struct {
	// Dialect is the protocol whose rules were applied.
	Dialect Dialect
	// Pattern is the matcher as configured.
	Pattern string
	// Event is the hook event the matcher belongs to; empty when unknown ([Compile]
	// leaves it empty, the loader fills it in).
	Event string
	// Err is the cause.
	Err error
}

// Error formats the error as `invalid claude-code regex matcher "(" on event "PreToolUse": …`.
func (e *MatcherError) Error() string {
	on := ""
	if e.Event != "" {
		on = fmt.Sprintf(" on event %q", e.Event)
	}
	return fmt.Sprintf("invalid %s regex matcher %q%s: %v", e.Dialect, e.Pattern, on, e.Err)
}

// Unwrap returns [ErrInvalidMatcher] and the cause.
func (e *MatcherError) Unwrap() []error { return []error{ErrInvalidMatcher, e.Err} }

type matchKind uint8

const (
	matchAll matchKind = iota
	matchExact
	matchRegexp
)

// Matcher decides whether a hook group applies to a subject (a tool name, a SessionStart
// source, an agent type, …). Matching is case-sensitive. The zero Matcher matches
// everything. Matchers are immutable and safe for concurrent use.
type Matcher struct {
	pattern string
	kind    matchKind
	names   []string
	re      *regexp.Regexp
}

// Compile turns a configured matcher into a [Matcher] under the rules r of dialect d (d
// names the dialect in errors; docs/design/HOOK-PROTOCOLS.md#12-matchers, docs/design/HOOK-PROTOCOLS.md#24-matchers and docs/design/HOOK-PROTOCOLS.md#bridge-decision-1-claude-code-baseline):
//
//   - "" and "*" match everything, in every dialect;
//   - under r.ExactListMatchers (Claude Code), a pattern made only of ASCII letters,
//     digits, '_', '-', ' ', ',' and '|' is an exact list of names split on '|' and ','
//     (each trimmed; empty names are dropped); anything else is an unanchored RE2
//     regular expression;
//   - otherwise (Codex) always an unanchored RE2 regular expression.
//
// A pattern RE2 rejects yields a *[MatcherError]; when the cause is JavaScript-only
// syntax (lookaround, backreferences) it wraps [ErrJSOnlySyntax] and says so.
func Compile(r Rules, d Dialect, pattern string) (Matcher, error) {
	return compile(r, d, pattern)
}

// compile is Compile under the rules r of dialect d.
func compile(r Rules, d Dialect, pattern string) (Matcher, error) {
	if pattern == "" || pattern == "*" {
		return Matcher{pattern: pattern}, nil
	}
	if r.ExactListMatchers && isExactList(pattern) {
		var names []string
		for _, n := range strings.FieldsFunc(pattern, func(r rune) bool { return r == '|' || r == ',' }) {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
		return Matcher{pattern: pattern, kind: matchExact, names: names}, nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		if js := jsOnlyConstruct(pattern); js != "" {
			err = fmt.Errorf("%w: %s is not supported (RE2 has no lookaround or backreferences)", ErrJSOnlySyntax, js)
		}
		return Matcher{}, &MatcherError{Dialect: d, Pattern: pattern, Err: err}
	}
	return Matcher{pattern: pattern, kind: matchRegexp, re: re}, nil
}

// Match reports whether subject is matched.
func (m Matcher) Match(subject string) bool {
	switch m.kind {
	case matchExact:
		for _, n := range m.names {
			if n == subject {
				return true
			}
		}
		return false
	case matchRegexp:
		return m.re.MatchString(subject)
	default:
		return true
	}
}

// MatchesAll reports whether the matcher matches every subject ("", "*" or absent).
func (m Matcher) MatchesAll() bool { return m.kind == matchAll }

// String returns the pattern as configured ("" when absent).
func (m Matcher) String() string { return m.pattern }

func isExactList(p string) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '_' || c == '-' || c == ' ' || c == ',' || c == '|') {
			return false
		}
	}
	return true
}

// jsOnlyConstruct names the first lookaround or backreference in p outside a character
// class, or returns "". It only refines the message for a pattern RE2 already rejected.
func jsOnlyConstruct(p string) string {
	inClass := false
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			if i+1 < len(p) && !inClass {
				if c := p[i+1]; '1' <= c && c <= '9' {
					return fmt.Sprintf("backreference %q", p[i:i+2])
				} else if c == 'k' && strings.HasPrefix(p[i+2:], "<") {
					return fmt.Sprintf("named backreference %q", `\k<`)
				}
			}
			i++
		case '[':
			inClass = true
		case ']':
			inClass = false
		case '(':
			if inClass {
				continue
			}
			for _, la := range []struct{ prefix, name string }{
				{"(?=", "lookahead"}, {"(?!", "negative lookahead"},
				{"(?<=", "lookbehind"}, {"(?<!", "negative lookbehind"},
			} {
				if strings.HasPrefix(p[i:], la.prefix) {
					return fmt.Sprintf("%s %q", la.name, la.prefix)
				}
			}
		}
	}
	return ""
}

// Exact returns a matcher that matches the subject equal to pattern ("" and "*" match
// everything): the rule of Gemini CLI's SessionStart, SessionEnd and PreCompress.
func Exact(pattern string) Matcher {
	if pattern = strings.TrimSpace(pattern); pattern == "" || pattern == "*" {
		return Matcher{pattern: pattern}
	}
	return Matcher{pattern: pattern, kind: matchExact, names: []string{pattern}}
}

// CompileRegex compiles pattern as an unanchored regular expression ("" and "*" match
// everything). A pattern that does not compile is a *[MatcherError], or, with
// invalidExact (Gemini CLI's rule), an exact string.
func CompileRegex(d Dialect, pattern string, invalidExact bool) (Matcher, error) {
	if invalidExact {
		pattern = strings.TrimSpace(pattern)
	}
	if pattern == "" || pattern == "*" {
		return Matcher{pattern: pattern}, nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		if invalidExact {
			return Matcher{pattern: pattern, kind: matchExact, names: []string{pattern}}, nil
		}
		return Matcher{}, &MatcherError{Dialect: d, Pattern: pattern, Err: err}
	}
	return Matcher{pattern: pattern, kind: matchRegexp, re: re}, nil
}
