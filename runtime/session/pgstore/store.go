package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dshkit/dsh/runtime/session"
)

// Mode says whether DB.Open creates a session, loads one, or either.
type Mode int

const (
	// OpenOrCreate opens the session, creating it when it does not exist (dsh run).
	OpenOrCreate Mode = iota
	// CreateOnly creates a new session; an existing id is an error wrapping ErrExists.
	CreateOnly
	// LoadOnly opens an existing session; a missing id is an error wrapping ErrNotFound.
	LoadOnly
)

// OpenOption configures DB.Open.
type OpenOption func(*openOptions)

type openOptions struct {
	mode     Mode
	takeover bool
	from     string // the holder a takeover expects ("": any)
	ttl      time.Duration
	owner    string
	timeout  time.Duration
}

// WithMode sets whether Open creates, loads, or either (default OpenOrCreate).
func WithMode(m Mode) OpenOption { return func(o *openOptions) { o.mode = m } }

// WithTakeover takes the session over even when another writer's lease is live, whoever
// holds it: that writer is fenced out (its later appends fail with ErrFenced). Use it when
// the writer is known dead, or to move a session on purpose; WithTakeoverFrom is the
// careful form.
func WithTakeover() OpenOption { return func(o *openOptions) { o.takeover, o.from = true, "" } }

// WithTakeoverFrom takes the session over from the writer named holder (the owner an
// ErrLeaseHeld error names) when its lease is live; a session held by any other writer is
// still refused with ErrLeaseHeld, so that a takeover never fences out a writer its caller
// did not name. A session whose lease has expired opens as without it.
func WithTakeoverFrom(holder string) OpenOption {
	return func(o *openOptions) { o.takeover, o.from = true, holder }
}

// WithLeaseTTL sets how long the lease outlives the writer's last renewal (default 30 s):
// how long a crashed writer's session stays refused to others without WithTakeover. The
// store renews it every third of that.
func WithLeaseTTL(d time.Duration) OpenOption {
	return func(o *openOptions) {
		if d > 0 {
			o.ttl = d
		}
	}
}

// WithOwner sets the name recorded with the lease, shown to a writer it refuses
// (default host:pid).
func WithOwner(name string) OpenOption {
	return func(o *openOptions) {
		if name != "" {
			o.owner = name
		}
	}
}

// WithTimeout bounds each append, sync and lease statement (default 30 s). Appends are
// not cut short by their caller's context (a canceled append would leave its outcome
// unknown and the store unusable), only by this timeout.
func WithTimeout(d time.Duration) OpenOption {
	return func(o *openOptions) {
		if d > 0 {
			o.timeout = d
		}
	}
}

// Store is one session's log in the database, held under its writer lease: a
// [session.Store]. Open it with [DB.Open] and hand it to [session.Open].
type Store struct {
	db      *DB
	id      string
	epoch   int64
	owner   string
	ttl     time.Duration
	timeout time.Duration

	mu     sync.Mutex
	n      int64 // events in the store
	err    error // sticky: fenced, or an append's outcome is unknown
	closed bool
	loaded bool

	stop func()        // called by Close: ends the renewal goroutine, cutting a renewal short
	done chan struct{} // closed when the renewal goroutine has ended
}

// Open takes the lease of session id (see the package doc) and returns its store.
// Without WithTakeover, a session whose lease is live is refused with an error wrapping
// ErrLeaseHeld that names the holder and when its lease ends.
func (db *DB) Open(ctx context.Context, id string, opts ...OpenOption) (*Store, error) {
	host, _ := os.Hostname()
	o := openOptions{ttl: 30 * time.Second, timeout: 30 * time.Second, owner: host + ":" + strconv.Itoa(os.Getpid())}
	for _, opt := range opts {
		opt(&o)
	}
	if id == "" {
		return nil, errors.New("pgstore: empty session id")
	}
	var epoch int64
	ttl := o.ttl.Microseconds()
	err := pgx.BeginFunc(ctx, db.sync, func(tx pgx.Tx) error {
		var (
			cur   int64
			owner string
			until time.Time
			live  bool
		)
		err := tx.QueryRow(ctx, "SELECT epoch, owner, lease_until, lease_until > now() FROM dsh_sessions WHERE id = $1 FOR UPDATE", id).
			Scan(&cur, &owner, &until, &live)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			if o.mode == LoadOnly {
				return fmt.Errorf("%w: %q in %s", ErrNotFound, id, db.name)
			}
			tag, err := tx.Exec(ctx, `INSERT INTO dsh_sessions (id, epoch, owner, lease_until)
				VALUES ($1, 1, $2, now() + $3::bigint * interval '1 microsecond') ON CONFLICT (id) DO NOTHING`, id, o.owner, ttl)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 && o.mode == CreateOnly {
				return fmt.Errorf("%w: %q in %s (created by another writer at the same moment)", ErrExists, id, db.name)
			}
			if tag.RowsAffected() == 0 {
				return fmt.Errorf("%w: session %q was created by another writer at the same moment", ErrLeaseHeld, id)
			}
			epoch = 1
			return nil
		case err != nil:
			return err
		case o.mode == CreateOnly:
			return fmt.Errorf("%w: %q in %s", ErrExists, id, db.name)
		case live && !o.takeover:
			return &LeaseHeldError{Session: id, Holder: owner, Epoch: cur, Until: until}
		case live && o.from != "" && o.from != owner:
			return &LeaseHeldError{Session: id, Holder: owner, Epoch: cur, Until: until, Named: o.from}
		}
		epoch = cur + 1
		_, err = tx.Exec(ctx, `UPDATE dsh_sessions SET epoch = $2, owner = $3, lease_until = now() + $4::bigint * interval '1 microsecond'
			WHERE id = $1`, id, epoch, o.owner, ttl)
		if err == nil && live {
			db.log.Warn("pgstore: session taken over from a live writer", "session", id, "from", owner, "epoch", epoch)
		}
		return err
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) || errors.Is(err, ErrExists) || errors.Is(err, ErrLeaseHeld) {
			return nil, err
		}
		return nil, fmt.Errorf("pgstore: open session %q: %w", id, db.wrap(err))
	}
	renewCtx, stop := context.WithCancel(context.Background())
	s := &Store{db: db, id: id, epoch: epoch, owner: o.owner, ttl: o.ttl, timeout: o.timeout,
		stop: stop, done: make(chan struct{})}
	go s.renew(renewCtx)
	return s, nil
}

// LeaseHeldError is the refusal to open a session whose lease another writer holds: who
// holds it, until when, and, for a takeover that named another writer, the one it named.
// It wraps [ErrLeaseHeld].
type LeaseHeldError struct {
	// Session is the session's id; Holder the writer id of the lease's holder (its
	// WithOwner name, by default host:pid); Epoch its lease's epoch; Until when the lease
	// ends unless renewed.
	Session string
	Holder  string
	Epoch   int64
	Until   time.Time
	// Named is the holder a WithTakeoverFrom named, when it is not Holder ("" otherwise).
	Named string
}

// Error names the session, the holder and its lease.
func (e *LeaseHeldError) Error() string {
	if e.Named != "" {
		return fmt.Sprintf("%v: session %q is held by %s (epoch %d) until %s, not by %s; a takeover names the writer it fences out",
			ErrLeaseHeld, e.Session, e.Holder, e.Epoch, leaseTime(e.Until), e.Named)
	}
	return fmt.Sprintf("%v: session %q is held by %s (epoch %d) until %s; it can be opened once that lease expires, or taken over explicitly",
		ErrLeaseHeld, e.Session, e.Holder, e.Epoch, leaseTime(e.Until))
}

// Unwrap returns ErrLeaseHeld.
func (e *LeaseHeldError) Unwrap() error { return ErrLeaseHeld }

// ID returns the session's id.
func (s *Store) ID() string { return s.id }

// Epoch returns the epoch of the store's lease: the number of times the session was
// opened for writing, this time included.
func (s *Store) Epoch() int64 { return s.epoch }

// Load returns how many events the session holds, checking that their seqs are 0 to n-1
// and that the lease is still this store's.
func (s *Store) Load(ctx context.Context) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return 0, err
	}
	if s.loaded {
		return 0, errors.New("pgstore: store already loaded")
	}
	var count, last, epoch int64
	err := s.db.pool.QueryRow(ctx, `SELECT count(*), coalesce(max(seq), -1),
		(SELECT epoch FROM dsh_sessions WHERE id = $1) FROM dsh_events WHERE session_id = $1`, s.id).Scan(&count, &last, &epoch)
	if err != nil {
		return 0, s.db.wrap(err)
	}
	if epoch != s.epoch {
		s.err = s.fenced(epoch, "load")
		return 0, s.err
	}
	if last+1 != count {
		return 0, fmt.Errorf("%w: session %q holds %d events but its last seq is %d", session.ErrCorrupt, s.id, count, last)
	}
	s.n, s.loaded = count, true
	return count, nil
}

// Read reads the events from to to-1 back, a chunk at a time, while Append may go on.
func (s *Store) Read(ctx context.Context, from, to int64) iter.Seq2[session.Event, error] {
	s.mu.Lock()
	n, closed := s.n, s.closed
	s.mu.Unlock()
	if closed || from < 0 || from > to || to > n {
		return func(yield func(session.Event, error) bool) {
			if closed {
				yield(session.Event{}, session.ErrClosed)
				return
			}
			yield(session.Event{}, fmt.Errorf("pgstore: session %q: read of events %d to %d of %d", s.id, from, to, n))
		}
	}
	if from == to {
		return func(func(session.Event, error) bool) {}
	}
	return s.db.read(ctx, s.id, from, to)
}

// appendSQL inserts one event if, and only if, the epoch is still the store's; FOR SHARE
// makes a takeover (which updates the row) wait for the append, and the append wait for
// a takeover in progress, so that no append lands after a takeover counted the events.
const appendSQL = `INSERT INTO dsh_events (session_id, seq, type, line)
SELECT id, $2, $3, $4 FROM dsh_sessions WHERE id = $1 AND epoch = $5 FOR SHARE`

// Append inserts line (an envelope and its newline) as the next event, in one statement
// that checks the store's epoch. A fenced writer's append fails with ErrFenced and
// changes nothing. Any other failure leaves the outcome unknown (the commit may or may not
// have reached the server), so the Store refuses every later call: reopen the session.
func (s *Store) Append(ctx context.Context, line []byte) error {
	n := len(line)
	if n < 2 || line[n-1] != '\n' || bytes.IndexByte(line[:n-1], '\n') >= 0 {
		return errors.New("pgstore: a store line is one line ending with a newline")
	}
	ev, err := session.DecodeLine(line[:n-1])
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return err
	}
	if !s.loaded {
		return errors.New("pgstore: append before load")
	}
	if ev.Seq != s.n {
		return fmt.Errorf("pgstore: session %q: append of event %d, want %d", s.id, ev.Seq, s.n)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	tag, err := s.db.pool.Exec(ctx, appendSQL, s.id, ev.Seq, ev.Type, line[:n-1], s.epoch)
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe):
		// The server refused the statement: nothing was inserted, but the store's view
		// of the session is in doubt (a unique violation means another writer's event).
		s.err = fmt.Errorf("pgstore: session %q: append of event %d refused by the server; the store refuses further appends (reopen the session): %w",
			s.id, ev.Seq, s.db.wrap(err))
		return s.err
	case err != nil:
		s.err = fmt.Errorf("pgstore: session %q: append of event %d failed, its outcome is unknown; the store refuses further appends (reopen the session): %w",
			s.id, ev.Seq, s.db.wrap(err))
		return s.err
	}
	if tag.RowsAffected() != 1 {
		s.err = s.fenced(s.currentEpoch(ctx), fmt.Sprintf("append of event %d", ev.Seq))
		return s.err
	}
	s.n++
	return nil
}

// Sync renews the lease in a statement committed with synchronous_commit on, which makes
// every earlier append durable on the server. It fails with ErrFenced when the lease is no
// longer the store's.
func (s *Store) Sync(ctx context.Context) error {
	s.mu.Lock()
	err := s.usable()
	s.mu.Unlock()
	if err != nil {
		return err
	}
	ok, err := s.renewOnce(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return s.setFenced("sync")
	}
	return nil
}

// renewOnce extends the lease; ok is false when the epoch is no longer the store's.
func (s *Store) renewOnce(ctx context.Context) (ok bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	tag, err := s.db.sync.Exec(ctx, `UPDATE dsh_sessions SET lease_until = now() + $3::bigint * interval '1 microsecond'
		WHERE id = $1 AND epoch = $2`, s.id, s.epoch, s.ttl.Microseconds())
	if err != nil {
		return false, fmt.Errorf("pgstore: session %q: renew the lease: %w", s.id, s.db.wrap(err))
	}
	return tag.RowsAffected() == 1, nil
}

// renew renews the lease every third of its TTL until ctx is done (Close), and stops
// when fenced.
func (s *Store) renew(ctx context.Context) {
	defer close(s.done)
	t := time.NewTicker(s.ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ok, err := s.renewOnce(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			s.db.log.Warn("pgstore: lease renewal failed; retrying", "session", s.id, "epoch", s.epoch, "err", err)
		case !ok:
			err := s.setFenced("lease renewal")
			s.db.log.Error("pgstore: writer fenced out", "session", s.id, "err", err)
			return
		}
	}
}

// setFenced records that the lease is lost and returns the error.
func (s *Store) setFenced(op string) error {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	cur := s.currentEpoch(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = s.fenced(cur, op)
	}
	return s.err
}

// currentEpoch reads the session's epoch, or -1 when it cannot.
func (s *Store) currentEpoch(ctx context.Context) int64 {
	var e int64
	if err := s.db.pool.QueryRow(ctx, "SELECT epoch FROM dsh_sessions WHERE id = $1", s.id).Scan(&e); err != nil {
		return -1
	}
	return e
}

// fenced is the error of a store whose epoch is no longer the session's.
func (s *Store) fenced(cur int64, op string) error {
	now := "another writer"
	if cur >= 0 {
		now = fmt.Sprintf("epoch %d", cur)
	}
	return fmt.Errorf("%w: session %q: %s refused: this writer holds epoch %d, the session is now at %s (taken over); the store refuses further appends",
		ErrFenced, s.id, op, s.epoch, now)
}

// usable returns why the store cannot be used, if it cannot. Called with mu held.
func (s *Store) usable() error {
	if s.closed {
		return session.ErrClosed
	}
	return s.err
}

// Close stops renewing the lease and releases it (when it is still the store's), so the
// next writer opens the session without waiting. Its events stay in the database.
// Closing a closed Store does nothing.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.stop()
	<-s.done
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	_, err := s.db.sync.Exec(ctx, "UPDATE dsh_sessions SET lease_until = now() WHERE id = $1 AND epoch = $2", s.id, s.epoch)
	if err != nil {
		return fmt.Errorf("pgstore: session %q: release the lease: %w", s.id, s.db.wrap(err))
	}
	return nil
}
