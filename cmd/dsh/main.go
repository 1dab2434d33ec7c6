// Command dsh runs and inspects dsh sessions and hooks.
//
// Usage:
//
//	dsh <command> [arguments]
//
// Each command lives in its own file and registers itself in commands (see hooks.go):
//
//	hooks   fire one hook event at a Claude Code or Codex hooks configuration
//
// Exit codes: 0 success; 2 a usage or configuration error (one line on stderr); other
// codes are command-specific.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
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

func main() {
	os.Exit(Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Main runs dsh with args (without the program name) and returns the exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		return 2
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "dsh: unknown command %q (run dsh help)\n", args[0])
		return 2
	}
	return c.run(ctx, args[1:], stdin, stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: dsh <command> [arguments]")
	fmt.Fprintln(w, "commands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
}
