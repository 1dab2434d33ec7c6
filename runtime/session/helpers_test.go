package session

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"

	"github.com/dshkit/dsh/internal/syncbuf"
)

// msg returns a user message with one text block.
func msg(id, text string) dsh.UserMessage {
	return dsh.UserMessage{
		ID:      id,
		Role:    dsh.UserMessageRoleUser,
		Content: []dsh.ContentBlock{dsh.TextBlock{Text: text}},
		Source:  dsh.SourceUser{},
	}
}

// intp returns a pointer to n.
func intp(n int) *int { return &n }

// splice returns an agent/inbox/spliced record.
func splice(target dsh.InboxTarget, start, removed int, inserted ...dsh.UserMessage) dsh.InboxSpliced {
	s := dsh.InboxSpliced{Target: target, Start: start, Inserted: inserted}
	if removed > 0 {
		s.RemovedCount = intp(removed)
	}
	if s.Inserted == nil {
		s.Inserted = []dsh.UserMessage{}
	}
	return s
}

// stepClock is a deterministic clock advancing by 1ms per call.
func stepClock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 5, 1, 10, 0, 0, 123456789, time.FixedZone("X", 3600))
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Millisecond)
		return t
	}
}

// newTestLogger returns a logger writing text to a buffer.
func newTestLogger() (*slog.Logger, *syncbuf.Buffer) {
	var b syncbuf.Buffer
	return slog.New(slog.NewTextHandler(&b, nil)), &b
}

// countingStore counts syncs and can make them fail.
type countingStore struct {
	Store
	syncs    atomic.Int64
	failSync atomic.Bool
}

func (c *countingStore) Sync(ctx context.Context) error {
	c.syncs.Add(1)
	if c.failSync.Load() {
		return errors.New("disk on fire")
	}
	return c.Store.Sync(ctx)
}

// mustOpen opens a log or fails the test.
func mustOpen(t testing.TB, store Store, opts ...Option) *Log {
	t.Helper()
	l, err := Open(context.Background(), store, opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return l
}

// mustAppend appends or fails the test.
func mustAppend(t testing.TB, l *Log, data dsh.SessionEventData, opts ...AppendOption) Event {
	t.Helper()
	ev, err := l.Append(context.Background(), data, opts...)
	if err != nil {
		t.Fatalf("Append(%T): %v", data, err)
	}
	return ev
}

// collect reads every event of an iterator.
func collect(t testing.TB, l *Log) []Event {
	t.Helper()
	var out []Event
	for ev, err := range l.Events() {
		if err != nil {
			t.Fatalf("Events: %v", err)
		}
		out = append(out, ev)
	}
	return out
}
