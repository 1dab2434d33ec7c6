package builtin_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// value returns a successful result's value, compacted.
func value(t *testing.T, r tools.Result) string {
	t.Helper()
	s, ok := r.Outcome.(dsh.ToolSuccess)
	if !ok {
		t.Fatalf("not a success: %+v", r.Outcome)
	}
	var v any
	if err := json.Unmarshal(s.Value, &v); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(v)
	return string(data)
}

// TestFileToolValues: Read, Write and Edit return Claude Code's output shapes (as the
// engine sent them to a PostToolUse hook in the differential suite's post/file-tools),
// in the styles that offer them (Codex's toolset has no such tools).
func TestFileToolValues(t *testing.T) {
	for _, style := range []builtin.Style{builtin.StyleDSH, builtin.StyleClaudeCode} {
		name := string(style)
		if name == "" {
			name = "dsh"
		}
		t.Run(name, func(t *testing.T) {
			rt, ws := setup(t, builtin.Options{Style: style})
			p := filepath.Join(ws, "notes.txt")
			q, _ := json.Marshal(p)
			checks := []struct{ tool, args, want string }{
				{"Write", `{"file_path":` + string(q) + `,"content":"alpha\nbeta\n"}`,
					`{"content":"alpha\nbeta\n","filePath":` + string(q) + `,"originalFile":null,"structuredPatch":[],"type":"create","userModified":false}`},
				{"Read", `{"file_path":` + string(q) + `}`,
					`{"file":{"content":"alpha\nbeta\n","filePath":` + string(q) + `,"numLines":3,"startLine":1,"totalLines":3},"type":"text"}`},
				{"Read", `{"file_path":` + string(q) + `,"offset":2,"limit":1}`,
					`{"file":{"content":"beta","filePath":` + string(q) + `,"numLines":1,"startLine":2,"totalLines":3},"type":"text"}`},
				{"Edit", `{"file_path":` + string(q) + `,"old_string":"beta","new_string":"gamma"}`,
					`{"filePath":` + string(q) + `,"newString":"gamma","oldString":"beta","originalFile":"alpha\nbeta\n","replaceAll":false,` +
						`"structuredPatch":[{"lines":[" alpha","-beta","+gamma"],"newLines":2,"newStart":1,"oldLines":2,"oldStart":1}],"userModified":false}`},
				{"Write", `{"file_path":"notes.txt","content":"alpha\ngamma\ndelta"}`,
					`{"content":"alpha\ngamma\ndelta","filePath":"notes.txt","originalFile":"alpha\ngamma\n",` +
						`"structuredPatch":[{"lines":[" alpha"," gamma","+delta","\\ No newline at end of file"],"newLines":3,"newStart":1,"oldLines":2,"oldStart":1}],"type":"update","userModified":false}`},
			}
			for _, c := range checks {
				if got := value(t, run(t, rt, c.tool, c.args)); got != c.want {
					t.Errorf("%s %s:\n got %s\nwant %s", c.tool, c.args, got, c.want)
				}
			}
		})
	}
}

// TestClaudeCodeStyle: the words of Claude Code's tools, and its Bash failing on a
// non-zero exit with "Exit code N" and the output, without dsh's "Error: ".
func TestClaudeCodeStyle(t *testing.T) {
	rt, ws := setup(t, builtin.Options{Style: builtin.StyleClaudeCode})
	p := filepath.Join(ws, "notes.txt")
	q, _ := json.Marshal(p)
	const note = " (file state is current in your context — no need to Read it back)"
	for _, c := range []struct{ tool, args, want string }{
		{"Write", `{"file_path":` + string(q) + `,"content":"alpha\nbeta\n"}`, "File created successfully at: " + p + note},
		{"Read", `{"file_path":` + string(q) + `}`, "1\talpha\n2\tbeta\n3"},
		{"Read", `{"file_path":` + string(q) + `,"offset":2,"limit":1}`, "2\tbeta"},
		{"Read", `{"file_path":` + string(q) + `,"offset":9}`, "<system-reminder>Warning: the file exists but is shorter than the provided offset (9). The file has 3 lines.</system-reminder>"},
		{"Edit", `{"file_path":` + string(q) + `,"old_string":"beta","new_string":"gamma"}`, "The file " + p + " has been updated successfully." + note},
		{"Edit", `{"file_path":"notes.txt","old_string":"a","new_string":"A","replace_all":true}`, "The file notes.txt has been updated. All occurrences were successfully replaced." + note},
		{"Write", `{"file_path":"notes.txt","content":""}`, "The file notes.txt has been updated successfully." + note},
		{"Read", `{"file_path":"notes.txt"}`, "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"},
		{"Bash", `{"command":"true"}`, "(Bash completed with no output)"},
		{"Bash", `{"command":"echo out; echo err >&2"}`, "out\nerr\n"},
	} {
		r := run(t, rt, c.tool, c.args)
		if r.IsError() || text(r) != c.want {
			t.Errorf("%s %s = %q (error %v), want %q", c.tool, c.args, text(r), r.IsError(), c.want)
		}
	}
	if data, _ := os.ReadFile(p); string(data) != "" {
		t.Errorf("file = %q", data)
	}
	r := run(t, rt, "Bash", `{"command":"touch ran; echo bad >&2; exit 3"}`)
	f, ok := r.Outcome.(dsh.ToolFailure)
	if !ok || errCode(r) != builtin.CodeBashExit || f.Error.Message != "Exit code 3\nbad" || text(r) != "Exit code 3\nbad" {
		t.Errorf("failing command: %+v, text %q", r.Outcome, text(r))
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); err != nil {
		t.Errorf("the failing command did not run: %v", err)
	}
	if r := run(t, rt, "Bash", `{"command":"exit 5"}`); text(r) != "Exit code 5" {
		t.Errorf("failing without output: %q", text(r))
	}
	// Other failures keep dsh's "Error: ".
	if r := run(t, rt, "Read", `{"file_path":"missing.txt"}`); !strings.HasPrefix(text(r), "Error: ") {
		t.Errorf("missing file: %q", text(r))
	}
}

// TestBadStyle: an unknown style is an error naming it.
func TestBadStyle(t *testing.T) {
	_, err := builtin.Definitions(builtin.Options{Workspace: t.TempDir(), Style: "zsh"})
	if err == nil || !strings.Contains(err.Error(), `"zsh"`) {
		t.Errorf("err = %v", err)
	}
}

// TestNotUTF8: a file whose bytes are not all UTF-8 reads, and is written over and edited,
// with U+FFFD for those bytes in the values (a value must be lossless JSON); the file
// itself keeps the bytes Edit did not touch.
func TestNotUTF8(t *testing.T) {
	rt, ws := setup(t, builtin.Options{Style: builtin.StyleClaudeCode})
	p := filepath.Join(ws, "b.bin")
	if err := os.WriteFile(p, []byte("a\xffb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := value(t, run(t, rt, "Read", `{"file_path":"b.bin"}`)); !strings.Contains(got, `"content":"a�b\n"`) {
		t.Errorf("Read = %s", got)
	}
	if got := value(t, run(t, rt, "Edit", `{"file_path":"b.bin","old_string":"a","new_string":"c"}`)); !strings.Contains(got, `"originalFile":"a�b\n"`) {
		t.Errorf("Edit = %s", got)
	}
	if data, _ := os.ReadFile(p); string(data) != "c\xffb\n" {
		t.Errorf("after Edit: %q", data)
	}
	if got := value(t, run(t, rt, "Write", `{"file_path":"b.bin","content":"x"}`)); !strings.Contains(got, `"originalFile":"c�b\n"`) {
		t.Errorf("Write = %s", got)
	}
}

// TestBashNotUTF8: output bytes that are not UTF-8 (binary output, a cut multi-byte
// character) read as U+FFFD, in the value and in every style, instead of failing the call
// for a value that is not lossless JSON.
func TestBashNotUTF8(t *testing.T) {
	for _, style := range []builtin.Style{builtin.StyleDSH, builtin.StyleClaudeCode} {
		name := string(style)
		if name == "" {
			name = "dsh"
		}
		t.Run(name, func(t *testing.T) {
			rt, _ := setup(t, builtin.Options{Style: style})
			r := run(t, rt, "Bash", `{"command":"printf 'a\\377b'; printf 'c\\303' >&2"}`)
			if got := value(t, r); !strings.Contains(got, `"stdout":"a\ufffdb"`) && !strings.Contains(got, `"stdout":"a�b"`) {
				t.Fatalf("Bash value = %s", got)
			}
			if got := value(t, r); !strings.Contains(got, `"stderr":"c\ufffd"`) && !strings.Contains(got, `"stderr":"c�"`) {
				t.Errorf("Bash value = %s", got)
			}
		})
	}
}

// TestClaudeCodeExitContentReplaced: a content a tools/post-execute listener gave the
// failure of a failing command stays as the listener wrote it.
func TestClaudeCodeExitContentReplaced(t *testing.T) {
	reg := tools.NewRegistry()
	if _, err := builtin.Register(reg, builtin.Options{Workspace: t.TempDir(), Style: builtin.StyleClaudeCode}); err != nil {
		t.Fatal(err)
	}
	hooks := dsh.NewRegistry()
	hooks.Plugin("p").OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		return dsh.PostToolAccept{Content: []dsh.ContentBlock{dsh.TextBlock{Text: "replaced"}}}, nil
	})
	r := run(t, tools.New(reg, hooks), "Bash", `{"command":"exit 3"}`)
	if errCode(r) != builtin.CodeBashExit || text(r) != "replaced" {
		t.Errorf("%+v, text %q", r.Outcome, text(r))
	}
}
