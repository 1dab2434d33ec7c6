package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
)

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

// Event times of years 0 to 9999 are appended (RFC 3339 has four-digit years); others are
// refused and append nothing.
func TestEventTimeYears(t *testing.T) {
	for year, ok := range map[int]bool{0: true, 9999: true, -1: false, 10000: false} {
		at := time.Date(year, 6, 1, 0, 0, 0, 0, time.UTC)
		l := mustOpen(t, NewMemory(), WithClock(func() time.Time { return at }))
		_, err := l.Append(context.Background(), dsh.TurnStart{Turn: 1})
		if (err == nil) != ok || l.Len() != map[bool]int64{true: 1, false: 0}[ok] {
			t.Errorf("year %d: Append error %v, Len %d; want accepted %v", year, err, l.Len(), ok)
		}
		if ok {
			ev := l.Events()
			for e := range ev {
				if !e.Time.Equal(at) {
					t.Errorf("year %d: logged time %v", year, e.Time)
				}
			}
		}
		_ = l.Close()
	}
}

// An event type is written as a JSON string that decodes to it: plain printable ASCII
// verbatim, anything else escaped.
func TestAppendJSONStringDecodesBack(t *testing.T) {
	for _, s := range []string{"tool/call", "", " ~", "<&>", "a\"b", `a\b`, "a\x1fb", "a\x7fb", "é", "a\nb"} {
		got, err := appendJSONString([]byte("x"), s)
		var back string
		if err != nil || len(got) < 1 || got[0] != 'x' || json.Unmarshal(got[1:], &back) != nil || back != s {
			t.Errorf("appendJSONString(%q) = %s, %v: does not decode back", s, got, err)
		}
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

// Replay also refuses a step number that does not grow and a splice from an offset that
// removes past the end of its list.
func TestReplayInconsistentMore(t *testing.T) {
	for name, c := range map[string]struct {
		events []dsh.SessionEventData
		badSeq int64
	}{
		"step number repeats": {[]dsh.SessionEventData{dsh.TurnStart{Turn: 1}, dsh.StepStart{Turn: 1, Step: 1},
			dsh.StepEnd{Turn: 1, Step: 1}, dsh.StepStart{Turn: 1, Step: 1}}, 3},
		"splice from an offset removes too much": {[]dsh.SessionEventData{
			splice(dsh.InboxTargetNextTurn, 0, 0, msg("a", "a"), msg("b", "b")), splice(dsh.InboxTargetNextTurn, 1, 2)}, 1},
	} {
		l := mustOpen(t, NewMemory())
		for _, d := range c.events {
			mustAppend(t, l, d)
		}
		_, err := Replay(l.Events())
		var re *ReplayError
		if !errors.As(err, &re) || !errors.Is(err, ErrInconsistent) || re.Seq != c.badSeq {
			t.Errorf("%s: Replay error = %v, want ErrInconsistent at seq %d", name, err, c.badSeq)
		}
		_ = l.Close()
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
