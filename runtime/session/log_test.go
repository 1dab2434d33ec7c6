package session

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/google/go-cmp/cmp"
)

func TestAppendConcurrentSeqsContiguous(t *testing.T) {
	const writers, perWriter = 32, 40
	stores := map[string]func(t *testing.T) Store{
		"memory": func(t *testing.T) Store { return NewMemory() },
		"file": func(t *testing.T) Store {
			f, _, err := OpenFile(filepath.Join(t.TempDir(), "log.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			return f
		},
	}
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) {
			// A strictly increasing clock: times must follow seqs.
			l := mustOpen(t, newStore(t), WithSyncPolicy(SyncEveryEvent), WithClock(stepClock()))
			defer l.Close()
			var (
				wg   sync.WaitGroup
				mu   sync.Mutex
				seen []int64
			)
			for w := range writers {
				wg.Go(func() {
					last := int64(-1)
					for i := range perWriter {
						ev, err := l.Append(context.Background(), dsh.ContinuationCapped{Turn: w, Continuations: i, Cap: 8})
						if err != nil {
							t.Errorf("writer %d: %v", w, err)
							return
						}
						if ev.Seq <= last {
							t.Errorf("writer %d: seq %d after %d", w, ev.Seq, last)
						}
						last = ev.Seq
						mu.Lock()
						seen = append(seen, ev.Seq)
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			const n = writers * perWriter
			slices.Sort(seen)
			for i, s := range seen {
				if s != int64(i) {
					t.Fatalf("acknowledged seqs are not 0..%d: position %d holds %d", n-1, i, s)
				}
			}
			events := collect(t, l)
			if len(events) != n || l.Len() != n {
				t.Fatalf("got %d events (Len %d), want %d", len(events), l.Len(), n)
			}
			for i, ev := range events {
				if ev.Seq != int64(i) {
					t.Fatalf("event %d has seq %d", i, ev.Seq)
				}
				if i > 0 && !ev.Time.After(events[i-1].Time) {
					t.Errorf("event %d is stamped before event %d", i, i-1)
				}
			}
			if got := l.Synced(); got != n-1 {
				t.Errorf("Synced = %d, want %d", got, n-1)
			}
		})
	}
}

func TestAppendRejectsInvalidData(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name string
		data dsh.SessionEventData
	}{
		{"nil data", nil},
		{"nil pointer", (*dsh.TurnStart)(nil)},
		{"foreign type", foreignRecord{}},
		{"nil union", dsh.TurnEnd{Turn: 1}},
		{"bad enum", dsh.InboxSpliced{Target: "next-week", Inserted: []dsh.UserMessage{}}},
		{"bad nested message", dsh.UserMessageLogged{Message: dsh.UserMessage{ID: "m", Content: []dsh.ContentBlock{}, Source: dsh.SourceUser{}}}},
		{"NaN", dsh.RequestHeaderLogged{Reason: dsh.HeaderReasonInitial, Header: dsh.RequestHeader{Config: dsh.LLMCallConfig{Provider: "p", Model: "m", Temperature: &nan}}}},
		{"invalid raw JSON", dsh.RequestHeaderLogged{Reason: dsh.HeaderReasonInitial, Header: dsh.RequestHeader{Config: dsh.LLMCallConfig{Provider: "p", Model: "m", Extra: map[string]json.RawMessage{"x": json.RawMessage("{nope")}}}}},
		{"invalid UTF-8", dsh.UserMessageLogged{Message: msg("m", "bad \xff byte")}},
		{"invalid UTF-8 pointer", &dsh.UserMessageLogged{Message: msg("m", "\xc3")}},
	}
	mem := NewMemory()
	l := mustOpen(t, mem)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev, err := l.Append(context.Background(), c.data)
			if !errors.Is(err, ErrInvalidData) {
				t.Fatalf("Append error = %v, want ErrInvalidData", err)
			}
			if ev.Type != "" || l.Len() != 0 {
				t.Fatalf("something was appended: %+v, Len %d", ev, l.Len())
			}
		})
	}
	// A valid U+FFFD is not invalid UTF-8, and a pointer to a record is accepted.
	ev := mustAppend(t, l, &dsh.UserMessageLogged{Message: msg("m", "real \ufffd")})
	if ev.Seq != 0 {
		t.Fatalf("first valid event has seq %d", ev.Seq)
	}
	if _, err := l.Append(context.Background(), dsh.StepEnd{}, WithSources(1)); !errors.Is(err, ErrInvalidSource) {
		t.Fatalf("self-citing source: error = %v, want ErrInvalidSource", err)
	}
	if _, err := l.Append(context.Background(), dsh.StepEnd{}, WithSources(-1)); !errors.Is(err, ErrInvalidSource) {
		t.Fatalf("negative source: error = %v, want ErrInvalidSource", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Append(ctx, dsh.StepEnd{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled context: error = %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := mustOpen(t, mem)
	defer l2.Close()
	if l2.Len() != 1 {
		t.Fatalf("store holds %d events, want 1", l2.Len())
	}
}

// foreignRecord claims a session type but is not a generated record.
type foreignRecord struct{}

func (foreignRecord) SessionEventType() string { return dsh.TurnStartType }

func TestSourcesRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	f, _, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l := mustOpen(t, f, WithClock(stepClock()))
	call := mustAppend(t, l, dsh.ToolCall{Turn: 1, Step: 1, CallID: "c1", Name: "read", Arguments: `{"path":"a"}`})
	other := mustAppend(t, l, dsh.ToolCall{Turn: 1, Step: 1, CallID: "c2", Name: "read", Arguments: `{}`})
	srcs := []int64{call.Seq, other.Seq}
	res := mustAppend(t, l, dsh.ToolResultLogged{Turn: 1, Step: 1, Message: dsh.UserMessage{
		ID: "r1", Role: dsh.UserMessageRoleUser, Source: dsh.SourceTool{CallID: "c1"},
		Content: []dsh.ContentBlock{dsh.ToolResultBlock{ToolCallID: "c1", Content: []dsh.ContentBlock{dsh.TextBlock{Text: "ok"}}}},
	}}, WithSources(srcs...))
	srcs[0] = 99 // the log keeps its own copy
	if want := []int64{0, 1}; !slices.Equal(res.SourceEventSeqs, want) {
		t.Fatalf("SourceEventSeqs = %v, want %v", res.SourceEventSeqs, want)
	}
	if call.SourceEventSeqs != nil {
		t.Fatalf("an event without sources has %v", call.SourceEventSeqs)
	}
	line, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(line), `,"sourceEventSeqs":[0,1]}`) {
		t.Errorf("envelope does not end with its sources: %s", line)
	}
	want := collect(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	f2, rec, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Truncated() {
		t.Fatalf("clean file recovered: %+v", rec)
	}
	l2 := mustOpen(t, f2)
	defer l2.Close()
	if diff := cmp.Diff(want, collect(t, l2)); diff != "" {
		t.Fatalf("events after reopen (-want +got):\n%s", diff)
	}
}

func TestEnvelopeJSON(t *testing.T) {
	l := mustOpen(t, NewMemory(), WithClock(stepClock()))
	defer l.Close()
	ev := mustAppend(t, l, dsh.TurnStart{Turn: 1})
	got, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	// The clock's zone is +01:00: the envelope is in UTC.
	const want = `{"type":"turn/start","seq":0,"time":"2026-05-01T09:00:00.124456789Z","data":{"turn":1}}`
	if string(got) != want {
		t.Fatalf("envelope\n got %s\nwant %s", got, want)
	}
	var back Event
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ev, back); diff != "" {
		t.Fatalf("round trip (-want +got):\n%s", diff)
	}
	data, err := back.Decode()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(dsh.SessionEventData(dsh.TurnStart{Turn: 1}), data); diff != "" {
		t.Fatalf("Decode (-want +got):\n%s", diff)
	}
	if _, err := (Event{Type: "no/such", Data: json.RawMessage(`{}`)}).Decode(); !errors.Is(err, dsh.ErrUnknownKind) {
		t.Fatalf("Decode of an unknown type: %v", err)
	}

	bad := []string{
		`not json`,
		`[]`,
		`{"seq":0,"time":"2026-05-01T09:00:00Z","data":{}}`,
		`{"type":"","seq":0,"time":"2026-05-01T09:00:00Z","data":{}}`,
		`{"type":"turn/start","time":"2026-05-01T09:00:00Z","data":{}}`,
		`{"type":"turn/start","seq":-1,"time":"2026-05-01T09:00:00Z","data":{}}`,
		`{"type":"turn/start","seq":1.5,"time":"2026-05-01T09:00:00Z","data":{}}`,
		`{"type":"turn/start","seq":0,"data":{}}`,
		`{"type":"turn/start","seq":0,"time":"yesterday","data":{}}`,
		`{"type":"turn/start","seq":0,"time":"2026-05-01T09:00:00Z"}`,
		`{"type":"turn/start","seq":0,"time":"2026-05-01T09:00:00Z","data":null}`,
		`{"type":"turn/start","seq":0,"time":"2026-05-01T09:00:00Z","data":[1]}`,
		`{"type":"turn/start","seq":2,"time":"2026-05-01T09:00:00Z","data":{},"sourceEventSeqs":[2]}`,
	}
	for _, b := range bad {
		var ev Event
		if err := json.Unmarshal([]byte(b), &ev); err == nil {
			t.Errorf("accepted invalid envelope %s", b)
		} else if !errors.Is(err, ErrCorrupt) && b != `not json` {
			t.Errorf("envelope %s: error %v does not wrap ErrCorrupt", b, err)
		}
	}
}

func TestObservers(t *testing.T) {
	logger, logs := newTestLogger()
	l := mustOpen(t, NewMemory(), WithLogger(logger))
	defer l.Close()
	mustAppend(t, l, dsh.TurnStart{Turn: 1}) // before any observer: not delivered

	var (
		mu        sync.Mutex
		a, b      []int64
		reentered bool
	)
	l.Subscribe(func(ev Event) {
		mu.Lock()
		a = append(a, ev.Seq)
		mu.Unlock()
	})
	l.Subscribe(func(ev Event) {
		if ev.Seq == 3 {
			panic("observer bug")
		}
	})
	cancelB := l.Subscribe(func(ev Event) {
		mu.Lock()
		b = append(b, ev.Seq)
		first := !reentered
		reentered = true
		mu.Unlock()
		if first {
			// An observer may append: the event is delivered after this call returns.
			if _, err := l.Append(context.Background(), dsh.SessionEndSeed{}); err != nil {
				t.Errorf("re-entrant Append: %v", err)
			}
		}
	})

	const writers, perWriter = 8, 25
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range perWriter {
				if _, err := l.Append(context.Background(), dsh.StepStart{Turn: 1, Step: 1}); err != nil {
					t.Errorf("Append: %v", err)
				}
			}
		})
	}
	wg.Wait()
	// Single goroutine, outside observers: delivered before Append returns.
	last := mustAppend(t, l, dsh.StepEnd{Turn: 1, Step: 1})
	mu.Lock()
	wantAll := seqRange(1, last.Seq+1)
	if diff := cmp.Diff(wantAll, a); diff != "" {
		t.Errorf("observer a (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantAll, b); diff != "" {
		t.Errorf("observer b (-want +got):\n%s", diff)
	}
	mu.Unlock()
	if !strings.Contains(logs.String(), "observer panicked") || !strings.Contains(logs.String(), "observer bug") {
		t.Errorf("the panic was not logged: %s", logs)
	}

	cancelB()
	cancelB() // idempotent
	mustAppend(t, l, dsh.TurnEnd{Turn: 1, Reason: dsh.TurnEndCompleted{}})
	mu.Lock()
	defer mu.Unlock()
	if len(a) != len(wantAll)+1 || len(b) != len(wantAll) {
		t.Errorf("after cancel: a saw %d, b saw %d events; want %d and %d", len(a), len(b), len(wantAll)+1, len(wantAll))
	}
}

func seqRange(from, to int64) []int64 {
	var out []int64
	for s := from; s < to; s++ {
		out = append(out, s)
	}
	return out
}

func TestSyncPolicy(t *testing.T) {
	turn := []dsh.SessionEventData{
		dsh.TurnStart{Turn: 1}, dsh.StepStart{Turn: 1, Step: 1}, dsh.StepEnd{Turn: 1, Step: 1},
		dsh.TurnEnd{Turn: 1, Reason: dsh.TurnEndCompleted{}}, dsh.TurnStart{Turn: 2},
	}
	cases := []struct {
		policy SyncPolicy
		// syncs counts store syncs after Open (which syncs once); synced is Synced() after
		// each append.
		syncs  int64
		synced []int64
	}{
		{SyncOnTurnEnd, 1, []int64{-1, -1, -1, 3, 3}},
		{SyncEveryEvent, 5, []int64{0, 1, 2, 3, 4}},
		{SyncNever, 0, []int64{-1, -1, -1, -1, -1}},
	}
	for _, c := range cases {
		t.Run(c.policy.String(), func(t *testing.T) {
			store := &countingStore{Store: NewMemory()}
			l := mustOpen(t, store, WithSyncPolicy(c.policy))
			var synced []int64
			for _, d := range turn {
				mustAppend(t, l, d)
				synced = append(synced, l.Synced())
			}
			if got := store.syncs.Load() - 1; got != c.syncs {
				t.Errorf("%d syncs, want %d", got, c.syncs)
			}
			if diff := cmp.Diff(c.synced, synced); diff != "" {
				t.Errorf("Synced after each append (-want +got):\n%s", diff)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if l.Synced() != 4 {
				t.Errorf("after Close Synced = %d, want 4", l.Synced())
			}
		})
	}
	if _, err := Open(context.Background(), NewMemory(), WithSyncPolicy(SyncPolicy(7))); err == nil {
		t.Error("Open accepted an unknown sync policy")
	}
}

func TestSyncFailureIsFinal(t *testing.T) {
	logger, logs := newTestLogger()
	store := &countingStore{Store: NewMemory()}
	l := mustOpen(t, store, WithSyncPolicy(SyncEveryEvent), WithLogger(logger))
	mustAppend(t, l, dsh.TurnStart{Turn: 1})
	store.failSync.Store(true)
	ev, err := l.Append(context.Background(), dsh.StepStart{Turn: 1, Step: 1})
	if !errors.Is(err, ErrSyncFailed) {
		t.Fatalf("Append error = %v, want ErrSyncFailed", err)
	}
	if ev.Seq != 1 || l.Len() != 2 || l.Synced() != 0 {
		t.Fatalf("after a failed sync: event %d, Len %d, Synced %d; want 1, 2, 0", ev.Seq, l.Len(), l.Synced())
	}
	if _, err := l.Append(context.Background(), dsh.StepEnd{Turn: 1, Step: 1}); !errors.Is(err, ErrSyncFailed) {
		t.Fatalf("Append after a failed sync: %v", err)
	}
	if !strings.Contains(logs.String(), "sync failed") {
		t.Errorf("the sync failure was not logged: %s", logs)
	}
	if err := l.Close(); !errors.Is(err, ErrSyncFailed) {
		t.Errorf("Close = %v, want ErrSyncFailed", err)
	}
}

func TestClosedLog(t *testing.T) {
	l := mustOpen(t, NewMemory())
	mustAppend(t, l, dsh.TurnStart{Turn: 1})
	events := l.Events() // a snapshot taken before Close stays readable
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := l.Append(context.Background(), dsh.TurnStart{Turn: 2}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v", err)
	}
	n := 0
	for range events {
		n++
	}
	if n != 1 {
		t.Fatalf("snapshot holds %d events, want 1", n)
	}
}

func TestEventsIsASnapshot(t *testing.T) {
	l := mustOpen(t, NewMemory())
	defer l.Close()
	mustAppend(t, l, dsh.TurnStart{Turn: 1})
	snap := l.Events()
	mustAppend(t, l, dsh.TurnEnd{Turn: 1, Reason: dsh.TurnEndCompleted{}})
	n := 0
	for range snap {
		n++
	}
	if n != 1 {
		t.Fatalf("snapshot holds %d events, want 1", n)
	}
	for range l.Events() {
		break // early exit is fine
	}
}

// failingStore fails appends on demand.
type failingStore struct {
	Store
	fail bool
}

func (s *failingStore) Append(ctx context.Context, line []byte) error {
	if s.fail {
		return errors.New("disk full")
	}
	return s.Store.Append(ctx, line)
}

func TestStoreAppendFailureConsumesNoSeq(t *testing.T) {
	store := &failingStore{Store: NewMemory()}
	l := mustOpen(t, store)
	defer l.Close()
	var seen []int64
	l.Subscribe(func(ev Event) { seen = append(seen, ev.Seq) })
	mustAppend(t, l, dsh.TurnStart{Turn: 1})
	store.fail = true
	if _, err := l.Append(context.Background(), dsh.StepStart{Turn: 1, Step: 1}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Append = %v, want the store's error", err)
	}
	store.fail = false
	if ev := mustAppend(t, l, dsh.StepStart{Turn: 1, Step: 1}); ev.Seq != 1 {
		t.Fatalf("seq after a failed append = %d, want 1", ev.Seq)
	}
	if diff := cmp.Diff([]int64{0, 1}, seen); diff != "" {
		t.Fatalf("observed (-want +got):\n%s", diff)
	}
}

func TestHugeEventDoesNotPinBuffer(t *testing.T) {
	l := mustOpen(t, NewMemory())
	defer l.Close()
	mustAppend(t, l, dsh.UserMessageLogged{Message: msg("big", strings.Repeat("x", maxKeptLineBuffer))})
	mustAppend(t, l, dsh.TurnStart{Turn: 1})
	l.mu.Lock()
	defer l.mu.Unlock()
	if cap(l.line) > maxKeptLineBuffer {
		t.Fatalf("the encoding buffer kept %d bytes", cap(l.line))
	}
}

// Clone keeps the events appended so far: a Log opened over it reads them, and what the
// original gets afterwards stays out of it.
func TestMemoryClone(t *testing.T) {
	ctx := context.Background()
	store := NewMemory()
	l, err := Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, dsh.SessionCreated{SessionID: "s1", AgentID: "a1"}); err != nil {
		t.Fatal(err)
	}
	clone := store.Clone()
	if _, err := l.Append(ctx, dsh.TurnStart{Turn: 1}); err != nil {
		t.Fatal(err)
	}
	c, err := Open(ctx, clone)
	if err != nil {
		t.Fatalf("opening the clone while the original is in use: %v", err)
	}
	if c.Len() != 1 || l.Len() != 2 {
		t.Errorf("the clone holds %d events and the original %d, want 1 and 2", c.Len(), l.Len())
	}
}
