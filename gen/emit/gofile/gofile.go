// Package gofile holds what the emitters that build Go with jennifer share: a file with
// the generated-code header, its rendering, and doc comments from text.
//
// gen/emit/scaffold does not use it: dshscaffold runs in plugin modules, which require no
// jennifer (see docs/decisions/0007-cli.md, "Plugin scaffolding without CUE").
package gofile

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
)

// New returns a jennifer file of package pkg whose first line is the comment header (a
// "Code generated ... DO NOT EDIT." line).
func New(pkg, header string) *jen.File {
	f := jen.NewFile(pkg)
	f.HeaderComment(header)
	return f
}

// Render renders f, gofmt'ed; name (the file's path) labels a failure, which is a
// generator bug.
func Render(name string, f *jen.File) ([]byte, error) {
	var b bytes.Buffer
	if err := f.Render(&b); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return b.Bytes(), nil
}

// Comment returns text as // comment lines, one per line of text ("//" for a blank one),
// each followed by a newline: the doc comment of what the statement goes on to declare.
func Comment(text string) *jen.Statement {
	s := jen.Null()
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if line = strings.TrimRight(line, " \t"); line == "" {
			s.Comment("//").Line()
		} else {
			s.Comment(line).Line()
		}
	}
	return s
}

// ProseWidth is the width of the text of a generated comment line: with its "// ", the
// line takes at most 92 columns.
const ProseWidth = 92 - len("// ")

// Prose returns one paragraph of prose as // comment lines wrapped at ProseWidth, each
// followed by a newline.
func Prose(text string) *jen.Statement {
	s := jen.Null()
	for _, line := range Wrap(text, ProseWidth) {
		s.Comment(line).Line()
	}
	return s
}

// Wrap breaks one paragraph of prose at spaces into lines of at most width columns (a
// longer word stands alone on its line).
func Wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return append(lines, line)
}

// Prosef is Prose of a formatted paragraph.
func Prosef(format string, args ...any) *jen.Statement {
	return Prose(fmt.Sprintf(format, args...))
}
