package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
)

// The Gemini style's tool names (Gemini CLI 0.61.0's).
const (
	GeminiShell   = "run_shell_command"
	GeminiRead    = "read_file"
	GeminiWrite   = "write_file"
	GeminiReplace = "replace"
)

// ToolNames returns the names the four built-in tools have in a style, in the order
// shell, read, write, edit: Bash, Read, Write, Edit, or under StyleGemini
// run_shell_command, read_file, write_file, replace.
func ToolNames(s Style) [4]string {
	if s == StyleGemini {
		return [4]string{GeminiShell, GeminiRead, GeminiWrite, GeminiReplace}
	}
	return [4]string{"Bash", "Read", "Write", "Edit"}
}

// geminiImpl makes a Gemini-style tool's definition: the tool as mk builds it, its
// failures read as their message alone (the Gemini wire sends it as the function
// response's "error"). Its name, description and schema come from the toolset row
// (spec/toolsets/gemini.json, recorded from Gemini CLI 0.61.0).
func geminiImpl(mk func(Options) tools.Definition) func(Options) tools.Definition {
	return func(o Options) tools.Definition {
		d := mk(o)
		d.FinalizeContent = plainFailure
		return d
	}
}

// plainFailure shows a failed call's message without dsh's "Error: " (a content a
// listener replaced stays as it is).
func plainFailure(_ dsh.ToolExecution, result dsh.ToolExecutionResult) ([]dsh.ContentBlock, error) {
	f, ok := result.(dsh.ToolFailure)
	if !ok || len(f.Content) != 1 {
		return nil, nil
	}
	if t, ok := f.Content[0].(dsh.TextBlock); ok && t.Text == "Error: "+f.Error.Message {
		return []dsh.ContentBlock{dsh.TextBlock{Text: f.Error.Message}}, nil
	}
	return nil, nil
}

func geminiShell(o Options) tools.Definition {
	return tools.Definition{
		Name:   GeminiShell,
		Output: &tools.Output{Render: renderText(renderGeminiShell), PresentationMeta: bashMeta},
		Run: runWith(func(ctx context.Context, in geminiShellInput) (bashResult, error) {
			ro := o
			if in.DirPath != "" {
				dir, err := resolve(o.Workspace, in.DirPath)
				if err != nil {
					return bashResult{}, geminiFileError(err, in.DirPath, o.Workspace)
				}
				if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
					return bashResult{}, tools.NewError(CodeBadInput, "Directory '"+in.DirPath+"' does not exist.")
				}
				ro.Workspace = dir
			}
			return runBash(ctx, ro, in.Command, o.BashTimeout)
		}),
	}
}

// renderGeminiShell is Gemini CLI's shell result: the output (stdout then stderr; the
// engine merges them as they come) trimmed, or "(empty)", the exit code when it is not
// 0, and the process group, inside <untrusted_context>.
func renderGeminiShell(r bashResult) string {
	out := geminiOutput(r)
	if out == "" {
		out = "(empty)"
	}
	var b strings.Builder
	b.WriteString("<untrusted_context>\nOutput: " + out + "\n")
	if r.ExitCode != 0 {
		fmt.Fprintf(&b, "Exit Code: %d\n", r.ExitCode)
	}
	if r.PGID != 0 {
		fmt.Fprintf(&b, "Process Group PGID: %d\n", r.PGID)
	}
	b.WriteString("</untrusted_context>")
	return b.String()
}

// geminiOutput is a command's output as Gemini CLI shows it: stdout then stderr, trimmed
// (with dsh's truncation note).
func geminiOutput(r bashResult) string {
	out := r.Stdout
	if r.Stderr != "" {
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		out += r.Stderr
	}
	out = strings.TrimSpace(out)
	if r.OutputTruncated {
		out += "\n[output truncated]"
	}
	return out
}

func geminiRead(o Options) tools.Definition {
	return tools.Definition{
		Name:              GeminiRead,
		IsConcurrencySafe: func(json.RawMessage) bool { return true },
		Output:            &tools.Output{Render: renderText(func(r readResult) string { return renderGeminiRead(r.File) })},
		Run: runWith(func(ctx context.Context, in geminiReadInput) (readResult, error) {
			start, limit := max(in.StartLine, 1), 0
			if in.EndLine > 0 {
				if in.EndLine < start {
					return readResult{}, tools.NewError(CodeBadInput, "end_line must be greater than or equal to start_line")
				}
				limit = in.EndLine - start + 1
			}
			r, err := readLines(ctx, o, in.FilePath, start, limit, in.StartLine > 0 || in.EndLine > 0)
			return r, geminiFileError(err, in.FilePath, o.Workspace)
		}),
	}
}

// renderGeminiRead is Gemini CLI's read_file result: the text as it is when the whole
// file was read, else a note of the lines shown and where to go on, then the text.
func renderGeminiRead(f readFile) string {
	if f.StartLine == 1 && f.NumLines == f.TotalLines {
		return f.Content
	}
	first := min(f.StartLine, f.TotalLines+1)
	last := first + f.NumLines - 1
	return fmt.Sprintf("\nIMPORTANT: The file content has been truncated.\nStatus: Showing lines %d-%d of %d total lines.\n"+
		"Action: To read more of the file, you can use the 'start_line' and 'end_line' parameters in a subsequent 'read_file' call. "+
		"For example, to read the next section of the file, use start_line: %d.\n\n--- FILE CONTENT (truncated) ---\n%s",
		first, last, f.TotalLines, last+1, f.Content)
}

func geminiWrite(o Options) tools.Definition {
	return tools.Definition{
		Name: GeminiWrite,
		Output: &tools.Output{Render: renderText(func(r writeResult) string {
			text := "Successfully overwrote file: " + r.FilePath
			if r.Type == "create" {
				text = "Successfully created and wrote to new file: " + r.FilePath
			}
			return text + ". Here is the updated code:\n" + r.Content
		})},
		Run: runWith(func(_ context.Context, in writeInput) (writeResult, error) {
			r, err := writeFile(o, in.FilePath, in.Content, nil)
			return r, geminiFileError(err, in.FilePath, o.Workspace)
		}),
	}
}

func geminiReplace(o Options) tools.Definition {
	return tools.Definition{
		Name: GeminiReplace,
		Output: &tools.Output{Render: renderText(func(r editResult) string {
			n := 1
			if r.ReplaceAll {
				n = strings.Count(r.OriginalFile, r.OldString)
			}
			return fmt.Sprintf("Successfully modified file: %s (%d replacements). Here is the updated code:\n%s", r.FilePath, n, r.updated())
		})},
		Run: runWith(func(_ context.Context, in geminiReplaceInput) (editResult, error) {
			r, found, err := editFile(o, in.FilePath, in.OldString, in.NewString, in.AllowMultiple, nil)
			var te *tools.Error
			if errors.As(err, &te) {
				switch te.Code {
				case CodeEditNoMatch:
					return r, tools.NewError(te.Code, fmt.Sprintf("Could not find an exact match for 'old_string' in '%s'. If previous edits modified the file "+
						"or you are modifying lines outside your recent read window, please use ReadFile to inspect the target lines before retrying "+
						"with an exact 'old_string'.", in.FilePath))
				case CodeEditAmbiguous:
					return r, tools.NewError(te.Code, fmt.Sprintf("Failed to edit, Expected 1 occurrence but found %d for old_string in file: %s. "+
						"If you intended to replace multiple occurrences, set 'allow_multiple' to true.", found, in.FilePath))
				}
			}
			return r, geminiFileError(err, in.FilePath, o.Workspace)
		}),
	}
}

// geminiFileError words the file errors as Gemini CLI does ("File not found: PATH",
// "Path not in workspace: …"); other errors (and nil) are returned as they are.
func geminiFileError(err error, path, workspace string) error {
	var te *tools.Error
	if !errors.As(err, &te) {
		return err
	}
	switch te.Code {
	case CodeNotFound:
		return tools.NewError(te.Code, "File not found: "+path)
	case CodeOutsideWorkspace:
		return tools.NewError(te.Code, fmt.Sprintf("Path not in workspace: Attempted path %q resolves outside the allowed workspace directories: %s", path, workspace))
	}
	return err
}

// updated is the file's text after the edit.
func (r editResult) updated() string {
	if r.ReplaceAll {
		return strings.ReplaceAll(r.OriginalFile, r.OldString, r.NewString)
	}
	return strings.Replace(r.OriginalFile, r.OldString, r.NewString, 1)
}
