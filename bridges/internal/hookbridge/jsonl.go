package hookbridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// JSONL is an append-only JSON Lines file, as the engines write their transcripts: private
// to the user (the file 0600, a directory it creates 0700), as it holds the whole
// conversation. It is not safe for concurrent use; the transcripts lock around it.
type JSONL struct {
	f    *os.File
	path string
	kind string
}

// OpenJSONL creates (or opens for appending) the file at path; kind names it in write
// errors ("rollout", "transcript", ...). fresh says the file is empty: a new transcript
// starts with its header line.
func OpenJSONL(kind, path string) (j *JSONL, fresh bool, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, false, err
	}
	st, err := f.Stat()
	return &JSONL{f: f, path: path, kind: kind}, err == nil && st.Size() == 0, nil
}

// Path is the file's path.
func (j *JSONL) Path() string { return j.path }

// Close closes the file.
func (j *JSONL) Close() error { return j.f.Close() }

// Append writes v as one line, as the engines write it: <, > and & unescaped (hooks grep
// for "<promise>"). The line is on disk when Append returns.
func (j *JSONL) Append(v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	if _, err := j.f.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("%s %s: %w", j.kind, j.path, err)
	}
	return nil
}
