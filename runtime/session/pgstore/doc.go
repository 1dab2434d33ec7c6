// Package pgstore keeps dsh session logs in PostgreSQL, for sessions that must outlive one
// machine: a fleet of headless sessions, an ACP server behind a load balancer, a service
// that moves a session to another worker when one dies. It implements [session.Store] on
// pgx; the JSONL file ([session.OpenFile]) stays the embedded default, and a program that
// does not import this package does not link pgx.
//
// # Layout
//
// [Connect] opens a database by URL (postgres://user:password@host:port/db?options, or the
// libpq environment variables PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE, PGSSLMODE,
// PGPASSFILE, ... for what the URL leaves out) and creates or checks the schema: three
// tables in the first schema of the connection's search_path (add
// ?search_path=NAME to the URL to use another):
//
//	dsh_schema    (version)                                   one row: the schema version
//	dsh_sessions  (id, epoch, owner, lease_until, created_at) one row per session: its lease
//	dsh_events    (session_id, seq, type, line)               one row per event, key (session_id, seq)
//
// line is the event's envelope exactly as the JSONL store writes it, without the newline
// (bytea, so that no server encoding can alter a byte); type repeats the envelope's type
// for queries. A database whose schema version is newer than this package's is refused
// ([ErrSchemaVersion]), naming both versions.
//
// # One writer per session
//
// [DB.Open] takes the session's lease: it bumps the session's epoch and holds the lease
// until [Store.Close] releases it. A live process renews its lease in the background
// (every third of [WithLeaseTTL], default 30 s) and at every Sync; a crashed one stops
// renewing, and its lease expires. Opening a session whose lease is live is refused with
// [ErrLeaseHeld], unless [WithTakeover] asks to take it over anyway. Every append checks
// the epoch in the same statement that inserts the event, under a share lock of the
// session's row that a takeover must wait for, so an append either lands before the
// takeover (which then counts it) or is refused after it ([ErrFenced]): the log of a
// session never interleaves two writers, and a fenced writer refuses every later call.
//
// # Durability
//
// An append is one committed INSERT (synchronous_commit off): when Append returns, the
// event is in the database, visible to every other connection, and survives the death of
// the writing process. Sync commits the lease renewal with synchronous_commit on, which
// flushes the server's write-ahead log through every earlier append: after Sync the events
// survive a crash of the server too. So the [session.SyncPolicy] of a [session.Log] means
// the same as with a JSONL file. A failed append (the connection lost, the server gone) is
// final for the Store: whether its commit reached the server is unknown, so it refuses
// every later call and the session is reopened (its log is consistent: every event is
// whole or absent).
package pgstore
