package session

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/dshkit/dsh/generated/dsh"
)

// RepairReport says what [Repair] did.
type RepairReport struct {
	// Path is the log file.
	Path string
	// Events is the number of events in the repaired log.
	Events int64
	// Damaged holds the 1-based numbers of the lines moved aside, in the original file.
	Damaged []int64
	// Renumbered is how many kept events got a new seq, to keep seqs contiguous.
	Renumbered int64
	// DroppedSources is how many sourceEventSeqs citations of events no longer in the
	// log were removed.
	DroppedSources int64
	// BackupPath is the file that holds the damaged lines, verbatim, one a line; empty
	// when nothing was moved aside.
	BackupPath string
}

// Changed reports whether Repair changed the log.
func (r RepairReport) Changed() bool { return len(r.Damaged) > 0 || r.Renumbered > 0 }

// Repair moves the damage in the log file at path aside, keeping every event it can
// decode, before and after the damage: each line is self-describing, so one bad line
// costs only itself. A line that is not a valid envelope, a last line without its
// newline, and an event whose seq is not above the previous kept one are damage; they
// are saved, verbatim, in a new file next to the log (path.corrupt-*), synced, before
// the log changes. The kept events are renumbered from 0 where a gap calls for it (their
// citations of earlier events follow; a citation of an event moved aside is dropped),
// written to a new file that then replaces the log by a rename, so a crash leaves either
// the old file or the repaired one.
//
// Repair takes the log's lock, so it refuses a log that is open (ErrLocked), and it
// refuses, changing nothing, what OpenFile refuses as not a log: a symbolic link, a file
// that is not regular, a file with no event, or one whose first event is not of a
// session event type (ErrNotLog). A clean log is left as it is.
func Repair(path string) (RepairReport, error) {
	rep := RepairReport{Path: path}
	f, err := os.OpenFile(path, os.O_RDWR|oNoFollow|oNonBlock, 0)
	if err != nil {
		if isSymlinkErr(err) {
			return rep, fmt.Errorf("%w: %s is a symbolic link; a log is never opened through one", ErrNotLog, path)
		}
		return rep, fmt.Errorf("session: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return rep, fmt.Errorf("session: %w", err)
	}
	if !info.Mode().IsRegular() {
		return rep, fmt.Errorf("%w: %s is not a regular file (%s)", ErrNotLog, path, info.Mode().Type())
	}
	if err := lockFile(f); err != nil {
		return rep, err
	}
	if err := samePath(path, f); err != nil {
		return rep, err
	}

	type kept struct {
		line []byte
		ev   Event
	}
	// A damaged line is kept as its place in the file, and copied from there to the
	// backup: a line of any length is moved aside without being held.
	type section struct{ at, n int64 }
	var (
		keep    []kept
		damaged []section
		lineNo  int64
	)
	moveAside := func(at, n int64) bool {
		rep.Damaged = append(rep.Damaged, lineNo)
		damaged = append(damaged, section{at, n})
		return true
	}
	err = lines(f, 0, info.Size(), MaxLineBytes, func(line []byte, at int64) bool {
		lineNo++
		ev, err := decodeLine(line)
		if err != nil || (len(keep) > 0 && ev.Seq <= keep[len(keep)-1].ev.Seq) {
			return moveAside(at, int64(len(line)))
		}
		keep = append(keep, kept{line: line, ev: ev})
		return true
	}, func(at, n int64) bool {
		lineNo++
		return moveAside(at, n)
	}, func(at, n int64) {
		lineNo++
		moveAside(at, n)
	})
	if err != nil {
		return rep, fmt.Errorf("session: read %s: %w", path, err)
	}
	if int64(len(keep)+len(damaged)) != lineNo {
		return rep, fmt.Errorf("session: read %s: a line could not be read", path)
	}
	if len(keep) == 0 {
		return rep, fmt.Errorf("%w: %s holds no session event; the file is left as it is", ErrNotLog, path)
	}
	if _, known := slices.BinarySearch(dsh.SessionEventTypes, keep[0].ev.Type); !known {
		return rep, fmt.Errorf("%w: %s: its first event's type %q is not a session event type; the file is left as it is", ErrNotLog, path, keep[0].ev.Type)
	}

	// The kept events, renumbered where needed.
	newSeq := make(map[int64]int64, len(keep))
	var out []byte
	for i, k := range keep {
		seq := int64(i)
		newSeq[k.ev.Seq] = seq
		ev := k.ev
		changed := ev.Seq != seq
		if changed {
			rep.Renumbered++
		}
		if len(ev.SourceEventSeqs) > 0 {
			var srcs []int64
			for _, s := range ev.SourceEventSeqs {
				if n, ok := newSeq[s]; ok && n < seq {
					srcs = append(srcs, n)
				} else {
					rep.DroppedSources++
				}
			}
			if !slices.Equal(srcs, ev.SourceEventSeqs) {
				ev.SourceEventSeqs, changed = srcs, true
			}
		}
		if !changed {
			out = append(append(out, k.line...), '\n')
			continue
		}
		ev.Seq = seq
		if out, err = ev.appendJSON(out); err != nil {
			return rep, fmt.Errorf("session: re-encode event %d of %s: %w", seq, path, err)
		}
		out = append(out, '\n')
	}
	rep.Events = int64(len(keep))
	if !rep.Changed() {
		return rep, nil
	}

	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if len(damaged) > 0 {
		backup, err := writeNewFrom(dir, base+".corrupt-*", 0o600, func(w io.Writer) error {
			for _, d := range damaged {
				if _, err := io.Copy(w, io.NewSectionReader(f, d.at, d.n)); err != nil {
					return err
				}
				if _, err := w.Write([]byte{'\n'}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return rep, fmt.Errorf("session: save the damaged lines of %s: %w", path, err)
		}
		rep.BackupPath = backup
	}
	tmp, err := writeNew(dir, base+".repair-*", out, info.Mode().Perm())
	if err != nil {
		return rep, fmt.Errorf("session: write the repaired log of %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return rep, fmt.Errorf("session: replace %s: %w", path, err)
	}
	if err := syncDir(dir); err != nil {
		return rep, fmt.Errorf("session: sync directory of %s: %w", path, err)
	}
	return rep, nil
}

// writeNew writes data to a new file in dir named after pattern (os.CreateTemp), with
// mode perm, durably, and returns its path.
func writeNew(dir, pattern string, data []byte, perm os.FileMode) (string, error) {
	return writeNewFrom(dir, pattern, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// writeNewFrom is writeNew of what write writes.
func writeNewFrom(dir, pattern string, perm os.FileMode, write func(io.Writer) error) (string, error) {
	b, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", err
	}
	bw := bufio.NewWriterSize(b, 256<<10)
	werr := write(bw)
	if werr == nil {
		werr = bw.Flush()
	}
	merr := b.Chmod(perm)
	serr := b.Sync()
	cerr := b.Close()
	if err := errors.Join(werr, merr, serr, cerr); err != nil {
		os.Remove(b.Name())
		return "", err
	}
	if err := syncDir(dir); err != nil {
		os.Remove(b.Name())
		return "", err
	}
	return filepath.Join(dir, filepath.Base(b.Name())), nil
}
