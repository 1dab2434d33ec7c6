package session

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
)

// BenchmarkSessionAppendMix measures Append of typical events: those of the bundled demo
// session (testdata/demo-session.jsonl, written by `dsh run --demo --log`: streamed chunks,
// messages with tool calls, tool results, step and turn records), appended in turn, in
// memory and to a JSONL file without syncing. One op is one event.
func BenchmarkSessionAppendMix(b *testing.B) {
	events := demoEvents(b)
	var size int
	for _, ev := range events {
		size += len(ev.raw)
	}
	ctx := context.Background()
	cases := []struct {
		name  string
		store func(b *testing.B) Store
	}{
		{"memory", func(*testing.B) Store { return NewMemory() }},
		{"jsonl-nofsync", func(b *testing.B) Store {
			f, _, err := OpenFile(filepath.Join(b.TempDir(), "bench.jsonl"))
			if err != nil {
				b.Fatal(err)
			}
			return f
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			l := mustOpen(b, c.store(b), WithSyncPolicy(SyncNever))
			b.SetBytes(int64(size / len(events)))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := l.Append(ctx, events[i].data); err != nil {
					b.Fatal(err)
				}
				if i++; i == len(events) {
					i = 0
				}
			}
			b.StopTimer()
			if err := l.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// demoEvent is one event of the demo session: its decoded data and its JSON.
type demoEvent struct {
	data dsh.SessionEventData
	raw  []byte
}

// demoEvents reads testdata/demo-session.jsonl, requiring each event to encode back to the
// JSON it was read from (so the benchmark appends what a session appends).
func demoEvents(t testing.TB) []demoEvent {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "demo-session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []demoEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		data, err := ev.Decode()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(data)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(raw, ev.Data) {
			t.Fatalf("event %d (%s) re-encodes as\n%s\nnot as\n%s", ev.Seq, ev.Type, raw, ev.Data)
		}
		out = append(out, demoEvent{data: data, raw: raw})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("no events in testdata/demo-session.jsonl")
	}
	return out
}

// TestDemoEventsReencode checks that the demo session's events decode and encode back to
// the exact bytes of the log (the benchmark above relies on it).
func TestDemoEventsReencode(t *testing.T) {
	if n := len(demoEvents(t)); n < 50 {
		t.Errorf("%d demo events, want the whole demo session", n)
	}
}
