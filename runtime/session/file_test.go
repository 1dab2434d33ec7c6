package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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

	// Only a torn last line is cut.
	cases := []struct {
		name     string
		contents []byte
		want     Recovery // Reason is checked apart
		reason   string
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
			name:     "torn tail: a few bytes",
			contents: join(prefix(14), []byte(`{"ty`)),
			want:     Recovery{Kind: RecoveryTornTail, Line: 15, Events: 14, ValidBytes: int64(len(clean)), TruncatedBytes: 4, DroppedLines: 1},
			reason:   "line 15 is incomplete",
		},
		{
			name:     "zeros without a newline",
			contents: join(prefix(14), make([]byte, 4096)),
			want:     Recovery{Kind: RecoveryTornTail, Line: 15, Events: 14, ValidBytes: int64(len(clean)), TruncatedBytes: 4096, DroppedLines: 1},
			reason:   "4096 bytes without a final newline",
		},
		{
			name:     "the first line torn",
			contents: lines[0][:20],
			want:     Recovery{Kind: RecoveryTornTail, Line: 1, TruncatedBytes: 20, DroppedLines: 1},
			reason:   "line 1 is incomplete",
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
			if diff := cmp.Diff(c.want, rec, cmpopts.IgnoreFields(Recovery{}, "Reason")); diff != "" {
				t.Errorf("Recovery (-want +got):\n%s", diff)
			}
			if !rec.Truncated() || !strings.Contains(rec.Reason, c.reason) {
				t.Errorf("Reason %q does not say %q", rec.Reason, c.reason)
			}
			if !strings.Contains(logs.String(), "recovered") || !strings.Contains(logs.String(), string(c.want.Kind)) {
				t.Errorf("recovery not logged: %s", logs)
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

// TestFileRefusesDamage: damage anywhere but a torn last line, and a file that is not a
// session log, are refused with an error naming the line, and the file is not touched.
func TestFileRefusesDamage(t *testing.T) {
	dir := t.TempDir()
	clean := validLog(t, filepath.Join(dir, "clean.jsonl"), 2) // 14 events
	lines := bytes.SplitAfter(clean, []byte("\n"))
	lines = lines[:len(lines)-1]
	join := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	prefix := func(n int) []byte { return join(lines[:n]...) }
	gapLine := bytes.Replace(lines[13], []byte(`"seq":13`), []byte(`"seq":20`), 1)
	notes := []byte(strings.Repeat("a note that is not a log\n", 100))

	cases := []struct {
		name     string
		contents []byte
		is       error
		line     int64 // 0 for ErrNotLog
		reason   string
	}{
		{"garbage last line", join(prefix(14), []byte("\x00\x00\xffgarbage\n")), ErrDamaged, 15, "line 15 is not a valid event envelope"},
		{"seq gap", join(prefix(13), gapLine), ErrDamaged, 14, "line 14 has seq 20, want 13"},
		{"corrupt line in the middle", join(prefix(5), []byte("{\"type\":\"turn/st\n"), join(lines[6:]...)), ErrDamaged, 6, "line 6 is not a valid event envelope"},
		{"garbage in the middle", join(prefix(5), []byte("garbage\n"), join(lines[5:]...)), ErrDamaged, 6, "line 6"},
		{"a last line without newline that is no record", join(prefix(14), []byte("hello")), ErrDamaged, 15, "not the start of a record"},
		{"a text file", notes, ErrNotLog, 0, "line 1 is not a session event"},
		{"a text file without a final newline", []byte("hello\nworld"), ErrNotLog, 0, "line 1 is not a session event"},
		{"one line, no newline", []byte("hello"), ErrNotLog, 0, "line 1 is not a session event"},
		{"a log that starts at seq 1", join(lines[1:]...), ErrNotLog, 0, "seq is 1"},
		{"JSON of another kind", []byte(`{"type":"x","seq":0,"time":"2026-01-01T00:00:00Z","data":{}}` + "\n"), ErrNotLog, 0, "line 1"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("case%d.jsonl", i))
			if err := os.WriteFile(path, c.contents, 0o644); err != nil {
				t.Fatal(err)
			}
			f, _, err := OpenFile(path)
			if err == nil {
				f.Close()
				t.Fatal("OpenFile opened it")
			}
			if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.reason) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q: want %v saying %q and naming the file", err, c.is, c.reason)
			}
			var de *DamageError
			if c.line > 0 && (!errors.As(err, &de) || de.Line != c.line) {
				t.Errorf("error %v: want a *DamageError at line %d", err, c.line)
			}
			if data, _ := os.ReadFile(path); !bytes.Equal(data, c.contents) {
				t.Errorf("the file was changed")
			}
			if entries, _ := filepath.Glob(path + ".*"); len(entries) > 0 {
				t.Errorf("files were made next to it: %v", entries)
			}
		})
	}
}

// TestFileRefusesLinks: a log is never opened through a symbolic link, nor as a FIFO,
// and the link's target is untouched.
func TestFileRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "passwd")
	content := []byte("root:x:0:0:root:/root:/bin/sh\n")
	if err := os.WriteFile(target, content, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "log.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if f, _, err := OpenFile(link); err == nil || !errors.Is(err, ErrNotLog) || !strings.Contains(err.Error(), "symbolic link") {
		if f != nil {
			f.Close()
		}
		t.Errorf("OpenFile of a link: %v", err)
	}
	if _, err := Repair(link); !errors.Is(err, ErrNotLog) {
		t.Errorf("Repair of a link: %v", err)
	}
	// A dangling link is not created through either.
	dangling := filepath.Join(dir, "dangling.jsonl")
	if err := os.Symlink(filepath.Join(dir, "made"), dangling); err != nil {
		t.Fatal(err)
	}
	if f, _, err := OpenFile(dangling); err == nil {
		f.Close()
		t.Errorf("OpenFile of a dangling link succeeded")
	}
	if _, err := os.Lstat(filepath.Join(dir, "made")); err == nil {
		t.Errorf("OpenFile created the dangling link's target")
	}
	if data, _ := os.ReadFile(target); !bytes.Equal(data, content) {
		t.Errorf("the link's target changed: %q", data)
	}
}

// TestRepair: an explicit repair moves the damaged lines aside, verbatim, and keeps
// every event it can decode, before and after them, renumbered to stay contiguous.
func TestRepair(t *testing.T) {
	dir := t.TempDir()
	clean := validLog(t, filepath.Join(dir, "clean.jsonl"), 3) // 21 events
	lines := bytes.SplitAfter(clean, []byte("\n"))
	lines = lines[:len(lines)-1]
	join := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	garbage := []byte("garbage on line 6\n")
	torn := lines[2][:10]

	t.Run("garbage line replacing an event", func(t *testing.T) {
		path := filepath.Join(dir, "replaced.jsonl")
		contents := join(join(lines[:5]...), garbage, join(lines[6:]...), torn)
		if err := os.WriteFile(path, contents, 0o640); err != nil {
			t.Fatal(err)
		}
		rep, err := Repair(path)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Events != 20 || !slices.Equal(rep.Damaged, []int64{6, 22}) || rep.Renumbered != 15 {
			t.Errorf("report %+v: want 20 events, lines 6 and 22 moved, 15 renumbered", rep)
		}
		if saved, err := os.ReadFile(rep.BackupPath); err != nil || !bytes.Equal(saved, join(garbage, torn, []byte("\n"))) {
			t.Errorf("backup %s holds %q (%v)", rep.BackupPath, saved, err)
		}
		if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o640 {
			t.Errorf("mode after repair: %v %v", info.Mode(), err)
		}
		f, rec, err := OpenFile(path)
		if err != nil || rec.Truncated() {
			t.Fatalf("the repaired log: %v %+v", err, rec)
		}
		l := mustOpen(t, f)
		defer l.Close()
		events := collect(t, l)
		want := bytes.Split(join(join(lines[:5]...), join(lines[6:]...)), []byte("\n"))
		if len(events) != 20 {
			t.Fatalf("%d events", len(events))
		}
		for i, ev := range events {
			var orig Event
			if err := orig.UnmarshalJSON(want[i]); err != nil {
				t.Fatal(err)
			}
			if ev.Seq != int64(i) || ev.Type != orig.Type || !bytes.Equal(ev.Data, orig.Data) {
				t.Errorf("event %d: %s %s, want %s %s", i, ev.Type, ev.Data, orig.Type, orig.Data)
			}
		}
	})
	t.Run("garbage line inserted", func(t *testing.T) {
		path := filepath.Join(dir, "inserted.jsonl")
		contents := join(join(lines[:5]...), garbage, join(lines[5:]...))
		if err := os.WriteFile(path, contents, 0o600); err != nil {
			t.Fatal(err)
		}
		rep, err := Repair(path)
		if err != nil || rep.Events != 21 || rep.Renumbered != 0 || !slices.Equal(rep.Damaged, []int64{6}) {
			t.Fatalf("Repair: %+v %v", rep, err)
		}
		if data, _ := os.ReadFile(path); !bytes.Equal(data, clean) {
			t.Errorf("the repaired log is not the clean one")
		}
	})
	t.Run("clean and foreign files are left alone", func(t *testing.T) {
		path := filepath.Join(dir, "clean.jsonl")
		rep, err := Repair(path)
		if err != nil || rep.Changed() || rep.Events != 21 {
			t.Errorf("Repair of a clean log: %+v %v", rep, err)
		}
		notes := filepath.Join(dir, "notes.txt")
		if err := os.WriteFile(notes, []byte("one\ntwo\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Repair(notes); !errors.Is(err, ErrNotLog) {
			t.Errorf("Repair of a text file: %v", err)
		}
		if data, _ := os.ReadFile(notes); string(data) != "one\ntwo\n" {
			t.Errorf("the text file changed")
		}
		if m, _ := filepath.Glob(notes + ".*"); len(m) > 0 {
			t.Errorf("files made next to it: %v", m)
		}
	})
	t.Run("an open log is not repaired", func(t *testing.T) {
		path := filepath.Join(dir, "clean.jsonl")
		f, _, err := OpenFile(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := Repair(path); !errors.Is(err, ErrLocked) {
			t.Errorf("Repair of an open log: %v", err)
		}
	})
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

// A failed sync is sticky: once a sync has failed, the log refuses every later append and
// every later sync, even when the store would now succeed, so that no event lands after a
// gap in what is durable (the events appended before the failure may be lost).
func TestFailedSyncIsSticky(t *testing.T) {
	for name, c := range map[string]struct {
		policy SyncPolicy
		fail   func(*Log) error // the operation whose sync fails
	}{
		"append under sync-every-event": {SyncEveryEvent, func(l *Log) error {
			_, err := l.Append(context.Background(), dsh.StepStart{Turn: 1, Step: 1})
			return err
		}},
		"turn/end under sync-on-turn-end": {SyncOnTurnEnd, func(l *Log) error {
			_, err := l.Append(context.Background(), dsh.TurnEnd{Turn: 1, Reason: dsh.TurnEndCompleted{}})
			return err
		}},
		"explicit Sync under sync-never": {SyncNever, func(l *Log) error {
			mustAppend(t, l, dsh.StepStart{Turn: 1, Step: 1})
			return l.Sync(context.Background())
		}},
	} {
		t.Run(name, func(t *testing.T) {
			store := &countingStore{Store: NewMemory()}
			l := mustOpen(t, store, WithSyncPolicy(c.policy))
			mustAppend(t, l, dsh.TurnStart{Turn: 1})
			store.failSync.Store(true)
			if err := c.fail(l); !errors.Is(err, ErrSyncFailed) {
				t.Fatalf("the failing sync returned %v, want ErrSyncFailed", err)
			}
			n, synced := l.Len(), l.Synced()
			store.failSync.Store(false) // the store recovers; the log must not

			_, err := l.Append(context.Background(), dsh.StepEnd{Turn: 1, Step: 1})
			if !errors.Is(err, ErrSyncFailed) {
				t.Errorf("Append after a failed sync = %v, want an error wrapping ErrSyncFailed", err)
			}
			if l.Len() != n {
				t.Errorf("Append after a failed sync appended: Len %d, want %d", l.Len(), n)
			}
			if err := l.Sync(context.Background()); !errors.Is(err, ErrSyncFailed) {
				t.Errorf("Sync after a failed sync = %v, want ErrSyncFailed", err)
			}
			if l.Synced() != synced {
				t.Errorf("Synced moved from %d to %d after the failure", synced, l.Synced())
			}
			if err := l.Close(); !errors.Is(err, ErrSyncFailed) {
				t.Errorf("Close = %v, want ErrSyncFailed", err)
			}
			// Nothing reached the store after the failure either.
			stored, err := store.Load(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if stored != n {
				t.Errorf("the store holds %d events, want %d", stored, n)
			}
		})
	}
}

// Damage that starts with an empty line is refused by OpenFile, and Repair saves it,
// the empty line included, before it changes the log.
func TestCutStartingWithAnEmptyLineIsSaved(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	f, _, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l := mustOpen(t, f)
	mustAppend(t, l, dsh.TurnStart{Turn: 1})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopened as it is, the file is clean.
	f, rec, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if rec != (Recovery{Events: 1, ValidBytes: rec.ValidBytes}) || rec.ValidBytes == 0 {
		t.Errorf("clean file: recovery %+v", rec)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	tail := []byte("\n{\"type\":\"turn/end\"}\n")
	w, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(tail); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var de *DamageError
	if _, _, err := OpenFile(path); !errors.As(err, &de) || de.Line != 2 || de.Kind != RecoveryCorruptLine {
		t.Fatalf("OpenFile: %v, want line 2 damaged", err)
	}
	rep, err := Repair(path)
	if err != nil || rep.Events != 1 || !slices.Equal(rep.Damaged, []int64{2, 3}) || rep.BackupPath == "" {
		t.Fatalf("Repair: %+v, %v; want lines 2 and 3 moved aside, 1 event kept and the cut saved", rep, err)
	}
	if filepath.Dir(rep.BackupPath) != filepath.Dir(path) {
		t.Errorf("backup %s is not next to %s", rep.BackupPath, path)
	}
	if saved, err := os.ReadFile(rep.BackupPath); err != nil || !bytes.Equal(saved, tail) {
		t.Errorf("backup = %q, %v; want %q", saved, err, tail)
	}
}

// Creating session files leaks no descriptor (the directory opened to sync a new file's
// entry is closed again).
func TestCreatingFilesLeaksNoDescriptor(t *testing.T) {
	fds := func() int {
		entries, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd")
		}
		return len(entries)
	}
	dir := t.TempDir()
	before := fds()
	for i := range 20 {
		f, _, err := OpenFile(filepath.Join(dir, strconv.Itoa(i)+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if after := fds(); after >= before+20 {
		t.Errorf("%d descriptors open after creating and closing 20 files, %d before", after, before)
	}
}

// A Sync or a Close with nothing new to make durable does not sync the store again.
func TestSyncWithNothingNewIsFree(t *testing.T) {
	store := &countingStore{Store: NewMemory()}
	l := mustOpen(t, store, WithSyncPolicy(SyncNever))
	mustAppend(t, l, dsh.TurnStart{Turn: 1})
	base := store.syncs.Load()
	for range 3 {
		if err := l.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if n := store.syncs.Load() - base; n != 1 {
		t.Errorf("three Syncs and a Close over one new event synced the store %d times, want 1", n)
	}
}

// A store line with a newline anywhere before its end is refused, even first.
func TestStoreLineWithALeadingNewline(t *testing.T) {
	m := NewMemory()
	if _, err := m.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := m.Append(context.Background(), []byte("\n{}\n")); err == nil {
		t.Error("Memory accepted a line holding a newline first")
	}
}
