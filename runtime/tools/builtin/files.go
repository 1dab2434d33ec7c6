package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
)

const readSchema = `{
  "type": "object",
  "properties": {
    "file_path": {"type": "string", "description": "The file to read (absolute, or relative to the workspace)."},
    "offset": {"type": "integer", "minimum": 1, "description": "The 1-based line to start at."},
    "limit": {"type": "integer", "minimum": 1, "description": "The number of lines to read."}
  },
  "required": ["file_path"],
  "additionalProperties": false
}`

const writeSchema = `{
  "type": "object",
  "properties": {
    "file_path": {"type": "string", "description": "The file to write (absolute, or relative to the workspace)."},
    "content": {"type": "string", "description": "The complete new content."}
  },
  "required": ["file_path", "content"],
  "additionalProperties": false
}`

const editSchema = `{
  "type": "object",
  "properties": {
    "file_path": {"type": "string", "description": "The file to edit (absolute, or relative to the workspace)."},
    "old_string": {"type": "string", "description": "The exact text to replace; it must occur once unless replace_all is set."},
    "new_string": {"type": "string", "description": "The replacement text; it must differ from old_string."},
    "replace_all": {"type": "boolean", "description": "Replace every occurrence."}
  },
  "required": ["file_path", "old_string", "new_string"],
  "additionalProperties": false
}`

// readResult is Read's value: Claude Code's Read output for a text file.
type readResult struct {
	Type string   `json:"type"` // "text"
	File readFile `json:"file"`
}

type readFile struct {
	FilePath   string `json:"filePath"`
	Content    string `json:"content"`    // the lines read, joined by "\n"
	NumLines   int    `json:"numLines"`   // how many lines were read
	StartLine  int    `json:"startLine"`  // the first line read, from 1
	TotalLines int    `json:"totalLines"` // the file's lines (a final "\n" ends an empty last line)
}

// writeResult is Write's value: Claude Code's Write output.
type writeResult struct {
	Type            string  `json:"type"` // "create" or "update"
	FilePath        string  `json:"filePath"`
	Content         string  `json:"content"`
	StructuredPatch []hunk  `json:"structuredPatch"` // old to new; empty for a new file
	OriginalFile    *string `json:"originalFile"`    // null for a new file
	UserModified    bool    `json:"userModified"`    // always false (no one edits the call)
}

// editResult is Edit's value: Claude Code's Edit output.
type editResult struct {
	FilePath        string `json:"filePath"`
	OldString       string `json:"oldString"`
	NewString       string `json:"newString"`
	OriginalFile    string `json:"originalFile"`
	StructuredPatch []hunk `json:"structuredPatch"`
	UserModified    bool   `json:"userModified"`
	ReplaceAll      bool   `json:"replaceAll"`
}

// text is a file's bytes as text: each run of bytes that is not UTF-8 becomes U+FFFD (as
// Claude Code decodes files), so that a value holding file text is always lossless JSON.
func text(data []byte) string { return strings.ToValidUTF8(string(data), "\uFFFD") }

// fileStateNote is what Claude Code appends to a successful Write or Edit.
const fileStateNote = " (file state is current in your context \u2014 no need to Read it back)"

func read(o Options) tools.Definition {
	return tools.Definition{
		Name:              "Read",
		Description:       "Reads a text file from the workspace. Lines are numbered from 1, like cat -n.",
		InputSchema:       json.RawMessage(readSchema),
		IsConcurrencySafe: func(json.RawMessage) bool { return true },
		Output:            &tools.Output{Render: renderReadValue(o.Style)},
		Run: runWith(func(ctx context.Context, in readInput) (any, error) {
			if in.Pages != "" {
				return readResult{}, tools.NewError(CodeUnsupported, "pages applies to PDF files, which dsh's Read does not read: it reads text files only.")
			}
			if o.Style == StyleClaudeCode && strings.HasSuffix(in.FilePath, ".ipynb") {
				// Claude Code reads a notebook as its cells, the whole notebook whatever
				// the range.
				return readNotebook(o, in.FilePath)
			}
			o := o
			if in.AllowLarge {
				// Claude Code's allow_large: "up to what still fits in your context"; dsh's
				// bound is the size it edits (Options.EditMaxBytes).
				o.ReadMaxBytes = max(o.ReadMaxBytes, o.EditMaxBytes)
			}
			return readLines(ctx, o, in.FilePath, max(in.Offset, 1), in.Limit, in.Offset > 0 || in.Limit > 0)
		}),
	}
}

// renderReadValue renders Read's value: a notebook's cells (notebookRead), else the
// lines read.
func renderReadValue(style Style) func(args, value json.RawMessage) ([]dsh.ContentBlock, error) {
	lines := renderText(func(r readResult) string { return renderRead(r.File, style) })
	return func(args, value json.RawMessage) ([]dsh.ContentBlock, error) {
		var kind struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(value, &kind) == nil && kind.Type == "notebook" {
			var nb notebookRead
			if err := json.Unmarshal(value, &nb); err != nil {
				return nil, err
			}
			return renderNotebook(nb), nil
		}
		return lines(args, value)
	}
}

// readLines reads limit lines (0: Options.ReadLimit) of a workspace file from line start
// (from 1); a read of the whole file (not ranged) larger than Options.ReadMaxBytes fails
// before anything is read.
func readLines(ctx context.Context, o Options, filePath string, start, limit int, ranged bool) (readResult, error) {
	wf, err := openInWorkspace(o.Workspace, filePath, os.O_RDONLY, 0)
	if err != nil {
		return readResult{}, err
	}
	defer wf.f.Close()
	if !ranged && wf.info.Size() > int64(o.ReadMaxBytes) {
		return readResult{}, tooLarge(wf.info.Size(), int64(o.ReadMaxBytes))
	}
	if limit <= 0 {
		limit = o.ReadLimit
	}
	// Lines as Claude Code counts them: split at "\n", so that a final "\n" ends an empty
	// last line and an empty file has one empty line; read while streaming, keeping only
	// the range asked for.
	got, total, err := readRange(ctx, wf.f, start, limit, o.ReadMaxLineLength, int64(o.ReadMaxBytes))
	if err != nil {
		return readResult{}, err
	}
	return readResult{Type: "text", File: readFile{FilePath: filePath, Content: strings.Join(got, "\n"),
		NumLines: len(got), StartLine: start, TotalLines: total}}, nil
}

// renderRead renders the lines Read read: numbered like cat -n (StyleDSH, StyleCodex;
// a final empty line is not shown), or as Claude Code numbers them ("N\tline", then
// trimmed at the end as the engine sends it; an empty file and an offset past the end
// are a warning).
func renderRead(f readFile, style Style) string {
	if style == StyleClaudeCode {
		switch {
		case f.Content != "":
		case f.NumLines >= 1 && f.TotalLines > 1:
			return fmt.Sprint(f.StartLine) // an empty line: "N\t", trimmed
		case f.NumLines >= 1 || f.TotalLines == 0:
			return "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"
		default:
			return fmt.Sprintf("<system-reminder>Warning: the file exists but is shorter than the provided offset (%d). The file has %d lines.</system-reminder>", f.StartLine, f.TotalLines)
		}
		var b strings.Builder
		for i, l := range strings.Split(f.Content, "\n") {
			if i > 0 {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "%d\t%s", f.StartLine+i, strings.TrimSuffix(l, "\r"))
		}
		return strings.TrimRight(b.String(), " \t\n\r")
	}
	lines := strings.Split(f.Content, "\n")
	if f.StartLine-1+len(lines) >= f.TotalLines && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1] // the empty line after the file's final "\n"
	}
	var b strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&b, "%6d\t%s\n", f.StartLine+i, l)
	}
	return b.String()
}

func write(o Options) tools.Definition {
	return tools.Definition{
		Name:        "Write",
		Description: "Writes a file in the workspace, replacing it if it exists and creating missing directories.",
		InputSchema: json.RawMessage(writeSchema),
		Output: &tools.Output{Render: renderText(func(r writeResult) string {
			text := fmt.Sprintf("wrote %d bytes to %s", len(r.Content), r.FilePath)
			if o.Style == StyleClaudeCode {
				if r.Type == "create" {
					text = "File created successfully at: " + r.FilePath + fileStateNote
				} else {
					text = "The file " + r.FilePath + " has been updated successfully." + fileStateNote
				}
			}
			return text
		})},
		Run: func(_ context.Context, rc *tools.RunContext) (any, error) {
			var in writeInput
			if err := rc.BindArguments(&in); err != nil {
				return nil, tools.NewError(CodeBadInput, err.Error())
			}
			return writeFile(o, in.FilePath, in.Content, func() error { return o.checkRead(rc, in.FilePath) })
		},
	}
}

// writeFile makes content the whole of a workspace file, creating it if need be. gate,
// when set, may refuse to replace a file that exists (the read-before-edit rule).
func writeFile(o Options, filePath, content string, gate func() error) (writeResult, error) {
	if len(content) > o.EditMaxBytes {
		return writeResult{}, editTooLarge(filePath, int64(len(content)), int64(o.EditMaxBytes))
	}
	wf, err := openInWorkspace(o.Workspace, filePath, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return writeResult{}, err
	}
	defer wf.f.Close()
	res := writeResult{Type: "create", FilePath: filePath, Content: content, StructuredPatch: []hunk{}}
	if wf.existed && gate != nil {
		if err := gate(); err != nil {
			return writeResult{}, err
		}
	}
	if wf.existed {
		old, err := readForEdit(wf, filePath, o.EditMaxBytes)
		if err != nil {
			return writeResult{}, err
		}
		s := text(old)
		res.Type, res.OriginalFile, res.StructuredPatch = "update", &s, patch(s, content)
	}
	if err := replaceContent(wf.f, []byte(content)); err != nil {
		return writeResult{}, err
	}
	return res, nil
}

func edit(o Options) tools.Definition {
	return tools.Definition{
		Name:        "Edit",
		Description: "Replaces exact text in a workspace file: old_string must occur exactly once, unless replace_all is set.",
		InputSchema: json.RawMessage(editSchema),
		Output: &tools.Output{Render: renderText(func(r editResult) string {
			text := fmt.Sprintf("replaced %d occurrence(s) in %s", 1, r.FilePath)
			if r.ReplaceAll {
				text = fmt.Sprintf("replaced %d occurrence(s) in %s", strings.Count(r.OriginalFile, r.OldString), r.FilePath)
			}
			if o.Style == StyleClaudeCode {
				text = "The file " + r.FilePath + " has been updated successfully." + fileStateNote
				if r.ReplaceAll {
					text = "The file " + r.FilePath + " has been updated. All occurrences were successfully replaced." + fileStateNote
				}
			}
			return text
		})},
		Run: func(_ context.Context, rc *tools.RunContext) (any, error) {
			var in editInput
			if err := rc.BindArguments(&in); err != nil {
				return nil, tools.NewError(CodeBadInput, err.Error())
			}
			r, _, err := editFile(o, in.FilePath, in.OldString, in.NewString, in.ReplaceAll, func() error { return o.checkRead(rc, in.FilePath) })
			if err != nil {
				return nil, err
			}
			return r, nil
		},
	}
}

// editFile replaces old by new in a workspace file: its one occurrence, or every one
// when all is set. found is how many times old occurs (also when the edit fails as
// ambiguous). gate, when set, may refuse the edit once the file is found (the
// read-before-edit rule).
func editFile(o Options, filePath, old, new string, all bool, gate func() error) (r editResult, found int, err error) {
	if old == new {
		return r, 0, tools.NewError(CodeBadInput, "old_string and new_string are identical")
	}
	if old == "" {
		return r, 0, tools.NewError(CodeBadInput, "old_string is empty")
	}
	wf, err := openInWorkspace(o.Workspace, filePath, os.O_RDWR, 0)
	if err != nil {
		return r, 0, err
	}
	defer wf.f.Close()
	if gate != nil {
		if err := gate(); err != nil {
			return r, 0, err
		}
	}
	data, err := readForEdit(wf, filePath, o.EditMaxBytes)
	if err != nil {
		return r, 0, err
	}
	orig := string(data)
	n := strings.Count(orig, old)
	switch {
	case n == 0:
		return r, 0, tools.NewError(CodeEditNoMatch, fmt.Sprintf("old_string not found in %s", filePath))
	case n > 1 && !all:
		return r, n, tools.NewError(CodeEditAmbiguous, fmt.Sprintf("old_string occurs %d times in %s; make it unique or set replace_all", n, filePath))
	}
	replaced := 1
	if all {
		replaced = n
	}
	// The size the edit would leave, computed before building it: a replace_all of a short
	// string by a long one multiplies the file.
	if size := int64(len(orig)) + int64(replaced)*(int64(len(new))-int64(len(old))); size > int64(o.EditMaxBytes) {
		return r, n, editTooLarge(filePath, size, int64(o.EditMaxBytes))
	}
	var updated string
	if all {
		updated = strings.ReplaceAll(orig, old, new)
	} else {
		updated = strings.Replace(orig, old, new, 1)
	}
	if err := replaceContent(wf.f, []byte(updated)); err != nil {
		return r, n, err
	}
	return editResult{FilePath: filePath, OldString: old, NewString: new, OriginalFile: text(data),
		StructuredPatch: patch(text(data), text([]byte(updated))), ReplaceAll: all}, n, nil
}

// replaceContent makes data the whole content of the opened file f (as os.WriteFile
// does to the file it opens, truncating it first) and closes it, reporting the close's
// error: the file is the one the open confined and checked, whatever the path names by
// now.
func replaceContent(f *os.File, data []byte) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		return err
	}
	return f.Close()
}
