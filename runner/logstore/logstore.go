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

	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/session/pgstore"
)

// Options says where a session log lives.
type Options struct {
	// Path is the log: a JSONL file, a postgres:// URL (IsURL), or "" for a log in
	// memory.
	Path string
	// Session is, in a database, the session to resume or to create ("": a new id).
	Session string
	// Takeover takes a database session over even though another writer holds its lease.
	Takeover bool
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
		return &Opened{Log: l, Close: func() { l.Close() }}, nil
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
	return &Opened{Log: l, Resume: l.Len() > 0, Close: func() { l.Close() }}, nil
}

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
	var opts []pgstore.OpenOption
	if o.Takeover {
		opts = append(opts, pgstore.WithTakeover())
	}
	st, err := db.Open(ctx, id, opts...)
	if err != nil {
		db.Close()
		if errors.Is(err, pgstore.ErrLeaseHeld) {
			err = fmt.Errorf("%w (--takeover takes it over)", err)
		}
		return nil, err
	}
	l, err := session.Open(ctx, st)
	if err != nil {
		st.Close()
		db.Close()
		return nil, err
	}
	return &Opened{Log: l, Resume: l.Len() > 0, Session: id, Close: func() { l.Close(); db.Close() }}, nil
}

// PGLogs keeps session logs in a PostgreSQL database, by session id (dsh acp's
// acp.LogStore).
type PGLogs struct {
	// DB is the database.
	DB *pgstore.DB
	// Takeover makes Load take a held session over.
	Takeover bool
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
	opts := []pgstore.OpenOption{pgstore.WithMode(pgstore.LoadOnly)}
	if p.Takeover {
		opts = append(opts, pgstore.WithTakeover())
	}
	st, err := p.DB.Open(ctx, id, opts...)
	if err != nil {
		return nil, err
	}
	return st, nil
}
