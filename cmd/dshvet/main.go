// Command dshvet checks native dsh plugins for the mistakes the type system lets through:
// go vet's analysis framework with five analyzers of the generated surface, beside go vet's
// own.
//
//   - exhaustive: a type switch over a generated union (//sumtype:decl) that misses a
//     variant and has no default.
//   - nextonce: a waterfall or wrapper listener calling next twice on one path, or in a go
//     or defer statement, after it may have returned.
//   - payloadwrite: a listener writing to its payload (a snapshot), with the decision that
//     does what was meant.
//   - ctxblock: time.Sleep, exec.Command, http.Get and the like (no context) in a listener
//     or a tool body.
//   - staleregister: a listener method that plugin_gen.go (dshscaffold) does not register,
//     or a registration of a method that no longer exists.
//
// It imports no CUE, so a plugin module adds it as a tool beside dshscaffold:
//
//	go get -tool github.com/dshkit/dsh/cmd/dshvet
//
// and runs it under go vet, where it runs go vet's own analyzers too (the suite of cmd/vet),
// so that one pass does both, or standalone:
//
//	go vet -vettool=$(go tool -n dshvet) ./...
//	go tool dshvet ./...
//
// Code that does on purpose what an analyzer reports says so, with a reason, on the line of
// the finding or the line above it: `//dshvet:partial <reason>` on a type switch that
// handles some variants of a union (exhaustive), `//dshvet:allow <analyzer> <reason>` for
// the others (a test making a listener misbehave, say). A marker without a reason, or one
// that marks nothing, is reported.
//
// `dshvet help` lists the analyzers, `dshvet help NAME` documents one; -NAME=false turns one
// off. The exit code is non-zero when anything is reported.
package main

import (
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/multichecker"

	"github.com/dshkit/dsh/cmd/dshvet/internal/ctxblock"
	"github.com/dshkit/dsh/cmd/dshvet/internal/exhaustive"
	"github.com/dshkit/dsh/cmd/dshvet/internal/nextonce"
	"github.com/dshkit/dsh/cmd/dshvet/internal/payloadwrite"
	"github.com/dshkit/dsh/cmd/dshvet/internal/staleregister"
	"github.com/dshkit/dsh/internal/vetsuite"
)

// main runs dshvet's analyzers and go vet's (internal/vetsuite), so that one pass under
// -vettool does both: the facts of every dependency, the standard library included, are
// computed once, not once per tool.
func main() {
	multichecker.Main(append([]*analysis.Analyzer{
		exhaustive.Analyzer,
		nextonce.Analyzer,
		payloadwrite.Analyzer,
		ctxblock.Analyzer,
		staleregister.Analyzer,
	}, vetsuite.Analyzers()...)...)
}
