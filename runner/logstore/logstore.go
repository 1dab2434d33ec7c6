// Package logstore opens a session's log where it lives: a JSONL file, memory, or a
// session in a PostgreSQL database (runtime/session/pgstore), for the session wiring of
// dsh run and dsh acp (package runner takes the opened log). It is a package of its own
// so that what links runner alone (the conformance harness) does not link the database
// driver.
package logstore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/session/pgstore"
	"github.com/dshkit/dsh/runtime/subagent"
)

// Options says where a session log lives.
type Options struct {
	// Path is the log: a JSONL file, a postgres:// URL (IsURL), or "" for a log in
	// memory.
	Path string
	// Session is, in a database, the session to resume or to create ("": a new id).
	Session string
	// TakeoverFrom takes a database session over from the writer of that id (the holder
	// a refusal names) even though its lease is live; a session held by another writer is
	// still refused.
	TakeoverFrom string
	// Force takes a database session over whoever holds its lease.
	Force bool
	// Logger receives the database's diagnostics (nil: discarded).
	Logger *slog.Logger
	// Repaired is told that a torn last line of the JSONL file was cut, and why (nil:
	// nothing is told).
	Repaired func(path, reason string)
	// Created is told the id of a new database session and the database (printable
	// without its password), before its lease is taken (nil: nothing is told).
	Created func(id string, db fmt.Stringer)
}

// Opened is an opened session log.
type Opened struct {
	// Log is the session log.
	Log *session.Log
	// Resume says the log holds events: the session is resumed.
	Resume bool
	// Session is the database session's id ("" for a file or memory).
	Session string
	// Close closes the log, releasing a database session's lease, and the database.
	Close func()
	// Children opens the logs of the session's subagents where the log lives: a JSONL
	// file each beside the file (subagent.DirFor), a session each in the same database,
	// or memory.
	Children subagent.Logs
	// Check reports why the log can no longer be written, or nil: for a database
	// session, an error wrapping pgstore.ErrFenced once another writer has taken it over
	// (it renews the lease to find out); for a file or memory, nil.
	Check func(context.Context) error
}

// IsURL says whether path names a PostgreSQL database rather than a file.
func IsURL(path string) bool { return pgstore.IsURL(path) }

// Open opens the session log o describes: a database session, a JSONL file (resumed when
// it holds events; a torn last line, left by a crash in the middle of a write, is cut),
// or memory.
func Open(ctx context.Context, o Options) (*Opened, error) {
	if pgstore.IsURL(o.Path) {
		return openPG(ctx, o)
	}
	if o.Path == "" {
		l, err := session.Open(ctx, session.NewMemory())
		if err != nil {
			return nil, err
		}
		return &Opened{Log: l, Close: func() { l.Close() }, Check: noCheck, Children: &subagent.MemoryLogs{}}, nil
	}
	f, rec, err := session.OpenFile(o.Path)
	if err != nil {
		return nil, err
	}
	if rec.Truncated() && o.Repaired != nil {
		o.Repaired(o.Path, rec.Reason)
	}
	l, err := session.Open(ctx, f)
	if err != nil {
		return nil, err
	}
	return &Opened{Log: l, Resume: l.Len() > 0, Close: func() { l.Close() }, Check: noCheck,
		Children: subagent.FileLogs{Dir: subagent.DirFor(o.Path)}}, nil
}

// noCheck is the Check of a log no other writer can take over.
func noCheck(context.Context) error { return nil }

// openPG opens session o.Session (a new one when empty, told to o.Created) in the
// database of o.Path, taking its writer lease.
func openPG(ctx context.Context, o Options) (*Opened, error) {
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	db, err := pgstore.Connect(ctx, o.Path, pgstore.WithLogger(logger))
	if err != nil {
		return nil, err
	}
	id := o.Session
	if id == "" {
		id = "ses_" + rand.Text()
		if o.Created != nil {
			o.Created(id, db)
		}
	}
	st, err := db.Open(ctx, id, takeover(o.TakeoverFrom, o.Force)...)
	if err != nil {
		db.Close()
		return nil, leaseHint(err)
	}
	l, err := session.Open(ctx, st)
	if err != nil {
		st.Close()
		db.Close()
		return nil, err
	}
	return &Opened{Log: l, Resume: l.Len() > 0, Session: id, Close: func() { l.Close(); db.Close() }, Check: st.Sync,
		Children: pgChildren{db: db}}, nil
}

// pgChildren keeps a session's subagents' logs as sessions of its database.
type pgChildren struct{ db *pgstore.DB }

// Create opens the new database session id, taking its lease; close releases it.
func (p pgChildren) Create(ctx context.Context, id string) (*session.Log, func(), error) {
	st, err := p.db.Open(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	l, err := session.Open(ctx, st)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return l, func() { l.Close() }, nil
}

// Reopen opens the database session id again (a child's next turn), taking its lease.
func (p pgChildren) Reopen(ctx context.Context, id string) (*session.Log, func(), error) {
	return p.Create(ctx, id)
}

// PGLogs keeps session logs in a PostgreSQL database, by session id (dsh acp's
// acp.LogStore).
type PGLogs struct {
	// DB is the database.
	DB *pgstore.DB
	// TakeoverFrom makes Load take over a session held by the writer of that id; Force
	// one held by any writer.
	TakeoverFrom string
	Force        bool
}

// takeover is the lease options of a takeover from the writer named from, or from any
// writer when force.
func takeover(from string, force bool) []pgstore.OpenOption {
	switch {
	case force:
		return []pgstore.OpenOption{pgstore.WithTakeover()}
	case from != "":
		return []pgstore.OpenOption{pgstore.WithTakeoverFrom(from)}
	}
	return nil
}

// leaseHint adds to a refusal of a held session the flags that take it over, naming its
// holder.
func leaseHint(err error) error {
	var held *pgstore.LeaseHeldError
	if errors.As(err, &held) && held.Holder != "" {
		return fmt.Errorf("%w (--takeover %s takes it over from that writer; --force from whoever holds it)", err, shellWord(held.Holder))
	}
	return err
}

// shellWord is s as one shell word: itself when it holds only characters no shell reads,
// else single-quoted.
func shellWord(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._:@/+=-", r)) {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}

// Create creates session id (an existing id is an error) and takes its lease.
func (p PGLogs) Create(ctx context.Context, id string) (session.Store, error) {
	st, err := p.DB.Open(ctx, id, pgstore.WithMode(pgstore.CreateOnly))
	if err != nil {
		return nil, err
	}
	return st, nil
}

// Load takes the lease of the existing session id (an error wrapping fs.ErrNotExist when
// there is none).
func (p PGLogs) Load(ctx context.Context, id string) (session.Store, error) {
	opts := append([]pgstore.OpenOption{pgstore.WithMode(pgstore.LoadOnly)}, takeover(p.TakeoverFrom, p.Force)...)
	st, err := p.DB.Open(ctx, id, opts...)
	if err != nil {
		return nil, leaseHint(err)
	}
	return st, nil
}
