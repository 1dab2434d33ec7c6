package builtin

import (
	"context"
	"encoding/json"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
)

// renderText is an Output.Render that shows a result value of type T as the one text
// block render makes of it.
func renderText[T any](render func(T) string) func(args, value json.RawMessage) ([]dsh.ContentBlock, error) {
	return func(_, value json.RawMessage) ([]dsh.ContentBlock, error) {
		var r T
		if err := json.Unmarshal(value, &r); err != nil {
			return nil, err
		}
		return []dsh.ContentBlock{dsh.TextBlock{Text: render(r)}}, nil
	}
}

// runWith is a Definition.Run that binds the call's arguments to an In (arguments that
// do not bind fail with CodeBadInput) and returns what run makes of them.
func runWith[In, Out any](run func(ctx context.Context, in In) (Out, error)) func(context.Context, *tools.RunContext) (any, error) {
	return func(ctx context.Context, rc *tools.RunContext) (any, error) {
		var in In
		if err := rc.BindArguments(&in); err != nil {
			return nil, tools.NewError(CodeBadInput, err.Error())
		}
		out, err := run(ctx, in)
		if err != nil {
			return nil, err
		}
		return out, nil
	}
}

// The input shapes of the built-in tools.
type (
	// bashInput is Bash's: Claude Code's schema makes timeout a number (milliseconds) and
	// adds run_in_background and dangerouslyDisableSandbox, which dsh does not honour
	// (see bashUnsupported).
	bashInput struct {
		Command                   string  `json:"command"`
		Timeout                   float64 `json:"timeout"`
		RunInBackground           bool    `json:"run_in_background"`
		DangerouslyDisableSandbox bool    `json:"dangerouslyDisableSandbox"`
	}
	// readInput is Read's: Claude Code's schema adds pages (PDF files, which dsh's Read does
	// not read) and allow_large.
	readInput struct {
		FilePath   string `json:"file_path"`
		Offset     int    `json:"offset"`
		Limit      int    `json:"limit"`
		Pages      string `json:"pages"`
		AllowLarge bool   `json:"allow_large"`
	}
	// writeInput is Write's and the Gemini style's write_file's.
	writeInput struct {
		FilePath string `json:"file_path"`
		Content  string `json:"content"`
	}
	editInput struct {
		FilePath   string `json:"file_path"`
		OldString  string `json:"old_string"`
		NewString  string `json:"new_string"`
		ReplaceAll bool   `json:"replace_all"`
	}
	geminiShellInput struct {
		Command string `json:"command"`
		DirPath string `json:"dir_path"`
	}
	geminiReadInput struct {
		FilePath  string `json:"file_path"`
		StartLine int    `json:"start_line"`
		EndLine   int    `json:"end_line"`
	}
	geminiReplaceInput struct {
		FilePath      string `json:"file_path"`
		OldString     string `json:"old_string"`
		NewString     string `json:"new_string"`
		AllowMultiple bool   `json:"allow_multiple"`
	}
)
