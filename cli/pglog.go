package cli

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"

	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/session/pgstore"
)

// validSessionID is what a session id in PostgreSQL may hold: what dsh acp accepts as a
// session id, so that either command resumes the other's sessions.
var validSessionID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// checkPGLog checks --session and --takeover against --log; it returns the usage error,
// or "".
func (o runOptions) checkPGLog() string {
	switch {
	case (o.session != "" || o.takeover) && !pgstore.IsURL(o.logFile):
		return "--session and --takeover name a session of a postgres:// --log"
	case o.takeover && o.session == "":
		return "--takeover needs --session (the session to take over)"
	case o.session != "" && !validSessionID.MatchString(o.session):
		return fmt.Sprintf("--session %q: want 1 to 128 letters, digits, _ and -", o.session)
	}
	return ""
}

// logName names the session log of o in messages (a URL without its password).
func logName(o runOptions) string {
	if pgstore.IsURL(o.logFile) {
		return fmt.Sprintf("%s session %s", pgstore.Redact(o.logFile), o.session)
	}
	return o.logFile
}

// openPGLog opens session o.session (a new one when empty, whose id it prints and stores
// in o) in the PostgreSQL database of o.logFile, taking its writer lease; the returned
// function closes the log, releasing the lease, and the database. Every failure to reach
// the database or to take the lease is one line, exit 1.
func openPGLog(ctx context.Context, o *runOptions, stderr io.Writer) (*session.Log, bool, func(), error) {
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	db, err := pgstore.Connect(ctx, o.logFile, pgstore.WithLogger(logger))
	if err != nil {
		return nil, false, nil, err
	}
	if o.session == "" {
		o.session = "ses_" + rand.Text()
		fmt.Fprintf(stderr, "session: %s in %s (resume it with --session %s)\n", o.session, db, o.session)
	}
	var opts []pgstore.OpenOption
	if o.takeover {
		opts = append(opts, pgstore.WithTakeover())
	}
	st, err := db.Open(ctx, o.session, opts...)
	if err != nil {
		db.Close()
		if errors.Is(err, pgstore.ErrLeaseHeld) {
			err = fmt.Errorf("%w (--takeover takes it over)", err)
		}
		return nil, false, nil, err
	}
	l, err := session.Open(ctx, st)
	if err != nil {
		st.Close()
		db.Close()
		return nil, false, nil, err
	}
	return l, l.Len() > 0, func() { l.Close(); db.Close() }, nil
}

// pgLogs keeps dsh acp's session logs in a PostgreSQL database, by session id.
type pgLogs struct {
	db       *pgstore.DB
	takeover bool // session/load takes a held session over
}

// Create creates session id (an existing id is an error) and takes its lease.
func (p pgLogs) Create(ctx context.Context, id string) (session.Store, error) {
	st, err := p.db.Open(ctx, id, pgstore.WithMode(pgstore.CreateOnly))
	if err != nil {
		return nil, err
	}
	return st, nil
}

// Load takes the lease of the existing session id (an error wrapping fs.ErrNotExist when
// there is none).
func (p pgLogs) Load(ctx context.Context, id string) (session.Store, error) {
	opts := []pgstore.OpenOption{pgstore.WithMode(pgstore.LoadOnly)}
	if p.takeover {
		opts = append(opts, pgstore.WithTakeover())
	}
	st, err := p.db.Open(ctx, id, opts...)
	if err != nil {
		return nil, err
	}
	return st, nil
}
