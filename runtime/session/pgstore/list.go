package pgstore

import (
	"bytes"
	"context"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/session"
)

// SessionInfo describes one session of a database (Sessions).
type SessionInfo struct {
	// ID is the session's id.
	ID string
	// Created is when the session was created in the database.
	Created time.Time
	// LastWrite is the time of its last event (Created when it has none).
	LastWrite time.Time
	// Events counts its events.
	Events int64
	// Workspace is the workspace its session/created event records ("" when none).
	Workspace string
	// Owner is the writer that holds, or last held, its lease.
	Owner string
	// Held says the lease is live: a writer holds the session now.
	Held bool
}

// Sessions lists the sessions of the database, the one created last first, without
// taking any lease.
func (db *DB) Sessions(ctx context.Context) ([]SessionInfo, error) {
	rows, err := db.pool.Query(ctx, `
SELECT s.id, s.created_at, s.owner, s.lease_until > now(),
	(SELECT count(*) FROM dsh_events e WHERE e.session_id = s.id),
	(SELECT line FROM dsh_events e WHERE e.session_id = s.id AND e.seq = 0),
	(SELECT line FROM dsh_events e WHERE e.session_id = s.id ORDER BY e.seq DESC LIMIT 1)
FROM dsh_sessions s ORDER BY s.created_at DESC, s.id`)
	if err != nil {
		return nil, db.wrap(err)
	}
	defer rows.Close()
	var out []SessionInfo
	for rows.Next() {
		var s SessionInfo
		var first, last []byte
		if err := rows.Scan(&s.ID, &s.Created, &s.Owner, &s.Held, &s.Events, &first, &last); err != nil {
			return nil, db.wrap(err)
		}
		s.LastWrite = s.Created
		first, last = bytes.TrimSpace(first), bytes.TrimSpace(last)
		var e session.Event
		if len(last) > 0 && e.UnmarshalJSON(last) == nil {
			s.LastWrite = e.Time
		}
		if len(first) > 0 && e.UnmarshalJSON(first) == nil {
			if data, err := e.Decode(); err == nil {
				if c, ok := data.(dsh.SessionCreated); ok && c.Workspace != nil {
					s.Workspace = *c.Workspace
				}
			}
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, db.wrap(err)
	}
	return out, nil
}
