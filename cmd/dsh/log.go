package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/dshkit/dsh/internal/clix"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/session/pgstore"
)

const logUsage = `usage: dsh log [--raw] FILE
       dsh log [--raw] --session ID postgres://...

Prints the session log FILE (JSONL, as dsh run --log writes it) as a readable transcript;
--raw prints every event as "seq type data". A damaged line is reported on stderr and ends
the listing with exit status 1 (the file is not modified).

With a postgres:// URL (as dsh run --log takes it) it prints session ID of that database,
without taking its lease: a writer may go on appending meanwhile.
`

func runLog(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	c := clix.New("dsh log", logUsage, stdout, stderr)
	raw := c.Flags.Bool("raw", false, `print every event as "seq type data"`)
	id := c.Flags.String("session", "", "the session of a postgres:// log")
	if code, ok := c.Parse(args, 1); !ok {
		return code
	}
	if c.Flags.NArg() != 1 {
		return c.UsageError("want exactly one FILE")
	}
	name := c.Flags.Arg(0)
	if pgstore.IsURL(name) || *id != "" {
		return printPGLog(ctx, c, name, *id, *raw, stdout)
	}
	f, err := os.Open(name)
	if err != nil {
		return c.Fail(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	n := 0
	for sc.Scan() {
		n++
		var e session.Event
		if err := e.UnmarshalJSON(sc.Bytes()); err != nil {
			return c.Fail(fmt.Errorf("%s:%d: damaged event (%v); the rest is not shown", name, n, err))
		}
		if *raw {
			fmt.Fprintf(stdout, "%d %s %s\n", e.Seq, e.Type, e.Data)
			continue
		}
		if s := line(e); s != "" {
			fmt.Fprintln(stdout, s)
		}
	}
	if err := sc.Err(); err != nil {
		return c.Fail(fmt.Errorf("%s: %w", name, err))
	}
	return clix.ExitOK
}

// printPGLog prints session id of the PostgreSQL database at url, as runLog prints a file.
func printPGLog(ctx context.Context, c *clix.Command, url, id string, raw bool, stdout io.Writer) int {
	switch {
	case !pgstore.IsURL(url):
		return c.UsageError("--session names a session of a postgres:// log, not of %s", url)
	case id == "":
		return c.UsageError("a postgres:// log needs --session ID")
	}
	db, err := pgstore.Connect(ctx, url)
	if err != nil {
		return c.Fail(err)
	}
	defer db.Close()
	for e, err := range db.Events(ctx, id) {
		if err != nil {
			return c.Fail(err)
		}
		if raw {
			fmt.Fprintf(stdout, "%d %s %s\n", e.Seq, e.Type, e.Data)
			continue
		}
		if s := line(e); s != "" {
			fmt.Fprintln(stdout, s)
		}
	}
	return clix.ExitOK
}
