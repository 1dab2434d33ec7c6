package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
)

// Store is where a [Log] keeps its events. A Log calls Load once, first; it serializes its
// calls of Append; it may call Sync and Read concurrently with Append (never with Close).
// A Log keeps only its most recent events in memory and reads the others back with Read,
// so a store need not hold its events in memory either.
type Store interface {
	// Load returns how many events the store already holds: their seqs are 0 to n-1.
	Load(ctx context.Context) (n int64, err error)
	// Read returns the events with seqs from to to-1, in order, for 0 <= from <= to <= the
	// number of events loaded or appended. It reads each event when the iteration reaches
	// it and yields an error (wrapping ErrCorrupt for a line that is not a valid envelope)
	// when it cannot. The events it yields must stay valid after the iteration: a Log hands
	// them out.
	Read(ctx context.Context, from, to int64) iter.Seq2[Event, error]
	// Append adds one event: line is its envelope encoded as a single line of JSON,
	// terminated by '\n'. When Append returns nil the event is in the store (though not
	// necessarily durable); when it returns an error the store is as it was before the
	// call, or refuses every later call. Append must not keep line after it returns.
	Append(ctx context.Context, line []byte) error
	// Sync makes every line whose Append returned before Sync was called durable.
	Sync(ctx context.Context) error
	// Close releases the store; its events stay where they are.
	Close() error
}

// Memory is a [Store] in memory: fast, and lost with the process. Sync does nothing. A
// Memory may be reopened by a new Log after the previous one closed, which is how tests
// exercise resume without a file; it serves one open Log at a time.
type Memory struct {
	mu    sync.Mutex
	lines [][]byte
	open  bool
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory { return &Memory{} }

// errInUse is the error of loading a Memory that an open Log is still using.
var errInUse = errors.New("session: memory store is in use by an open log")

// Load checks the events appended so far by earlier Logs, returns their number and marks
// the store in use.
func (m *Memory) Load(ctx context.Context) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.open {
		return 0, errInUse
	}
	for i, line := range m.lines {
		ev, err := decodeLine(line[:len(line)-1])
		if err != nil {
			return 0, fmt.Errorf("session: memory line %d: %w", i+1, err)
		}
		if ev.Seq != int64(i) {
			return 0, fmt.Errorf("%w: memory line %d has seq %d", ErrCorrupt, i+1, ev.Seq)
		}
	}
	m.open = true
	return int64(len(m.lines)), nil
}

// Read decodes the lines of the events from to to-1.
func (m *Memory) Read(ctx context.Context, from, to int64) iter.Seq2[Event, error] {
	m.mu.Lock()
	lines := m.lines[:len(m.lines):len(m.lines)]
	m.mu.Unlock()
	return func(yield func(Event, error) bool) {
		if from < 0 || to > int64(len(lines)) || from > to {
			yield(Event{}, fmt.Errorf("session: memory store: read of events %d to %d of %d", from, to, len(lines)))
			return
		}
		for i, line := range lines[from:to] {
			ev, err := decodeLine(line[:len(line)-1])
			if err != nil {
				err = fmt.Errorf("session: memory line %d: %w", from+int64(i)+1, err)
			}
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}

// Append keeps a copy of line.
func (m *Memory) Append(ctx context.Context, line []byte) error {
	if err := checkLine(line); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.open {
		return ErrClosed
	}
	m.lines = append(m.lines, append([]byte(nil), line...))
	return nil
}

// Sync does nothing: memory is as durable as it gets.
func (m *Memory) Sync(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.open {
		return ErrClosed
	}
	return nil
}

// Clone returns a new Memory holding the events appended so far, not in use: what a
// process that stopped now would leave of the store (tests of resume after a crash open a
// Log over it while the original goes on).
func (m *Memory) Clone() *Memory {
	m.mu.Lock()
	defer m.mu.Unlock()
	lines := make([][]byte, len(m.lines))
	for i, l := range m.lines {
		lines[i] = append([]byte(nil), l...)
	}
	return &Memory{lines: lines}
}

// Close ends the current Log's use of the store, keeping its events.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.open = false
	return nil
}

// checkLine rejects a line that is empty, lacks its final newline or holds another one.
func checkLine(line []byte) error {
	n := len(line)
	if n < 2 || line[n-1] != '\n' {
		return fmt.Errorf("session: store line must end with a newline")
	}
	if bytes.IndexByte(line[:n-1], '\n') >= 0 {
		return fmt.Errorf("session: store line holds a newline before its end")
	}
	return nil
}
