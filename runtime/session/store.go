package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
)

// Store is where a [Log] keeps its events. A Log serializes its calls of Append, may call
// Sync concurrently with Append (never with Close), and calls Load once, first.
type Store interface {
	// Load returns the events the store already holds, in order, with seqs contiguous
	// from 0.
	Load(ctx context.Context) ([]Event, error)
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

// Load returns the events appended so far by earlier Logs, and marks the store in use.
func (m *Memory) Load(ctx context.Context) ([]Event, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.open {
		return nil, errInUse
	}
	events := make([]Event, 0, len(m.lines))
	for i, line := range m.lines {
		ev, err := decodeLine(line[:len(line)-1])
		if err != nil {
			return nil, fmt.Errorf("session: memory line %d: %w", i+1, err)
		}
		events = append(events, ev)
	}
	m.open = true
	return events, nil
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
