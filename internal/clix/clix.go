// Package clix holds the command-line convention every dsh command follows, so that each
// command (and each new flag or subcommand) behaves alike:
//
//   - -h, -help or --help prints the command's usage and flags on stdout and exits 0;
//   - a usage error (unknown flag, bad flag value, missing or unexpected argument) prints
//     "<command>: <what is wrong>" and then the usage on stderr and exits 2;
//   - any other failure prints "<command>: <error>" on stderr and exits 1 (or a code the
//     command documents).
//
// A command builds a Command, defines its flags on Command.Flags, calls Parse and returns
// the code Parse gives when it says to stop. Past parsing, a command returns an error and
// Command.Exit turns it into the exit code, the one place that does: a *UsageError
// (Usagef) is a usage error, a *CodedError a failure with a code the command documents,
// anything else a failure. There is no other usage-error type.
package clix

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Exit codes shared by every command.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// Command is one command or subcommand: its name (as the user types it, e.g. "dsh run"),
// its usage text and its flags.
type Command struct {
	// Name is the command as typed, e.g. "dsh hooks run".
	Name string
	// Usage is the synopsis and description printed before the flags; it should end with a
	// newline.
	Usage string
	// Flags are the command's flags; define them before calling Parse.
	Flags *flag.FlagSet
	// OmitFlagList leaves the generated flag list out of the help, for a Usage that
	// describes every flag itself.
	OmitFlagList bool

	stdout, stderr io.Writer
}

// New returns a Command writing help to stdout and errors to stderr.
func New(name, usage string, stdout, stderr io.Writer) *Command {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &Command{Name: name, Usage: usage, Flags: fs, stdout: stdout, stderr: stderr}
}

// Help returns the usage text followed by the flags and their defaults.
func (c *Command) Help() string {
	var b strings.Builder
	b.WriteString(c.Usage)
	has := false
	c.Flags.VisitAll(func(*flag.Flag) { has = true })
	if has && !c.OmitFlagList {
		b.WriteString("\nflags:\n")
		c.Flags.SetOutput(&b)
		c.Flags.PrintDefaults()
		c.Flags.SetOutput(io.Discard)
	}
	return b.String()
}

// Parse parses args. It returns ok when the command should go on; otherwise it has printed
// the help (code 0) or a usage error (code 2) and the command returns code. With
// maxArgs >= 0, more positional arguments than that are a usage error.
func (c *Command) Parse(args []string, maxArgs int) (code int, ok bool) {
	if err := c.Flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(c.stdout, c.Help())
			return ExitOK, false
		}
		return c.UsageError("%v", err), false
	}
	if maxArgs >= 0 && c.Flags.NArg() > maxArgs {
		return c.UsageError("unexpected argument %q", c.Flags.Arg(maxArgs)), false
	}
	return ExitOK, true
}

// UsageError prints "<name>: <message>" and the help on stderr and returns ExitUsage.
func (c *Command) UsageError(format string, args ...any) int {
	fmt.Fprintf(c.stderr, "%s: %s\n\n%s", c.Name, fmt.Sprintf(format, args...), c.Help())
	return ExitUsage
}

// Fail prints "<name>: <err>" on stderr and returns ExitFailure.
func (c *Command) Fail(err error) int {
	fmt.Fprintf(c.stderr, "%s: %s\n", c.Name, Visible(err.Error()))
	return ExitFailure
}

// UsageError is a command-line mistake (a bad flag, a missing or unexpected argument):
// Exit prints it with the command's usage and returns ExitUsage.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef returns a *UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// CodedError is a failure with an exit code the command documents in place of
// ExitFailure (dshgen's invalid spec exits 2). Exit prints it on one line, after the
// command's name unless Unprefixed (for a message that starts with its own position).
type CodedError struct {
	Code       int
	Err        error
	Unprefixed bool
}

func (e *CodedError) Error() string { return e.Err.Error() }
func (e *CodedError) Unwrap() error { return e.Err }

// stop is the error of a command that has already printed what it had to (the help, or
// the usage error Parse printed): Exit returns its code and prints nothing.
type stop struct{ code int }

func (e *stop) Error() string { return fmt.Sprintf("exit %d", e.code) }

// Stop returns an error that makes Exit return code and print nothing, for a command that
// returns Parse's code through an error.
func Stop(code int) error { return &stop{code: code} }

// Exit is the one place where a command's error becomes its exit code: nil is ExitOK; a
// Stop is its code; a *UsageError prints the message and the usage on stderr (ExitUsage);
// a *CodedError prints one line and returns its code; any other error prints
// "<name>: <err>" on one line (ExitFailure).
func (c *Command) Exit(err error) int {
	var (
		st    *stop
		usage *UsageError
		coded *CodedError
	)
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &st):
		return st.code
	case errors.As(err, &usage):
		return c.UsageError("%s", usage.Msg)
	case errors.As(err, &coded):
		if coded.Unprefixed {
			fmt.Fprintln(c.stderr, coded.Err)
		} else {
			fmt.Fprintf(c.stderr, "%s: %v\n", c.Name, coded.Err)
		}
		return coded.Code
	}
	return c.Fail(err)
}

// IsHelp reports whether arg asks for help: -h, -help, --help or help.
func IsHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

// OneOf returns a usage-checking flag.Value for a string that must be one of choices
// (the empty string is allowed when allowEmpty is set); its Set fails naming the choices.
func OneOf(p *string, allowEmpty bool, choices ...string) flag.Value {
	return &oneOf{p: p, empty: allowEmpty, choices: choices}
}

type oneOf struct {
	p       *string
	empty   bool
	choices []string
}

func (o *oneOf) String() string {
	if o == nil || o.p == nil {
		return ""
	}
	return *o.p
}

func (o *oneOf) Set(s string) error {
	if s == "" && o.empty {
		*o.p = s
		return nil
	}
	for _, c := range o.choices {
		if s == c {
			*o.p = s
			return nil
		}
	}
	return fmt.Errorf("%q is not one of %s", s, strings.Join(o.choices, ", "))
}
