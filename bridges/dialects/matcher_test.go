package dialects_test

import (
	"errors"
	"regexp/syntax"
	"strings"
	"testing"
	"time"

	"github.com/dshkit/dsh/bridges/claudecode"
	"github.com/dshkit/dsh/bridges/codex"
	"github.com/dshkit/dsh/bridges/hookproto"
)

func TestMatcher(t *testing.T) {
	tests := []struct {
		dialect hookproto.Dialect
		pattern string
		yes, no []string
	}{
		// Scenario 14: absent, "" and "*" match everything in both dialects.
		{hookproto.ClaudeCode, "", []string{"Bash", "", "anything"}, nil},
		{hookproto.ClaudeCode, "*", []string{"Bash", "", "anything"}, nil},
		{hookproto.Codex, "", []string{"Bash", ""}, nil},
		{hookproto.Codex, "*", []string{"Bash", ""}, nil},
		// Scenario 12: an exact name in Claude Code, an unanchored regex in Codex.
		{hookproto.ClaudeCode, "Bash", []string{"Bash"}, []string{"BashOutput", "bash", "MyBash"}},
		{hookproto.Codex, "Bash", []string{"Bash", "BashOutput", "MyBash"}, []string{"bash"}},
		// Scenario 13.
		{hookproto.ClaudeCode, "Edit|Write", []string{"Edit", "Write"}, []string{"EditFile", "Read", "Edit|Write"}},
		{hookproto.Codex, "Edit|Write", []string{"Edit", "Write", "NotebookEdit"}, []string{"Read"}},
		{hookproto.ClaudeCode, "^Bash$", []string{"Bash"}, []string{"BashOutput"}},
		{hookproto.ClaudeCode, "Bash.*", []string{"Bash", "BashOutput"}, []string{"Read"}},
		{hookproto.ClaudeCode, `.*\.ts$`, []string{"foo.ts"}, []string{"foo.js"}},
		// Regex mode is unanchored: Edit.* also hits NotebookEdit.
		{hookproto.ClaudeCode, "Edit.*", []string{"Edit", "NotebookEdit", "EditFile"}, []string{"Write"}},
		// Scenario 14: Codex ^Edit$ does not match shell.
		{hookproto.Codex, "^Edit$", []string{"Edit"}, []string{"shell", "NotebookEdit"}},
		// Scenario 15: SessionStart source.
		{hookproto.ClaudeCode, "startup", []string{"startup"}, []string{"resume"}},
		// Scenario 16: the current literal set (',' ' ' '-').
		{hookproto.ClaudeCode, "Bash, Read", []string{"Bash", "Read"}, []string{"Bash, Read", "Edit", " Bash"}},
		{hookproto.Codex, "Bash, Read", []string{"Bash, Read", "xBash, Ready"}, []string{"Bash", "Read"}},
		{hookproto.ClaudeCode, "code-reviewer", []string{"code-reviewer"}, []string{"senior-code-reviewer"}},
		{hookproto.ClaudeCode, "Edit,Write | Read", []string{"Edit", "Write", "Read"}, []string{""}},
		{hookproto.ClaudeCode, " | ", nil, []string{"", " ", "Bash"}}, // a list of no names
		// Scenario 17: MCP tool names.
		{hookproto.ClaudeCode, "mcp__memory", []string{"mcp__memory"}, []string{"mcp__memory__create_entities"}},
		{hookproto.ClaudeCode, "mcp__memory__.*", []string{"mcp__memory__create_entities", "mcp__memory__read"}, []string{"mcp__github__list", "mcp__memory"}},
		{hookproto.Codex, "mcp__memory__.*", []string{"mcp__memory__create_entities"}, []string{"mcp__github__list"}},
		{hookproto.Codex, "apply_patch|Write|Edit", []string{"apply_patch", "Edit"}, []string{"Bash"}},
	}
	for _, tt := range tests {
		m, err := compile(tt.dialect, tt.pattern)
		if err != nil {
			t.Errorf("Compile(%s, %q): %v", tt.dialect, tt.pattern, err)
			continue
		}
		if m.String() != tt.pattern {
			t.Errorf("String() = %q, want %q", m.String(), tt.pattern)
		}
		if all := tt.pattern == "" || tt.pattern == "*"; m.MatchesAll() != all {
			t.Errorf("%s %q: MatchesAll = %v", tt.dialect, tt.pattern, m.MatchesAll())
		}
		for _, s := range tt.yes {
			if !m.Match(s) {
				t.Errorf("%s %q should match %q", tt.dialect, tt.pattern, s)
			}
		}
		for _, s := range tt.no {
			if m.Match(s) {
				t.Errorf("%s %q should not match %q", tt.dialect, tt.pattern, s)
			}
		}
	}
	var zero hookproto.Matcher
	if !zero.Match("x") || !zero.MatchesAll() {
		t.Error("the zero Matcher should match everything")
	}
}

func TestMatcherRejects(t *testing.T) {
	tests := []struct {
		pattern, construct string // construct is empty for a plain RE2 syntax error
	}{
		{"(?=Bash)", `lookahead "(?="`},
		{"^(?!Bash).*", `negative lookahead "(?!"`},
		{"(?<=mcp__)x", `lookbehind "(?<="`},
		{"(?<!mcp__)x", `negative lookbehind "(?<!"`},
		{`(Edit)\1`, `backreference "\\1"`},
		{`(?<t>Edit)\k<t>`, `named backreference "\\k<"`},
		{"(", ""},
		{"[", ""},
		{"Bash(git *", ""},
		{`[(?=]\`, ""}, // inside a class "(?=" is literal; the error is the trailing '\'
	}
	for _, d := range []hookproto.Dialect{hookproto.ClaudeCode, hookproto.Codex} {
		for _, tt := range tests {
			if tt.construct != "" && d == hookproto.ClaudeCode {
				continue // JavaScript has it: see TestMatcherECMAScript
			}
			_, err := compile(d, tt.pattern)
			var me *hookproto.MatcherError
			if !errors.As(err, &me) || !errors.Is(err, hookproto.ErrInvalidMatcher) || me.Pattern != tt.pattern || me.Dialect != d {
				t.Errorf("Compile(%s, %q) = %v, want a MatcherError", d, tt.pattern, err)
				continue
			}
			if !strings.Contains(err.Error(), `regex matcher "`) || !strings.Contains(err.Error(), string(d)) {
				t.Errorf("message %q lacks the dialect or pattern", err)
			}
			if js := errors.Is(err, hookproto.ErrJSOnlySyntax); js != (tt.construct != "") || js && !strings.Contains(err.Error(), tt.construct) {
				t.Errorf("Compile(%s, %q) = %v, want JS-only construct %q", d, tt.pattern, err, tt.construct)
			}
			var se *syntax.Error
			if tt.construct == "" && d == hookproto.Codex && !errors.As(err, &se) {
				t.Errorf("Compile(%s, %q) = %v, want the RE2 *syntax.Error", d, tt.pattern, err)
			}
		}
	}
	// RE2-valid patterns that look like JS-only syntax are accepted.
	for _, p := range []string{`(?<name>Edit)`, `\\1`, `[(?=]`, `\12`} {
		if _, err := compile(hookproto.Codex, p); err != nil {
			t.Errorf("Compile(codex, %q): %v", p, err)
		}
	}
}

// Claude Code builds `new RegExp(matcher)` (measured in 2.1.328), so a lookahead,
// lookbehind or backreference matcher is a JavaScript regular expression that fires; a
// pattern JavaScript rejects (Node 20's verdicts: "Unterminated group", "Invalid group",
// "Nothing to repeat") is a MatcherError, and its group never matches, as in the engine.
func TestMatcherECMAScript(t *testing.T) {
	for _, tt := range []struct {
		pattern string
		yes, no []string
	}{
		{"^(?!Bash$)", []string{"Read", "BashOutput"}, []string{"Bash"}},
		{"(?=Bash)", []string{"Bash", "MyBash"}, []string{"Read"}},
		{"(?<=mcp__)mem", []string{"mcp__memory"}, []string{"memory"}},
		{"(?<!mcp__)mem", []string{"memory"}, []string{"mcp__memory"}},
		{`^(.)\1`, []string{"aab"}, []string{"ab"}},
		{`^(?<t>E).*\k<t>$`, []string{"EditE"}, []string{"Edit"}},
		// JavaScript without the u flag: \z, \A and \p are the letters themselves, \w
		// is ASCII, "." stops at a newline, [^] is any character.
		{`\z`, []string{"z"}, []string{"Z", ""}},
		{`\p{L}`, []string{"p{L}"}, []string{"x"}},
		{`^\w$`, []string{"a"}, []string{"é"}},
		{`^[^]$`, []string{"\n"}, nil},
		{`^.$`, []string{"x"}, []string{"\n"}},
		{`(?<t>x)`, []string{"x"}, nil},
	} {
		m, err := compile(hookproto.ClaudeCode, tt.pattern)
		if err != nil {
			t.Errorf("Compile(claude-code, %q): %v", tt.pattern, err)
			continue
		}
		for _, s := range tt.yes {
			if ok, err := m.Test(s); !ok || err != nil {
				t.Errorf("%q should match %q: %v %v", tt.pattern, s, ok, err)
			}
		}
		for _, s := range tt.no {
			if ok, err := m.Test(s); ok || err != nil {
				t.Errorf("%q should not match %q: %v %v", tt.pattern, s, ok, err)
			}
		}
	}
	for _, p := range []string{"(", "(?i)bash", "(?i:bash)", "(?>Bash)", "(?#c)Bash", "(?P<n>x)", "a**", "a{2,1}", `x\`, "(?<a>x)(?<a>y)"} {
		_, err := compile(hookproto.ClaudeCode, p)
		var me *hookproto.MatcherError
		if !errors.As(err, &me) || me.Dialect != hookproto.ClaudeCode || me.Pattern != p {
			t.Errorf("Compile(claude-code, %q) = %v, want a MatcherError (JavaScript rejects it)", p, err)
		}
	}
	// A class or an escape keeps "(?" literal.
	for _, p := range []string{`[(?i)]`, `\(?i`} {
		if _, err := compile(hookproto.ClaudeCode, p); err != nil {
			t.Errorf("Compile(claude-code, %q): %v", p, err)
		}
	}
}

// A catastrophic pattern is bounded by MatchTimeout: the test is undecided, not false,
// and Match reports it as matching so that nothing behind it is skipped silently.
func TestMatcherTimeout(t *testing.T) {
	m, err := compile(hookproto.ClaudeCode, "^(a+)+$")
	if err != nil {
		t.Fatal(err)
	}
	subject := strings.Repeat("a", 40) + "!"
	start := time.Now()
	ok, err := m.Test(subject)
	if !errors.Is(err, hookproto.ErrMatcherUndecided) || ok {
		t.Fatalf("Test = %v, %v; want undecided", ok, err)
	}
	if d := time.Since(start); d > 20*hookproto.MatchTimeout {
		t.Errorf("the test took %v", d)
	}
	if !m.Match(subject) {
		t.Error("Match of an undecided test must report true")
	}
}

func FuzzMatcher(f *testing.F) {
	for _, s := range [][2]string{
		{"", "Bash"}, {"*", ""}, {"Edit|Write", "Edit"}, {"Edit.*", "NotebookEdit"},
		{"mcp__memory__.*", "mcp__memory__x"}, {"Bash, Read", "Read"}, {"(?!x)", "y"},
		{`(a)\1`, "aa"}, {"(", "("}, {`[\`, "\xff"}, {"a{1000}", "a"}, {"\xff|a", "\xff"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, subject string) {
		for _, d := range []hookproto.Dialect{hookproto.ClaudeCode, hookproto.Codex} {
			m, err := compile(d, pattern)
			if err != nil {
				if !errors.Is(err, hookproto.ErrInvalidMatcher) {
					t.Fatalf("Compile(%s, %q): error %v does not wrap ErrInvalidMatcher", d, pattern, err)
				}
				continue
			}
			got := m.Match(subject)
			if (pattern == "" || pattern == "*") && !got {
				t.Fatalf("%s %q must match everything, not %q", d, pattern, subject)
			}
		}
	})
}

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
		m, err := compile(hookproto.ClaudeCode, c.pattern)
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
		_, err := compile(hookproto.Codex, p)
		if want := `backreference "\\` + p[len(p)-1:] + `"`; !errors.Is(err, hookproto.ErrJSOnlySyntax) || !strings.Contains(err.Error(), want) {
			t.Errorf("Compile(%q) = %v, want %s named", p, err, want)
		}
	}
}

// rules are the rules of the dialects these tests compare, by name.
var rules = map[hookproto.Dialect]hookproto.Rules{hookproto.ClaudeCode: claudecode.Rules, hookproto.Codex: codex.Rules}

// compile is hookproto.Compile under the rules of dialect d.
func compile(d hookproto.Dialect, pattern string) (hookproto.Matcher, error) {
	return hookproto.Compile(rules[d], d, pattern)
}
