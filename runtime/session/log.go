package session

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
)

// SyncPolicy says when a [Log] makes appended events durable.
type SyncPolicy int

const (
	// SyncOnTurnEnd syncs after every turn/end event (and on Close): a power loss loses at
	// most the events of the turn in progress, which resume closes as interrupted anyway.
	SyncOnTurnEnd SyncPolicy = iota
	// SyncEveryEvent syncs after every event: Append returns only once its event is
	// durable. Concurrent appenders share syncs.
	SyncEveryEvent
	// SyncNever syncs only on Close and on explicit Log.Sync calls.
	SyncNever
)

// String returns the policy's name.
func (p SyncPolicy) String() string {
	switch p {
	case SyncOnTurnEnd:
		return "sync-on-turn-end"
	case SyncEveryEvent:
		return "sync-every-event"
	case SyncNever:
		return "sync-never"
	}
	return fmt.Sprintf("SyncPolicy(%d)", int(p))
}

// Option configures a [Log].
type Option func(*options)

type options struct {
	clock  func() time.Time
	log    *slog.Logger
	policy SyncPolicy
}

// WithClock sets the clock that stamps event times (default time.Now). The log calls it
// in seq order, so a monotonic clock gives non-decreasing times.
func WithClock(clock func() time.Time) Option {
	return func(o *options) {
		if clock != nil {
			o.clock = clock
		}
	}
}

// WithLogger sets the logger for contained observer panics and sync failures (default:
// discard).
func WithLogger(log *slog.Logger) Option {
	return func(o *options) {
		if log != nil {
			o.log = log
		}
	}
}

// WithSyncPolicy sets when appended events are made durable (default SyncOnTurnEnd).
func WithSyncPolicy(p SyncPolicy) Option {
	return func(o *options) { o.policy = p }
}

// AppendOption configures one [Log.Append].
type AppendOption func(*appendOptions)

type appendOptions struct {
	sources []int64
}

// WithSources records the seqs of earlier events the new event derives from, as its
// sourceEventSeqs (e.g. a tool/result cites its tool/call).
func WithSources(seqs ...int64) AppendOption {
	return func(o *appendOptions) {
		o.sources = append(o.sources, seqs...)
	}
}

// maxKeptLineBuffer is the largest encoding buffer a Log keeps between appends, so that
// one huge event does not pin its size for the log's lifetime.
const maxKeptLineBuffer = 1 << 20

// keptRecent is how many of the most recent events a Log keeps in memory, at least: it
// keeps between keptRecent and 2*keptRecent of them, and reads older ones from its store.
const keptRecent = 1024

// Log is an append-only session log: events with contiguous seqs from 0, kept in a
// [Store]. It keeps its most recent events in memory too, so that reading what was just
// appended (as the agent loop does every step) does not go back to the store. Its methods
// are safe for concurrent use.
type Log struct {
	store  Store
	clock  func() time.Time
	log    *slog.Logger
	policy SyncPolicy

	mu         sync.Mutex
	n          int64   // number of events: the seq of the next one
	recent     []Event // the events from seq recentFrom to n-1; replaced, never changed in place
	recentFrom int64
	line       []byte // encoding buffer, reused under mu
	closed     bool
	err        error           // sticky failure: set by a failed sync
	subs       []*subscription // copy on write
	pending    []Event         // appended, not yet delivered to observers
	spare      []Event         // the other delivery buffer
	delivering bool

	syncMu      sync.Mutex // serializes syncs and the store's Close
	synced      atomic.Int64
	storeClosed bool // under syncMu
}

// subscription is one observer.
type subscription struct {
	fn       func(Event)
	from     int64 // the first seq it sees
	canceled atomic.Bool
}

// Open returns a Log over store, holding the events the store already has (they stay in
// the store: Open reads only the first, to refuse a log whose session/created records a
// spec of another major version, ErrIncompatibleVersion). It syncs the store once, so that every loaded
// event counts as durable. The Log owns the store from then on and closes it in Close;
// when Open fails, the caller still owns it.
func Open(ctx context.Context, store Store, opts ...Option) (*Log, error) {
	if store == nil {
		return nil, errors.New("session: nil store")
	}
	o := options{clock: time.Now, log: slog.New(slog.DiscardHandler), policy: SyncOnTurnEnd}
	for _, opt := range opts {
		opt(&o)
	}
	if o.policy < SyncOnTurnEnd || o.policy > SyncNever {
		return nil, fmt.Errorf("session: unknown sync policy %v", o.policy)
	}
	n, err := store.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("session: load: %w", err)
	}
	if n < 0 {
		return nil, fmt.Errorf("%w: store holds %d events", ErrCorrupt, n)
	}
	if err := store.Sync(ctx); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSyncFailed, err)
	}
	l := &Log{store: store, clock: o.clock, log: o.log, policy: o.policy, n: n, recentFrom: n}
	l.synced.Store(n - 1)
	for first, err := range l.EventsFrom(0) {
		if err == nil {
			err = checkVersion(first)
		}
		if err != nil {
			return nil, err
		}
		break
	}
	return l, nil
}

// Append validates data, appends it as the next event and returns that event. The data
// must be a generated session record that passes its Validate method and encodes as
// lossless JSON; otherwise Append returns an error wrapping ErrInvalidData and appends
// nothing. Sources given with WithSources must be earlier seqs (ErrInvalidSource).
//
// Append returns once the event is in the store, and, when the sync policy calls for it
// (every event, or a turn/end under SyncOnTurnEnd), durable. If that sync fails, Append
// returns the event (it is in the log) together with an error wrapping ErrSyncFailed, and
// the log refuses every later append. If ctx is done on entry, nothing is appended.
//
// Observers see the event after it is in the store; see Subscribe.
func (l *Log) Append(ctx context.Context, data dsh.SessionEventData, opts ...AppendOption) (Event, error) {
	if err := ctx.Err(); err != nil {
		return Event{}, err
	}
	typ, raw, err := encodeData(data)
	if err != nil {
		return Event{}, err
	}
	var o appendOptions
	for _, opt := range opts {
		opt(&o)
	}

	ev, err := l.write(ctx, typ, raw, o.sources)
	if err != nil {
		return Event{}, err
	}
	var syncErr error
	if l.policy == SyncEveryEvent || (l.policy == SyncOnTurnEnd && typ == dsh.TurnEndType) {
		syncErr = l.syncTo(ctx, ev.Seq)
	}
	l.deliver()
	return ev, syncErr
}

// write assigns the next seq and time, and writes the event to the store and the log.
func (l *Log) write(ctx context.Context, typ string, raw []byte, sources []int64) (Event, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return Event{}, ErrClosed
	}
	if l.err != nil {
		return Event{}, fmt.Errorf("session: log refuses appends after an earlier failure: %w", l.err)
	}
	seq := l.n
	if err := checkSources(seq, sources); err != nil {
		return Event{}, fmt.Errorf("%w: %w", ErrInvalidSource, err)
	}
	ev := Event{Type: typ, Seq: seq, Time: l.clock().UTC(), Data: raw}
	if len(sources) > 0 {
		ev.SourceEventSeqs = sources
	}
	line, err := ev.appendJSON(l.line[:0])
	if err != nil {
		return Event{}, fmt.Errorf("%w: %w", ErrInvalidData, err)
	}
	line = append(line, '\n')
	err = l.store.Append(ctx, line)
	if cap(line) <= maxKeptLineBuffer {
		l.line = line
	}
	if err != nil {
		return Event{}, fmt.Errorf("session: append %s: %w", typ, err)
	}
	l.n++
	if len(l.recent) >= 2*keptRecent {
		l.recent = append(make([]Event, 0, 2*keptRecent), l.recent[keptRecent:]...)
		l.recentFrom += keptRecent
	}
	l.recent = append(l.recent, ev)
	if len(l.subs) > 0 {
		l.pending = append(l.pending, ev)
	}
	return ev, nil
}

// Sync makes every event appended so far durable.
func (l *Log) Sync(ctx context.Context) error {
	return l.syncTo(ctx, l.Len()-1)
}

// Synced returns the highest seq known to be durable, or -1 when none is.
func (l *Log) Synced() int64 { return l.synced.Load() }

// syncTo makes the events up to seq durable, sharing one store sync among concurrent
// callers: a sync covers everything appended before it starts.
func (l *Log) syncTo(ctx context.Context, seq int64) error {
	if l.synced.Load() >= seq {
		return nil
	}
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	if l.synced.Load() >= seq {
		return nil
	}
	return l.syncLocked(ctx)
}

// syncLocked syncs the store up to the last appended event. Called with syncMu held.
func (l *Log) syncLocked(ctx context.Context) error {
	l.mu.Lock()
	target, err := l.n-1, l.err
	l.mu.Unlock()
	if err != nil {
		return err
	}
	if target <= l.synced.Load() {
		return nil
	}
	if l.storeClosed {
		return ErrClosed
	}
	if err := l.store.Sync(ctx); err != nil {
		err = fmt.Errorf("%w: %w", ErrSyncFailed, err)
		l.mu.Lock()
		if l.err == nil {
			l.err = err
		}
		l.mu.Unlock()
		l.log.Error("session: sync failed; the log refuses further appends",
			"synced", l.synced.Load(), "appended", target, "err", err)
		return err
	}
	l.synced.Store(target)
	return nil
}

// Events returns a reader over the events appended before the call (a snapshot: later
// appends are not seen). It reads older events from the store as the iteration reaches
// them, so reading a long log takes little memory; an error reading the store (or a store
// event out of sequence, wrapping ErrCorrupt) is yielded, and ends the iteration. After
// Close, a store that is closed (a File) can no longer be read: only the recent events
// kept in memory are still readable, and reaching older ones yields ErrClosed.
func (l *Log) Events() iter.Seq2[Event, error] { return l.EventsFrom(0) }

// EventsFrom is Events without the events before seq from: it reads the events from seq
// from up to the last one appended before the call. Reading the events appended since a
// recent seq costs no store read.
func (l *Log) EventsFrom(from int64) iter.Seq2[Event, error] {
	l.mu.Lock()
	n, recent, recentFrom := l.n, l.recent[:len(l.recent):len(l.recent)], l.recentFrom
	l.mu.Unlock()
	from = max(from, 0)
	return func(yield func(Event, error) bool) {
		if from < recentFrom {
			want := from
			for ev, err := range l.store.Read(context.Background(), from, recentFrom) {
				if err == nil && ev.Seq != want {
					err = fmt.Errorf("%w: store event %d has seq %d", ErrCorrupt, want, ev.Seq)
				}
				if err != nil {
					yield(Event{}, fmt.Errorf("session: read event %d: %w", want, err))
					return
				}
				if !yield(ev, nil) {
					return
				}
				want++
			}
			if want != recentFrom {
				yield(Event{}, fmt.Errorf("%w: the store read ended at event %d of %d", ErrCorrupt, want, recentFrom))
				return
			}
			from = recentFrom
		}
		for _, ev := range recent[min(from-recentFrom, int64(len(recent))):min(n-recentFrom, int64(len(recent)))] {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// Len returns the number of events, which is also the seq of the next one.
func (l *Log) Len() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// Subscribe registers an observer (B §3.2 "session observer") called with every event
// appended after Subscribe returns, once per event and in seq order, and returns a
// function that cancels it; after cancel returns, no new call starts. Calls are serialized
// and made without the log's lock held, so an observer may call Append: the new event is
// delivered after the current call returns. An observer runs on the goroutine of some
// Append; when Append is called from one goroutine and not from inside an observer, every
// observer has seen the event when Append returns. A panicking observer is recovered and
// logged; the append still counts and the other observers still run.
func (l *Log) Subscribe(fn func(Event)) (cancel func()) {
	if fn == nil {
		return func() {}
	}
	l.mu.Lock()
	s := &subscription{fn: fn, from: l.n}
	l.subs = append(l.subs[:len(l.subs):len(l.subs)], s)
	l.mu.Unlock()
	return func() {
		if s.canceled.Swap(true) {
			return
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		subs := make([]*subscription, 0, len(l.subs))
		for _, t := range l.subs {
			if t != s {
				subs = append(subs, t)
			}
		}
		l.subs = subs
	}
}

// deliver hands pending events to the observers, in seq order, unless another goroutine
// is already delivering (it then delivers these too).
func (l *Log) deliver() {
	l.mu.Lock()
	if l.delivering || len(l.pending) == 0 {
		l.mu.Unlock()
		return
	}
	l.delivering = true
	for len(l.pending) > 0 {
		batch := l.pending
		l.pending, l.spare = l.spare[:0], nil
		subs := l.subs
		l.mu.Unlock()
		for _, ev := range batch {
			for _, s := range subs {
				if ev.Seq >= s.from && !s.canceled.Load() {
					l.notify(s, ev)
				}
			}
		}
		clear(batch)
		l.mu.Lock()
		l.spare = batch[:0]
	}
	l.delivering = false
	l.mu.Unlock()
}

// notify calls one observer, containing its panic.
func (l *Log) notify(s *subscription, ev Event) {
	defer func() {
		if r := recover(); r != nil {
			l.log.Error("session: observer panicked", "seq", ev.Seq, "type", ev.Type,
				"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	s.fn(ev)
}

// Close refuses further appends, syncs every event appended so far and closes the store.
// Closing a closed log does nothing and returns nil.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()

	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	syncErr := l.syncLocked(context.Background())
	l.storeClosed = true
	return errors.Join(syncErr, l.store.Close())
}
