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
	"golang.org/x/tools/go/analysis/passes/appends"
	"golang.org/x/tools/go/analysis/passes/asmdecl"
	"golang.org/x/tools/go/analysis/passes/assign"
	"golang.org/x/tools/go/analysis/passes/atomic"
	"golang.org/x/tools/go/analysis/passes/bools"
	"golang.org/x/tools/go/analysis/passes/buildtag"
	"golang.org/x/tools/go/analysis/passes/cgocall"
	"golang.org/x/tools/go/analysis/passes/composite"
	"golang.org/x/tools/go/analysis/passes/copylock"
	"golang.org/x/tools/go/analysis/passes/defers"
	"golang.org/x/tools/go/analysis/passes/directive"
	"golang.org/x/tools/go/analysis/passes/errorsas"
	"golang.org/x/tools/go/analysis/passes/framepointer"
	"golang.org/x/tools/go/analysis/passes/hostport"
	"golang.org/x/tools/go/analysis/passes/httpresponse"
	"golang.org/x/tools/go/analysis/passes/ifaceassert"
	"golang.org/x/tools/go/analysis/passes/loopclosure"
	"golang.org/x/tools/go/analysis/passes/lostcancel"
	"golang.org/x/tools/go/analysis/passes/nilfunc"
	"golang.org/x/tools/go/analysis/passes/printf"
	"golang.org/x/tools/go/analysis/passes/shift"
	"golang.org/x/tools/go/analysis/passes/sigchanyzer"
	"golang.org/x/tools/go/analysis/passes/slog"
	"golang.org/x/tools/go/analysis/passes/stdmethods"
	"golang.org/x/tools/go/analysis/passes/stdversion"
	"golang.org/x/tools/go/analysis/passes/stringintconv"
	"golang.org/x/tools/go/analysis/passes/structtag"
	"golang.org/x/tools/go/analysis/passes/testinggoroutine"
	"golang.org/x/tools/go/analysis/passes/tests"
	"golang.org/x/tools/go/analysis/passes/timeformat"
	"golang.org/x/tools/go/analysis/passes/unmarshal"
	"golang.org/x/tools/go/analysis/passes/unreachable"
	"golang.org/x/tools/go/analysis/passes/unsafeptr"
	"golang.org/x/tools/go/analysis/passes/unusedresult"
	"golang.org/x/tools/go/analysis/passes/waitgroup"

	"github.com/dshkit/dsh/cmd/dshvet/internal/ctxblock"
	"github.com/dshkit/dsh/cmd/dshvet/internal/exhaustive"
	"github.com/dshkit/dsh/cmd/dshvet/internal/nextonce"
	"github.com/dshkit/dsh/cmd/dshvet/internal/payloadwrite"
	"github.com/dshkit/dsh/cmd/dshvet/internal/staleregister"
)

func main() {
	multichecker.Main(append([]*analysis.Analyzer{
		exhaustive.Analyzer,
		nextonce.Analyzer,
		payloadwrite.Analyzer,
		ctxblock.Analyzer,
		staleregister.Analyzer,
	}, goVet...)...)
}

// goVet is the suite of cmd/vet (the go command's own vet tool, Go 1.26), so that one
// pass under -vettool runs go vet's checks and dsh's: the facts of every dependency (the
// standard library included) are computed once, not once per tool.
var goVet = []*analysis.Analyzer{
	appends.Analyzer,
	asmdecl.Analyzer,
	assign.Analyzer,
	atomic.Analyzer,
	bools.Analyzer,
	buildtag.Analyzer,
	cgocall.Analyzer,
	composite.Analyzer,
	copylock.Analyzer,
	defers.Analyzer,
	directive.Analyzer,
	errorsas.Analyzer,
	framepointer.Analyzer,
	hostport.Analyzer,
	httpresponse.Analyzer,
	ifaceassert.Analyzer,
	loopclosure.Analyzer,
	lostcancel.Analyzer,
	nilfunc.Analyzer,
	printf.Analyzer,
	shift.Analyzer,
	sigchanyzer.Analyzer,
	slog.Analyzer,
	stdmethods.Analyzer,
	stdversion.Analyzer,
	stringintconv.Analyzer,
	structtag.Analyzer,
	testinggoroutine.Analyzer,
	tests.Analyzer,
	timeformat.Analyzer,
	unmarshal.Analyzer,
	unreachable.Analyzer,
	unsafeptr.Analyzer,
	unusedresult.Analyzer,
	waitgroup.Analyzer,
}
