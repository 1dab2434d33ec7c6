package builtin

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf16"
)

// GeminiDisplay returns what Gemini CLI 0.61.0's tool of that name shows the user for a
// successful result (the returnDisplay its AfterTool hooks get), from the tool's value in
// StyleGemini and the workspace: for run_shell_command the output (else "Command exited
// with code: N", else ""), for read_file "Read lines A-B of N from PATH" when it read part of
// the file (else ""), for write_file and replace the engine's diff object (fileDiff,
// fileName, filePath, originalContent, newContent, diffStat, isNewFile, isBuildFile), for
// glob, grep_search, list_directory, web_fetch and write_todos the returnDisplay their
// value carries ("Found N matching file(s)", {summary, matches}, {summary, files}, …). ok is
// false for another tool or a value that is not that tool's.
func GeminiDisplay(tool string, value json.RawMessage, workspace string) (display any, ok bool) {
	switch tool {
	case GeminiShell:
		var r bashResult
		if json.Unmarshal(value, &r) != nil {
			return nil, false
		}
		if out := geminiOutput(r); out != "" {
			return out, true
		}
		if r.ExitCode != 0 {
			return fmt.Sprintf("Command exited with code: %d", r.ExitCode), true
		}
		return "", true
	case GeminiRead:
		var r readResult
		if json.Unmarshal(value, &r) != nil || r.Type != "text" {
			return nil, false
		}
		f := r.File
		if f.StartLine == 1 && f.NumLines == f.TotalLines {
			return "", true
		}
		rel, err := filepath.Rel(workspace, f.FilePath)
		if err != nil {
			rel = f.FilePath
		}
		first := min(f.StartLine, f.TotalLines+1)
		return fmt.Sprintf("Read lines %d-%d of %d from %s", first, first+f.NumLines-1, f.TotalLines, filepath.ToSlash(rel)), true
	case GeminiWrite:
		var r writeResult
		if json.Unmarshal(value, &r) != nil || r.FilePath == "" {
			return nil, false
		}
		old := ""
		if r.OriginalFile != nil {
			old = *r.OriginalFile
		}
		return geminiDiff(r.FilePath, old, r.Content, "Original", "Written", r.Type == "create"), true
	case GeminiReplace:
		var r editResult
		if json.Unmarshal(value, &r) != nil || r.FilePath == "" {
			return nil, false
		}
		return geminiDiff(r.FilePath, r.OriginalFile, r.updated(), "Current", "Proposed", false), true
	case GeminiGlob, GeminiGrep, GeminiList, GeminiWebFetch, GeminiWriteTodos, GeminiUpdateTopic:
		var r struct {
			ReturnDisplay json.RawMessage `json:"returnDisplay"`
		}
		if json.Unmarshal(value, &r) != nil || r.ReturnDisplay == nil {
			return nil, false
		}
		return r.ReturnDisplay, true // as it is: its keys in the engine's order
	}
	return nil, false
}

// GeminiFailure returns how Gemini CLI 0.61.0's tool of that name reports a failure with
// the given error code (a Code* constant) and message, as its AfterTool hooks get it: the
// error type, the llmContent and the returnDisplay. ok is false when the engine's tool has
// no such failure (the caller keeps its own words).
func GeminiFailure(tool string, args json.RawMessage, code, message string) (typ, llmContent, display string, ok bool) {
	switch {
	case code == CodeNotFound && tool == GeminiRead:
		return "file_not_found", "Could not read file because no file was found at the specified path.", "File not found.", true
	case code == CodeOutsideWorkspace && (tool == GeminiRead || tool == GeminiWrite || tool == GeminiReplace):
		return "path_not_in_workspace", message, "Error: Path not in workspace.", true
	case code == CodeOutsideWorkspace && (tool == GeminiGlob || tool == GeminiList):
		return "path_not_in_workspace", message, "Path not in workspace.", true
	case code == CodeOutsideWorkspace && tool == GeminiGrep:
		return "path_not_in_workspace", message, "Error: Path not in workspace.", true
	case code == CodeNotFound && tool == GeminiList:
		return "ls_execution_error", message, "Error: Failed to list directory.", true
	case code == CodeNotRegular && tool == GeminiList:
		return "path_is_not_a_directory", message, "Error: Path is not a directory.", true
	case code == CodeWebFetchSkipped && tool == GeminiWebFetch:
		return "web_fetch_processing_error", "Error: " + message, "Error: " + message, true
	case code == CodeWebFetchFailed && tool == GeminiWebFetch:
		return "web_fetch_fallback_failed", "Error: " + message, "Error: " + message, true
	case code == CodeEditNoMatch && tool == GeminiReplace:
		var in geminiReplaceInput
		_ = json.Unmarshal(args, &in)
		return "edit_no_occurrence_found", message, fmt.Sprintf("Error: Could not find an exact match for old_string in '%s'.", in.FilePath), true
	case code == CodeEditAmbiguous && tool == GeminiReplace:
		var n int
		if _, err := fmt.Sscanf(message, "Failed to edit, Expected 1 occurrence but found %d", &n); err != nil {
			return "", "", "", false
		}
		return "edit_expected_occurrence_mismatch", message, fmt.Sprintf("Error: Failed to edit, expected 1 occurrence but found %d.", n), true
	}
	return "", "", "", false
}

// geminiDisplay is the diff object Gemini CLI's write_file and replace show.
type geminiDisplay struct {
	FileDiff        string          `json:"fileDiff"`
	FileName        string          `json:"fileName"`
	FilePath        string          `json:"filePath"`
	OriginalContent string          `json:"originalContent"`
	NewContent      string          `json:"newContent"`
	DiffStat        geminiDiffStats `json:"diffStat"`
	IsNewFile       bool            `json:"isNewFile"`
	IsBuildFile     bool            `json:"isBuildFile"`
}

// geminiDiffStats counts the lines and characters (UTF-16 units, as JavaScript) the model
// added and removed; no user edits the call, so theirs are 0.
type geminiDiffStats struct {
	ModelAddedLines   int `json:"model_added_lines"`
	ModelRemovedLines int `json:"model_removed_lines"`
	ModelAddedChars   int `json:"model_added_chars"`
	ModelRemovedChars int `json:"model_removed_chars"`
	UserAddedLines    int `json:"user_added_lines"`
	UserRemovedLines  int `json:"user_removed_lines"`
	UserAddedChars    int `json:"user_added_chars"`
	UserRemovedChars  int `json:"user_removed_chars"`
}

// geminiDiff builds the diff object: a unified diff (3 lines of context) headed as the
// engine's createPatch heads it.
func geminiDiff(path, old, new, oldLabel, newLabel string, isNew bool) geminiDisplay {
	name := filepath.Base(path)
	var b strings.Builder
	fmt.Fprintf(&b, "Index: %s\n%s\n--- %s\t%s\n+++ %s\t%s\n", name, strings.Repeat("=", 67), name, oldLabel, name, newLabel)
	var st geminiDiffStats
	for _, h := range patch(old, new) {
		fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", h.OldStart, h.OldLines, h.NewStart, h.NewLines)
		for _, l := range h.Lines {
			b.WriteString(l + "\n")
			n := len(utf16.Encode([]rune(l))) - 1
			switch l[0] {
			case '+':
				st.ModelAddedLines, st.ModelAddedChars = st.ModelAddedLines+1, st.ModelAddedChars+n
			case '-':
				st.ModelRemovedLines, st.ModelRemovedChars = st.ModelRemovedLines+1, st.ModelRemovedChars+n
			}
		}
	}
	return geminiDisplay{FileDiff: b.String(), FileName: name, FilePath: path, OriginalContent: old, NewContent: new,
		DiffStat: st, IsNewFile: isNew, IsBuildFile: geminiBuildFile(name)}
}

// geminiBuildFiles are the file names Gemini CLI calls build files.
var geminiBuildFiles = map[string]bool{
	"BUILD": true, "BUILD.bazel": true, "WORKSPACE": true, "WORKSPACE.bazel": true, "MODULE.bazel": true, ".bazelrc": true, ".blazerc": true,
	"Makefile": true, "makefile": true, "GNUmakefile": true, "CMakeLists.txt": true,
	"package.json": true, "package-lock.json": true, "pnpm-lock.yaml": true, "yarn.lock": true, "bun.lockb": true,
	"setup.py": true, "setup.cfg": true, "pyproject.toml": true, "go.mod": true, "go.sum": true, "Cargo.toml": true, "Cargo.lock": true,
	"pom.xml": true, "build.gradle": true, "build.gradle.kts": true, "settings.gradle": true, "settings.gradle.kts": true,
	"Dockerfile": true, "Containerfile": true,
}

// geminiBuildFile reports whether Gemini CLI calls a file of that name a build file.
func geminiBuildFile(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".bzl", ".bazel", ".bzlmod", ".mk", ".cmake":
		return true
	}
	return geminiBuildFiles[name] || strings.HasPrefix(name, "Dockerfile.") || strings.HasPrefix(name, "Containerfile.")
}
