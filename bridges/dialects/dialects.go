// Package dialects lists every shell-hook dialect dsh runs: the registry the commands
// (dsh run, dsh acp, dsh hooks run) and the conformance runtime look a dialect up in by
// name. Adding a dialect is adding its package's Descriptor here.
package dialects

import (
	"github.com/dshkit/dsh/bridges/claudecode"
	"github.com/dshkit/dsh/bridges/codex"
	"github.com/dshkit/dsh/bridges/dialect"
	"github.com/dshkit/dsh/bridges/gemini"
)

// All returns every dialect, the default (Claude Code) first.
func All() dialect.Registry {
	return dialect.Registry{claudecode.Descriptor(), codex.Descriptor(), gemini.Descriptor()}
}

// Default is the name of the dialect --dialect defaults to: the first of All.
func Default() string { return All()[0].Name }
