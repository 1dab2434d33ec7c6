// Command testreport reads `go test -json` on stdin and writes what `go test` without
// -json writes (each package's result line, the output of the tests that failed), then
// every skipped test with the reason it gave: go test alone never shows a skip's reason
// unless run with -v, so a cross-check that skipped for want of its oracle would pass
// unseen. scripts/test pipes go test through it.
//
// Usage:
//
//	go test -json ./... | go run ./scripts/testreport
//
// It exits 1 when a test or package failed (or a line is not a test event), else 0.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	failed, err := report(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport: "+err.Error())
		os.Exit(1)
	}
	if failed {
		os.Exit(1)
	}
}

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// skip is a skipped test and the reason it logged.
type skip struct {
	pkg, test string
	reason    []string
}

// report copies the result of the go test -json stream in to out as go test prints it,
// then the skipped tests with their reasons; failed says a test or package failed.
func report(in io.Reader, out io.Writer) (failed bool, err error) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	type key struct{ pkg, test string }
	output := map[key][]string{} // a running test's output, until its result
	var skips []skip
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			// Not an event: what go test printed itself (a build failure goes to stderr).
			fmt.Fprintf(out, "%s\n", line)
			continue
		}
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			return true, fmt.Errorf("line %d: not a go test -json event: %v", n, err)
		}
		k := key{e.Package, e.Test}
		switch {
		case e.Action == "output" && e.Test != "":
			output[k] = append(output[k], e.Output)
		case e.Action == "output":
			// The package's own lines: its result, and what the test binary printed
			// outside any test; -json implies -v, whose PASS line go test alone omits.
			if e.Output != "PASS\n" && !strings.HasPrefix(e.Output, "=== ") {
				io.WriteString(out, e.Output)
			}
		case e.Action == "fail" && e.Test != "":
			failed = true
			for _, o := range output[k] {
				io.WriteString(out, o)
			}
			delete(output, k)
		case e.Action == "fail":
			failed = true
		case e.Action == "skip" && e.Test != "":
			s := skip{pkg: e.Package, test: e.Test}
			for _, o := range output[k] {
				if o = strings.TrimSpace(o); o != "" && !strings.HasPrefix(o, "=== ") && !strings.HasPrefix(o, "--- SKIP") {
					s.reason = append(s.reason, o)
				}
			}
			skips = append(skips, s)
			delete(output, k)
		case e.Action == "pass":
			delete(output, k)
		}
	}
	if err := sc.Err(); err != nil {
		return true, err
	}
	if len(skips) > 0 {
		fmt.Fprintf(out, "\nskipped (%d), with the reasons they gave:\n", len(skips))
		for _, s := range skips {
			reason := strings.Join(s.reason, " ")
			if reason == "" {
				reason = "(no reason given)"
			}
			fmt.Fprintf(out, "  %s %s: %s\n", s.pkg, s.test, reason)
		}
	}
	return failed, nil
}
