package builtin_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// searchTree writes the files of the gemini/tools/search differential case, a second
// apart (newest last), plus a file under node_modules, a binary file and a link leading
// outside.
func searchTree(t *testing.T, ws string) {
	t.Helper()
	now := time.Now()
	for i, f := range []struct{ name, content string }{
		{"src/a.txt", "alpha\nbeta\nAlpha again\n"},
		{"src/b.md", "no match here\nbeta\n"},
		{".hidden/c.txt", "alpha\n"},
		{"node_modules/d.txt", "alpha\n"},
		{"data/bin.dat", "alpha\x00\x01\n"},
	} {
		p := filepath.Join(ws, f.name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.content), 0o644); err != nil {
			t.Fatal(err)
		}
		mt := now.Add(time.Duration(i-10) * time.Second)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("alpha secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(ws, "src", "link.txt")); err != nil {
		t.Fatal(err)
	}
}

// TestGeminiSearchTools: glob, grep_search and list_directory as Gemini CLI 0.61.0
// answered the differential suite's gemini/tools/search case (paths aside), and their
// refusals of paths outside the workspace and of bad patterns.
func TestGeminiSearchTools(t *testing.T) {
	rt, ws := setup(t, builtin.Options{Style: builtin.StyleGemini})
	ws, _ = filepath.EvalSymlinks(ws)
	searchTree(t, ws)
	a, b, c := filepath.Join(ws, "src/a.txt"), filepath.Join(ws, "src/b.md"), filepath.Join(ws, ".hidden/c.txt")
	var ctxLines strings.Builder
	for _, c := range []struct {
		tool, args, want string
		isErr            bool
	}{
		{"glob", `{"pattern":"**/*.txt"}`, "Found 2 file(s) matching \"**/*.txt\" within " + ws + ", sorted by modification time (newest first):\n" + c + "\n" + a, false},
		{"glob", `{"pattern":"src/*.{txt,md}"}`, "Found 2 file(s) matching \"src/*.{txt,md}\" within " + ws + ", sorted by modification time (newest first):\n" + b + "\n" + a, false},
		{"glob", `{"pattern":"SRC/A.TXT"}`, "Found 1 file(s) matching \"SRC/A.TXT\" within " + ws + ", sorted by modification time (newest first):\n" + a, false},
		{"glob", `{"pattern":"SRC/A.TXT","case_sensitive":true}`, "No files found matching pattern \"SRC/A.TXT\" within " + ws, false},
		{"glob", `{"pattern":"*.none"}`, "No files found matching pattern \"*.none\" within " + ws, false},
		{"glob", `{"pattern":"*","dir_path":"/etc"}`, "Path not in workspace: Attempted path \"/etc\" resolves outside the allowed workspace directories: " + ws, true},
		{"glob", `{"pattern":"*","dir_path":"../.."}`, "Path not in workspace: Attempted path \"" + filepath.Dir(filepath.Dir(ws)) + "\" resolves outside the allowed workspace directories: " + ws, true},
		{"glob", `{"pattern":"[","dir_path":"src"}`, "Error during glob search operation: bad pattern \"[\": syntax error in pattern", true},
		{"grep_search", `{"pattern":"beta","names_only":true}`, "Found 2 files with matches for pattern \"beta\" in the workspace directory:\nsrc/a.txt\nsrc/b.md", false},
		{"grep_search", `{"pattern":"zzz"}`, "No matches found for pattern \"zzz\" in the workspace directory.", false},
		{"grep_search", `{"pattern":"beta","dir_path":"src","include_pattern":"*.md"}`,
			"Found 1 match for pattern \"beta\" in path \"src\" (filter: \"*.md\"):\n---\nFile: b.md\nL1- no match here\nL2: beta\nL3- \n---", false},
		{"grep_search", `{"pattern":"alpha","dir_path":"src"}`,
			"Found 2 matches for pattern \"alpha\" in path \"src\":\n---\nFile: a.txt\nL1: alpha\nL2- beta\nL3: Alpha again\nL4- \n---", false},
		{"grep_search", `{"pattern":"a","total_max_matches":1,"names_only":true,"dir_path":"src","include_pattern":"a.*"}`,
			"Found 1 files with matches for pattern \"a\" in path \"src\" (filter: \"a.*\") (results limited to 1 matches for performance):\na.txt", false},
		{"grep_search", `{"pattern":"(","dir_path":"src"}`, "Invalid regular expression pattern provided: (. Error: error parsing regexp: missing closing ): `(?i)(`", true},
		{"grep_search", `{"pattern":"here","dir_path":"` + ws + `/missing"}`, "Path does not exist: " + ws + "/missing", true},
		{"grep_search", `{"pattern":"x","dir_path":"/etc"}`, "Path not in workspace: Attempted path \"/etc\" resolves outside the allowed workspace directories: " + ws, true},
		{"list_directory", `{"dir_path":"` + ws + `/src"}`, "Directory listing for " + ws + "/src:\na.txt (23 bytes)\nb.md (19 bytes)", false},
		{"list_directory", `{"dir_path":"src","ignore":["*.md"]}`, "Directory listing for " + ws + "/src:\na.txt (23 bytes)", false},
		{"list_directory", `{"dir_path":"."}`, "Directory listing for " + ws + ":\n[DIR] .hidden\n[DIR] data\n[DIR] node_modules\n[DIR] src", false},
		{"grep_search", `{"pattern":"alpha","dir_path":"data"}`, "No matches found for pattern \"alpha\" in path \"data\".", false},
		{"list_directory", `{"dir_path":"` + ws + `/missing"}`, "Error listing directory: ENOENT: no such file or directory, stat '" + ws + "/missing'", true},
		{"list_directory", `{"dir_path":"` + a + `"}`, "Error: Path is not a directory: " + a, true},
		{"list_directory", `{"dir_path":"/"}`, "Path not in workspace: Attempted path \"/\" resolves outside the allowed workspace directories: " + ws, true},
	} {
		r := run(t, rt, c.tool, c.args)
		if r.IsError() != c.isErr || text(r) != c.want {
			t.Errorf("%s %s = %q (error %v)\nwant %q (error %v)", c.tool, c.args, text(r), r.IsError(), c.want, c.isErr)
		}
	}
	// One match shows the 50 lines around it.
	for i := 1; i <= 120; i++ {
		if i == 60 {
			ctxLines.WriteString("needle\n")
		} else {
			ctxLines.WriteString("hay\n")
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "src", "long.txt"), []byte(ctxLines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, rt, "grep_search", `{"pattern":"needle"}`)
	lines := strings.Split(text(r), "\n")
	if len(lines) != 3+101+1 || lines[2] != "File: src/long.txt" || lines[3] != "L10- hay" || lines[53] != "L60: needle" || lines[103] != "L110- hay" {
		t.Errorf("one match's context: %d lines, %q", len(lines), lines[:min(5, len(lines))])
	}
}

// TestGeminiSearchDisplay: what the AfterTool hooks get as returnDisplay: the value's, its
// keys in the order the value has them (the engine's: summary before files).
func TestGeminiSearchDisplay(t *testing.T) {
	for tool, value := range map[string]string{
		"glob":           `{"llmContent":"Found 1 file(s)…","returnDisplay":"Found 1 matching file(s)"}`,
		"list_directory": `{"llmContent":"…","returnDisplay":{"summary":"Found 1 item(s).","files":["a.txt"]}}`,
	} {
		d, ok := builtin.GeminiDisplay(tool, json.RawMessage(value), "/ws")
		var want struct {
			ReturnDisplay json.RawMessage `json:"returnDisplay"`
		}
		_ = json.Unmarshal([]byte(value), &want)
		got, _ := json.Marshal(d)
		if !ok || string(got) != string(want.ReturnDisplay) { // the keys in the value's order
			t.Errorf("%s: %s %v", tool, got, ok)
		}
	}
}
