package builtin

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// TestHookInputs: Claude Code's toolset (hook_input "schema") gives each tool's schema
// key order and defaults; the toolsets of engines that keep the model's order (Codex's,
// Gemini CLI's, measured in gemini/tools/files) give none.
func TestHookInputs(t *testing.T) {
	in, err := HookInputs(StyleClaudeCode)
	if err != nil {
		t.Fatal(err)
	}
	for tool, want := range map[string][]string{
		"TaskCreate": {"subject", "description", "activeForm", "metadata"},
		"WebFetch":   {"url", "prompt", "offset"},
		"Edit":       {"file_path", "old_string", "new_string", "replace_all"},
	} {
		if got := in[tool].Keys; !slices.Equal(got, want) {
			t.Errorf("%s: keys %v, want %v", tool, got, want)
		}
	}
	if d := in["Edit"].Defaults; len(d) != 1 || d["replace_all"] != "false" {
		t.Errorf("Edit defaults %v, want replace_all false", d)
	}
	if _, ok := in["TaskList"]; ok {
		t.Error("TaskList, without properties, has a key order")
	}
	for _, s := range []Style{StyleCodex, StyleGemini, StyleDSH} {
		if in, err := HookInputs(s); err != nil || in != nil {
			t.Errorf("%s: %v %v, want none", s, in, err)
		}
	}
}

// TestSchemaOrder: the properties in the JSON's order (not sorted), compacted defaults,
// and a schema whose properties are no object is an error.
func TestSchemaOrder(t *testing.T) {
	hi, err := schemaOrder([]byte(`{"type":"object","properties":{"z":{"type":"string"},"a":{"default": [1, 2]},"m":{}}}`))
	if err != nil || !slices.Equal(hi.Keys, []string{"z", "a", "m"}) || hi.Defaults["a"] != "[1,2]" || len(hi.Defaults) != 1 {
		t.Errorf("got %+v %v", hi, err)
	}
	if _, err := schemaOrder([]byte(`{"properties":[1]}`)); err == nil {
		t.Error("properties as a list: no error")
	}
	_, err = loadToolsets(fstest.MapFS{"toolsets/x.json": {Data: []byte(`{"hook_input": "sorted", "tools": [{"name": "A", "impl": "bash"}]}`)}})
	if err == nil || !strings.Contains(err.Error(), `spec/toolsets/x.json: hook_input "sorted"`) {
		t.Errorf("bad hook_input: %v", err)
	}
}
