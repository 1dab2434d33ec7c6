package subagent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/dshkit/dsh/runtime/session"
)

// MemoryLogs keeps children's logs in memory, by session id (tests, and a parent whose
// own log is in memory). The zero value is ready to use.
type MemoryLogs struct {
	mu   sync.Mutex
	logs map[string]*session.Log
}

// Create opens a new log in memory for id.
func (m *MemoryLogs) Create(ctx context.Context, id string) (*session.Log, func(), error) {
	l, err := session.Open(ctx, session.NewMemory())
	if err != nil {
		return nil, nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.logs == nil {
		m.logs = map[string]*session.Log{}
	}
	m.logs[id] = l
	return l, func() {}, nil
}

// Reopen returns the log Create made for id again (it stays open in memory).
func (m *MemoryLogs) Reopen(ctx context.Context, id string) (*session.Log, func(), error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.logs[id]
	if !ok {
		return nil, nil, fmt.Errorf("subagent: no log of session %s", id)
	}
	return l, func() {}, nil
}

// Log returns the child log of id, if one was created.
func (m *MemoryLogs) Log(id string) (*session.Log, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.logs[id]
	return l, ok
}

// FileLogs keeps each child's log as a JSONL file in Dir, named by its session id
// (SESSION.jsonl): beside the parent's file, in the folder of that name (see Dir).
type FileLogs struct {
	// Dir is the folder of the children's files, made when the first child starts.
	Dir string
}

// DirFor is the folder of the children of the parent log at path: PATH without its
// extension, then "subagents" (run.jsonl: run/subagents/), as Claude Code keeps a
// session's subagent transcripts.
func DirFor(path string) string {
	return filepath.Join(path[:len(path)-len(filepath.Ext(path))], "subagents")
}

// Path is the file of the child session id.
func (f FileLogs) Path(id string) string { return filepath.Join(f.Dir, id+".jsonl") }

// Create opens a new JSONL file for id; a file already there is refused, never
// overwritten.
func (f FileLogs) Create(ctx context.Context, id string) (*session.Log, func(), error) {
	if err := os.MkdirAll(f.Dir, 0o700); err != nil {
		return nil, nil, err
	}
	p := f.Path(id)
	if _, err := os.Lstat(p); err == nil {
		return nil, nil, fmt.Errorf("subagent: %s exists already", p)
	}
	return openFile(ctx, p)
}

// Reopen opens the JSONL file of id again, which must exist (Create made it).
func (f FileLogs) Reopen(ctx context.Context, id string) (*session.Log, func(), error) {
	p := f.Path(id)
	if _, err := os.Lstat(p); err != nil {
		return nil, nil, fmt.Errorf("subagent: the log of session %s: %w", id, err)
	}
	return openFile(ctx, p)
}

// openFile opens the session log in the JSONL file at path, and the func that closes it.
func openFile(ctx context.Context, path string) (*session.Log, func(), error) {
	st, _, err := session.OpenFile(path)
	if err != nil {
		return nil, nil, err
	}
	l, err := session.Open(ctx, st)
	if err != nil {
		_ = st.Close()
		return nil, nil, err
	}
	return l, func() { _ = l.Close() }, nil
}
