package ir

import (
	"strings"
	"unicode"
)

// initialisms are the words Go spells in capitals (Effective Go, golint's list, trimmed to
// what JSON names in this domain use).
var initialisms = map[string]string{
	"id": "ID", "ids": "IDs", "url": "URL", "uri": "URI", "json": "JSON", "http": "HTTP",
	"api": "API", "ms": "MS", "llm": "LLM", "cwd": "CWD", "acp": "ACP", "tty": "TTY",
	"ok": "OK", "utf8": "UTF8", "mcp": "MCP", "cc": "CC", "os": "OS", "ui": "UI",
}

// GoName turns a JSON or CUE name (lowerCamel, snake_case, kebab-case or with slashes)
// into an exported Go identifier with Go's initialisms: "callId" → "CallID",
// "session_id" → "SessionID", "max-tokens" → "MaxTokens", "durationMs" → "DurationMS".
func GoName(name string) string {
	var b strings.Builder
	for _, w := range words(name) {
		if up, ok := initialisms[strings.ToLower(w)]; ok {
			b.WriteString(up)
			continue
		}
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		b.WriteString(string(r))
	}
	return b.String()
}

// words splits a name at separators and at lower-to-upper case changes.
func words(name string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, string(cur))
			cur = cur[:0]
		}
	}
	rs := []rune(name)
	for i, r := range rs {
		switch {
		case r == '_' || r == '-' || r == '/' || r == '.' || r == ' ' || r == '#':
			flush()
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1])):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return out
}
