package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/dshkit/dsh/runtime/session"
)

// SchemaVersion is the version of the tables this package creates and reads.
const SchemaVersion = 1

// Errors reported by this package; test for them with errors.Is.
var (
	// ErrSchemaVersion is the error of a database whose schema version is newer than
	// SchemaVersion (or not one this package knows).
	ErrSchemaVersion = errors.New("pgstore: unsupported schema version")
	// ErrNotFound is the error of opening, for loading, a session the database does not
	// hold. errors.Is(err, fs.ErrNotExist) holds for it, as for a missing log file, but
	// its message says nothing of files.
	ErrNotFound error = &kindError{msg: "pgstore: no such session", kind: fs.ErrNotExist}
	// ErrExists is the error of creating a session that already exists
	// (errors.Is(err, fs.ErrExist) holds for it too).
	ErrExists error = &kindError{msg: "pgstore: session already exists", kind: fs.ErrExist}
	// ErrLeaseHeld is the error of opening a session another writer holds (its lease is
	// live) without WithTakeover.
	ErrLeaseHeld = errors.New("pgstore: session is held by another writer")
	// ErrFenced is the error of a writer whose lease another writer has taken over: its
	// appends are refused, and so is every later call.
	ErrFenced = errors.New("pgstore: writer fenced out by a newer one")
)

// kindError is an error that is also kind (errors.Is) without printing kind's message:
// a session, not a file, is missing.
type kindError struct {
	msg  string
	kind error
}

func (e *kindError) Error() string { return e.msg }

// Is reports whether target is e's kind.
func (e *kindError) Is(target error) bool { return target == e.kind }

// IsURL reports whether s names a PostgreSQL database (postgres:// or postgresql://)
// rather than a file.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Redact returns the database URL s with every password it holds (the user info's and a
// password or sslpassword query parameter, which libpq and pgx read too) replaced by
// "xxxxx", for whatever dsh prints or logs: messages, results, the session log's records.
// A string that is not a postgres:// URL is returned as it is.
func Redact(s string) string {
	if !IsURL(s) {
		return s
	}
	u, err := url.Parse(s)
	if err != nil {
		return redactUnparsed(s)
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	if u.RawQuery != "" {
		q, err := url.ParseQuery(u.RawQuery)
		if err != nil {
			return redactUnparsed(u.String())
		}
		changed := false
		for k := range q {
			if isPasswordParam(k) {
				q[k], changed = []string{"xxxxx"}, true
			}
		}
		if changed {
			u.RawQuery = q.Encode()
		}
	}
	return u.String()
}

// isPasswordParam reports whether the query parameter k carries a secret.
func isPasswordParam(k string) bool {
	k = strings.ToLower(k)
	return k == "password" || k == "sslpassword"
}

// redactUnparsed cuts the passwords out of a URL url.Parse does not take: the user
// info's (user:password@) and everything after "password=" up to the next "&".
func redactUnparsed(s string) string {
	scheme, rest, _ := strings.Cut(s, "://")
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
		if user, _, has := strings.Cut(rest[:at], ":"); has {
			rest = user + ":xxxxx" + rest[at:]
		}
	}
	out := scheme + "://" + rest
	lower := strings.ToLower(out)
	for _, key := range []string{"sslpassword=", "password="} {
		for i := 0; ; {
			j := strings.Index(lower[i:], key)
			if j < 0 {
				break
			}
			j += i + len(key)
			k := strings.IndexAny(out[j:], "&#")
			if k < 0 {
				k = len(out) - j
			}
			out = out[:j] + "xxxxx" + out[j+k:]
			lower = strings.ToLower(out)
			i = j + len("xxxxx")
		}
	}
	return out
}

// Option configures Connect.
type Option func(*dbOptions)

type dbOptions struct {
	log *slog.Logger
}

// WithLogger sets the logger that receives lease diagnostics (a failed renewal, a writer
// fenced out); default: discard.
func WithLogger(log *slog.Logger) Option {
	return func(o *dbOptions) {
		if log != nil {
			o.log = log
		}
	}
}

// DB is a connection pool to one database holding session logs. It is safe for concurrent
// use; a process opens one and opens any number of sessions in it.
type DB struct {
	pool *pgxpool.Pool // appends and reads: synchronous_commit off
	sync *pgxpool.Pool // leases and syncs: synchronous_commit on
	log  *slog.Logger
	name string // the URL without its password, for messages
}

// Connect connects to the database at url (a postgres:// URL; what it leaves out comes
// from the libpq environment variables, PGPASSWORD included) and creates the schema, or
// checks its version. It fails with one line naming the database when the URL is bad, the
// server is down or refuses the credentials, or the schema is newer (ErrSchemaVersion).
// connect_timeout in the URL bounds each connection attempt (default 15 s);
// pool_max_conns bounds the connections used for appends and reads (default
// pgx's, at least 4), and as many again serve leases and syncs.
func Connect(ctx context.Context, url string, opts ...Option) (*DB, error) {
	o := dbOptions{log: slog.New(slog.DiscardHandler)}
	for _, opt := range opts {
		opt(&o)
	}
	name := Redact(url)
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("pgstore: bad database URL: %s", oneLine(err))
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 15 * time.Second // an unreachable host fails, it does not hang
	}
	scfg := cfg.Copy()
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	scfg.ConnConfig.RuntimeParams["synchronous_commit"] = "on"
	scfg.MinConns = 0 // as many as the main pool at most, opened as syncs need them
	db := &DB{log: o.log, name: name}
	if db.pool, err = pgxpool.NewWithConfig(ctx, cfg); err == nil {
		db.sync, err = pgxpool.NewWithConfig(ctx, scfg)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("pgstore: %s: %s", name, oneLine(err))
	}
	if err := db.ensureSchema(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// Close closes the pools. Close the sessions first.
func (db *DB) Close() {
	if db.pool != nil {
		db.pool.Close()
	}
	if db.sync != nil {
		db.sync.Close()
	}
}

// String returns the database's URL without its password.
func (db *DB) String() string { return db.name }

// schemaLock is the advisory lock key under which the schema is created or checked, so
// that processes connecting at once do not race to create it.
const schemaLock = 0x6473685f6c6f67 // "dsh_log"

// schemaSQL creates the tables of SchemaVersion.
const schemaSQL = `
CREATE TABLE dsh_schema (version integer NOT NULL);
CREATE TABLE dsh_sessions (
	id          text        PRIMARY KEY,
	epoch       bigint      NOT NULL,
	owner       text        NOT NULL,
	lease_until timestamptz NOT NULL,
	created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE dsh_events (
	session_id text   NOT NULL,
	seq        bigint NOT NULL CHECK (seq >= 0),
	type       text   NOT NULL,
	line       bytea  NOT NULL,
	PRIMARY KEY (session_id, seq)
);
INSERT INTO dsh_schema (version) VALUES (1);
`

// ensureSchema creates the tables if they are missing and checks the schema version.
func (db *DB) ensureSchema(ctx context.Context) error {
	err := pgx.BeginFunc(ctx, db.sync, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(schemaLock)); err != nil {
			return err
		}
		var exists bool
		if err := tx.QueryRow(ctx, "SELECT to_regclass('dsh_schema') IS NOT NULL").Scan(&exists); err != nil {
			return err
		}
		if !exists {
			_, err := tx.Exec(ctx, schemaSQL, pgx.QueryExecModeSimpleProtocol)
			return err
		}
		var v *int64
		if err := tx.QueryRow(ctx, "SELECT max(version) FROM dsh_schema").Scan(&v); err != nil {
			return err
		}
		switch {
		case v == nil:
			return fmt.Errorf("%w: table dsh_schema is empty (want version %d)", ErrSchemaVersion, SchemaVersion)
		case *v > SchemaVersion:
			return fmt.Errorf("%w: the database holds schema version %d, newer than version %d, the one this dsh reads; upgrade dsh",
				ErrSchemaVersion, *v, SchemaVersion)
		case *v < SchemaVersion:
			return fmt.Errorf("%w: the database holds schema version %d, older than version %d, and no migration from it exists",
				ErrSchemaVersion, *v, SchemaVersion)
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrSchemaVersion) {
			return fmt.Errorf("%s: %w", db.name, err)
		}
		return fmt.Errorf("pgstore: %s: %s", db.name, oneLine(err))
	}
	return nil
}

// Exists reports whether the database holds the session id.
func (db *DB) Exists(ctx context.Context, id string) (bool, error) {
	var n int
	err := db.pool.QueryRow(ctx, "SELECT count(*) FROM dsh_sessions WHERE id = $1", id).Scan(&n)
	if err != nil {
		return false, db.wrap(err)
	}
	return n > 0, nil
}

// Events reads the events of session id in order, without taking its lease (as dsh log
// does); it yields an error wrapping ErrNotFound when the session does not exist. A writer
// appending meanwhile is not disturbed: the reader sees the events committed when it
// reads each chunk, a contiguous prefix.
func (db *DB) Events(ctx context.Context, id string) iter.Seq2[session.Event, error] {
	return func(yield func(session.Event, error) bool) {
		ok, err := db.Exists(ctx, id)
		if err == nil && !ok {
			err = fmt.Errorf("%w: %q in %s", ErrNotFound, id, db.name)
		}
		if err != nil {
			yield(session.Event{}, err)
			return
		}
		for ev, err := range db.read(ctx, id, 0, -1) {
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}

// readChunk is how many events one query of a read returns at most.
const readChunk = 4096

// read yields the events of session id with seqs from to to-1 (to < 0: to the last one),
// a chunk of rows per query, checking that the seqs follow each other.
func (db *DB) read(ctx context.Context, id string, from, to int64) iter.Seq2[session.Event, error] {
	return func(yield func(session.Event, error) bool) {
		next := from
		for to < 0 || next < to {
			limit := int64(readChunk)
			if to >= 0 {
				limit = min(limit, to-next)
			}
			rows, err := db.pool.Query(ctx,
				"SELECT seq, line FROM dsh_events WHERE session_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3", id, next, limit)
			if err != nil {
				yield(session.Event{}, db.wrap(err))
				return
			}
			got := int64(0)
			var arena []byte // the chunk's lines: one allocation for many events
			for rows.Next() {
				var seq int64
				err := rows.Scan(&seq, nil)
				var ev session.Event
				if err == nil {
					raw := rows.RawValues()[1] // bytea in binary format: the line's bytes
					if len(arena)+len(raw) > cap(arena) {
						arena = make([]byte, 0, max(len(raw), 256<<10))
					}
					start := len(arena)
					arena = append(arena, raw...)
					ev, err = session.DecodeLine(arena[start:len(arena):len(arena)])
					if err == nil && (seq != next || ev.Seq != next) {
						err = fmt.Errorf("%w: row %d holds event %d, want %d", session.ErrCorrupt, seq, ev.Seq, next)
					}
					if err != nil {
						err = fmt.Errorf("pgstore: session %q: event %d: %w", id, next, err)
					}
				}
				if !yield(ev, err) || err != nil {
					rows.Close()
					return
				}
				next++
				got++
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				yield(session.Event{}, db.wrap(err))
				return
			}
			if got < limit {
				if to >= 0 {
					yield(session.Event{}, fmt.Errorf("%w: session %q: the read ended at event %d of %d", session.ErrCorrupt, id, next, to))
				}
				return
			}
		}
	}
}

// wrap names the database in an error from pgx, on one line.
func (db *DB) wrap(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("pgstore: %s: %w", db.name, err)
	}
	return fmt.Errorf("pgstore: %s: %s", db.name, oneLine(err))
}

// oneLine renders err on one line (pgx lists each address it tried on its own line).
func oneLine(err error) string {
	s := err.Error()
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Detail != "" && !strings.Contains(s, pe.Detail) {
		s += " (" + pe.Detail + ")"
	}
	return strings.Join(strings.Fields(s), " ")
}

// leaseTime renders a lease's end for messages.
func leaseTime(t time.Time) string {
	if t.IsZero() {
		return "released"
	}
	return t.UTC().Format(time.RFC3339)
}
