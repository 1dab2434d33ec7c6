package builtin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/dshkit/dsh/runtime/tools"
)

// The defaults of Read's caps, Claude Code's figures.
const (
	// DefaultReadMaxBytes is Options.ReadMaxBytes's default: 256 KiB, Claude Code's Read
	// size limit.
	DefaultReadMaxBytes = 256 << 10
	// DefaultReadMaxLineLength is Options.ReadMaxLineLength's default: 2000 characters.
	DefaultReadMaxLineLength = 2000
	// DefaultReadLimit is Options.ReadLimit's default: 2000 lines.
	DefaultReadLimit = 2000
	// DefaultEditMaxBytes is Options.EditMaxBytes's default: 16 MiB.
	DefaultEditMaxBytes = 16 << 20
)

// errPathEscapes is the text of the error os.Root gives for a path that leaves it (a
// symlink or ".." pointing outside at the moment of use); the os package does not
// export it.
const errPathEscapes = "path escapes from parent"

// workspaceFile is a file opened in the workspace through os.Root.
type workspaceFile struct {
	f       *os.File
	info    fs.FileInfo
	existed bool // the file existed before the open (an O_CREATE open may have made it)
}

// openInWorkspace opens filePath (absolute, or relative to the workspace) through an
// os.Root on the workspace, so that every component is resolved beneath it at the
// moment of use: a symlink swapped in after the path was checked cannot lead outside.
// Only a regular file is opened: a FIFO, device, socket or directory is refused with
// CodeNotRegular before it is opened (so no open has side effects) and checked again on
// the opened descriptor (O_NONBLOCK, so a FIFO swapped in never blocks the open). With
// O_CREATE in flag, missing parent directories are made (inside the root too).
func openInWorkspace(workspace, filePath string, flag int, perm fs.FileMode) (*workspaceFile, error) {
	rel, err := workspaceRel(workspace, filePath)
	if err != nil {
		return nil, err
	}
	return openRel(workspace, rel, filePath, flag, perm)
}

// workspaceRel checks filePath as it is now (resolve) and returns it relative to the
// workspace.
func workspaceRel(workspace, filePath string) (string, error) {
	full, err := resolve(workspace, filePath)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(workspace, full)
	if err != nil {
		return "", tools.NewError(CodeOutsideWorkspace, fmt.Sprintf("path %s is outside the workspace %s", filePath, workspace))
	}
	if rel == "." {
		return "", notRegular(filePath, fs.ModeDir)
	}
	return rel, nil
}

// openRel opens rel, a path workspaceRel checked, through an os.Root on the workspace:
// whatever the path's components have become since the check, the open stays beneath
// the workspace. filePath is the caller's path, for errors.
func openRel(workspace, rel, filePath string, flag int, perm fs.FileMode) (*workspaceFile, error) {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return nil, fmt.Errorf("open workspace %s: %w", workspace, err)
	}
	defer root.Close() // a file opened through root stays open
	existed := false
	switch info, err := root.Stat(rel); {
	case err == nil:
		if !info.Mode().IsRegular() {
			return nil, notRegular(filePath, info.Mode())
		}
		existed = true
	case errors.Is(err, fs.ErrNotExist) && flag&os.O_CREATE != 0:
		if err := root.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
			return nil, fileError(filePath, workspace, err)
		}
	default:
		return nil, fileError(filePath, workspace, err)
	}
	f, err := root.OpenFile(rel, flag|syscall.O_NONBLOCK, perm)
	if err != nil {
		return nil, fileError(filePath, workspace, err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, notRegular(filePath, info.Mode())
	}
	return &workspaceFile{f: f, info: info, existed: existed}, nil
}

// fileError maps an error of an os.Root operation on filePath to the tools' codes.
func fileError(filePath, workspace string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return tools.NewError(CodeNotFound, fmt.Sprintf("file %s does not exist", filePath))
	case strings.Contains(err.Error(), errPathEscapes):
		return tools.NewError(CodeOutsideWorkspace, fmt.Sprintf("path %s is outside the workspace %s", filePath, workspace))
	}
	return err
}

// notRegular is the error of a path that is not a regular file.
func notRegular(filePath string, mode fs.FileMode) error {
	kind := "not a regular file"
	switch {
	case mode.IsDir():
		kind = "a directory"
	case mode&fs.ModeNamedPipe != 0:
		kind = "a FIFO (named pipe)"
	case mode&fs.ModeSocket != 0:
		kind = "a socket"
	case mode&fs.ModeCharDevice != 0:
		kind = "a character device"
	case mode&fs.ModeDevice != 0:
		kind = "a device"
	}
	return tools.NewError(CodeNotRegular, fmt.Sprintf("%s is %s, not a regular file: only regular files can be read, written or edited", filePath, kind))
}

// tooLarge is Claude Code's error for a whole-file read over the byte cap.
func tooLarge(size, max int64) error {
	return tools.NewError(CodeFileTooLarge, fmt.Sprintf("File content (%s) exceeds maximum allowed size (%s). Use offset and limit parameters to read specific portions of the file, or search for specific content instead of reading the whole file.", kib(size), kib(max)))
}

// editTooLarge is the failure of a Write or Edit of a file over Options.EditMaxBytes.
func editTooLarge(filePath string, size, max int64) error {
	return tools.NewError(CodeFileTooLarge, fmt.Sprintf("%s (%s) is larger than Write and Edit handle (%s); nothing was written. Change it with Bash instead.", filePath, kib(size), kib(max)))
}

// readForEdit reads the whole of a workspace file Write or Edit is about to replace,
// refusing one over max before reading it (and one that turns out larger than it said).
func readForEdit(wf *workspaceFile, filePath string, max int) ([]byte, error) {
	if wf.info.Size() > int64(max) {
		return nil, editTooLarge(filePath, wf.info.Size(), int64(max))
	}
	data, err := io.ReadAll(io.LimitReader(wf.f, int64(max)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > max {
		return nil, editTooLarge(filePath, int64(len(data)), int64(max))
	}
	return data, nil
}

// rangeTooLarge is Claude Code's error for a line range over the byte cap.
func rangeTooLarge(max int64) error {
	return tools.NewError(CodeFileTooLarge, fmt.Sprintf("The requested line range contains over %s of text, more than a read can return. Use a smaller limit, or search for specific content instead.", kib(max)))
}

func kib(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%.1fKB", float64(n)/1024)
}

// lineNote is appended to a line cut at the line-length cap.
func lineNote(shown, total int) string {
	return fmt.Sprintf("… [line truncated: %d of its %d bytes shown]", shown, total)
}

// readRange reads the lines start to start+limit-1 (from 1) of r while streaming it,
// and counts all of its lines as Claude Code does (split at "\n": a final "\n" ends an
// empty last line, an empty file has one line). A line longer than maxLine characters
// is cut there with a note, and only the bytes such a line can show are kept; lines
// outside the range are counted, never kept. When the kept text passes maxBytes the
// read fails with CodeFileTooLarge. Memory is bounded by the buffer and the kept text.
func readRange(ctx context.Context, r io.Reader, start, limit, maxLine int, maxBytes int64) (lines []string, total int, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	keepMax := maxLine*utf8.UTFMax + 1 // enough bytes to know whether a line has more than maxLine characters
	end := start + limit               // the first line not wanted
	var (
		cur    []byte // the kept bytes of the current line
		curLen int    // the current line's length so far
		kept   int64  // the bytes of the lines kept so far, joined by "\n"
		lineNo = 1
		chunks int
	)
	finish := func() error {
		if lineNo >= start && lineNo < end {
			s := text(cur)
			if curLen > len(cur) || utf8.RuneCountInString(s) > maxLine {
				s = cutRunes(s, maxLine)
				s += lineNote(len(s), curLen)
			}
			if len(lines) > 0 {
				kept++
			}
			kept += int64(len(s))
			if kept > maxBytes {
				return rangeTooLarge(maxBytes)
			}
			lines = append(lines, s)
		}
		lineNo++
		cur, curLen = cur[:0], 0
		return nil
	}
	for {
		if chunks++; chunks%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, 0, err
			}
		}
		if lineNo >= end {
			// Past the range: only count the newlines, a buffer at a time; the line
			// after the last one counts too.
			buf := make([]byte, 64<<10)
			for {
				n, rerr := br.Read(buf)
				lineNo += bytes.Count(buf[:n], []byte{'\n'})
				if errors.Is(rerr, io.EOF) {
					return lines, lineNo, nil
				}
				if rerr != nil {
					return nil, 0, rerr
				}
				if chunks++; chunks%64 == 0 {
					if err := ctx.Err(); err != nil {
						return nil, 0, err
					}
				}
			}
		}
		frag, rerr := br.ReadSlice('\n')
		body := frag
		if rerr == nil {
			body = frag[:len(frag)-1]
		}
		curLen += len(body)
		if lineNo >= start && len(cur) < keepMax {
			cur = append(cur, body[:min(len(body), keepMax-len(cur))]...)
		}
		switch {
		case rerr == nil:
			if err := finish(); err != nil {
				return nil, 0, err
			}
		case errors.Is(rerr, bufio.ErrBufferFull):
		case errors.Is(rerr, io.EOF):
			if err := finish(); err != nil {
				return nil, 0, err
			}
			return lines, lineNo - 1, nil
		default:
			return nil, 0, rerr
		}
	}
}

// cutRunes returns s cut to at most n characters.
func cutRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// CurrentText returns the whole text of the workspace file filePath as the Read tool
// may read it, for showing what a Write would replace (the ACP diff preview): through
// the same confinement as the tools (os.Root on the workspace, symlinks resolved
// beneath it at the moment of use), regular files only (never the kernel's files under
// /proc or /sys, even in a workspace that holds them), and under Read's byte cap. It
// returns exists false and no error for a file that does not exist, and an error (with
// one of the tools' codes: PATH_OUTSIDE_WORKSPACE, NOT_REGULAR_FILE, FILE_TOO_LARGE)
// whenever the Read tool would refuse: nothing it returns could not have been read by
// the tool itself.
func CurrentText(ctx context.Context, o Options, filePath string) (text string, exists bool, err error) {
	o, err = o.withDefaults()
	if err != nil {
		return "", false, err
	}
	wf, err := openInWorkspace(o.Workspace, filePath, os.O_RDONLY, 0)
	var te *tools.Error
	if errors.As(err, &te) && te.Code == CodeNotFound {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	defer wf.f.Close()
	if pseudoFS(wf.f) {
		// The kernel's files (/proc, /sys) are not shown before a call runs, even in a
		// workspace that holds them: they report a size they do not have, and some never end.
		return "", true, notRegular(filePath, 0)
	}
	if wf.info.Size() > int64(o.ReadMaxBytes) {
		return "", true, tooLarge(wf.info.Size(), int64(o.ReadMaxBytes))
	}
	// Read one byte past the cap: a file that reports a smaller size than it has (as
	// the kernel's pseudo-files do) is refused too.
	data, err := io.ReadAll(io.LimitReader(wf.f, int64(o.ReadMaxBytes)+1))
	if err != nil {
		return "", true, err
	}
	if len(data) > o.ReadMaxBytes {
		return "", true, tooLarge(int64(len(data)), int64(o.ReadMaxBytes))
	}
	return string(data), true, nil
}
