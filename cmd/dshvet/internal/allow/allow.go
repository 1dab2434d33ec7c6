// Package allow is the marker that lets code do on purpose what an analyzer reports:
// `//dshvet:allow <analyzer> <reason>` on the line of the finding or the line above it
// (a test that makes a listener misbehave to check what the runtime does, say). The
// reason is required. An analyzer honours the markers naming it by calling Honour at the
// start of its run; a marker without a reason, or one that suppresses nothing, is then
// reported, so that a marker stays true.
package allow

import (
	"go/ast"
	"go/token"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// Prefix starts a marker comment.
const Prefix = "//dshvet:allow"

// marker is one //dshvet:allow comment naming the analyzer.
type marker struct {
	c      *ast.Comment
	reason string
	used   bool
}

// key locates a line: its file and number.
type key struct {
	file string
	line int
}

// Honour makes pass drop the diagnostics its package's markers allow (those naming
// pass.Analyzer, on the diagnostic's line or the line above it). The func it returns,
// called when the run ends, reports the markers without a reason and those that allowed
// nothing.
func Honour(pass *analysis.Pass) (done func()) {
	marks := map[key]*marker{}
	for _, f := range pass.Files {
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if m := parse(c, pass.Analyzer.Name); m != nil {
					p := pass.Fset.Position(c.Pos())
					marks[key{p.Filename, p.Line}] = m
				}
			}
		}
	}
	if len(marks) == 0 {
		return func() {}
	}
	report := pass.Report
	at := func(pos token.Pos) *marker {
		p := pass.Fset.Position(pos)
		if m := marks[key{p.Filename, p.Line}]; m != nil {
			return m
		}
		return marks[key{p.Filename, p.Line - 1}]
	}
	pass.Report = func(d analysis.Diagnostic) {
		if m := at(d.Pos); m != nil && m.reason != "" {
			m.used = true
			return
		}
		report(d)
	}
	return func() {
		for _, m := range marks {
			switch {
			case m.reason == "":
				report(analysis.Diagnostic{Pos: m.c.Pos(), Message: Prefix + " " + pass.Analyzer.Name + " needs a reason: say why the code does this on purpose"})
			case !m.used:
				report(analysis.Diagnostic{Pos: m.c.Pos(), Message: Prefix + " " + pass.Analyzer.Name + " allows nothing here: remove it"})
			}
		}
	}
}

// parse returns the marker c is for analyzer name, or nil. The reason ends at a comment
// after it.
func parse(c *ast.Comment, name string) *marker {
	rest, ok := strings.CutPrefix(c.Text, Prefix+" ")
	if !ok {
		return nil
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 || fields[0] != name {
		return nil
	}
	reason := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), name))
	reason, _, _ = strings.Cut(reason, "//")
	return &marker{c: c, reason: strings.TrimSpace(reason)}
}
