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
	"sync"
)

// RecoveryKind classifies the first bad line that OpenFile cut.
type RecoveryKind string

const (
	// RecoveryNone means the file was clean.
	RecoveryNone RecoveryKind = ""
	// RecoveryTornTail is an incomplete last line (no final newline): a write cut short
	// by a crash.
	RecoveryTornTail RecoveryKind = "torn-tail"
	// RecoveryCorruptLine is a complete line that is not a valid envelope.
	RecoveryCorruptLine RecoveryKind = "corrupt-line"
	// RecoverySeqGap is a valid envelope whose seq is not the next one.
	RecoverySeqGap RecoveryKind = "seq-gap"
)

// Recovery describes what OpenFile found: how many valid events it kept and, when the
// file was damaged, what it cut and why. Kind is RecoveryNone and TruncatedBytes 0 when
// the file was clean.
type Recovery struct {
	// Kind classifies the first bad line.
	Kind RecoveryKind
	// Reason is a human-readable diagnostic.
	Reason string
	// Line is the 1-based line number of the first bad line; 0 when clean.
	Line int64
	// Events is the number of valid events kept.
	Events int64
	// ValidBytes is the size of the kept prefix, where the file was cut.
	ValidBytes int64
	// TruncatedBytes is how many bytes were cut; 0 when clean.
	TruncatedBytes int64
	// DroppedLines is how many lines were cut, the bad one and a torn tail included.
	DroppedLines int64
	// BackupPath is the file the cut bytes were saved to, when they held at least one
	// complete line; empty otherwise.
	BackupPath string
}

// Truncated reports whether anything was cut.
func (r Recovery) Truncated() bool { return r.TruncatedBytes > 0 }

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

// OpenFile opens the log file at path, creating it (mode 0600) if needed, reads every line
// and recovers a damaged tail. Lines are read in order while they are complete valid
// envelopes with seqs 0, 1, 2, ...; the first line that is not (incomplete, not a valid
// envelope, or out of sequence) is the cut point, and everything from it on is cut. So a
// corrupt line in the middle also cuts the valid lines after it: their order relative to
// the missing event is unknown, and a log must stay a contiguous prefix. When the cut
// holds at least one complete line, the cut bytes are first saved next to the file (see
// Recovery.BackupPath), so nothing but a torn tail is destroyed; if that save fails,
// OpenFile fails and changes nothing. The cut is synced before OpenFile returns, and the
// Recovery returned (and logged as a warning) says what was cut and why.
//
// Only the envelope is checked here, not the data against its type, so that a log written
// by a newer version stays readable; Event.Decode and Replay check the data.
//
// A line is written with one write call and is complete only with its newline. A crash
// never cuts an event whose sync completed: it can only tear or garble what was written
// after the last sync. Only damage inside the synced part (a failing disk, a foreign
// write) cuts synced events, and those are in the backup.
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
	if created {
		if err := syncDir(filepath.Dir(path)); err != nil {
			return fail(fmt.Errorf("session: sync directory of %s: %w", path, err))
		}
	}
	starts, rec, err := scan(f)
	if err != nil {
		return fail(fmt.Errorf("session: read %s: %w", path, err))
	}
	if rec.Truncated() {
		cut := make([]byte, rec.TruncatedBytes)
		if _, err := f.ReadAt(cut, rec.ValidBytes); err != nil {
			return fail(fmt.Errorf("session: read %s: %w", path, err))
		}
		rec.DroppedLines = int64(bytes.Count(cut, []byte{'\n'}))
		if cut[len(cut)-1] != '\n' {
			rec.DroppedLines++
		}
		rec.Reason = fmt.Sprintf("%s; cut %d bytes (%d lines), kept %d events", rec.Reason,
			rec.TruncatedBytes, rec.DroppedLines, rec.Events)
		if bytes.IndexByte(cut, '\n') >= 0 {
			backup, err := saveCut(path, cut)
			if err != nil {
				return fail(fmt.Errorf("session: save the %d bytes to cut from %s: %w", len(cut), path, err))
			}
			rec.BackupPath = backup
			rec.Reason += "; the cut bytes are saved in " + backup
		}
		if err := f.Truncate(rec.ValidBytes); err != nil {
			return fail(fmt.Errorf("session: truncate %s: %w", path, err))
		}
		if err := f.Sync(); err != nil {
			return fail(fmt.Errorf("session: sync %s: %w", path, err))
		}
		o.log.Warn("session: log file recovered: damaged tail cut", "path", path,
			"kind", string(rec.Kind), "reason", rec.Reason, "line", rec.Line,
			"eventsKept", rec.Events, "truncatedBytes", rec.TruncatedBytes,
			"droppedLines", rec.DroppedLines, "backup", rec.BackupPath)
	}
	return &File{path: path, f: f, size: rec.ValidBytes, starts: starts}, rec, nil
}

// openOrCreate opens path for appending, creating it if it does not exist.
func openOrCreate(path string) (*os.File, bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		return f, true, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return nil, false, fmt.Errorf("session: %w", err)
	}
	f, err = os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, false, fmt.Errorf("session: %w", err)
	}
	return f, false, nil
}

// readChunk is how much of a log file a read asks for at a time.
const readChunk = 256 << 10

// lines calls fn with each line of the file's bytes from off to end (without its newline)
// and the offset it starts at, reading them in chunks; a line fn keeps stays valid. It
// stops when fn returns false, and calls torn with the offset and length of a last piece
// that has no newline.
func lines(r io.ReaderAt, off, end int64, fn func(line []byte, at int64) bool, torn func(at, n int64)) error {
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
			if !fn(rest[:nl:nl], at) {
				return nil
			}
			at += int64(nl) + 1
			rest = rest[nl+1:]
		}
		pending = rest
	}
	if len(pending) > 0 && torn != nil {
		torn(end-int64(len(pending)), int64(len(pending)))
	}
	return nil
}

// scan reads the valid prefix of a log file, checking every envelope, and returns the
// offset of each event's line in it.
func scan(f *os.File) ([]int64, Recovery, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, Recovery{}, err
	}
	var (
		starts []int64
		rec    Recovery
		off    int64
		lineNo int64
	)
	size := info.Size()
	err = lines(f, 0, size, func(line []byte, at int64) bool {
		lineNo++
		ev, err := decodeLine(line)
		if err != nil {
			rec.Kind, rec.Line = RecoveryCorruptLine, lineNo
			rec.Reason = fmt.Sprintf("line %d is not a valid event envelope: %v", lineNo, err)
			return false
		}
		if want := int64(len(starts)); ev.Seq != want {
			rec.Kind, rec.Line = RecoverySeqGap, lineNo
			rec.Reason = fmt.Sprintf("line %d has seq %d, want %d", lineNo, ev.Seq, want)
			return false
		}
		starts = append(starts, at)
		off = at + int64(len(line)) + 1
		return true
	}, func(at, n int64) {
		lineNo++
		rec.Kind, rec.Line = RecoveryTornTail, lineNo
		rec.Reason = fmt.Sprintf("line %d is incomplete: %d bytes without a final newline", lineNo, n)
	})
	if err != nil {
		return nil, Recovery{}, err
	}
	rec.Events, rec.ValidBytes = int64(len(starts)), off
	if cut := size - off; cut > 0 {
		rec.TruncatedBytes = cut
	}
	return starts, rec, nil
}

// saveCut writes the bytes about to be cut from the log at path to a new file next to
// it, durably, and returns that file's path.
func saveCut(path string, cut []byte) (string, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	b, err := os.CreateTemp(dir, base+".corrupt-*")
	if err != nil {
		return "", err
	}
	_, werr := b.Write(cut)
	serr := b.Sync()
	cerr := b.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(b.Name())
		return "", err
	}
	if err := syncDir(dir); err != nil {
		return "", err
	}
	return b.Name(), nil
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
		rerr := lines(file, start, end, func(line []byte, _ int64) bool {
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
