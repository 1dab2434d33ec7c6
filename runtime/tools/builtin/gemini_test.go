package builtin_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// TestGeminiStyle: Gemini CLI's tool names, inputs and words, as Gemini CLI 0.61.0 sent
// them to the model in the differential suite's gemini/tools/* cases (paths aside).
func TestGeminiStyle(t *testing.T) {
	rt, ws := setup(t, builtin.Options{Style: builtin.StyleGemini})
	p := filepath.Join(ws, "notes.txt")
	q, _ := json.Marshal(p)
	f := string(q)
	const more = "Action: To read more of the file, you can use the 'start_line' and 'end_line' parameters in a subsequent 'read_file' call. " +
		"For example, to read the next section of the file, use start_line: 4.\n\n--- FILE CONTENT (truncated) ---\n"
	for _, c := range []struct {
		tool, args, want string
		isErr            bool
	}{
		{"write_file", `{"file_path":` + f + `,"content":"alpha\nbeta\ngamma\nbeta\n"}`,
			"Successfully created and wrote to new file: " + p + ". Here is the updated code:\nalpha\nbeta\ngamma\nbeta\n", false},
		{"read_file", `{"file_path":` + f + `}`, "alpha\nbeta\ngamma\nbeta\n", false},
		{"read_file", `{"file_path":` + f + `,"start_line":2,"end_line":3}`,
			"\nIMPORTANT: The file content has been truncated.\nStatus: Showing lines 2-3 of 5 total lines.\n" + more + "beta\ngamma", false},
		{"replace", `{"file_path":` + f + `,"instruction":"rename alpha","old_string":"alpha","new_string":"ALPHA"}`,
			"Successfully modified file: " + p + " (1 replacements). Here is the updated code:\nALPHA\nbeta\ngamma\nbeta\n", false},
		{"replace", `{"file_path":` + f + `,"instruction":"rename beta","old_string":"beta","new_string":"BETA","allow_multiple":true}`,
			"Successfully modified file: " + p + " (2 replacements). Here is the updated code:\nALPHA\nBETA\ngamma\nBETA\n", false},
		{"replace", `{"file_path":` + f + `,"instruction":"change","old_string":"BETA","new_string":"x"}`,
			"Failed to edit, Expected 1 occurrence but found 2 for old_string in file: " + p + ". If you intended to replace multiple occurrences, set 'allow_multiple' to true.", true},
		{"replace", `{"file_path":` + f + `,"instruction":"change","old_string":"zeta","new_string":"x"}`,
			"Could not find an exact match for 'old_string' in '" + p + "'. If previous edits modified the file or you are modifying lines outside your " +
				"recent read window, please use ReadFile to inspect the target lines before retrying with an exact 'old_string'.", true},
		{"write_file", `{"file_path":` + f + `,"content":"x\nx\n"}`, "Successfully overwrote file: " + p + ". Here is the updated code:\nx\nx\n", false},
		{"read_file", `{"file_path":` + f + `,"start_line":9}`,
			"\nIMPORTANT: The file content has been truncated.\nStatus: Showing lines 4-3 of 3 total lines.\n" + more, false},
		{"read_file", `{"file_path":"missing.txt"}`, "File not found: missing.txt", true},
		{"write_file", `{"file_path":"/etc/dsh-outside.txt","content":"no"}`,
			`Path not in workspace: Attempted path "/etc/dsh-outside.txt" resolves outside the allowed workspace directories: ` + ws, true},
	} {
		r := run(t, rt, c.tool, c.args)
		if r.IsError() != c.isErr || text(r) != c.want {
			t.Errorf("%s %s = %q (error %v), want %q (error %v)", c.tool, c.args, text(r), r.IsError(), c.want, c.isErr)
		}
	}
	if _, err := os.Stat("/etc/dsh-outside.txt"); err == nil {
		t.Error("write_file wrote outside the workspace")
	}
	// The shell: stdout and stderr, trimmed, the exit code when not 0 (not a failure),
	// "(empty)", the process group.
	shell := regexp.MustCompile(`^<untrusted_context>\nOutput: ((?s).*?)\n(Exit Code: \d+\n)?Process Group PGID: [1-9]\d*\n</untrusted_context>$`)
	for cmd, want := range map[string][2]string{
		"true":                   {"(empty)", ""},
		"echo out; echo err >&2": {"out\nerr", ""},
		"printf 'no newline'":    {"no newline", ""},
		"echo partial; exit 5":   {"partial", "Exit Code: 5\n"},
	} {
		args, _ := json.Marshal(map[string]string{"command": cmd, "description": "run"})
		r := run(t, rt, "run_shell_command", string(args))
		m := shell.FindStringSubmatch(text(r))
		if r.IsError() || m == nil || m[1] != want[0] || m[2] != want[1] {
			t.Errorf("run_shell_command %q = %q (error %v)", cmd, text(r), r.IsError())
		}
	}
	// dir_path runs in a directory of the workspace, never outside it.
	if err := os.Mkdir(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := run(t, rt, "run_shell_command", `{"command":"pwd","dir_path":"sub"}`); !regexp.MustCompile(`Output: .*/sub\n`).MatchString(text(r)) {
		t.Errorf("dir_path: %q", text(r))
	}
	if r := run(t, rt, "run_shell_command", `{"command":"touch ran","dir_path":"/tmp"}`); !r.IsError() || errCode(r) != builtin.CodeOutsideWorkspace {
		t.Errorf("dir_path outside: %q %v", text(r), r.Outcome)
	}
	if names := builtin.ToolNames(builtin.StyleGemini); names != [4]string{"run_shell_command", "read_file", "write_file", "replace"} {
		t.Errorf("ToolNames = %v", names)
	}
	if names := builtin.ToolNames(builtin.StyleClaudeCode); names != [4]string{"Bash", "Read", "Write", "Edit"} {
		t.Errorf("ToolNames = %v", names)
	}
}

// TestGeminiDisplay: what Gemini CLI 0.61.0's tools showed its AfterTool hooks
// (returnDisplay, and a failure's type and words) in the differential suite's
// gemini/tools/* cases, from the Gemini style's values and failures.
func TestGeminiDisplay(t *testing.T) {
	rt, ws := setup(t, builtin.Options{Style: builtin.StyleGemini})
	p := filepath.Join(ws, "notes.txt")
	q, _ := json.Marshal(p)
	f := string(q)
	head := func(old, new string) string {
		return "Index: notes.txt\n===================================================================\n--- notes.txt\t" + old + "\n+++ notes.txt\t" + new + "\n"
	}
	stat := func(a, r, ac, rc int) string {
		return fmt.Sprintf(`{"model_added_lines":%d,"model_removed_lines":%d,"model_added_chars":%d,"model_removed_chars":%d,"user_added_lines":0,"user_removed_lines":0,"user_added_chars":0,"user_removed_chars":0}`, a, r, ac, rc)
	}
	diff := func(d, o, n, st string, isNew bool) string {
		data, _ := json.Marshal(map[string]any{"fileDiff": d, "fileName": "notes.txt", "filePath": p, "originalContent": o, "newContent": n,
			"diffStat": json.RawMessage(st), "isNewFile": isNew, "isBuildFile": false})
		return string(data)
	}
	for _, c := range []struct{ tool, args, want string }{
		{"write_file", `{"file_path":` + f + `,"content":"alpha\nbeta\ngamma\nbeta\n"}`,
			diff(head("Original", "Written")+"@@ -0,0 +1,4 @@\n+alpha\n+beta\n+gamma\n+beta\n", "", "alpha\nbeta\ngamma\nbeta\n", stat(4, 0, 18, 0), true)},
		{"read_file", `{"file_path":` + f + `}`, `""`},
		{"read_file", `{"file_path":` + f + `,"start_line":2,"end_line":3}`, `"Read lines 2-3 of 5 from notes.txt"`},
		{"replace", `{"file_path":` + f + `,"instruction":"i","old_string":"alpha","new_string":"ALPHA"}`,
			diff(head("Current", "Proposed")+"@@ -1,4 +1,4 @@\n-alpha\n+ALPHA\n beta\n gamma\n beta\n", "alpha\nbeta\ngamma\nbeta\n", "ALPHA\nbeta\ngamma\nbeta\n", stat(1, 1, 5, 5), false)},
		{"write_file", `{"file_path":` + f + `,"content":"one\n"}`,
			diff(head("Original", "Written")+"@@ -1,4 +1,1 @@\n-ALPHA\n-beta\n-gamma\n-beta\n+one\n", "ALPHA\nbeta\ngamma\nbeta\n", "one\n", stat(1, 4, 3, 18), false)},
		{"run_shell_command", `{"command":"echo out; echo err >&2"}`, `"out\nerr"`},
		{"run_shell_command", `{"command":"exit 3"}`, `"Command exited with code: 3"`},
	} {
		r := run(t, rt, c.tool, c.args)
		s, ok := r.Outcome.(dsh.ToolSuccess)
		if !ok {
			t.Fatalf("%s %s: %s", c.tool, c.args, text(r))
		}
		d, ok := builtin.GeminiDisplay(c.tool, s.Value, ws)
		norm := func(data []byte) string { // keys sorted
			var v any
			_ = json.Unmarshal(data, &v)
			out, _ := json.Marshal(v)
			return string(out)
		}
		if got, _ := json.Marshal(d); !ok || norm(got) != norm([]byte(c.want)) {
			t.Errorf("%s %s: display %s (%v), want %s", c.tool, c.args, got, ok, c.want)
		}
	}
	for _, c := range []struct{ tool, args, want string }{
		{"read_file", `{"file_path":"missing.txt"}`, "file_not_found|Could not read file because no file was found at the specified path.|File not found."},
		{"replace", `{"file_path":` + f + `,"instruction":"i","old_string":"zeta","new_string":"x"}`,
			"edit_no_occurrence_found|Could not find an exact match for 'old_string' in '" + p + "'. If previous edits modified the file or you are modifying lines outside your " +
				"recent read window, please use ReadFile to inspect the target lines before retrying with an exact 'old_string'.|Error: Could not find an exact match for old_string in '" + p + "'."},
	} {
		r := run(t, rt, c.tool, c.args)
		fl, ok := r.Outcome.(dsh.ToolFailure)
		if !ok {
			t.Fatalf("%s %s succeeded", c.tool, c.args)
		}
		typ, llm, disp, ok := builtin.GeminiFailure(c.tool, json.RawMessage(c.args), errCode(r), fl.Error.Message)
		if got := typ + "|" + llm + "|" + disp; !ok || got != c.want {
			t.Errorf("%s %s: %q (%v), want %q", c.tool, c.args, got, ok, c.want)
		}
	}
	run(t, rt, "write_file", `{"file_path":`+f+`,"content":"x\nx\n"}`)
	r := run(t, rt, "replace", `{"file_path":`+f+`,"instruction":"i","old_string":"x","new_string":"y"}`)
	fl, _ := r.Outcome.(dsh.ToolFailure)
	typ, _, disp, ok := builtin.GeminiFailure("replace", nil, errCode(r), fl.Error.Message)
	if !ok || typ != "edit_expected_occurrence_mismatch" || disp != "Error: Failed to edit, expected 1 occurrence but found 2." {
		t.Errorf("ambiguous: %s %q %v", typ, disp, ok)
	}
}
