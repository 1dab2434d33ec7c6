package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

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

func read(o Options) tools.Definition {
	return tools.Definition{
		Name:              "Read",
		Description:       "Reads a text file from the workspace. Lines are numbered from 1, like cat -n.",
		InputSchema:       json.RawMessage(readSchema),
		IsConcurrencySafe: func(json.RawMessage) bool { return true },
		Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
			var in struct {
				FilePath string `json:"file_path"`
				Offset   int    `json:"offset"`
				Limit    int    `json:"limit"`
			}
			if err := rc.BindArguments(&in); err != nil {
				return nil, tools.NewError(CodeBadInput, err.Error())
			}
			p, err := resolve(o.Workspace, in.FilePath)
			if err != nil {
				return nil, err
			}
			data, err := os.ReadFile(p)
			if errors.Is(err, fs.ErrNotExist) {
				return nil, tools.NewError(CodeNotFound, fmt.Sprintf("file %s does not exist", in.FilePath))
			}
			if err != nil {
				return nil, err
			}
			start, limit := max(in.Offset, 1), in.Limit
			if limit <= 0 {
				limit = o.ReadLimit
			}
			lines := strings.SplitAfter(string(data), "\n")
			if n := len(lines); n > 0 && lines[n-1] == "" {
				lines = lines[:n-1]
			}
			var b strings.Builder
			for i := start - 1; i < len(lines) && i < start-1+limit; i++ {
				fmt.Fprintf(&b, "%6d\t%s", i+1, strings.TrimSuffix(lines[i], "\n"))
				b.WriteByte('\n')
			}
			return b.String(), nil
		},
	}
}

func write(o Options) tools.Definition {
	return tools.Definition{
		Name:        "Write",
		Description: "Writes a file in the workspace, replacing it if it exists and creating missing directories.",
		InputSchema: json.RawMessage(writeSchema),
		Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
			var in struct {
				FilePath string `json:"file_path"`
				Content  string `json:"content"`
			}
			if err := rc.BindArguments(&in); err != nil {
				return nil, tools.NewError(CodeBadInput, err.Error())
			}
			p, err := resolve(o.Workspace, in.FilePath)
			if err != nil {
				return nil, err
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(p, []byte(in.Content), 0o644); err != nil {
				return nil, err
			}
			return fmt.Sprintf("wrote %d bytes to %s", len(in.Content), in.FilePath), nil
		},
	}
}

func edit(o Options) tools.Definition {
	return tools.Definition{
		Name:        "Edit",
		Description: "Replaces exact text in a workspace file: old_string must occur exactly once, unless replace_all is set.",
		InputSchema: json.RawMessage(editSchema),
		Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
			var in struct {
				FilePath   string `json:"file_path"`
				OldString  string `json:"old_string"`
				NewString  string `json:"new_string"`
				ReplaceAll bool   `json:"replace_all"`
			}
			if err := rc.BindArguments(&in); err != nil {
				return nil, tools.NewError(CodeBadInput, err.Error())
			}
			if in.OldString == in.NewString {
				return nil, tools.NewError(CodeBadInput, "old_string and new_string are identical")
			}
			if in.OldString == "" {
				return nil, tools.NewError(CodeBadInput, "old_string is empty")
			}
			p, err := resolve(o.Workspace, in.FilePath)
			if err != nil {
				return nil, err
			}
			data, err := os.ReadFile(p)
			if errors.Is(err, fs.ErrNotExist) {
				return nil, tools.NewError(CodeNotFound, fmt.Sprintf("file %s does not exist", in.FilePath))
			}
			if err != nil {
				return nil, err
			}
			text := string(data)
			n := strings.Count(text, in.OldString)
			switch {
			case n == 0:
				return nil, tools.NewError(CodeEditNoMatch, fmt.Sprintf("old_string not found in %s", in.FilePath))
			case n > 1 && !in.ReplaceAll:
				return nil, tools.NewError(CodeEditAmbiguous, fmt.Sprintf("old_string occurs %d times in %s; make it unique or set replace_all", n, in.FilePath))
			}
			if in.ReplaceAll {
				text = strings.ReplaceAll(text, in.OldString, in.NewString)
			} else {
				text = strings.Replace(text, in.OldString, in.NewString, 1)
			}
			info, err := os.Stat(p)
			if err != nil {
				return nil, err
			}
			if err := os.WriteFile(p, []byte(text), info.Mode().Perm()); err != nil {
				return nil, err
			}
			return fmt.Sprintf("replaced %d occurrence(s) in %s", map[bool]int{true: n, false: 1}[in.ReplaceAll], in.FilePath), nil
		},
	}
}
