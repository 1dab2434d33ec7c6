// Package permrule holds Claude Code's permission rules as a typed layer: a rule is
// "Tool" or "Tool(specifier)" (`Bash(git *)`, `Bash(npm run test:*)`, `Read(./secrets/**)`,
// `Edit(//abs/**)`, `WebFetch(domain:example.com)`, `mcp__server__tool`,
// `mcp__server__*`). [Parse] reads one rule, with an error naming the rule text and the
// position of the fault; [Rule.Match] tests it against one tool call. Which field of a
// tool's input a specifier is matched against, and how (a shell command, a file path, a
// domain, ...), is not known here: the caller passes it as a [Table], built from the
// engine's table in the spec (Bridge.RuleTools), so that the facts of an engine stay
// data. The hook "if" field uses it now; permission settings (allow, ask, deny) and
// --allowedTools/--disallowedTools can use the same rules later. The design is
// docs/decisions/0022-permission-rules.md.
package permrule

import (
	"fmt"
	"strings"
)

// ParseError is a rule that does not parse: its text, the byte offset of the fault and
// what is wrong there.
type ParseError struct {
	// Rule is the rule's text as written.
	Rule string
	// Pos is the byte offset of the fault in Rule.
	Pos int
	// Msg says what is wrong.
	Msg string
}

// Error formats the error as `permission rule "TEXT": at position N: MSG`.
func (e *ParseError) Error() string {
	return fmt.Sprintf("permission rule %q: at position %d: %s", e.Rule, e.Pos, e.Msg)
}

// Rule is one parsed permission rule. The zero value matches nothing; make one with
// [Parse].
type Rule struct {
	// Text is the rule as written.
	Text string
	// Tool is the tool name the rule names: a tool's name, or an MCP pattern
	// ("mcp__server" or "mcp__server__*" for every tool of the server).
	Tool string
	// Specifier is the text between the parentheses with `\(`, `\)` and `\\` unescaped;
	// empty when the rule names the whole tool ("Bash", "Bash()" and "Bash(*)" all do).
	Specifier string
}

// Whole reports whether the rule names every call of its tool (it has no specifier).
func (r Rule) Whole() bool { return r.Specifier == "" }

// String returns the rule as written.
func (r Rule) String() string { return r.Text }

// Parse reads a rule: a tool name, optionally followed by a specifier in parentheses
// that close at the end of the rule. Parentheses inside the specifier are written `\(`
// and `\)` (a backslash `\\`); an unescaped parenthesis elsewhere, an opening one that
// never closes, text after the closing one, or an empty tool name is a *[ParseError].
func Parse(text string) (Rule, error) {
	fail := func(pos int, msg string) (Rule, error) {
		return Rule{}, &ParseError{Rule: text, Pos: pos, Msg: msg}
	}
	if strings.TrimSpace(text) == "" {
		return fail(0, "the rule is empty")
	}
	if text != strings.TrimSpace(text) {
		return fail(0, "the rule has leading or trailing white space")
	}
	open := unescapedIndex(text, '(')
	closing := unescapedLastIndex(text, ')')
	switch {
	case open < 0 && closing < 0:
		if i := strings.IndexAny(text, "()"); i >= 0 {
			return fail(i, "an escaped parenthesis outside a specifier")
		}
		return Rule{Text: text, Tool: text}, nil
	case open < 0:
		return fail(closing, "a closing parenthesis without an opening one")
	case closing < open:
		return fail(open, "an opening parenthesis that never closes")
	case closing != len(text)-1:
		return fail(closing+1, "text after the closing parenthesis")
	case open == 0:
		return fail(0, "no tool name before the parenthesis")
	}
	tool := text[:open]
	if i := strings.IndexAny(tool, "()\\ \t"); i >= 0 {
		return fail(i, "the tool name holds a parenthesis, a backslash or white space")
	}
	raw := text[open+1 : closing]
	if i := unescapedIndex(raw, '('); i >= 0 {
		return fail(open+1+i, `an unescaped "(" inside the specifier (write \( )`)
	}
	if i := unescapedIndex(raw, ')'); i >= 0 {
		return fail(open+1+i, `an unescaped ")" inside the specifier (write \) )`)
	}
	r := Rule{Text: text, Tool: tool}
	if raw != "" && raw != "*" {
		r.Specifier = strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(raw, `\(`, "("), `\)`, ")"), `\\`, `\`)
	}
	return r, nil
}

// MustParse is Parse for rules known to be valid (tests, tables); it panics on an error.
func MustParse(text string) Rule {
	r, err := Parse(text)
	if err != nil {
		panic(err)
	}
	return r
}

// escaped reports whether the byte at i is preceded by an odd number of backslashes.
func escaped(s string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

func unescapedIndex(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c && !escaped(s, i) {
			return i
		}
	}
	return -1
}

func unescapedLastIndex(s string, c byte) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == c && !escaped(s, i) {
			return i
		}
	}
	return -1
}
