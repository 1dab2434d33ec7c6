// Command crossvet vets packages, tests included, for other operating systems than the
// one it runs on, as `GOOS=os GOARCH=arch go vet` would, but from source: it type-checks
// the packages and their dependencies with go/types and runs go vet's analyzers on them,
// without compiling anything for the target. CI runs it for the packages with per-OS code
// (.ci/run; docs/decisions/0015-ci.md, "Cross-builds in CI").
//
// Usage:
//
//	go run ./internal/crossvet -platforms windows/amd64,darwin/arm64 PACKAGE...
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"github.com/dshkit/dsh/internal/vetsuite"
)

// analyzers are go vet's (internal/vetsuite), less asmdecl and framepointer, which read
// assembly files this module has none of.
var analyzers = slices.DeleteFunc(vetsuite.Analyzers(), func(a *analysis.Analyzer) bool {
	return a.Name == "asmdecl" || a.Name == "framepointer"
})

func main() {
	platforms := flag.String("platforms", "windows/amd64,darwin/arm64", "comma-separated GOOS/GOARCH pairs")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: crossvet [-platforms os/arch,...] PACKAGE...")
		os.Exit(2)
	}
	failed := false
	for _, p := range strings.Split(*platforms, ",") {
		goos, goarch, ok := strings.Cut(p, "/")
		if !ok {
			fmt.Fprintf(os.Stderr, "crossvet: platform %q is not GOOS/GOARCH\n", p)
			os.Exit(2)
		}
		n, err := vet(os.Stdout, goos, goarch, flag.Args())
		if err != nil {
			fmt.Fprintf(os.Stderr, "crossvet %s/%s: %v\n", goos, goarch, err)
			os.Exit(1)
		}
		if n > 0 {
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

// vet loads patterns for goos/goarch from source and runs the analyzers, printing every
// type error and diagnostic to w; it returns how many it printed.
func vet(w io.Writer, goos, goarch string, patterns []string) (int, error) {
	cfg := &packages.Config{
		Mode:  packages.LoadAllSyntax,
		Tests: true,
		Env:   append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0"),
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return 0, err
	}
	var problems []string
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			problems = append(problems, fmt.Sprintf("%s/%s: %s", goos, goarch, e))
		}
	})
	if len(problems) == 0 {
		res, err := checker.Analyze(analyzers, pkgs, nil)
		if err != nil {
			return 0, err
		}
		for _, act := range res.Roots {
			if act.Err != nil {
				problems = append(problems, fmt.Sprintf("%s/%s: %s: %v", goos, goarch, act.Package.PkgPath, act.Err))
			}
			for _, d := range act.Diagnostics {
				problems = append(problems, fmt.Sprintf("%s/%s: %s: %s (%s)", goos, goarch,
					act.Package.Fset.Position(d.Pos), d.Message, act.Analyzer.Name))
			}
		}
	}
	slices.Sort(problems)
	problems = slices.Compact(problems)
	for _, p := range problems {
		fmt.Fprintln(w, p)
	}
	return len(problems), nil
}
