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
