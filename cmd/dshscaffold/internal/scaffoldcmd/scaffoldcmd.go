// Package scaffoldcmd implements dshscaffold; it is a package (not main) so that tests and
// testscript run the command in process.
package scaffoldcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dshkit/dsh/gen/emit/scaffold"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/atomicfile"
	"github.com/dshkit/dsh/internal/clix"
)

// Import is the import path of the generated surface the glue registers on.
const Import = "github.com/dshkit/dsh/generated/dsh"

const usage = `usage:
  dshscaffold -type T -events E1,E2 -out FILE [-pkg NAME]
  dshscaffold -list

Writes FILE: a Register method on *T registering T's listener methods at the named
extension points (method names: Guard for tools/guard, On<Name> for waterfalls,
notifications, observers and folds, Wrap<Name> for wrappers; -list prints them), and
compile-time checks of their listener types. Run it from go generate:

  //go:generate go tool dshscaffold -type Plugin -events tools/guard -out plugin_gen.go

-pkg defaults to $GOPACKAGE, which go generate sets; outside go generate it is required.
`

// Events returns the scaffolding table of the generated surface.
func Events() []scaffold.Event {
	evs := make([]scaffold.Event, 0, len(dsh.Events))
	for _, e := range dsh.Events {
		evs = append(evs, scaffold.Event{Name: e.Name, Domain: string(e.Domain), Register: e.Register, Listener: e.Listener})
	}
	return evs
}

// Main runs dshscaffold with args (without the program name) and returns the exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := clix.New("dshscaffold", usage, stdout, stderr)
	typ := c.Flags.String("type", "", "the plugin type whose methods are the listeners (required)")
	events := c.Flags.String("events", "", "comma-separated extension points, e.g. tools/guard,tools/post-execute (required)")
	out := c.Flags.String("out", "", "Go file to write (required)")
	pkg := c.Flags.String("pkg", os.Getenv("GOPACKAGE"), "Go package of the file (default $GOPACKAGE, set by go generate)")
	list := c.Flags.Bool("list", false, "list the extension points with their listener methods and types, and exit")
	if code, ok := c.Parse(args, 0); !ok {
		return code
	}
	if *list {
		for _, e := range Events() {
			fmt.Fprintf(stdout, "%-24s %-12s %-20s %s\n", e.Name, e.Domain, e.Register, e.Listener)
		}
		return clix.ExitOK
	}
	switch {
	case *typ == "" || *events == "" || *out == "":
		return c.UsageError("-type, -events and -out are required")
	case *pkg == "":
		return c.UsageError("-pkg is required outside go generate (which sets $GOPACKAGE)")
	}
	data, err := scaffold.EmitEvents(Events(), scaffold.Options{
		Package: *pkg, Type: *typ, Events: strings.Split(*events, ","), Import: Import,
	})
	var unknown *scaffold.UnknownEventError
	if errors.As(err, &unknown) {
		return c.UsageError("%v", err)
	}
	if err != nil {
		return c.Fail(err)
	}
	if err := atomicfile.Write(*out, data); err != nil {
		return c.Fail(err)
	}
	return clix.ExitOK
}
