package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/dshkit/dsh/generated/dsh"
)

// RecoveryKind classifies damage found in a log file.
type RecoveryKind string

const (
	// RecoveryNone means the file was clean.
	RecoveryNone RecoveryKind = ""
	// RecoveryTornTail is an incomplete last line (no final newline) that is the start of
	// a record (or NUL bytes): a write cut short by a crash. OpenFile cuts it.
	RecoveryTornTail RecoveryKind = "torn-tail"
	// RecoveryCorruptLine is a line that is not a valid envelope: OpenFile refuses the
	// file ([DamageError]), Repair moves the line aside.
	RecoveryCorruptLine RecoveryKind = "corrupt-line"
	// RecoverySeqGap is a valid envelope whose seq is not the next one: OpenFile refuses
	// the file, Repair renumbers what follows.
	RecoverySeqGap RecoveryKind = "seq-gap"
)

// Recovery describes what OpenFile found: how many valid events it kept and, when the
// last line was torn, what it cut. Kind is RecoveryNone and TruncatedBytes 0 when the
// file was clean; OpenFile cuts nothing but a torn last line.
type Recovery struct {
	// Kind is RecoveryTornTail when a torn last line was cut.
	Kind RecoveryKind
	// Reason is a human-readable diagnostic.
	Reason string
	// Line is the 1-based line number of the torn line; 0 when clean.
	Line int64
	// Events is the number of valid events kept.
	Events int64
	// ValidBytes is the size of the kept prefix, where the file was cut.
	ValidBytes int64
	// TruncatedBytes is how many bytes were cut; 0 when clean.
	TruncatedBytes int64
	// DroppedLines is how many lines were cut: 1 for a torn tail.
	DroppedLines int64
}

// Truncated reports whether anything was cut.
func (r Recovery) Truncated() bool { return r.TruncatedBytes > 0 }

// DamageError is the error of OpenFile on a log damaged before its last line: a line
// that is not a valid envelope, an event out of sequence, or a last line cut short that
// is not the start of a record. The file is left as it was; [Repair] moves the damage
// aside. It wraps ErrDamaged.
type DamageError struct {
	// Path is the log file.
	Path string
	// Line is the 1-based number of the first damaged line.
	Line int64
	// Kind classifies the damage.
	Kind RecoveryKind
	// Reason says what is wrong with the line.
	Reason string
}

// Error names the file and the line.
func (e *DamageError) Error() string {
	return fmt.Sprintf("session: %s:%d: damaged log: %s; the file is left as it is (dsh log --repair moves the damage aside)", e.Path, e.Line, e.Reason)
}

// Unwrap returns ErrDamaged.
func (e *DamageError) Unwrap() error { return ErrDamaged }

// FileOption configures OpenFile.
type FileOption func(*fileOptions)

type fileOptions struct {
	log *slog.Logger
}

// WithFileLogger sets the logger that receives the recovery diagnostic (default:
// discard).
func WithFileLogger(log *slog.Logger) FileOption {
	return func(o *fileOptions) {
		if log != nil {
			o.log = log
		}
	}
}

// File is a [Store] in a JSONL file: one envelope per line, each line ending with '\n'.
// It holds an exclusive advisory lock (flock, where the platform has it) on the file while
// open, so two Files never write the same log.
type File struct {
	path string

	syncMu sync.Mutex // serializes Sync and Close; not held by Append
	mu     sync.Mutex
	f      *os.File
	size   int64
	err    error // sticky: the file's state is unknown
	closed bool
	starts []int64 // the offset of each event's line; the file's size ends the last one
	taken  bool    // Load was called
}

// OpenFile opens the log file at path, creating it (mode 0600) if needed, and checks
// every line. It never changes a file it does not recognise as a session log, and never
// cuts a record that was complete:
//
//   - The file is opened without following a symbolic link (O_NOFOLLOW) and must be a
//     regular file; otherwise OpenFile fails with ErrNotLog.
//   - A file that is not empty must start with a valid session event: an envelope with
//     seq 0 and a session event type. Otherwise it is not a session log
//     and OpenFile fails with ErrNotLog, leaving it as it is.
//   - Every following line must be a valid envelope with the next seq. The first line
//     that is not is damage: OpenFile fails with a [*DamageError] naming the line
//     (errors.Is(err, ErrDamaged)) and leaves the file as it is; [Repair] moves the
//     damage aside.
//   - The one exception is a torn last line: bytes after the last newline that are the
//     start of a record (or NUL bytes), what a crash in the middle of a write leaves.
//     That line was never acknowledged, so OpenFile cuts it, syncs the cut and reports
//     it in the Recovery (logged as a warning). A last line without a newline that is
//     not the start of a record is damage.
//
// Only the envelope of the lines after the first is checked here, not the data against
// its type, so that a log written by a newer version stays readable; Event.Decode and
// Replay check the data.
//
// A line is written with one write call and is complete only with its newline. A crash
// never cuts an event whose append completed: it can only tear the line being written.
func OpenFile(path string, opts ...FileOption) (*File, Recovery, error) {
	o := fileOptions{log: slog.New(slog.DiscardHandler)}
	for _, opt := range opts {
		opt(&o)
	}
	f, created, err := openOrCreate(path)
	if err != nil {
		return nil, Recovery{}, err
	}
	fail := func(err error) (*File, Recovery, error) {
		f.Close()
		return nil, Recovery{}, err
	}
	if err := lockFile(f); err != nil {
		return fail(err)
	}
	if err := samePath(path, f); err != nil {
		return fail(err)
	}
	if created {
		if err := syncDir(filepath.Dir(path)); err != nil {
			return fail(fmt.Errorf("session: sync directory of %s: %w", path, err))
		}
	}
	starts, rec, err := scan(f, path)
	if err != nil {
		return fail(err)
	}
	if rec.Truncated() {
		rec.DroppedLines = 1
		rec.Reason = fmt.Sprintf("%s; cut %d bytes, kept %d events", rec.Reason, rec.TruncatedBytes, rec.Events)
		if err := f.Truncate(rec.ValidBytes); err != nil {
			return fail(fmt.Errorf("session: truncate %s: %w", path, err))
		}
		if err := f.Sync(); err != nil {
			return fail(fmt.Errorf("session: sync %s: %w", path, err))
		}
		o.log.Warn("session: log file recovered: torn last line cut", "path", path,
			"kind", string(rec.Kind), "reason", rec.Reason, "line", rec.Line,
			"eventsKept", rec.Events, "truncatedBytes", rec.TruncatedBytes)
	}
	return &File{path: path, f: f, size: rec.ValidBytes, starts: starts}, rec, nil
}

// openOrCreate opens path for appending, creating it if it does not exist, without
// following a symbolic link, and checks that it is a regular file.
func openOrCreate(path string) (*os.File, bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL|oNoFollow, 0o600)
	if err == nil {
		return f, true, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return nil, false, fmt.Errorf("session: %w", err)
	}
	f, err = os.OpenFile(path, os.O_RDWR|os.O_APPEND|oNoFollow|oNonBlock, 0)
	if err != nil {
		if isSymlinkErr(err) {
			return nil, false, fmt.Errorf("%w: %s is a symbolic link; a log is never opened through one", ErrNotLog, path)
		}
		return nil, false, fmt.Errorf("session: %w", err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, false, fmt.Errorf("session: %w", err)
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, false, fmt.Errorf("%w: %s is not a regular file (%s)", ErrNotLog, path, info.Mode().Type())
	}
	return f, false, nil
}

// samePath checks that path still names the file f, after f was locked: a log that
// Repair replaced while f was being opened is refused rather than used unlinked.
func samePath(path string, f *os.File) error {
	at, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	held, err := f.Stat()
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	if !os.SameFile(at, held) {
		return fmt.Errorf("session: %s was replaced while it was being opened; open it again", path)
	}
	return nil
}

// readChunk is how much of a log file a read asks for at a time.
const readChunk = 256 << 10

// MaxLineBytes is the longest line a log may hold: no event dsh writes comes near it (a
// model response is capped well below it, runtime/llm/provider). OpenFile reports a longer
// line as damage and Repair moves it aside, each without reading it whole.
const MaxLineBytes = 128 << 20

// lines calls fn with each line of the file's bytes from off to end (without its newline)
// and the offset it starts at, reading them in chunks; a line fn keeps stays valid. A line
// longer than maxLine is never read: overlong gets its offset and length instead (nil:
// the read stops there). It stops when fn or overlong returns false, and calls torn with
// the offset and length of a last piece that has no newline.
func lines(r io.ReaderAt, off, end, maxLine int64, fn func(line []byte, at int64) bool, overlong func(at, n int64) bool, torn func(at, n int64)) error {
	var pending []byte // the start of a line the previous chunk did not finish
	for off < end {
		want := min(int64(readChunk), end-off)
		buf := make([]byte, int64(len(pending))+want)
		copy(buf, pending)
		n, err := r.ReadAt(buf[len(pending):], off)
		if n < int(want) {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		at := off - int64(len(pending))
		off += int64(n)
		rest := buf
		for {
			nl := bytes.IndexByte(rest, '\n')
			if nl < 0 {
				break
			}
			if int64(nl) > maxLine {
				if overlong == nil || !overlong(at, int64(nl)) {
					return nil
				}
			} else if !fn(rest[:nl:nl], at) {
				return nil
			}
			at += int64(nl) + 1
			rest = rest[nl+1:]
		}
		pending = rest
		if len(pending) <= readChunk {
			continue
		}
		// A line longer than a chunk: find its end first, so that it is read once, whole,
		// or, over the cap, not at all.
		nl, err := nextNewline(r, off, end)
		if err != nil {
			return err
		}
		if nl < 0 {
			if torn != nil {
				torn(at, end-at)
			}
			return nil
		}
		if n := nl - at; n > maxLine {
			if overlong == nil || !overlong(at, n) {
				return nil
			}
		} else {
			line := make([]byte, n)
			if _, err := r.ReadAt(line, at); err != nil {
				return err
			}
			if !fn(line, at) {
				return nil
			}
		}
		off, pending = nl+1, nil
	}
	if len(pending) > 0 && torn != nil {
		torn(end-int64(len(pending)), int64(len(pending)))
	}
	return nil
}

// nextNewline returns the offset of the first newline in r from off to end, or -1.
func nextNewline(r io.ReaderAt, off, end int64) (int64, error) {
	buf := make([]byte, readChunk)
	for off < end {
		want := min(int64(len(buf)), end-off)
		n, err := r.ReadAt(buf[:want], off)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return off + int64(i), nil
		}
		if n < int(want) {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		off += int64(n)
	}
	return -1, nil
}

// scan reads a log file, checking every envelope, and returns the offset of each
// event's line. It fails with ErrNotLog when the first line is not a valid session
// event, and with a *DamageError at the first damaged line; the Recovery it returns
// describes a torn last line to cut.
func scan(f *os.File, path string) ([]int64, Recovery, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, Recovery{}, fmt.Errorf("session: read %s: %w", path, err)
	}
	var (
		starts []int64
		rec    Recovery
		off    int64
		lineNo int64
		bad    error
	)
	size := info.Size()
	err = lines(f, 0, size, MaxLineBytes, func(line []byte, at int64) bool {
		lineNo++
		ev, err := decodeLine(line)
		if lineNo == 1 {
			if err == nil {
				err = firstEvent(ev)
			}
			if err != nil {
				bad = notLog(path, err)
				return false
			}
		}
		if err != nil {
			bad = &DamageError{Path: path, Line: lineNo, Kind: RecoveryCorruptLine,
				Reason: fmt.Sprintf("line %d is not a valid event envelope: %v", lineNo, err)}
			return false
		}
		if want := int64(len(starts)); ev.Seq != want {
			bad = &DamageError{Path: path, Line: lineNo, Kind: RecoverySeqGap,
				Reason: fmt.Sprintf("line %d has seq %d, want %d", lineNo, ev.Seq, want)}
			return false
		}
		starts = append(starts, at)
		off = at + int64(len(line)) + 1
		return true
	}, func(at, n int64) bool {
		lineNo++
		if lineNo == 1 {
			bad = notLog(path, fmt.Errorf("its first line is %d bytes long, over %d", n, MaxLineBytes))
		} else {
			bad = &DamageError{Path: path, Line: lineNo, Kind: RecoveryCorruptLine,
				Reason: fmt.Sprintf("line %d is %d bytes long, over the %d a log line may hold (not read)", lineNo, n, MaxLineBytes)}
		}
		return false
	}, func(at, n int64) {
		lineNo++
		isTorn, err := tornAt(f, at, n)
		if err != nil {
			bad = fmt.Errorf("session: read %s: %w", path, err)
			return
		}
		if !isTorn {
			if lineNo == 1 {
				bad = notLog(path, errors.New("it is not a complete line"))
				return
			}
			bad = &DamageError{Path: path, Line: lineNo, Kind: RecoveryCorruptLine,
				Reason: fmt.Sprintf("line %d is incomplete (%d bytes without a final newline) and not the start of a record", lineNo, n)}
			return
		}
		rec.Kind, rec.Line = RecoveryTornTail, lineNo
		rec.Reason = fmt.Sprintf("line %d is incomplete: %d bytes without a final newline", lineNo, n)
	})
	if err != nil {
		return nil, Recovery{}, fmt.Errorf("session: read %s: %w", path, err)
	}
	if bad != nil {
		return nil, Recovery{}, bad
	}
	rec.Events, rec.ValidBytes = int64(len(starts)), off
	if cut := size - off; cut > 0 {
		rec.TruncatedBytes = cut
	}
	return starts, rec, nil
}

// firstEvent checks the first event of a log: seq 0 and a session event type. Its data
// is not decoded, so that a log a newer version wrote, with fields this one does not
// know, still opens.
func firstEvent(ev Event) error {
	if ev.Seq != 0 {
		return fmt.Errorf("its seq is %d, not 0", ev.Seq)
	}
	if _, known := slices.BinarySearch(dsh.SessionEventTypes, ev.Type); !known {
		return fmt.Errorf("%q is not a session event type", ev.Type)
	}
	return nil
}

// notLog is the error of a file whose first line is not a valid session event.
func notLog(path string, why error) error {
	return fmt.Errorf("%w: %s: line 1 is not a session event (%v); the file is left as it is", ErrNotLog, path, why)
}

// recordStart is how every line a Log writes begins.
const recordStart = `{"type":"`

// tornAt is tornRecord of the n bytes of r at off, read in chunks, never whole.
func tornAt(r io.ReaderAt, off, n int64) (bool, error) {
	head := make([]byte, min(n, int64(len(recordStart))+1))
	if _, err := r.ReadAt(head, off); err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	if n <= int64(len(recordStart)) || !allNUL(head) {
		return tornRecord(head), nil
	}
	buf := make([]byte, readChunk)
	for done := int64(0); done < n; {
		m, err := r.ReadAt(buf[:min(int64(len(buf)), n-done)], off+done)
		if !allNUL(buf[:m]) {
			return false, nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return false, err
		}
		if m == 0 {
			return false, io.ErrUnexpectedEOF
		}
		done += int64(m)
	}
	return true, nil
}

func allNUL(b []byte) bool { return len(bytes.Trim(b, "\x00")) == 0 }

// tornRecord reports whether piece, the bytes after a log's last newline, is what a
// crash during a Log's write leaves: the start of a record in the Log's layout, or NUL
// bytes (a file system that extended the file before writing its data).
func tornRecord(piece []byte) bool {
	if len(piece) <= len(recordStart) {
		if bytes.HasPrefix([]byte(recordStart), piece) {
			return true
		}
	} else if bytes.HasPrefix(piece, []byte(recordStart)) {
		return true
	}
	return len(bytes.Trim(piece, "\x00")) == 0
}

// Path returns the file's path.
func (f *File) Path() string { return f.path }

// Load returns the number of events OpenFile found. It may be called once.
func (f *File) Load(ctx context.Context) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return 0, ErrClosed
	}
	if f.taken {
		return 0, errors.New("session: file store already loaded")
	}
	f.taken = true
	return int64(len(f.starts)), nil
}

// Read reads the events from to to-1 back from the file, a chunk at a time, while Append
// may go on. A line that no longer decodes (the file was changed behind the store's back)
// yields an error wrapping ErrCorrupt.
func (f *File) Read(ctx context.Context, from, to int64) iter.Seq2[Event, error] {
	f.mu.Lock()
	n, size, err := int64(len(f.starts)), f.size, f.usable()
	var start, end int64
	if err == nil && from >= 0 && from <= to && to <= n {
		start, end = size, size
		if from < n {
			start = f.starts[from]
		}
		if to < n {
			end = f.starts[to]
		}
	}
	file := f.f
	f.mu.Unlock()
	return func(yield func(Event, error) bool) {
		if err != nil {
			yield(Event{}, err)
			return
		}
		if from < 0 || from > to || to > n {
			yield(Event{}, fmt.Errorf("session: %s: read of events %d to %d of %d", f.path, from, to, n))
			return
		}
		seq := from
		stopped := false
		rerr := lines(file, start, end, MaxLineBytes, func(line []byte, _ int64) bool {
			ev, err := decodeLine(line)
			if err != nil {
				err = fmt.Errorf("session: %s: event %d: %w", f.path, seq, err)
			}
			seq++
			if !yield(ev, err) || err != nil {
				stopped = true
				return false
			}
			return true
		}, func(at, n int64) bool {
			yield(Event{}, fmt.Errorf("session: %s: event %d: %w: its line is %d bytes long", f.path, seq, ErrCorrupt, n))
			stopped = true
			return false
		}, nil)
		if !stopped && rerr != nil {
			yield(Event{}, fmt.Errorf("session: read %s: %w", f.path, rerr))
		}
	}
}

// Append writes line with one write call. If the write fails or is short, the file is
// truncated back to its previous size; if even that fails, the File refuses every later
// call.
func (f *File) Append(ctx context.Context, line []byte) error {
	if err := checkLine(line); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.usable(); err != nil {
		return err
	}
	n, err := f.f.Write(line)
	if err == nil {
		f.starts = append(f.starts, f.size)
		f.size += int64(n)
		return nil
	}
	err = fmt.Errorf("session: write %s: %w", f.path, err)
	if terr := f.f.Truncate(f.size); terr != nil {
		f.err = errors.Join(err, fmt.Errorf("session: roll back %d bytes: %w", n, terr))
		return f.err
	}
	return err
}

// Sync flushes the file to stable storage (fsync). It runs concurrently with Append. A
// failed sync is sticky: the File refuses every later call, since which writes reached
// the disk is unknown.
func (f *File) Sync(ctx context.Context) error {
	f.syncMu.Lock()
	defer f.syncMu.Unlock()
	f.mu.Lock()
	err := f.usable()
	f.mu.Unlock()
	if err != nil {
		return err
	}
	if err := f.f.Sync(); err != nil {
		err = fmt.Errorf("session: sync %s: %w", f.path, err)
		f.mu.Lock()
		if f.err == nil {
			f.err = err
		}
		f.mu.Unlock()
		return err
	}
	return nil
}

// usable returns the reason the File cannot be used, if any. Called with mu held.
func (f *File) usable() error {
	if f.closed {
		return ErrClosed
	}
	return f.err
}

// Close closes the file without syncing it (the Log syncs before closing its store) and
// releases its lock. Closing a closed File does nothing.
func (f *File) Close() error {
	f.syncMu.Lock()
	defer f.syncMu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	f.starts = nil
	return f.f.Close()
}
