package permrule

import (
	"errors"
	"fmt"
	"strings"
)

// errCompound is the cause of a command dsh does not split: a compound command (a loop,
// a conditional, a brace group, a function), a here-document, a variable expansion or
// ANSI-C quoting. Claude Code's own splitter gives up on some of these too, and a hook
// "if" then runs the hook; dsh gives up on all of them, so the hook runs.
var errCompound = errors.New("not a list of simple commands")

// keywords start a compound command (or negate one) when they are a command's first word.
var keywords = map[string]bool{
	"if": true, "then": true, "elif": true, "else": true, "fi": true, "for": true, "while": true,
	"until": true, "do": true, "done": true, "case": true, "esac": true, "in": true, "select": true,
	"function": true, "time": true, "coproc": true, "{": true, "}": true, "!": true, "[[": true, "]]": true,
}

// splitCommand splits a shell command into its simple commands, each its words (quotes
// removed) joined by one space: the commands of lists and pipelines (`&&`, `||`, `;`,
// `|`, `|&`, `&`, newlines), of subshells, and of `$(...)` and backtick substitutions
// (whose outer word keeps its text); leading VAR=value assignments, redirections and
// comments are left out. A command it cannot split is an error naming why.
func splitCommand(cmd string) ([]string, error) {
	p := &splitter{s: cmd}
	if err := p.list(false); err != nil {
		return nil, err
	}
	if p.i < len(p.s) {
		return nil, p.fail("unexpected %q", p.s[p.i])
	}
	return p.subs, nil
}

// SplitCommand splits a shell command into its simple commands as a hook "if" and a
// Bash rule see them (each its words, quotes removed, joined by one space); a command it
// cannot split (a compound command, a here-document, a variable expansion) is an error.
func SplitCommand(cmd string) ([]string, error) { return splitCommand(cmd) }

type splitter struct {
	s    string
	i    int
	subs []string
}

func (p *splitter) fail(format string, args ...any) error {
	return fmt.Errorf("cannot split the command at byte %d: %s", p.i, fmt.Sprintf(format, args...))
}

func (p *splitter) peek(off int) byte {
	if p.i+off < len(p.s) {
		return p.s[p.i+off]
	}
	return 0
}

func (p *splitter) blanks() {
	for p.i < len(p.s) {
		switch {
		case p.s[p.i] == ' ' || p.s[p.i] == '\t':
			p.i++
		case p.s[p.i] == '\\' && p.peek(1) == '\n':
			p.i += 2
		default:
			return
		}
	}
}

// list reads commands separated by list and pipeline operators, up to the end, or up to
// an unmatched ")" when inner (the ")" is not consumed).
func (p *splitter) list(inner bool) error {
	for {
		p.blanks()
		if p.i >= len(p.s) || (inner && p.s[p.i] == ')') {
			return nil
		}
		if err := p.command(inner); err != nil {
			return err
		}
		p.blanks()
		switch c := p.peek(0); {
		case c == 0:
			return nil
		case c == ')':
			if !inner {
				return p.fail("unexpected )")
			}
			return nil
		case c == ';' && p.peek(1) == ';':
			return fmt.Errorf("%w: a case clause", errCompound)
		case c == '&' && p.peek(1) == '&', c == '|' && p.peek(1) == '|', c == '|' && p.peek(1) == '&':
			p.i += 2
		case c == ';', c == '&', c == '|', c == '\n':
			p.i++
		default:
			return p.fail("unexpected %q", c)
		}
	}
}

// command reads one simple command or subshell.
func (p *splitter) command(inner bool) error {
	if p.peek(0) == '#' {
		for p.i < len(p.s) && p.s[p.i] != '\n' {
			p.i++
		}
		return nil
	}
	if p.peek(0) == '(' {
		if p.peek(1) == '(' {
			return fmt.Errorf("%w: an arithmetic command", errCompound)
		}
		p.i++
		if err := p.list(true); err != nil {
			return err
		}
		if p.peek(0) != ')' {
			return p.fail("a subshell that never closes")
		}
		p.i++
		return p.redirections()
	}
	var words []string
	assigning := true
	for {
		p.blanks()
		c := p.peek(0)
		if c == 0 || c == ';' || c == '&' && p.peek(1) != '>' || c == '|' || c == '\n' || c == ')' {
			break
		}
		if c == '#' { // a comment, to the end of the line
			for p.i < len(p.s) && p.s[p.i] != '\n' {
				p.i++
			}
			break
		}
		if ok, err := p.redirect(); ok || err != nil {
			if err != nil {
				return err
			}
			continue
		}
		if c == '(' {
			return fmt.Errorf("%w: a function definition or array", errCompound)
		}
		start := p.i
		w, err := p.word()
		if err != nil {
			return err
		}
		raw := p.s[start:p.i]
		if assigning && isAssignment(raw) {
			continue
		}
		if len(words) == 0 && keywords[raw] {
			return fmt.Errorf("%w: %q starts a compound command", errCompound, raw)
		}
		assigning = false
		words = append(words, w)
	}
	if len(words) > 0 {
		p.subs = append(p.subs, strings.Join(words, " "))
	}
	return nil
}

// redirections skips the redirections after a subshell.
func (p *splitter) redirections() error {
	for {
		p.blanks()
		if ok, err := p.redirect(); !ok || err != nil {
			return err
		}
	}
}

// redirect consumes a redirection, if one is next: its operator ([n]< [n]> [n]>> [n]>|
// [n]<> [n]<& [n]>& &> &>> <<<, with a file descriptor) and the word it names. A
// here-document cannot be split.
func (p *splitter) redirect() (bool, error) {
	j := p.i
	for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
		j++
	}
	rest := p.s[j:]
	for _, op := range []string{"&>>", "&>", "<<<", "<<", ">>", ">|", "<>", "<&", ">&", "<", ">"} {
		if strings.HasPrefix(rest, op) && (j == p.i || op[0] != '&') {
			p.i = j + len(op)
			if op == "<<" {
				return true, fmt.Errorf("%w: a here-document", errCompound)
			}
			return true, p.redirectTarget()
		}
	}
	return false, nil
}

// redirectTarget skips the word a redirection names.
func (p *splitter) redirectTarget() error {
	p.blanks()
	if c := p.peek(0); c == 0 || strings.IndexByte(";&|\n()<>", c) >= 0 {
		return p.fail("a redirection without a target")
	}
	_, err := p.word()
	return err
}

// word reads one word and returns its value with quotes removed.
func (p *splitter) word() (string, error) {
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || strings.IndexByte(";&|()<>", c) >= 0:
			return b.String(), nil
		case c == '\'':
			end := strings.IndexByte(p.s[p.i+1:], '\'')
			if end < 0 {
				return "", p.fail("a single quote that never closes")
			}
			b.WriteString(p.s[p.i+1 : p.i+1+end])
			p.i += end + 2
		case c == '"':
			p.i++
			if err := p.doubleQuoted(&b); err != nil {
				return "", err
			}
		case c == '\\':
			if p.i+1 >= len(p.s) {
				p.i++
				continue
			}
			if p.s[p.i+1] != '\n' {
				b.WriteByte(p.s[p.i+1])
			}
			p.i += 2
		case c == '`':
			if err := p.backticks(&b); err != nil {
				return "", err
			}
		case c == '$':
			if err := p.dollar(&b); err != nil {
				return "", err
			}
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return b.String(), nil
}

// doubleQuoted reads the rest of a double-quoted string (after its opening quote).
func (p *splitter) doubleQuoted(b *strings.Builder) error {
	for p.i < len(p.s) {
		switch c := p.s[p.i]; c {
		case '"':
			p.i++
			return nil
		case '\\':
			if n := p.peek(1); n == '$' || n == '`' || n == '"' || n == '\\' {
				b.WriteByte(n)
				p.i += 2
			} else if n == '\n' {
				p.i += 2
			} else {
				b.WriteByte(c)
				p.i++
			}
		case '`':
			if err := p.backticks(b); err != nil {
				return err
			}
		case '$':
			if err := p.dollar(b); err != nil {
				return err
			}
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return p.fail("a double quote that never closes")
}

// dollar reads a word part starting with "$": a command substitution (its commands
// are added), an arithmetic expansion (kept as text), or a lone "$"; a variable
// expansion or ANSI-C quoting cannot be split.
func (p *splitter) dollar(b *strings.Builder) error {
	start := p.i
	switch n := p.peek(1); {
	case n == '(' && p.peek(2) == '(':
		depth := 0
		for p.i += 1; p.i < len(p.s); p.i++ {
			switch p.s[p.i] {
			case '(':
				depth++
			case ')':
				depth--
			}
			if depth == 0 {
				p.i++
				b.WriteString(p.s[start:p.i])
				return nil
			}
		}
		return p.fail("an arithmetic expansion that never closes")
	case n == '(':
		p.i += 2
		if err := p.list(true); err != nil {
			return err
		}
		if p.peek(0) != ')' {
			return p.fail("a command substitution that never closes")
		}
		p.i++
		b.WriteString(p.s[start:p.i])
		return nil
	case n == '\'':
		return fmt.Errorf("%w: ANSI-C quoting", errCompound)
	case n == '{' || n == '_' || n >= 'a' && n <= 'z' || n >= 'A' && n <= 'Z' || n >= '0' && n <= '9' || strings.IndexByte("@*#?$!-", n) >= 0 && n != 0:
		return fmt.Errorf("%w: a variable expansion", errCompound)
	}
	b.WriteByte('$')
	p.i++
	return nil
}

// backticks reads a backtick substitution: its commands are added, its text kept.
func (p *splitter) backticks(b *strings.Builder) error {
	start := p.i
	var inner strings.Builder
	for p.i++; p.i < len(p.s); p.i++ {
		c := p.s[p.i]
		if c == '\\' && p.i+1 < len(p.s) && strings.IndexByte("$`\\", p.s[p.i+1]) >= 0 {
			inner.WriteByte(p.s[p.i+1])
			p.i++
			continue
		}
		if c == '`' {
			p.i++
			subs, err := splitCommand(inner.String())
			if err != nil {
				return err
			}
			p.subs = append(p.subs, subs...)
			b.WriteString(p.s[start:p.i])
			return nil
		}
		inner.WriteByte(c)
	}
	return p.fail("a backtick that never closes")
}

// isAssignment reports whether a word is NAME=value (NAME+=value, NAME[i]=value).
func isAssignment(raw string) bool {
	eq := strings.IndexByte(raw, '=')
	if eq <= 0 {
		return false
	}
	name := strings.TrimSuffix(raw[:eq], "+")
	if i := strings.IndexByte(name, '['); i > 0 && strings.HasSuffix(name, "]") {
		name = name[:i]
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return name != ""
}
