package session

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
)

// writeWithLongLine writes the events of a valid log with a line of n NUL bytes (a hole in
// a sparse file: nothing to write, 0 bytes on disk) in place of event at.
func writeWithLongLine(t *testing.T, path string, events [][]byte, at int, n int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var off int64
	write := func(b []byte) {
		if _, err := f.WriteAt(b, off); err != nil {
			t.Fatal(err)
		}
		off += int64(len(b))
	}
	for i, ev := range events {
		if i == at {
			off += n // the hole
			write([]byte("\n"))
			continue
		}
		write(ev)
	}
}

// allocated runs fn and returns the bytes it allocated.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestLongDamagedLine: a log with a damaged line far longer than any event (200 MiB) is
// refused by OpenFile, which names the line, and repaired by Repair, which moves the line
// aside verbatim; neither reads the line into memory.
func TestLongDamagedLine(t *testing.T) {
	dir := t.TempDir()
	clean := validLog(t, filepath.Join(dir, "clean.jsonl"), 2)
	events := bytes.SplitAfter(clean, []byte("\n"))
	events = events[:len(events)-1]
	const long = 200 << 20
	path := filepath.Join(dir, "long.jsonl")
	writeWithLongLine(t, path, events, 3, long)

	var openErr error
	if a := allocated(func() { _, _, openErr = OpenFile(path) }); a > 16<<20 {
		t.Errorf("OpenFile allocated %d bytes", a)
	}
	var de *DamageError
	if !errors.As(openErr, &de) || de.Line != 4 || !strings.Contains(de.Reason, "209715200 bytes") {
		t.Fatalf("OpenFile: %v, want damage at line 4 naming its length", openErr)
	}

	var rep RepairReport
	var err error
	if a := allocated(func() { rep, err = Repair(path) }); a > 16<<20 {
		t.Errorf("Repair allocated %d bytes", a)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Damaged, []int64{4}) || rep.Events != int64(len(events)-1) {
		t.Errorf("report %+v", rep)
	}
	if st, err := os.Stat(rep.BackupPath); err != nil || st.Size() != long+1 {
		t.Errorf("backup %s: %v, size %d, want %d", rep.BackupPath, err, st.Size(), long+1)
	}
	f, _, err := OpenFile(path)
	if err != nil {
		t.Fatalf("the repaired log: %v", err)
	}
	f.Close()
}

// TestLongValidLine: an event line longer than a read chunk (a large tool result) is read
// whole, by OpenFile and by a File's Read, as any other.
func TestLongValidLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "big.jsonl")
	f, _, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l := mustOpen(t, f, WithClock(stepClock()))
	big := strings.Repeat("0123456789", 100_000) // 1 MB, four read chunks
	mustAppend(t, l, dsh.UserMessageLogged{Message: msg("m1", big)})
	mustAppend(t, l, dsh.UserMessageLogged{Message: msg("m2", "after")})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	f, _, err = OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, f)
	defer l.Close()
	evs := collect(t, l)
	if len(evs) < 2 || !bytes.Contains(evs[len(evs)-2].Data, []byte(big)) || !bytes.Contains(evs[len(evs)-1].Data, []byte("after")) {
		t.Errorf("events %d; the long one and the next not read back", len(evs))
	}
}

// TestLongTornTail: a torn last line of NUL bytes longer than a chunk is cut as torn, as a
// short one is, without being read whole.
func TestLongTornTail(t *testing.T) {
	dir := t.TempDir()
	clean := validLog(t, filepath.Join(dir, "clean.jsonl"), 1)
	path := filepath.Join(dir, "torn.jsonl")
	if err := os.WriteFile(path, clean, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, int64(len(clean))+(3<<20)); err != nil {
		t.Fatal(err)
	}
	f, rec, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if rec.Kind != RecoveryTornTail || rec.TruncatedBytes != 3<<20 {
		t.Errorf("recovery %+v, want the 3 MiB torn tail cut", rec)
	}
}
