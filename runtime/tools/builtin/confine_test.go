//go:build unix

package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// runWithin runs a tool call and fails the test, instead of hanging it, when the call
// does not return within d.
func runWithin(t *testing.T, rt *tools.Runtime, d time.Duration, name, args string) tools.Result {
	t.Helper()
	done := make(chan tools.Result, 1)
	go func() {
		done <- rt.Execute(context.Background(), tools.Input{CallID: "c1", Name: name, Arguments: json.RawMessage(args)})
	}()
	select {
	case r := <-done:
		return r
	case <-time.After(d):
		t.Fatalf("%s %s did not return within %s", name, args, d)
		return tools.Result{}
	}
}

// TestFileToolsRefuseNonRegular: Read, Write and Edit refuse a FIFO, a socket and a
// directory with NOT_REGULAR_FILE, and a FIFO never blocks them.
func TestFileToolsRefuseNonRegular(t *testing.T) {
	rt, ws := setup(t, builtin.Options{})
	if err := syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(ws, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := os.Mkdir(filepath.Join(ws, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"fifo", "sock", "dir"} {
		for _, c := range []struct{ name, args string }{
			{"Read", `{"file_path":"` + p + `"}`},
			{"Read", `{"file_path":"` + p + `","offset":1,"limit":1}`},
			{"Write", `{"file_path":"` + p + `","content":"x"}`},
			{"Edit", `{"file_path":"` + p + `","old_string":"a","new_string":"b"}`},
		} {
			r := runWithin(t, rt, 5*time.Second, c.name, c.args)
			if errCode(r) != builtin.CodeNotRegular {
				t.Errorf("%s %s: code %q (%s), want %s", c.name, c.args, errCode(r), text(r), builtin.CodeNotRegular)
			}
		}
	}
	if r := run(t, rt, "Read", `{"file_path":"fifo"}`); !strings.Contains(text(r), "FIFO") {
		t.Errorf("the FIFO's error does not say what it is: %s", text(r))
	}
}

// TestReadCaps: Read's line-length cap cuts a long line with a note, its byte cap
// refuses a whole file over it (as Claude Code does, saying to use offset and limit)
// and a range over it, and offset and limit still read the lines asked for.
func TestReadCaps(t *testing.T) {
	rt, ws := setup(t, builtin.Options{ReadMaxLineLength: 10, ReadMaxBytes: 100})
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("long.txt", "short\n"+strings.Repeat("é", 30)+"\nend\n")
	r := run(t, rt, "Read", `{"file_path":"long.txt"}`)
	want := "     1\tshort\n     2\t" + strings.Repeat("é", 10) + "… [line truncated: 20 of its 60 bytes shown]\n     3\tend\n"
	if r.IsError() || text(r) != want {
		t.Errorf("long line:\n got %q\nwant %q", text(r), want)
	}
	write("big.txt", strings.Repeat("0123456789\n", 20)) // 220 bytes
	if r := run(t, rt, "Read", `{"file_path":"big.txt"}`); errCode(r) != builtin.CodeFileTooLarge ||
		!strings.Contains(text(r), "Use offset and limit") {
		t.Errorf("whole big file: code %q, %s", errCode(r), text(r))
	}
	if r := run(t, rt, "Read", `{"file_path":"big.txt","offset":20,"limit":5}`); r.IsError() || text(r) != "    20\t0123456789\n" {
		t.Errorf("a range of it: %q", text(r))
	}
	if r := run(t, rt, "Read", `{"file_path":"big.txt","limit":15}`); errCode(r) != builtin.CodeFileTooLarge {
		t.Errorf("a range over the cap (165 bytes): code %q, %s", errCode(r), text(r))
	}
}

// TestReadRangeMatchesSplit: the streaming read gives what splitting the whole file
// gave, for every offset and limit over files of every shape.
func TestReadRangeMatchesSplit(t *testing.T) {
	rt, ws := setup(t, builtin.Options{})
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", "\n", "\n", "\r\n", "é", "\xff"}
	for i := range 30 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		content := b.String()
		name := fmt.Sprintf("f%d", i)
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.ToValidUTF8(content, "\uFFFD"), "\n")
		for offset := 1; offset <= len(lines)+1; offset++ {
			for _, limit := range []int{1, 2, 5, 100} {
				r := run(t, rt, "Read", fmt.Sprintf(`{"file_path":%q,"offset":%d,"limit":%d}`, name, offset, limit))
				var v struct {
					File struct {
						Content    string `json:"content"`
						NumLines   int    `json:"numLines"`
						TotalLines int    `json:"totalLines"`
					} `json:"file"`
				}
				ok, _ := r.Outcome.(dsh.ToolSuccess)
				if err := json.Unmarshal(ok.Value, &v); err != nil {
					t.Fatalf("%q offset %d limit %d: %v (%s)", content, offset, limit, err, text(r))
				}
				end := min(offset-1+limit, len(lines))
				var got []string
				if offset-1 < len(lines) {
					got = lines[offset-1 : end]
				}
				if v.File.Content != strings.Join(got, "\n") || v.File.NumLines != len(got) || v.File.TotalLines != len(lines) {
					t.Fatalf("%q offset %d limit %d: got %+v, want %q of %d lines", content, offset, limit, v.File, got, len(lines))
				}
			}
		}
	}
}

// TestReadHugeLineIsCapped: a one-line file of 64 MiB read with limit 1 gives its first
// 2000 characters and a note, not the line.
func TestReadHugeLineIsCapped(t *testing.T) {
	rt, ws := setup(t, builtin.Options{})
	p := filepath.Join(ws, "huge")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("start"); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 20); err != nil { // sparse: NUL bytes, no newline
		t.Fatal(err)
	}
	f.Close()
	r := run(t, rt, "Read", `{"file_path":"huge","limit":1}`)
	if r.IsError() {
		t.Fatalf("Read: %s", text(r))
	}
	got := text(r)
	if len(got) > 3000 || !strings.HasPrefix(got, "     1\tstart") ||
		!strings.Contains(got, fmt.Sprintf("[line truncated: 2000 of its %d bytes shown]", 64<<20)) {
		t.Errorf("Read of a 64 MiB line: %d bytes, %.80q ... %.80q", len(got), got, got[max(0, len(got)-80):])
	}
}

// TestWriteRaceStaysInside: a name flipped between a directory and a symlink to an
// outside directory while Write writes through it never lets a write land outside (the
// path check and the open were two steps; os.Root makes the open itself confined).
func TestWriteRaceStaysInside(t *testing.T) {
	rt, ws := setup(t, builtin.Options{})
	outside := t.TempDir()
	d := filepath.Join(ws, "d")
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			// d is a real directory, then a symlink to outside. (RemoveAll removes a
			// symlink itself, never what it points to.)
			_ = os.RemoveAll(d)
			_ = os.Mkdir(d, 0o755)
			_ = os.RemoveAll(d)
			_ = os.Symlink(outside, d)
		}
	}()
	deadline := time.Now().Add(3 * time.Second)
	n := 0
	for ; n < 3000 && time.Now().Before(deadline); n++ {
		name := fmt.Sprintf("d/f%d.txt", n)
		run(t, rt, "Write", `{"file_path":"`+name+`","content":"x"}`)
		run(t, rt, "Edit", `{"file_path":"`+name+`","old_string":"x","new_string":"y"}`)
	}
	stop.Store(true)
	wg.Wait()
	entries, _ := os.ReadDir(outside)
	if len(entries) > 0 {
		t.Fatalf("after %d racing Writes and Edits, %d file(s) landed outside the workspace", n, len(entries))
	}
	t.Logf("%d racing Writes and Edits, none outside", n)
}

// TestEditRaceStaysInside: an Edit of a large file takes long enough between its check
// of the path and its write for the directory to become a symlink to outside meanwhile;
// the write must still land inside (the file it opened), never in the outside file the
// path names by then.
func TestEditRaceStaysInside(t *testing.T) {
	rt, ws := setup(t, builtin.Options{})
	outside := t.TempDir()
	d := filepath.Join(ws, "d")
	big := strings.Repeat("0123456789abcdef", 1<<17) + "needle\n" // 2 MiB, one line (a cheap patch)
	if err := os.WriteFile(filepath.Join(outside, "big.txt"), []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, delay := range []time.Duration{time.Millisecond, 0} {
		_ = os.Remove(d)
		_ = os.RemoveAll(d + ".real")
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "big.txt"), []byte(big), 0o644); err != nil {
			t.Fatal(err)
		}
		done := make(chan tools.Result, 1)
		go func() {
			done <- rt.Execute(context.Background(), tools.Input{CallID: "c", Name: "Edit",
				Arguments: json.RawMessage(`{"file_path":"d/big.txt","old_string":"needle","new_string":"pin"}`)})
		}()
		time.Sleep(delay)
		if err := os.Rename(d, d+".real"); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, d); err != nil {
			t.Fatal(err)
		}
		r := <-done
		if got, _ := os.ReadFile(filepath.Join(outside, "big.txt")); string(got) != "outside\n" {
			t.Fatalf("swap after %s: the Edit wrote outside the workspace (%d bytes there now; result: %.100s)", delay, len(got), text(r))
		}
		if !r.IsError() {
			if got, _ := os.ReadFile(filepath.Join(d+".real", "big.txt")); !strings.HasSuffix(string(got), "pin\n") {
				t.Errorf("swap after %s: the Edit succeeded but the file it opened does not hold it", delay)
			}
		}
	}
}
