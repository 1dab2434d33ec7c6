package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/dshkit/dsh/internal/clix"
	"github.com/dshkit/dsh/runtime/session"
)

const logUsage = `usage: dsh log [--raw | --summary] FILE

Prints the session log FILE (JSONL, as dsh run --log writes it) as a readable transcript,
a failed tool call (an error, or a command that exited non-zero) marked ✗;
--raw prints every event as "seq type data"; --summary prints totals instead, for a long
session: turns and how they ended, model steps, tokens, tool calls and failures per
tool, hook runs and outcomes per point, and the time spent in each. A damaged line is
reported on stderr and ends the listing with exit status 1 (the file is not modified).
`

func runLog(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	c := clix.New("dsh log", logUsage, stdout, stderr)
	raw := c.Flags.Bool("raw", false, `print every event as "seq type data"`)
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
	var sum *logSummary
	if *summary {
		sum = newLogSummary()
		defer func() {
			if sum != nil {
				sum.write(stdout)
			}
		}()
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
		if sum != nil {
			sum.add(e)
			continue
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
