package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// writeTurn appends one whole turn: start, a claim, a step with its user message, end.
func writeTurn(t testing.TB, l *Log, turn int) {
	t.Helper()
	m := msg(fmt.Sprintf("m%d", turn), fmt.Sprintf("prompt %d", turn))
	mustAppend(t, l, splice(dsh.InboxTargetNextTurn, 0, 0, m))
	mustAppend(t, l, dsh.TurnStart{Turn: turn})
	mustAppend(t, l, splice(dsh.InboxTargetNextTurn, 0, 1))
	mustAppend(t, l, dsh.StepStart{Turn: turn, Step: 1})
	mustAppend(t, l, dsh.UserMessageLogged{Message: m})
	mustAppend(t, l, dsh.StepEnd{Turn: turn, Step: 1})
	mustAppend(t, l, dsh.TurnEnd{Turn: turn, Reason: dsh.TurnEndCompleted{}})
}

func TestFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	f, rec, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Recovery{}, rec); diff != "" {
		t.Fatalf("new file recovery (-want +got):\n%s", diff)
	}
	l := mustOpen(t, f, WithClock(stepClock()))
	writeTurn(t, l, 1)
	writeTurn(t, l, 2)
	want := collect(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("file mode: %v %v", fi.Mode(), err)
	}

	f2, rec, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Truncated() || rec.Kind != RecoveryNone {
		t.Fatalf("clean file recovered: %+v", rec)
	}
	l2 := mustOpen(t, f2)
	got := collect(t, l2)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("events after reopen (-want +got):\n%s", diff)
	}
	if l2.Synced() != int64(len(want))-1 {
		t.Errorf("loaded events are not durable: Synced %d", l2.Synced())
	}
	for i := range want {
		a, errA := want[i].Decode()
		b, errB := got[i].Decode()
		if errA != nil || errB != nil {
			t.Fatalf("event %d does not decode: %v, %v", i, errA, errB)
		}
		if diff := cmp.Diff(a, b); diff != "" {
			t.Fatalf("event %d data (-want +got):\n%s", i, diff)
		}
	}
	// Appending continues the sequence.
	if ev := mustAppend(t, l2, dsh.TurnStart{Turn: 3}); ev.Seq != int64(len(want)) {
		t.Fatalf("next seq %d, want %d", ev.Seq, len(want))
	}
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestFileLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	f, _, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := OpenFile(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("second OpenFile: %v, want ErrLocked", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	f, _, err = OpenFile(path)
	if err != nil {
		t.Fatalf("OpenFile after Close: %v", err)
	}
	f.Close()
}

// validLog writes a clean log of n turns (7 events each) and returns its bytes.
func validLog(t *testing.T, path string, turns int) []byte {
	t.Helper()
	f, _, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l := mustOpen(t, f, WithClock(stepClock()))
	for i := 1; i <= turns; i++ {
		writeTurn(t, l, i)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestFileRecovery(t *testing.T) {
	dir := t.TempDir()
	clean := validLog(t, filepath.Join(dir, "clean.jsonl"), 2) // 14 events
	lines := bytes.SplitAfter(clean, []byte("\n"))
	lines = lines[:len(lines)-1] // the empty piece after the last newline
	if len(lines) != 14 {
		t.Fatalf("clean log has %d lines", len(lines))
	}
	join := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	prefix := func(n int) []byte { return join(lines[:n]...) }
	// A valid line for seq 20, out of sequence after seq 13.
	gapLine := bytes.Replace(lines[13], []byte(`"seq":13`), []byte(`"seq":20`), 1)

	cases := []struct {
		name     string
		contents []byte
		want     Recovery // Reason and BackupPath are checked apart
		reason   string
		backup   []byte // the saved cut, when one is expected
	}{
		{
			name:     "torn tail: half a line",
			contents: join(prefix(14), lines[3][:len(lines[3])/2]),
			want:     Recovery{Kind: RecoveryTornTail, Line: 15, Events: 14, ValidBytes: int64(len(clean)), TruncatedBytes: int64(len(lines[3]) / 2), DroppedLines: 1},
			reason:   "line 15 is incomplete",
		},
		{
			name:     "torn tail: a whole line but its newline",
			contents: join(prefix(13), bytes.TrimSuffix(lines[13], []byte("\n"))),
			want:     Recovery{Kind: RecoveryTornTail, Line: 14, Events: 13, ValidBytes: int64(len(prefix(13))), TruncatedBytes: int64(len(lines[13]) - 1), DroppedLines: 1},
			reason:   "line 14 is incomplete",
		},
		{
			name:     "garbage bytes",
			contents: join(prefix(14), []byte("\x00\x00\xffgarbage\n")),
			want:     Recovery{Kind: RecoveryCorruptLine, Line: 15, Events: 14, ValidBytes: int64(len(clean)), TruncatedBytes: 11, DroppedLines: 1},
			reason:   "line 15 is not a valid event envelope",
			backup:   []byte("\x00\x00\xffgarbage\n"),
		},
		{
			name:     "zeros without a newline",
			contents: join(prefix(14), make([]byte, 4096)),
			want:     Recovery{Kind: RecoveryTornTail, Line: 15, Events: 14, ValidBytes: int64(len(clean)), TruncatedBytes: 4096, DroppedLines: 1},
			reason:   "4096 bytes without a final newline",
		},
		{
			name:     "seq gap",
			contents: join(prefix(13), gapLine),
			want:     Recovery{Kind: RecoverySeqGap, Line: 14, Events: 13, ValidBytes: int64(len(prefix(13))), TruncatedBytes: int64(len(gapLine)), DroppedLines: 1},
			reason:   "line 14 has seq 20, want 13",
			backup:   gapLine,
		},
		{
			name:     "corrupt line in the middle",
			contents: join(prefix(5), []byte("{\"type\":\"turn/st\n"), join(lines[6:]...)),
			want: Recovery{Kind: RecoveryCorruptLine, Line: 6, Events: 5, ValidBytes: int64(len(prefix(5))),
				TruncatedBytes: int64(17 + len(join(lines[6:]...))), DroppedLines: 9},
			reason: "line 6 is not a valid event envelope",
			backup: join([]byte("{\"type\":\"turn/st\n"), join(lines[6:]...)),
		},
		{
			name:     "all garbage",
			contents: []byte("hello\nworld"),
			want:     Recovery{Kind: RecoveryCorruptLine, Line: 1, TruncatedBytes: 11, DroppedLines: 2},
			reason:   "line 1 is not a valid event envelope",
			backup:   []byte("hello\nworld"),
		},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("case%d.jsonl", i))
			if err := os.WriteFile(path, c.contents, 0o600); err != nil {
				t.Fatal(err)
			}
			logger, logs := newTestLogger()
			f, rec, err := OpenFile(path, WithFileLogger(logger))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, rec, cmpopts.IgnoreFields(Recovery{}, "Reason", "BackupPath")); diff != "" {
				t.Errorf("Recovery (-want +got):\n%s", diff)
			}
			if !rec.Truncated() || !strings.Contains(rec.Reason, c.reason) {
				t.Errorf("Reason %q does not say %q", rec.Reason, c.reason)
			}
			if !strings.Contains(logs.String(), "recovered") || !strings.Contains(logs.String(), string(c.want.Kind)) {
				t.Errorf("recovery not logged: %s", logs)
			}
			if c.backup == nil {
				if rec.BackupPath != "" {
					t.Errorf("unexpected backup %s", rec.BackupPath)
				}
			} else if saved, err := os.ReadFile(rec.BackupPath); err != nil || !bytes.Equal(saved, c.backup) {
				t.Errorf("backup %q holds %q (%v), want %q", rec.BackupPath, saved, err, c.backup)
			}
			if data, _ := os.ReadFile(path); !bytes.Equal(data, c.contents[:c.want.ValidBytes]) {
				t.Errorf("file not cut to its valid prefix")
			}

			// The log opens on the kept prefix and goes on from it.
			l := mustOpen(t, f)
			events := collect(t, l)
			if int64(len(events)) != c.want.Events {
				t.Fatalf("%d events, want %d", len(events), c.want.Events)
			}
			if ev := mustAppend(t, l, dsh.SessionEndSeed{}); ev.Seq != c.want.Events {
				t.Fatalf("next seq %d, want %d", ev.Seq, c.want.Events)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			f, rec, err = OpenFile(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if rec.Truncated() {
				t.Fatalf("recovered file is not clean on reopen: %+v", rec)
			}
		})
	}
}

func TestFileStoreContract(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	f, _, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := f.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Load(ctx); err == nil {
		t.Error("second Load succeeded")
	}
	for _, line := range []string{"", "{}", "{}\n{}\n"} {
		if err := f.Append(ctx, []byte(line)); err == nil {
			t.Errorf("Append accepted %q", line)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Append(ctx, []byte("{}\n")); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close: %v", err)
	}
	if err := f.Sync(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Sync after Close: %v", err)
	}
	if data, _ := os.ReadFile(path); len(data) != 0 {
		t.Errorf("rejected lines were written: %q", data)
	}
}

func TestMemoryReopen(t *testing.T) {
	mem := NewMemory()
	l := mustOpen(t, mem)
	writeTurn(t, l, 1)
	if _, err := Open(context.Background(), mem); err == nil {
		t.Fatal("a Memory in use opened twice")
	}
	want := collect(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := mustOpen(t, mem)
	defer l2.Close()
	if diff := cmp.Diff(want, collect(t, l2)); diff != "" {
		t.Fatalf("reopened memory (-want +got):\n%s", diff)
	}
}
