package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/clix"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/session/pgstore"
	"github.com/dshkit/dsh/runtime/subagent"
)

const logUsage = `usage: dsh log [--raw | --summary] FILE
       dsh log [--raw | --summary] --session ID postgres://...
       dsh log postgres://...
       dsh log --repair FILE

Prints the session log FILE (JSONL, as dsh run --log writes it) as a readable transcript,
a failed tool call (an error, or a command that exited non-zero) marked ✗;
--raw prints every event as "seq type data"; --summary prints totals instead, for a long
session: turns and how they ended, model steps, tokens, tool calls and failures per
tool, hook runs and outcomes per point, and the time spent in each. A damaged line is
reported on stderr and ends the listing with exit status 1 (the file is not modified).
Control characters a model, tool or hook wrote are shown, never sent to the terminal:
ESC as \x1b, a carriage return as \x0d, C1 controls as \u009b (--raw: \u00HH, so that
each line's data stays valid JSON); newline and tab stay. A subagent's log (a file beside
FILE, FILE without its extension/subagents/SESSION.jsonl, or a session of the same
database) is shown under the line of its start, indented with │; one that is not there
says so on one line.

A log is never changed behind your back: dsh run --log and dsh acp refuse a file that
does not start with a session event, a symbolic link, and a log damaged anywhere but a
torn last line (what a crash in the middle of a write leaves, which they cut), naming
the damaged line, with exit status 1.

--repair repairs such a log: every line that is not a valid event (and any event out of
sequence) is moved, verbatim, to a new file FILE.corrupt-XXXX next to it, and every event
that decodes is kept, those after the damage too, renumbered to stay contiguous. The
repaired log replaces FILE in one rename. A clean log is left as it is; a file that holds
no session event, a symbolic link and a log in use are refused (exit status 1).

With a postgres:// URL (as dsh run --log takes it) it prints session ID of that database,
without taking its lease: a writer may go on appending meanwhile. Without --session it
lists the database's sessions, the one created last first: id, when it was created and
last written (UTC), its events, its workspace, and the writer holding it ("-": none).
`

func runLog(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	c := clix.New("dsh log", logUsage, stdout, stderr)
	raw := c.Flags.Bool("raw", false, `print every event as "seq type data"`)
	repair := c.Flags.Bool("repair", false, "move the damage in FILE aside, keeping every event that decodes")
	id := c.Flags.String("session", "", "the session of a postgres:// log")
	summary := c.Flags.Bool("summary", false, "print totals: turns, tools, hooks, tokens, timings")
	if code, ok := c.Parse(args, 1); !ok {
		return code
	}
	if c.Flags.NArg() != 1 {
		return c.UsageError("want exactly one FILE")
	}
	if *raw && *summary {
		return c.UsageError("--raw and --summary exclude each other")
	}
	name := c.Flags.Arg(0)
	if *repair {
		if *raw || *summary || *id != "" || pgstore.IsURL(name) {
			return c.UsageError("--repair takes one JSONL FILE (no --raw, --summary, --session or postgres:// URL)")
		}
		return repairLog(c, name, stdout)
	}
	if pgstore.IsURL(name) || *id != "" {
		return printPGLog(ctx, c, name, *id, *raw, *summary, stdout)
	}
	// A subagent's log is a file of its own beside the session's (subagent.DirFor).
	children := func(id string) iter.Seq2[session.Event, error] {
		return fileEvents(subagent.FileLogs{Dir: subagent.DirFor(name)}.Path(id))
	}
	if err := printLog(stdout, fileEvents(name), children, *raw, *summary); err != nil {
		return c.Fail(err)
	}
	return clix.ExitOK
}

// printLog writes events as dsh log shows them: every event as "seq type data" (raw),
// the totals (summary: of the events read before an error too), or the transcript with
// each child's log nested under its start (children gives its events).
func printLog(w io.Writer, events iter.Seq2[session.Event, error], children func(id string) iter.Seq2[session.Event, error], raw, summary bool) error {
	switch {
	case summary:
		sum := newLogSummary()
		defer sum.write(w)
		for e, err := range events {
			if err != nil {
				return err
			}
			sum.add(e)
		}
	case raw:
		for e, err := range events {
			if err != nil {
				return err
			}
			fmt.Fprintln(w, clix.VisibleJSON(fmt.Sprintf("%d %s %s", e.Seq, e.Type, e.Data)))
		}
	default:
		return printTranscript(w, events, children, "", 0)
	}
	return nil
}

// fileEvents are the events of the JSONL log at name; a damaged line is an error naming
// the file and line, which ends them.
func fileEvents(name string) iter.Seq2[session.Event, error] {
	return func(yield func(session.Event, error) bool) {
		f, err := os.Open(name)
		if err != nil {
			yield(session.Event{}, err)
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
		n := 0
		for sc.Scan() {
			n++
			var e session.Event
			if err := e.UnmarshalJSON(sc.Bytes()); err != nil {
				yield(session.Event{}, fmt.Errorf("%s:%d: damaged event (%v); the rest is not shown", name, n, err))
				return
			}
			if !yield(e, nil) {
				return
			}
		}
		if err := sc.Err(); err != nil {
			yield(session.Event{}, fmt.Errorf("%s: %w", name, err))
		}
	}
}

// maxLogDepth bounds how deep dsh log follows children's logs (a log naming itself as a
// child's, say, ends there).
const maxLogDepth = 8

// printTranscript writes events as the readable transcript, each line after prefix, and
// after each subagent/started line the child's log (children gives its events), indented
// under it; a child whose log is not there says so on one line, and the listing goes on.
func printTranscript(w io.Writer, events iter.Seq2[session.Event, error], children func(id string) iter.Seq2[session.Event, error], prefix string, depth int) error {
	for e, err := range events {
		if err != nil {
			return err
		}
		s := line(e)
		if s == "" {
			continue
		}
		fmt.Fprintln(w, indent(s, prefix))
		if e.Type != dsh.SubagentStartedType || depth >= maxLogDepth {
			continue
		}
		var d dsh.SubagentStarted
		if json.Unmarshal(e.Data, &d) != nil || d.SessionID == "" {
			continue
		}
		inner := prefix + "      │ "
		if err := printTranscript(w, children(d.SessionID), children, inner, depth+1); err != nil {
			fmt.Fprintln(w, indent(clix.Visible(fmt.Sprintf("(the subagent's log cannot be shown: %v)", err)), inner))
		}
	}
	return nil
}

// repairLog runs dsh log --repair on name and says what it did.
func repairLog(c *clix.Command, name string, stdout io.Writer) int {
	rep, err := session.Repair(name)
	if err != nil {
		return c.Fail(err)
	}
	if !rep.Changed() {
		fmt.Fprintf(stdout, "%s: clean, %d events; nothing to repair\n", name, rep.Events)
		return clix.ExitOK
	}
	fmt.Fprintf(stdout, "%s: repaired: %d events kept", name, rep.Events)
	if n := len(rep.Damaged); n > 0 {
		fmt.Fprintf(stdout, "; %d damaged line(s) (%s) moved to %s", n, lineList(rep.Damaged), rep.BackupPath)
	}
	if rep.Renumbered > 0 {
		fmt.Fprintf(stdout, "; %d events renumbered", rep.Renumbered)
	}
	if rep.DroppedSources > 0 {
		fmt.Fprintf(stdout, "; %d citations of lost events dropped", rep.DroppedSources)
	}
	fmt.Fprintln(stdout)
	return clix.ExitOK
}

// lineList lists line numbers, the first ten of them.
func lineList(lines []int64) string {
	var b strings.Builder
	for i, l := range lines {
		if i == 10 {
			fmt.Fprintf(&b, ", … %d more", len(lines)-10)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "line %d", l)
	}
	return b.String()
}

// printPGLog prints session id of the PostgreSQL database at url, as runLog prints a file.
func printPGLog(ctx context.Context, c *clix.Command, url, id string, raw, summary bool, stdout io.Writer) int {
	switch {
	case !pgstore.IsURL(url):
		return c.UsageError("--session names a session of a postgres:// log, not of %s", url)
	}
	db, err := pgstore.Connect(ctx, url)
	if err != nil {
		return c.Fail(err)
	}
	defer db.Close()
	if id == "" {
		if raw || summary {
			return c.UsageError("--raw and --summary print one session: give --session ID")
		}
		return listPGSessions(ctx, c, db, stdout)
	}
	// A subagent's log is a session of its own in the same database.
	children := func(id string) iter.Seq2[session.Event, error] { return db.Events(ctx, id) }
	if err := printLog(stdout, db.Events(ctx, id), children, raw, summary); err != nil {
		return c.Fail(err)
	}
	return clix.ExitOK
}

// listPGSessions lists the sessions of db, the one created last first: id, creation and
// last write times, events, workspace, and the writer holding it.
func listPGSessions(ctx context.Context, c *clix.Command, db *pgstore.DB, stdout io.Writer) int {
	infos, err := db.Sessions(ctx)
	if err != nil {
		return c.Fail(err)
	}
	if len(infos) == 0 {
		fmt.Fprintf(stdout, "no sessions in %s\n", db)
		return clix.ExitOK
	}
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SESSION\tCREATED\tLAST WRITE\tEVENTS\tWORKSPACE\tHELD BY")
	for _, s := range infos {
		held := "-"
		if s.Held {
			held = s.Owner
		}
		ws := s.Workspace
		if ws == "" {
			ws = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\t%s\n", clix.Visible(s.ID), s.Created.UTC().Format(time.DateTime), s.LastWrite.UTC().Format(time.DateTime),
			s.Events, clix.Visible(ws), clix.Visible(held))
	}
	w.Flush()
	return clix.ExitOK
}
