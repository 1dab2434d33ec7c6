package builtin

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func TestToolsetsLoad(t *testing.T) {
	if _, err := Toolsets(); err != nil {
		t.Fatalf("the spec's toolsets: %v", err)
	}
}

func TestToolsetBadRows(t *testing.T) {
	for name, tc := range map[string]struct{ file, want string }{
		"syntax":       {`{"tools": [`, "spec/toolsets/x.json: unexpected end"},
		"no name":      {`{"tools": [{"impl": "bash"}]}`, "spec/toolsets/x.json: tools[0]: no name"},
		"no impl":      {`{"tools": [{"name": "A", "impl": "bash"}, {"name": "B"}]}`, "tools[1] (B): neither impl nor absent"},
		"model's tool": {`{"tools": [{"name": "A", "impl": "bash"}], "models": {"m": {"without": ["B"]}}}`, `models["m"]: no tool "B"`},
		"unknown impl": {`{"tools": [{"name": "A", "impl": "nope"}]}`, `tools[0] (A): unknown impl "nope"`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := loadToolsets(fstest.MapFS{"toolsets/x.json": {Data: []byte(tc.file)}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	got, err := loadToolsets(fstest.MapFS{"toolsets/x.json": {Data: []byte(`{"dialect": "x", "tools": [{"name": "A", "impl": "bash"}, {"name": "B", "absent": "no"}]}`)}})
	if err != nil || len(got) != 1 || len(got[0].Tools) != 2 {
		t.Fatalf("good file: %v %+v", err, got)
	}
}

// TestGeminiToolsetDefinitions: under StyleGemini the tools are the toolset's rows that
// name an implementation, in its order, each with the row's description and the schema
// exactly as recorded from the engine; the rows dsh does not offer say why.
func TestGeminiToolsetDefinitions(t *testing.T) {
	all, err := Toolsets()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(all, func(ts Toolset) bool { return ts.Dialect == "gemini" })
	if i < 0 {
		t.Fatal("no gemini toolset")
	}
	defs, err := Definitions(Options{Workspace: t.TempDir(), Style: StyleGemini})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, r := range all[i].Tools {
		if r.Impl == "" {
			continue
		}
		want = append(want, r.Name)
		d := defs[len(want)-1]
		if d.Name != r.Name || d.Description != r.Description || !bytes.Equal(d.InputSchema, r.InputSchema) {
			t.Errorf("%s: got %s %q %s", r.Name, d.Name, d.Description, d.InputSchema)
		}
		if d.FinalizeContent == nil {
			t.Errorf("%s: failures would read with dsh's \"Error: \"", r.Name)
		}
	}
	if got := len(defs); got != len(want) {
		t.Errorf("%d tools, want %d (%v)", got, len(want), want)
	}
	for _, name := range []string{"run_shell_command", "read_file", "write_file", "replace", "glob", "grep_search", "list_directory", "web_fetch", "write_todos", "update_topic"} {
		if !slices.Contains(want, name) {
			t.Errorf("%s is not offered", name)
		}
	}
}

// TestToolsetModes: Claude Code words claude-opus-5-5's Bash otherwise under
// --permission-mode default (channel/permission): one more paragraph; under another
// mode, or for the recording model, the description is the model's own. A mode's row
// naming a tool the toolset lacks is an error.
func TestToolsetModes(t *testing.T) {
	const important = "- IMPORTANT: Avoid using this tool to run `cat`, `head`"
	bash := func(model, mode string) string {
		t.Helper()
		defs, err := Definitions(Options{Workspace: t.TempDir(), Style: StyleClaudeCode, Model: model, PermissionMode: mode})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range defs {
			if d.Name == "Bash" {
				return d.Description
			}
		}
		t.Fatal("no Bash")
		return ""
	}
	def, bypass := bash("claude-opus-5-5", "default"), bash("claude-opus-5-5", "bypassPermissions")
	if !strings.Contains(def, important) || strings.Contains(bypass, important) {
		t.Errorf("opus Bash: default has the paragraph %v, bypassPermissions %v; want true, false",
			strings.Contains(def, important), strings.Contains(bypass, important))
	}
	i := strings.Index(def, important)
	if j := strings.Index(def[i:], "\n"); j < 0 || def[:i]+def[i+j+1:] != bypass {
		t.Error("the default mode's Bash differs from bypassPermissions' by more than the paragraph")
	}
	if bash("claude-opus-5-5", "") != bypass {
		t.Error("no mode differs from bypassPermissions")
	}
	if s := bash("claude-sonnet-4-5", "default"); strings.Contains(s, important) {
		t.Error("sonnet's Bash has opus's default-mode paragraph")
	}
	_, err := loadToolsets(fstest.MapFS{"toolsets/x.json": {Data: []byte(`{"tools": [{"name": "A", "impl": "bash"}], "models": {"m": {"modes": {"default": [{"name": "B"}]}}}}`)}})
	if err == nil || !strings.Contains(err.Error(), `models["m"]: no tool "B"`) {
		t.Errorf("a mode's unknown tool: %v", err)
	}
}
