package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/dshkit/dsh/runtime/session"
)

const logUsage = `usage: dsh log [--raw] FILE

Prints the session log FILE (JSONL, as dsh run --log writes it) as a readable transcript;
--raw prints every event as "seq type data". A damaged line is reported and ends the
listing (the file is not modified).`

func runLog(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	raw := false
	var files []string
	for _, a := range args {
		switch a {
		case "--raw", "-raw":
			raw = true
		case "-h", "--help", "-help":
			fmt.Fprintln(stderr, logUsage)
			return 2
		default:
			files = append(files, a)
		}
	}
	if len(files) != 1 {
		fmt.Fprintln(stderr, "dsh log: want exactly one FILE (dsh log --help)")
		return 2
	}
	f, err := os.Open(files[0])
	if err != nil {
		fmt.Fprintf(stderr, "dsh log: %v\n", err)
		return 2
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	n := 0
	for sc.Scan() {
		n++
		var e session.Event
		if err := e.UnmarshalJSON(sc.Bytes()); err != nil {
			fmt.Fprintf(stdout, "%s:%d: damaged event (%v); the rest is not shown\n", files[0], n, err)
			return 0
		}
		if raw {
			fmt.Fprintf(stdout, "%d %s %s\n", e.Seq, e.Type, e.Data)
			continue
		}
		if s := line(e); s != "" {
			fmt.Fprintln(stdout, s)
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(stdout, "%s: %v\n", files[0], err)
	}
	return 0
}
