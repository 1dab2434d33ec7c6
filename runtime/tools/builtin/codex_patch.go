package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dshkit/dsh/runtime/tools"
)

// Codex's patch grammar (its apply_patch tool): a patch is "*** Begin Patch", hunks, then
// "*** End Patch"; a hunk adds a file ("*** Add File: PATH" and its lines, each after "+"),
// deletes one ("*** Delete File: PATH") or updates one ("*** Update File: PATH", an
// optional "*** Move to: PATH", then chunks: an optional "@@" or "@@ CONTEXT" line, lines
// after " ", "-" or "+", and an optional "*** End of File"). Parsing is Codex's lenient
// one: markers may have blanks around them, a patch may be wrapped in a heredoc
// (<<'EOF' … EOF), and the first chunk of an update may omit its "@@".
const (
	patchBegin      = "*** Begin Patch"
	patchEnd        = "*** End Patch"
	patchAdd        = "*** Add File: "
	patchDelete     = "*** Delete File: "
	patchUpdate     = "*** Update File: "
	patchMove       = "*** Move to: "
	patchEOF        = "*** End of File"
	patchContext    = "@@ "
	patchContextNil = "@@"
)

// patchHunk is one hunk of a Codex patch.
type patchHunk struct {
	kind   byte // 'A' add, 'D' delete, 'U' update
	path   string
	move   string       // an update's new path ("" when it stays)
	add    string       // an add's content
	chunks []patchChunk // an update's chunks
}

// patchChunk is one chunk of an update: the lines old become new, after the line
// context (when set), at the end of the file when eof is set.
type patchChunk struct {
	context  *string
	old, new []string
	eof      bool
}

// patchError is a patch that does not parse, in Codex's words: "invalid patch: MSG", or
// "invalid hunk at line N, MSG" when line is set.
type patchError struct {
	msg  string
	line int
}

func (e *patchError) Error() string {
	if e.line > 0 {
		return fmt.Sprintf("invalid hunk at line %d, %s", e.line, e.msg)
	}
	return "invalid patch: " + e.msg
}

// parsePatch parses a patch in Codex's grammar.
func parsePatch(patch string) ([]patchHunk, error) {
	lines := patchLines(strings.TrimSpace(patch))
	body, err := patchBoundaries(lines)
	if err != nil {
		// A patch wrapped in a heredoc, as some models write it.
		if n := len(lines); n >= 4 && (lines[0] == "<<EOF" || lines[0] == "<<'EOF'" || lines[0] == `<<"EOF"`) && strings.HasSuffix(lines[n-1], "EOF") {
			if inner, err2 := patchBoundaries(lines[1 : n-1]); err2 == nil {
				body, err = inner, nil
			}
		}
		if err != nil {
			return nil, err
		}
	}
	var hunks []patchHunk
	line := 2
	for len(body) > 0 {
		h, n, err := parseHunk(body, line)
		if err != nil {
			return nil, err
		}
		hunks = append(hunks, h)
		line += n
		body = body[n:]
	}
	return hunks, nil
}

// patchLines splits text into lines as Rust's str::lines does: at "\n", a "\r" before it
// dropped, no empty last line after a final "\n".
func patchLines(text string) []string {
	if text == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// patchBoundaries checks the first and last lines and returns those between.
func patchBoundaries(lines []string) ([]string, error) {
	var first, last string
	if len(lines) > 0 {
		first, last = strings.TrimSpace(lines[0]), strings.TrimSpace(lines[len(lines)-1])
	}
	switch {
	case len(lines) > 0 && first == patchBegin && last == patchEnd && len(lines) >= 2:
		return lines[1 : len(lines)-1], nil
	case first != patchBegin:
		return nil, &patchError{msg: "The first line of the patch must be '*** Begin Patch'"}
	}
	return nil, &patchError{msg: "The last line of the patch must be '*** End Patch'"}
}

// parseHunk parses the hunk at the start of lines (line is its line number in the
// patch) and returns it with the number of lines it took.
func parseHunk(lines []string, line int) (patchHunk, int, error) {
	first := strings.TrimSpace(lines[0])
	if path, ok := strings.CutPrefix(first, patchAdd); ok {
		var b strings.Builder
		n := 1
		for _, l := range lines[1:] {
			text, ok := strings.CutPrefix(l, "+")
			if !ok {
				break
			}
			b.WriteString(text)
			b.WriteByte('\n')
			n++
		}
		return patchHunk{kind: 'A', path: path, add: b.String()}, n, nil
	}
	if path, ok := strings.CutPrefix(first, patchDelete); ok {
		return patchHunk{kind: 'D', path: path}, 1, nil
	}
	path, ok := strings.CutPrefix(first, patchUpdate)
	if !ok {
		return patchHunk{}, 0, &patchError{line: line, msg: fmt.Sprintf("'%s' is not a valid hunk header. Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'", first)}
	}
	h := patchHunk{kind: 'U', path: path}
	rest, n := lines[1:], 1
	if len(rest) > 0 {
		if move, ok := strings.CutPrefix(rest[0], patchMove); ok {
			h.move, rest, n = move, rest[1:], n+1
		}
	}
	for len(rest) > 0 {
		if strings.TrimSpace(rest[0]) == "" {
			rest, n = rest[1:], n+1
			continue
		}
		if strings.HasPrefix(rest[0], "*") {
			break
		}
		c, used, err := parseChunk(rest, line+n, len(h.chunks) == 0)
		if err != nil {
			return patchHunk{}, 0, err
		}
		h.chunks = append(h.chunks, c)
		rest, n = rest[used:], n+used
	}
	if len(h.chunks) == 0 {
		return patchHunk{}, 0, &patchError{line: line, msg: fmt.Sprintf("Update file hunk for path '%s' is empty", path)}
	}
	return h, n, nil
}

// parseChunk parses the chunk at the start of lines (line its line number); the first
// chunk of an update may start without "@@".
func parseChunk(lines []string, line int, first bool) (patchChunk, int, error) {
	var c patchChunk
	start := 0
	switch {
	case lines[0] == patchContextNil:
		start = 1
	case strings.HasPrefix(lines[0], patchContext):
		ctx := lines[0][len(patchContext):]
		c.context, start = &ctx, 1
	case !first:
		return c, 0, &patchError{line: line, msg: fmt.Sprintf("Expected update hunk to start with a @@ context marker, got: '%s'", lines[0])}
	}
	if start >= len(lines) {
		return c, 0, &patchError{line: line + 1, msg: "Update hunk does not contain any lines"}
	}
	n := 0
	for _, l := range lines[start:] {
		if l == patchEOF {
			if n == 0 {
				return c, 0, &patchError{line: line + 1, msg: "Update hunk does not contain any lines"}
			}
			c.eof = true
			n++
			break
		}
		switch {
		case l == "":
			c.old, c.new = append(c.old, ""), append(c.new, "")
		case l[0] == ' ':
			c.old, c.new = append(c.old, l[1:]), append(c.new, l[1:])
		case l[0] == '+':
			c.new = append(c.new, l[1:])
		case l[0] == '-':
			c.old = append(c.old, l[1:])
		default:
			if n == 0 {
				return c, 0, &patchError{line: line + 1, msg: fmt.Sprintf("Unexpected line found in update hunk: '%s'. Every line should start with ' ' (context line), '+' (added line), or '-' (removed line)", l)}
			}
			return c, n + start, nil
		}
		n++
	}
	return c, n + start, nil
}

// applyChunks returns the content chunks make of orig (Codex's: each chunk's old lines
// are sought after the previous chunk's, exactly, then ignoring trailing blanks, then
// blanks at both ends, then common typographic punctuation; a file's content always
// ends with a newline after an update). path names the file in errors.
func applyChunks(orig, path string, chunks []patchChunk) (string, error) {
	lines := strings.Split(orig, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	type repl struct {
		at, n int
		new   []string
	}
	var repls []repl
	at := 0
	for _, c := range chunks {
		if c.context != nil {
			i := seekLines(lines, []string{*c.context}, at, false)
			if i < 0 {
				return "", patchFailure(fmt.Sprintf("Failed to find context '%s' in %s", *c.context, path))
			}
			at = i + 1
		}
		if len(c.old) == 0 {
			ins := len(lines)
			if ins > 0 && lines[ins-1] == "" {
				ins--
			}
			repls = append(repls, repl{ins, 0, c.new})
			continue
		}
		old, new := c.old, c.new
		i := seekLines(lines, old, at, c.eof)
		if i < 0 && old[len(old)-1] == "" {
			old = old[:len(old)-1]
			if len(new) > 0 && new[len(new)-1] == "" {
				new = new[:len(new)-1]
			}
			i = seekLines(lines, old, at, c.eof)
		}
		if i < 0 {
			return "", patchFailure(fmt.Sprintf("Failed to find expected lines in %s:\n%s", path, strings.Join(c.old, "\n")))
		}
		repls = append(repls, repl{i, len(old), new})
		at = i + len(old)
	}
	// Applied from the last to the first, so that each one's place stays where it was
	// found (the replacements are sorted by place first).
	for i := 1; i < len(repls); i++ {
		for j := i; j > 0 && repls[j].at < repls[j-1].at; j-- {
			repls[j], repls[j-1] = repls[j-1], repls[j]
		}
	}
	for i := len(repls) - 1; i >= 0; i-- {
		r := repls[i]
		end := min(r.at+r.n, len(lines))
		lines = append(lines[:r.at:r.at], append(append([]string(nil), r.new...), lines[end:]...)...)
	}
	if len(lines) == 0 || lines[len(lines)-1] != "" {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n"), nil
}

// seekLines is where pattern occurs in lines at or after start (at the end first when eof
// is set), -1 when nowhere, matching ever more loosely (see applyChunks).
func seekLines(lines, pattern []string, start int, eof bool) int {
	if len(pattern) == 0 {
		return start
	}
	if len(pattern) > len(lines) {
		return -1
	}
	from := start
	if eof {
		from = len(lines) - len(pattern)
	}
	for _, norm := range []func(string) string{
		func(s string) string { return s },
		func(s string) string { return strings.TrimRight(s, " \t\r\n\v\f") },
		strings.TrimSpace,
		normalizePunct,
	} {
		for i := from; i <= len(lines)-len(pattern); i++ {
			ok := true
			for j, p := range pattern {
				if norm(lines[i+j]) != norm(p) {
					ok = false
					break
				}
			}
			if ok {
				return i
			}
		}
	}
	return -1
}

// punctReplacer maps typographic dashes, quotes and spaces to their ASCII forms.
var punctReplacer = strings.NewReplacer(
	"\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2013", "-", "\u2014", "-", "\u2015", "-", "\u2212", "-",
	"\u2018", "'", "\u2019", "'", "\u201A", "'", "\u201B", "'",
	"\u201C", `"`, "\u201D", `"`, "\u201E", `"`, "\u201F", `"`,
	"\u00A0", " ", "\u2002", " ", "\u2003", " ", "\u2004", " ", "\u2005", " ", "\u2006", " ",
	"\u2007", " ", "\u2008", " ", "\u2009", " ", "\u200A", " ", "\u202F", " ", "\u205F", " ", "\u3000", " ",
)

func normalizePunct(s string) string { return punctReplacer.Replace(strings.TrimSpace(s)) }

// patchChange is one file change a patch makes, computed before anything is written.
type patchChange struct {
	kind    byte   // 'A', 'M' or 'D', as the summary lists it
	rel     string // the path, relative to the workspace
	shown   string // the path as the patch names it (the move's for a move)
	content string // what the file becomes (A, M)
	from    string // a move's source, relative to the workspace ("" otherwise)
}

// patchFailure is a patch that does not apply, in Codex's words (which start with a
// capital: "Failed to find expected lines in …").
type patchFailure string

func (e patchFailure) Error() string { return string(e) }

// errNotFile marks a path that is not a regular file.
var errNotFile = errors.New("not a file")

// errPatchOutside marks a path outside the workspace.
var errPatchOutside = errors.New("outside the workspace")

// patchRel is path (relative to the workspace, or absolute) relative to the workspace,
// refusing one outside it (after the symlinks of its deepest existing ancestor).
func patchRel(workspace, path string) (string, error) {
	rel, err := workspaceRel(workspace, path)
	var te *tools.Error
	if errors.As(err, &te) && te.Code == CodeOutsideWorkspace {
		return "", fmt.Errorf("%s: %w", path, errPatchOutside)
	}
	return rel, err
}

// readRel reads a workspace file through an os.Root (rel from patchRel).
func readRel(workspace, rel string, max int) (string, error) {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return "", err
	}
	defer root.Close()
	info, err := root.Stat(rel)
	if err != nil {
		return "", err
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("%s: %w", rel, errNotFile)
	}
	if info.Size() > int64(max) {
		return "", fmt.Errorf("%s is larger than %d bytes", rel, max)
	}
	data, err := root.ReadFile(rel)
	return string(data), err
}

// writeRel writes a workspace file through an os.Root, making its directories.
func writeRel(workspace, rel, content string) error {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return err
	}
	defer root.Close()
	if dir := filepath.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return root.WriteFile(rel, []byte(content), 0o644)
}

// removeRel removes a workspace file through an os.Root.
func removeRel(workspace, rel string) error {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return err
	}
	defer root.Close()
	info, err := root.Lstat(rel)
	if err != nil {
		return err
	}
	if info.IsDir() {
		return &fs.PathError{Op: "remove", Path: rel, Err: errors.New("is a directory")}
	}
	return root.Remove(rel)
}
