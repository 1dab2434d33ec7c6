// Package session is the durable session log of a dsh agent (docs/design/SEMANTICS.md#56-durable-session-events): an
// append-only sequence of typed events from which the agent's history, audit trail and
// resumable state are derived.
//
// # The envelope
//
// Every event is an [Event]: its type, a seq contiguous from 0, the time it was appended
// (RFC 3339 with nanoseconds, UTC), its data and, optionally, the seqs of the earlier
// events it derives from. In a log file it is one line of JSON:
//
//	{"type":"turn/start","seq":1,"time":"2026-05-01T10:00:00.000000001Z","data":{"turn":1}}
//	{"type":"tool/result","seq":9,"time":"...","data":{...},"sourceEventSeqs":[8]}
//
// The data is a record generated from the spec (package dsh): dsh.TurnStart for
// turn/start, dsh.InboxSpliced for agent/inbox/spliced, and so on; the record's
// SessionEventType method gives the type. [Event.Decode] turns the data back into its
// record, strictly.
//
// # Appending
//
// [Open] a [Log] over a [Store] and [Log.Append] records to it:
//
//	ev, err := log.Append(ctx, dsh.TurnStart{Turn: 3})
//
// Append fails loudly at the call site and appends nothing when the data is not valid (the
// record's Validate method fails, or it does not encode as lossless JSON: invalid UTF-8,
// NaN, ...): errors.Is(err, ErrInvalidData). Seqs are assigned in append order, safely
// under concurrency. Append returns once the event is in the store. [Log.Subscribe]
// registers an observer that sees every later event, in order; a panicking observer is
// logged and contained, and the append still counts. [Log.Events] reads what was appended
// so far.
//
// # Stores
//
// [NewMemory] keeps events in memory, for tests and ephemeral agents. [OpenFile] keeps
// them in a JSONL file, one envelope per line, each written with a single write and
// terminated by a newline; the file is locked (flock, where available) while open. A Store is five methods
// (load, read back a range of events, append one encoded line, sync, close), so other
// backends are small: package pgstore keeps session logs in PostgreSQL, one writer per
// session.
//
// A Log keeps only its most recent events (a few thousand) in memory and reads the older
// ones back from its store when [Log.Events] reaches them, so a long log costs little
// memory: opening a log file reads it once to check it and remembers where each line
// starts. [Log.EventsFrom] reads from a given seq, without touching the store when the
// events asked for are recent.
//
// # Sync policy
//
// Writing an event puts it in the operating system's cache, where it survives the death of
// the process; syncing (fsync) puts it on stable storage, where it survives a power loss
// or a kernel crash too. [WithSyncPolicy] chooses when a Log syncs:
//
//   - [SyncOnTurnEnd] (default): after every turn/end, so a power loss loses at most the
//     turn in progress, which resume closes as interrupted;
//   - [SyncEveryEvent]: after every event, so that when Append returns the event survives
//     a power loss; concurrent appenders share syncs;
//   - [SyncNever]: only on [Log.Sync] and [Log.Close].
//
// Close always syncs. [Log.Synced] is the highest seq known to be durable. A failed sync
// is final: the log refuses further appends (ErrSyncFailed), because which writes reached
// the disk is then unknown.
//
// # Recovery
//
// A log never destroys what it did not write. OpenFile opens the file without following a
// symbolic link and refuses, leaving it as it is, a file that is not regular or whose
// first line is not a session event (ErrNotLog). It checks every line and cuts only a
// torn last line: bytes after the last newline that are the start of a record (or NUL
// bytes), what a crash in the middle of a write leaves, which no Append acknowledged; the
// [Recovery] says what it cut (also logged). Damage anywhere else (a line that is not a
// valid envelope, an event out of sequence, a last line that is not the start of a
// record) is refused with a [*DamageError] naming the line (ErrDamaged), the file
// untouched: a crash cannot cause it, so cutting there would throw away acknowledged
// events. [Repair] (dsh log --repair) is the explicit way out: it saves the damaged lines
// verbatim next to the log, keeps every event that decodes, before and after them,
// renumbered to stay contiguous, and replaces the log in one rename. Only the envelope is
// checked on open (and the first event's type), so a log from a newer version with
// unknown event types or fields still opens; Event.Decode and Replay check the data.
//
// # Resume
//
// To resume an agent, open its log, fold it with [Replay] and close a turn the crash left
// open:
//
//	f, rec, err := session.OpenFile(path, session.WithFileLogger(logger))
//	...
//	log, err := session.Open(ctx, f, session.WithLogger(logger))
//	...
//	st, err := session.Replay(log.Events())
//	...
//	err = session.CloseInterrupted(ctx, log, st) // turn/end{interrupted} if st.TurnOpen
//
// The [State] holds the last turn and step numbers (the next turn is LastTurn+1), how the
// last turn ended, and the two inbox lists, next-turn and next-step, rebuilt by applying
// every agent/inbox/spliced event in order (canceled splices included).
package session
