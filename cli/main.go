// Package cli is the dsh command line: cmd/dsh is its main, and a custom build with
// native plugins compiled in is one call (see WithPlugins):
//
//	func main() { cli.Main(cli.WithPlugins(&myplugin.Plugin{})) }
//
// Usage:
//
//	dsh <command> [arguments]
//
// Each command lives in its own file and registers itself in commands:
//
//	acp     serve ACP (Agent Client Protocol) on stdio, for editors (acp.go)
//	hooks   fire one hook event at a Claude Code, Codex or Gemini CLI hooks configuration (hooks.go)
//	log     pretty-print a session log (log.go)
//	run     run one headless session (run.go)
//
// Every command follows one convention (internal/clix): -h, --help or help prints its usage
// on stdout and exits 0; a usage error (a bad flag or argument) prints the problem and the
// usage on stderr and exits 2; a failure (a file that cannot be read, a damaged log) prints
// one line naming it on stderr and exits 1.
package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/dshkit/dsh/internal/clix"
)

// command is one dsh subcommand.
type command struct {
	// summary is the one-line description shown in the usage.
	summary string
	// run runs the command with the arguments after its name and returns the exit code.
	run func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// commands holds the subcommands by name; each command's file adds itself in an init
// function, so adding a command never edits this file.
var commands = map[string]command{}

// Main runs the dsh CLI with the process's arguments, standard streams and opts, and
// exits with its status. A custom build's main is this one call:
//
//	func main() { cli.Main(cli.WithPlugins(&myplugin.Plugin{})) }
func Main(opts ...Option) {
	os.Exit(Run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, opts...))
}

// Run runs dsh with args (without the program name) and opts, and returns the exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, opts ...Option) int {
	ctx = withConfig(ctx, opts)
	top := clix.New("dsh", usage(), stdout, stderr)
	switch {
	case len(args) == 0:
		return top.UsageError("a command is required")
	case len(args) == 1 && clix.IsHelp(args[0]):
		fmt.Fprint(stdout, top.Help())
		return clix.ExitOK
	case len(args) == 1 && (args[0] == "--version" || args[0] == "-version" || args[0] == "version"):
		printVersion(stdout)
		return clix.ExitOK
	case args[0] == "help" && len(args) == 2:
		// dsh help CMD is dsh CMD --help.
		args = []string{args[1], "--help"}
	}
	c, ok := commands[args[0]]
	if !ok {
		return top.UsageError("unknown command %q", args[0])
	}
	return c.run(ctx, args[1:], stdin, stdout, stderr)
}

// usage is dsh's usage: the commands and their summaries.
func usage() string {
	var b strings.Builder
	b.WriteString("usage: dsh <command> [arguments]\n\ncommands:\n")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  %-8s %s\n", n, commands[n].summary)
	}
	b.WriteString("\nRun dsh <command> --help (or dsh help <command>) for a command's usage;\ndsh --version prints the version.\n")
	return b.String()
}
