package prompts

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/dshkit/dsh/generated/hookmap"
)

// Expansion is a prompt "/name args" expanded from a command file.
type Expansion struct {
	// Name is the command's name as typed ("tools:hi"), Args the rest of the prompt,
	// trimmed.
	Name, Args string
	// Source is the command_source of the directory it was found in.
	Source string
	// Path is the command file.
	Path string
	// Texts are the text blocks the prompt becomes.
	Texts []string
	// Frontmatter holds the file's frontmatter fields as text (description,
	// argument-hint, allowed-tools, model, ...); dsh reads none of them.
	Frontmatter map[string]string
}

// Places says where command files are looked for.
type Places struct {
	// Workspace and Home are the bases of the table's directories ("" skips that base).
	Workspace, Home string
	// Trusted says the project's directories (Trust) may be read.
	Trusted bool
}

// commandName is a name a command file can have: words joined by the separator.
var commandName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

// Expand expands prompt when it is "/name args" and name is a command of t found in p;
// ok is false when it is not one (the prompt goes to the model as it is, as the engine
// sends an unknown command). A command file that exists but cannot be read is an error
// naming it.
func Expand(t *hookmap.Commands, prompt string, p Places) (Expansion, bool, error) {
	if t == nil || !strings.HasPrefix(prompt, "/") {
		return Expansion{}, false, nil
	}
	name, args, _ := strings.Cut(strings.TrimPrefix(prompt, "/"), " ")
	if i := strings.IndexAny(name, "\n\t"); i >= 0 {
		name, args = name[:i], name[i+1:]+" "+args
	}
	args = strings.TrimSpace(args)
	parts := []string{name}
	if t.Separator != "" {
		parts = strings.Split(name, t.Separator)
	}
	for _, w := range parts {
		if !commandName.MatchString(w) || w == "." || w == ".." {
			return Expansion{}, false, nil
		}
	}
	rel := filepath.Join(parts...) + ".md"
	for _, d := range t.Dirs {
		base := p.Home
		if d.Base == "workspace" {
			base = p.Workspace
		}
		if base == "" || (d.Trust && !p.Trusted) {
			continue
		}
		path := filepath.Join(base, filepath.FromSlash(d.Path), rel)
		var notes []string
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		text, ok, err := readText(path, &notes)
		if err != nil {
			return Expansion{}, false, fmt.Errorf("command /%s: %w", name, err)
		}
		if !ok {
			return Expansion{}, false, fmt.Errorf("command /%s: %s", name, strings.Join(notes, "; "))
		}
		front, body := frontmatter(text)
		body = Substitute(body, args, t.AppendArgs)
		vars := map[string]string{"name": name, "args": args, "body": body, "argsLine": ""}
		if args != "" {
			vars["argsLine"] = fill(t.ArgsLine, map[string]string{"args": args})
		}
		texts := make([]string, len(t.Texts))
		for i, tmpl := range t.Texts {
			texts[i] = fill(tmpl, vars)
		}
		return Expansion{Name: name, Args: args, Source: d.Source, Path: path, Texts: texts, Frontmatter: front}, true, nil
	}
	return Expansion{}, false, nil
}

// frontmatter splits a leading "---" block of "key: value" lines from the body.
func frontmatter(text string) (map[string]string, string) {
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return nil, text
	}
	head, body, ok := strings.Cut(rest, "\n---\n")
	if !ok {
		if head, ok = strings.CutSuffix(rest, "\n---"); !ok {
			return nil, text
		}
		body = ""
	}
	front := map[string]string{}
	for _, line := range strings.Split(head, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			front[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return front, body
}

// Substitute fills a command's placeholders with args, as Claude Code 2.1.328 does:
// $ARGUMENTS is args, $ARGUMENTS[N] and $N (not followed by a word character) the Nth
// word of args from 0 (quotes group words), left as they are when there is no such word;
// a backslash before the $ of a placeholder keeps it as text. A body with no placeholder
// filled gets appendArgs ({args}) when args is not empty. Filled values are not filled
// again.
func Substitute(body, args, appendArgs string) string {
	words := splitArgs(args)
	word := func(n string) (string, bool) {
		i, err := strconv.Atoi(n)
		if err != nil || i >= len(words) {
			return "", false
		}
		return words[i], true
	}
	var b strings.Builder
	filled := false
	for i := 0; i < len(body); {
		rest := body[i:]
		if strings.HasPrefix(rest, `\$`) && (strings.HasPrefix(rest[2:], "ARGUMENTS") || (len(rest) > 2 && isDigit(rest[2]))) {
			b.WriteByte('$')
			i += 2
			continue
		}
		if rest[0] != '$' {
			b.WriteByte(rest[0])
			i++
			continue
		}
		if after, ok := strings.CutPrefix(rest, "$ARGUMENTS"); ok {
			if len(after) > 1 && after[0] == '[' {
				if n, _, ok := strings.Cut(after[1:], "]"); ok && n != "" && allDigits(n) {
					if w, ok := word(n); ok {
						b.WriteString(w)
						filled = true
					} else {
						b.WriteString("$ARGUMENTS[" + n + "]")
					}
					i += len("$ARGUMENTS[") + len(n) + 1
					continue
				}
			}
			b.WriteString(args)
			filled = true
			i += len("$ARGUMENTS")
			continue
		}
		j := 1
		for j < len(rest) && isDigit(rest[j]) {
			j++
		}
		if j > 1 && (j == len(rest) || !isWord(rest[j])) {
			if w, ok := word(rest[1:j]); ok {
				b.WriteString(w)
				filled = true
			} else {
				b.WriteString(rest[:j])
			}
			i += j
			continue
		}
		b.WriteByte('$')
		i++
	}
	out := b.String()
	if !filled && args != "" && appendArgs != "" {
		out += fill(appendArgs, map[string]string{"args": args})
	}
	return out
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isWord(c byte) bool { return isDigit(c) || c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }

func allDigits(s string) bool {
	for i := range len(s) {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// splitArgs splits args into words at blanks; single or double quotes group a word.
func splitArgs(args string) []string {
	var out []string
	var cur strings.Builder
	in, quote := false, byte(0)
	for i := range len(args) {
		c := args[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}
