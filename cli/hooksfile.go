package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/runner"
)

// checkNamedHooks checks a hooks file named on the command line (dsh run and dsh acp
// --hooks, dsh hooks run --config) before anything runs. Such a file fails closed
// (docs/decisions/0007-cli.md, "A hooks file named on the command line loads whole or not at
// all"): if it cannot be read or parsed, names an event the dialect's bridge does not
// run, or holds a group or handler the bridge would skip, the command fails with one line
// naming the file and the first problem, and nothing runs without the guard. An event
// of the engine that dsh never fires (its table's Unfired) is no problem: it skips
// nothing, and dsh run reports it. Settings
// discovered on their own (--setting-sources, the project's files under --trust) and
// plugins still skip a bad entry with a diagnostic, as the engines do.
func checkNamedHooks(dialect, path string) error {
	if path == "" {
		return nil
	}
	desc := runner.Dialect(dialect)
	table := desc.Table
	var events, noMatcher []string
	for _, e := range table.Events {
		events = append(events, e.Name)
		if e.Matcher == "" {
			noMatcher = append(noMatcher, e.Name)
		}
	}
	_, diags := hookproto.LoadFile(path, hookproto.LoadOptions{
		Dialect: hookproto.Dialect(table.Dialect), Source: path, Events: events, NoMatcherEvents: noMatcher,
		Rules: desc.Rules, DefaultTimeout: desc.DefaultTimeout(),
	})
	var bad []hookproto.Diagnostic
	for _, d := range diags {
		if d.Skipped != "" {
			bad = append(bad, d)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	first := bad[0]
	first.Skipped = ""
	msg := oneLine(first.Error())
	if errors.Is(first.Err, hookproto.ErrUnsupportedEvent) {
		msg += fmt.Sprintf(" (the %s bridge runs %s)", table.Dialect, strings.Join(events, ", "))
	}
	if len(bad) > 1 {
		msg += fmt.Sprintf(" (and %d more problems)", len(bad)-1)
	}
	return fmt.Errorf("%s; not run", msg)
}
