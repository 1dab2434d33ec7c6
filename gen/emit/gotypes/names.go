package gotypes

import (
	"go/token"
	"strings"
	"unicode"

	"github.com/dave/jennifer/jen"

	"github.com/dshkit/dsh/gen/emit/gofile"
)

// commentWidth is the width generated (not spec-written) doc comments are wrapped at.
const commentWidth = 90

// doc starts a statement with text as a doc comment, one `//` line per line of text.
// Spec-written lines are kept as they are; longer lines are wrapped.
func doc(text string) *jen.Statement {
	s := jen.Null()
	for _, line := range docLines(text) {
		s.Comment(line).Line()
	}
	return s
}

// goDoc rewrites a spec doc that starts with the JSON name ("callId is ...") to start
// with the Go name ("CallID is ..."), as Go doc comments do.
func goDoc(text, jsonName, goName string) string {
	if rest, ok := strings.CutPrefix(text, jsonName+" "); ok {
		return goName + " " + rest
	}
	return text
}

// docLines splits a doc text into comment lines, wrapping any line wider than commentWidth.
func docLines(text string) []string {
	var lines []string
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		lines = append(lines, wrap(line)...)
	}
	return lines
}

// wrap breaks line at spaces into lines of at most commentWidth characters where possible;
// a line that fits is kept as it is.
func wrap(line string) []string {
	if len(line) <= commentWidth {
		return []string{line}
	}
	return gofile.Wrap(line, commentWidth)
}

// article prefixes name with "a" or "an", for generated comments (a leading U is taken
// to sound like "you": "a UserMessage").
func article(name string) string {
	if name != "" && strings.ContainsRune("AEIO", rune(name[0])) {
		return "an " + name
	}
	return "a " + name
}

// kindConst is the name of the Kind constant of a union variant.
func kindConst(variant string) string { return variant + "Kind" }

// kindsVar is the name of the variable listing a union's kinds.
func kindsVar(union string) string { return union + "Kinds" }

// kindType is the name of a union's Kind type.
func kindType(union string) string { return union + "Kind" }

// camel turns a discriminator value such as "allow" or "tool-use" into "Allow" or
// "ToolUse", for the on<Kind> parameters of Switch functions.
func camel(s string) string {
	var b strings.Builder
	upper := true
	for _, r := range s {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			upper = true
		case upper:
			b.WriteRune(unicode.ToUpper(r))
			upper = false
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// paramName turns an exported Go field name into a parameter name: "Reason" gives "reason",
// "ID" gives "id", "URLPath" gives "urlPath", "CallID" gives "callID"; a Go keyword gets a
// trailing underscore.
func paramName(goName string) string {
	runes := []rune(goName)
	n := 0
	for n < len(runes) && unicode.IsUpper(runes[n]) {
		n++
	}
	switch {
	case n == len(runes):
		n = len(runes)
	case n > 1:
		n-- // keep the last capital: it starts the next word
	}
	for i := 0; i < n; i++ {
		runes[i] = unicode.ToLower(runes[i])
	}
	name := string(runes)
	if token.IsKeyword(name) {
		name += "_"
	}
	return name
}
