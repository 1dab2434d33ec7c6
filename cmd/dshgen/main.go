// Command dshgen turns the dsh spec (spec/*.cue) into the generated Go surface, JSON
// Schema files and the Markdown catalog, and checks that the committed output is fresh.
//
// Usage:
//
//	dshgen generate [-spec DIR] [-out DIR] [-docs FILE]   write generated/ and docs/catalog.md
//	dshgen check    [-spec DIR] [-out DIR] [-docs FILE]   exit 1 with a diff if anything is stale
//	dshgen schema   -out DIR [-spec DIR]                   write one JSON Schema per payload/decision
//	dshgen docs     -out FILE [-spec DIR]                  write the Markdown catalog
//	dshgen scaffold -type T -events E1,E2 -out FILE [-pkg NAME]   write a native plugin's Register glue
//	                                                       (-pkg defaults to $GOPACKAGE, set by go generate)
//	dshgen breaking --against REF [-spec DIR] [--format text|json] [--verbose]
//	                                                       report what the spec breaks against REF
//
// Every command prints its usage and flags on stdout with -help (exit 0); a usage error
// prints the problem and the usage on stderr (exit 2).
//
// Exit codes: 0 success (check: everything fresh), 1 check found stale files (breaking: an
// unannounced breaking change), 2 usage error or an invalid spec (the message starts with
// the CUE file:line:col).
package main

import (
	"context"
	"os"

	"github.com/dshkit/dsh/cmd/dshgen/internal/cli"
)

func main() {
	os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}
