package permrule

import "strings"

// wildcard matches s against a Claude Code wildcard pattern, whole: `*` is any text
// (newlines included), `\*` a literal star and `\\` a backslash; `/**/` is one slash or
// any path between two; a pattern ending in " *" with no other star also matches without
// that tail (`git *` matches `git`). The pattern is trimmed; with collapse, runs of spaces
// and tabs count as one space in both. A NUL in the pattern matches nothing.
func wildcard(pattern, s string, collapse bool) bool {
	if strings.IndexByte(pattern, 0) >= 0 {
		return false
	}
	p := strings.TrimSpace(pattern)
	if collapse {
		p, s = collapseBlanks(p), collapseBlanks(s)
	}
	toks := wildTokens(p)
	memo := map[[2]int]bool{}
	var match func(ti, si int) bool
	match = func(ti, si int) bool {
		if ti == len(toks) {
			return si == len(s)
		}
		key := [2]int{ti, si}
		if v, ok := memo[key]; ok {
			return v
		}
		t := toks[ti]
		ok := false
		switch t.kind {
		case tokLit:
			ok = strings.HasPrefix(s[si:], t.text) && match(ti+1, si+len(t.text))
		case tokStar:
			for j := si; j <= len(s) && !ok; j++ {
				ok = match(ti+1, j)
			}
		case tokOptTail: // "( .*)?" at the end
			ok = si == len(s) || s[si] == ' '
		case tokDirs: // "/(?:.*/)?"
			if si < len(s) && s[si] == '/' {
				ok = match(ti+1, si+1)
				for j := si + 1; j < len(s) && !ok; j++ {
					if s[j] == '/' {
						ok = match(ti+1, j+1)
					}
				}
			}
		}
		memo[key] = ok
		return ok
	}
	return match(0, 0)
}

type tokKind int

const (
	tokLit tokKind = iota
	tokStar
	tokOptTail
	tokDirs
)

type wildTok struct {
	kind tokKind
	text string
}

// wildTokens reads a trimmed pattern into literal runs, stars and the two special forms.
func wildTokens(p string) []wildTok {
	var toks []wildTok
	var lit strings.Builder
	stars := 0
	flush := func() {
		if lit.Len() > 0 {
			toks = append(toks, wildTok{kind: tokLit, text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p) && (p[i+1] == '*' || p[i+1] == '\\'):
			lit.WriteByte(p[i+1])
			i++
		case c == '/' && strings.HasPrefix(p[i:], "/**/"):
			// One or more "**/" after a slash: the slash, or any path between slashes.
			j := i + 1
			for strings.HasPrefix(p[j:], "**/") {
				j += 3
			}
			flush()
			toks = append(toks, wildTok{kind: tokDirs})
			i = j - 1
		case c == '*':
			flush()
			toks = append(toks, wildTok{kind: tokStar})
			stars++
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	// "git *" also matches "git": a single star after a final space makes " *" optional.
	if n := len(toks); stars == 1 && n >= 2 && toks[n-1].kind == tokStar && toks[n-2].kind == tokLit && strings.HasSuffix(toks[n-2].text, " ") {
		toks[n-2].text = strings.TrimSuffix(toks[n-2].text, " ")
		if toks[n-2].text == "" {
			toks = append(toks[:n-2], wildTok{kind: tokOptTail})
		} else {
			toks[n-1] = wildTok{kind: tokOptTail}
		}
	}
	return toks
}

// collapseBlanks turns every run of spaces and tabs into one space.
func collapseBlanks(s string) string {
	if !strings.ContainsAny(s, "\t") && !strings.Contains(s, "  ") {
		return s
	}
	var b strings.Builder
	blank := false
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' || s[i] == '\t' {
			if !blank {
				b.WriteByte(' ')
			}
			blank = true
			continue
		}
		blank = false
		b.WriteByte(s[i])
	}
	return b.String()
}
