// Command dshscaffold writes a native plugin's registration glue: for a plugin type and a
// list of extension points, a Register method registering the type's typed listener
// methods, with compile-time checks that each method has its point's listener type.
//
// It imports no CUE: the event table comes from the generated surface (dsh.Events), so a
// plugin module adds it as a tool without taking on the spec toolchain:
//
//	go get -tool github.com/dshkit/dsh/cmd/dshscaffold
//
// and then, in the plugin's package:
//
//	//go:generate go tool dshscaffold -type Plugin -events tools/guard -out plugin_gen.go
//
// Usage:
//
//	dshscaffold -type T -events E1,E2 -out FILE [-pkg NAME]
//	dshscaffold -list
//
// -pkg defaults to $GOPACKAGE, which go generate sets; outside go generate it is required.
// Exit codes: 0 success, 1 the file could not be written, 2 usage error (including an
// unknown extension point). (`dshgen scaffold` does the same from a spec directory.)
package main

import (
	"context"
	"os"

	"github.com/dshkit/dsh/cmd/dshscaffold/internal/scaffoldcmd"
)

func main() {
	os.Exit(scaffoldcmd.Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}
