package hookproto

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/dlclark/regexp2/v2"
)

// ErrInvalidMatcher is wrapped by every matcher compilation error (see [MatcherError]).
var ErrInvalidMatcher = errors.New("invalid matcher")

// ErrJSOnlySyntax is wrapped by a [MatcherError] whose pattern uses regular-expression
// syntax that JavaScript has and RE2 lacks: lookahead, lookbehind or backreferences.
var ErrJSOnlySyntax = errors.New("JavaScript-only regex syntax")

// ErrMatcherUndecided is wrapped by the error of a match that could not be decided: an
// ECMAScript matcher whose test ran past [MatchTimeout] (catastrophic backtracking).
var ErrMatcherUndecided = errors.New("matcher could not be decided")

// RegexDialect is the regular-expression syntax and semantics an engine's regex matchers
// use: data in each dialect's [Rules] (the table's regexDialect).
type RegexDialect string

const (
	// RegexECMAScript is JavaScript's RegExp without flags, as `new RegExp(pattern)`
	// builds it (Claude Code, Gemini CLI): lookaround and backreferences included. It is
	// evaluated by a backtracking engine, so every test is bounded by [MatchTimeout].
	RegexECMAScript RegexDialect = "ecmascript"
	// RegexRE2 is Go's regexp (RE2), which stands for Rust's regex crate (Codex): no
	// lookaround, no backreferences, linear time.
	RegexRE2 RegexDialect = "re2"
)

// MatchTimeout bounds one test of an ECMAScript matcher against one subject. A test that
// runs past it is undecided ([ErrMatcherUndecided]): the engine does not skip the group
// but records a fail-closed outcome for each of its hooks (see [Handler.MatchErr]).
const MatchTimeout = 100 * time.Millisecond

// MatcherError reports a matcher pattern that does not compile. It unwraps to
// [ErrInvalidMatcher] and to its cause: [ErrJSOnlySyntax], a *syntax.Error from RE2 or
// the ECMAScript compiler's error.
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
	re      *regexp.Regexp  // an RE2 matcher
	js      *regexp2.Regexp // an ECMAScript matcher
}

// Compile turns a configured matcher into a [Matcher] under the rules r of dialect d (d
// names the dialect in errors; docs/design/HOOK-PROTOCOLS.md#12-matchers, docs/design/HOOK-PROTOCOLS.md#24-matchers and docs/design/HOOK-PROTOCOLS.md#bridge-decision-1-claude-code-baseline):
//
//   - "" and "*" match everything, in every dialect;
//   - under r.ExactListMatchers (Claude Code), a pattern made only of ASCII letters,
//     digits, '_', '-', ' ', ',' and '|' is an exact list of names split on '|' and ','
//     (each trimmed; empty names are dropped); anything else is an unanchored regular
//     expression in r.RegexDialect;
//   - otherwise (Codex) always an unanchored regular expression in r.RegexDialect.
//
// A pattern the dialect's regular expressions reject yields a *[MatcherError]; under
// RE2, when the cause is JavaScript-only syntax (lookaround, backreferences) it wraps
// [ErrJSOnlySyntax] and says so.
func Compile(r Rules, d Dialect, pattern string) (Matcher, error) {
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
	return CompileRegex(r, d, pattern)
}

// CompileRegex compiles pattern as an unanchored regular expression in r.RegexDialect
// (RE2 when unset); "" and "*" match everything. A pattern that does not compile is a
// *[MatcherError]; what then becomes of its group is the caller's rule (skipped, or, in
// Gemini CLI, compared as an exact string).
func CompileRegex(r Rules, d Dialect, pattern string) (Matcher, error) {
	if pattern == "" || pattern == "*" {
		return Matcher{pattern: pattern}, nil
	}
	switch r.RegexDialect {
	case RegexECMAScript:
		err := jsGroupError(pattern)
		var re *regexp2.Regexp
		if err == nil {
			re, err = regexp2.Compile(pattern, regexp2.ECMAScript)
		}
		if err != nil {
			return Matcher{}, &MatcherError{Dialect: d, Pattern: pattern, Err: err}
		}
		re.MatchTimeout = MatchTimeout
		return Matcher{pattern: pattern, kind: matchRegexp, js: re}, nil
	case RegexRE2, "":
		re, err := regexp.Compile(pattern)
		if err != nil {
			if js := jsOnlyConstruct(pattern); js != "" {
				err = fmt.Errorf("%w: %s is not supported (%s regular expressions have no lookaround or backreferences)", ErrJSOnlySyntax, js, d)
			}
			return Matcher{}, &MatcherError{Dialect: d, Pattern: pattern, Err: err}
		}
		return Matcher{pattern: pattern, kind: matchRegexp, re: re}, nil
	default:
		return Matcher{}, &MatcherError{Dialect: d, Pattern: pattern, Err: fmt.Errorf("unknown regex dialect %q", r.RegexDialect)}
	}
}

// Test reports whether subject is matched. Its error, which wraps
// [ErrMatcherUndecided], says the match could not be decided (an ECMAScript test ran
// past [MatchTimeout]); the result is then false and must not be read as "no match".
func (m Matcher) Test(subject string) (bool, error) {
	if m.kind == matchRegexp && m.js != nil {
		ok, err := m.js.MatchString(subject)
		if err != nil {
			return false, fmt.Errorf("%w: %q tested against %q: %w", ErrMatcherUndecided, m.pattern, subject, err)
		}
		return ok, nil
	}
	return m.Match(subject), nil
}

// Match reports whether subject is matched. A match that cannot be decided (see
// [Matcher.Test]) reports true, so that nothing behind the matcher is skipped silently;
// the engine uses Test and records the failure.
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
		if m.js != nil {
			ok, err := m.js.MatchString(subject)
			return ok || err != nil
		}
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

// jsScan walks p as JavaScript reads a pattern's structure: it calls at(i) at each
// escape ('\\') and each group opening '(' outside a character class, skips the escaped
// character, and returns at's first non-empty answer ("" when there is none).
func jsScan(p string, at func(i int) string) string {
	inClass := false
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\':
			if !inClass {
				if s := at(i); s != "" {
					return s
				}
			}
			i++
		case c == '[':
			inClass = true
		case c == ']':
			inClass = false
		case c == '(' && !inClass:
			if s := at(i); s != "" {
				return s
			}
		}
	}
	return ""
}

// jsOnlyConstruct names the first lookaround or backreference in p outside a character
// class, or returns "". It only refines the message for a pattern RE2 already rejected.
func jsOnlyConstruct(p string) string {
	return jsScan(p, func(i int) string {
		if p[i] == '\\' {
			if i+1 < len(p) {
				if c := p[i+1]; '1' <= c && c <= '9' {
					return fmt.Sprintf("backreference %q", p[i:i+2])
				} else if c == 'k' && strings.HasPrefix(p[i+2:], "<") {
					return fmt.Sprintf("named backreference %q", `\k<`)
				}
			}
			return ""
		}
		for _, la := range []struct{ prefix, name string }{
			{"(?=", "lookahead"}, {"(?!", "negative lookahead"},
			{"(?<=", "lookbehind"}, {"(?<!", "negative lookbehind"},
		} {
			if strings.HasPrefix(p[i:], la.prefix) {
				return fmt.Sprintf("%s %q", la.name, la.prefix)
			}
		}
		return ""
	})
}

// Exact returns a matcher that matches the subject equal to pattern ("" and "*" match
// everything): the rule of Gemini CLI's SessionStart, SessionEnd and PreCompress.
func Exact(pattern string) Matcher {
	if pattern = strings.TrimSpace(pattern); pattern == "" || pattern == "*" {
		return Matcher{pattern: pattern}
	}
	return Matcher{pattern: pattern, kind: matchExact, names: []string{pattern}}
}

// jsGroupError rejects, as JavaScript's RegExp does, a group construct outside a
// character class that JavaScript lacks and the ECMAScript mode of regexp2 still accepts
// from .NET: inline options "(?i)" and "(?i:…)", atomic groups "(?>…)", comments "(?#…)",
// conditionals, "(?'name'…)" and "(?P<name>…)". JavaScript's groups are "(?:", "(?=",
// "(?!", "(?<=", "(?<!" and "(?<name>".
func jsGroupError(p string) error {
	msg := jsScan(p, func(i int) string {
		if !strings.HasPrefix(p[i:], "(?") {
			return ""
		}
		rest := p[i+2:]
		if rest != "" && strings.ContainsRune(":=!", rune(rest[0])) {
			return ""
		}
		if len(rest) > 1 && rest[0] == '<' && (rest[1] == '=' || rest[1] == '!' || rest[1] == '_' || rest[1] == '$' ||
			'a' <= rest[1] && rest[1] <= 'z' || 'A' <= rest[1] && rest[1] <= 'Z' || rest[1] >= 0x80) {
			return ""
		}
		end := min(len(p), i+4)
		return fmt.Sprintf("invalid group %q at offset %d: JavaScript has no such group", p[i:end], i)
	})
	if msg == "" {
		return nil
	}
	return errors.New(msg)
}
