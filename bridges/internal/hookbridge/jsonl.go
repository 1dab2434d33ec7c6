package hookbridge

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ErrNotOwnTranscript is the error of a transcript path dsh refuses to write: a symbolic
// link, a file that is not regular, or a non-empty file that is not dsh's transcript of
// this session. The file is left as it is.
var ErrNotOwnTranscript = errors.New("refused: dsh writes only this session's own transcript there")

// MaxOwnerLineBytes bounds the first line read to recognize a transcript as dsh's own: a
// longer first line is not one dsh wrote for a session it is resuming.
const MaxOwnerLineBytes = 64 << 20

// Owner says how a dialect's transcript names its session: the first line is a JSON
// object whose field at the path Field (object keys, outermost first) is the session's
// id. A transcript with another first line is not this session's, and is never written.
type Owner struct {
	// Field is the path of the session id in the first line, e.g. ["sessionId"] or
	// ["payload", "id"].
	Field []string
	// SessionID is the id this session writes there.
	SessionID string
}

// owns reports why line is not the first line of o's transcript (nil when it is).
func (o Owner) owns(line []byte) error {
	var v any
	if err := json.Unmarshal(line, &v); err != nil {
		return errors.New("its first line is not JSON")
	}
	for _, k := range o.Field {
		m, ok := v.(map[string]any)
		if !ok {
			v = nil
			break
		}
		v = m[k]
	}
	if id, ok := v.(string); !ok || id != o.SessionID {
		return fmt.Errorf("its first line is not this dialect's transcript entry for session %s", o.SessionID)
	}
	return nil
}

// JSONL is an append-only JSON Lines file, as the engines write their transcripts: private
// to the user (the file 0600, a directory it creates 0700), as it holds the whole
// conversation. It is not safe for concurrent use; the transcripts lock around it.
type JSONL struct {
	f    *os.File
	path string
	kind string
}

// Tail returns the lines that begin in the last limit bytes of the file, read through the
// handle OpenJSONL opened (never by its path again, which a link may have replaced since).
func (j *JSONL) Tail(limit int64) ([]byte, error) {
	st, err := j.f.Stat()
	if err != nil {
		return nil, err
	}
	off := max(st.Size()-limit, 0)
	buf := make([]byte, st.Size()-off)
	n, err := j.f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	buf = buf[:n]
	if off > 0 {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			return nil, nil
		}
		buf = buf[i+1:]
	}
	return buf, nil
}

// OpenJSONL creates (or opens for appending) the transcript at path; kind names it in
// errors ("rollout", "transcript", ...). fresh says the file is empty: a new transcript
// starts with its header line.
//
// It is opened as the session log is: never through a symbolic link (where the system
// can refuse one), never blocking on a FIFO, and only when it is absent, empty or already
// this session's transcript (owner's check of its first line), so that a path planted
// beside a log (a link to the user's shell profile, a file of someone else's) is never
// appended to. Otherwise it fails with ErrNotOwnTranscript and one line naming the file,
// which is left as it is.
func OpenJSONL(kind, path string, owner Owner) (j *JSONL, fresh bool, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, err
	}
	refuse := func(why string) error {
		return fmt.Errorf("%s %s: %s; %w, and left the file as it is", kind, path, why, ErrNotOwnTranscript)
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		// Where O_NOFOLLOW exists, the open below refuses a link swapped in after this.
		return nil, false, refuse("it is a symbolic link")
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_RDWR|oNoFollow|oNonBlock, 0o600)
	if err != nil {
		if isSymlinkErr(err) {
			return nil, false, refuse("it is a symbolic link")
		}
		return nil, false, fmt.Errorf("%s %s: %w", kind, path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, false, fmt.Errorf("%s %s: %w", kind, path, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, false, refuse(fmt.Sprintf("it is not a regular file (%s)", st.Mode().Type()))
	}
	if st.Size() == 0 {
		return &JSONL{f: f, path: path, kind: kind}, true, nil
	}
	line, err := bufio.NewReader(io.LimitReader(io.NewSectionReader(f, 0, st.Size()), MaxOwnerLineBytes)).ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		f.Close()
		return nil, false, fmt.Errorf("%s %s: %w", kind, path, err)
	}
	if len(line) == 0 || line[len(line)-1] != '\n' {
		f.Close()
		return nil, false, refuse("its first line is not a complete line")
	}
	if err := owner.owns(line); err != nil {
		f.Close()
		return nil, false, refuse(err.Error())
	}
	return &JSONL{f: f, path: path, kind: kind}, false, nil
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
