// Command dshvet checks native dsh plugins for the mistakes the type system lets through:
// go vet's analysis framework with five analyzers of the generated surface.
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
// and runs it under go vet (it then runs these analyzers only, not go vet's own; run both)
// or standalone:
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
	"golang.org/x/tools/go/analysis/multichecker"

	"github.com/dshkit/dsh/cmd/dshvet/internal/ctxblock"
	"github.com/dshkit/dsh/cmd/dshvet/internal/exhaustive"
	"github.com/dshkit/dsh/cmd/dshvet/internal/nextonce"
	"github.com/dshkit/dsh/cmd/dshvet/internal/payloadwrite"
	"github.com/dshkit/dsh/cmd/dshvet/internal/staleregister"
)

func main() {
	multichecker.Main(
		exhaustive.Analyzer,
		nextonce.Analyzer,
		payloadwrite.Analyzer,
		ctxblock.Analyzer,
		staleregister.Analyzer,
	)
}
