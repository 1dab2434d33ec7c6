package agents

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dshkit/dsh/runtime/subagent"
)

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestParseGood(t *testing.T) {
	text := "---\nname: reviewer\ndescription: Reviews code.\\nThoroughly.\ntools: Read, Grep,  Bash\nmodel: haiku\ncolor: blue\n---\n\nYou review code.\n\nBe brief.\n\n"
	def, diags, ok := Parse("/p/reviewer.md", []byte(text))
	if !ok || len(diags) != 0 {
		t.Fatalf("ok %v, diagnostics %v", ok, diags)
	}
	want := subagent.Definition{Name: "reviewer", Description: "Reviews code.\nThoroughly.", System: "You review code.\n\nBe brief.",
		Tools: []string{"Read", "Grep", "Bash"}, Model: "haiku", Source: "/p/reviewer.md"}
	if d := cmp.Diff(want, def); d != "" {
		t.Fatalf("definition (-want +got):\n%s", d)
	}
}

func TestParseToolsAndModel(t *testing.T) {
	for _, tc := range []struct {
		name, front string
		tools       []string
		model       string
	}{
		{"absent", "", nil, ""},
		{"star", "tools: '*'\n", nil, ""},
		{"star in a list", "tools: [Read, '*']\n", nil, ""},
		{"yaml list", "tools:\n  - Read\n  - Edit\n", []string{"Read", "Edit"}, ""},
		{"empty", "tools: ''\n", []string{}, ""},
		{"inherit", "model: Inherit\n", nil, ""},
		{"a model", "model: ' opus '\n", nil, "opus"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def, diags, ok := Parse("x.md", []byte("---\nname: x\ndescription: d\n"+tc.front+"---\nbody\n"))
			if !ok || len(diags) != 0 {
				t.Fatalf("ok %v, diagnostics %v", ok, diags)
			}
			if d := cmp.Diff(tc.tools, def.Tools); d != "" {
				t.Errorf("tools (-want +got):\n%s", d)
			}
			if (tc.tools == nil) != (def.Tools == nil) {
				t.Errorf("tools nil: want %v, got %v", tc.tools == nil, def.Tools == nil)
			}
			if def.Model != tc.model {
				t.Errorf("model %q, want %q", def.Model, tc.model)
			}
		})
	}
}

// Every malformed field is one diagnostic naming the file and the field; whether the
// definition loads follows Claude Code 2.1.328 (case subagent/definition-malformed).
func TestParseMalformed(t *testing.T) {
	for _, tc := range []struct {
		name, text, field, says string
		loads                   bool
	}{
		{"no frontmatter", "just a body\n", "", "no frontmatter", false},
		{"unclosed frontmatter", "---\nname: x\ndescription: d\nbody\n", "", "no frontmatter", false},
		{"no name", "---\ndescription: d\n---\nbody\n", "name", "missing", false},
		{"name not a string", "---\nname: [a]\ndescription: d\n---\nbody\n", "name", "missing", false},
		{"name with a dash first", "---\nname: -x\ndescription: d\n---\nbody\n", "name", `start with "-"`, false},
		{"name with a colon", "---\nname: 'a:b'\ndescription: d\n---\nbody\n", "name", `contain ":"`, false},
		{"no description", "---\nname: x\n---\nbody\n", "description", "missing", false},
		{"hooks not an object", "---\nname: x\ndescription: d\nhooks: 12\n---\nbody\n", "hooks", "must be an object", false},
		{"Stop hooks not a list", "---\nname: x\ndescription: d\nhooks: {Stop: 1}\n---\nbody\n", "hooks", "Stop", false},
		{"tools of another shape", "---\nname: x\ndescription: d\ntools: {a: 1}\n---\nbody\n", "tools", "comma list", true},
		{"bad yaml", "---\nname: x\ndescription: [unclosed\ntools: Bash\n---\nbody\n", "", "not valid YAML", true},
		{"disallowedTools of another shape", "---\nname: x\ndescription: d\ndisallowedTools: 3\n---\nbody\n", "disallowedTools", "comma list", true},
		{"maxTurns zero", "---\nname: x\ndescription: d\nmaxTurns: 0\n---\nbody\n", "maxTurns", "not a positive integer", true},
		{"maxTurns text", "---\nname: x\ndescription: d\nmaxTurns: many\n---\nbody\n", "maxTurns", "not a positive integer", true},
		{"background not a boolean", "---\nname: x\ndescription: d\nbackground: yes please\n---\nbody\n", "background", "not true or false", true},
		{"a field dsh does not apply", "---\nname: x\ndescription: d\npermissionMode: plan\n---\nbody\n", "permissionMode", "does not apply", true},
		{"isolation", "---\nname: x\ndescription: d\nisolation: worktree\n---\nbody\n", "isolation", "does not apply", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def, diags, ok := Parse("/agents/x.md", []byte(tc.text))
			if ok != tc.loads {
				t.Fatalf("loads %v, want %v (%v)", ok, tc.loads, diags)
			}
			if len(diags) != 1 {
				t.Fatalf("%d diagnostics, want 1: %v", len(diags), diags)
			}
			d := diags[0]
			if d.File != "/agents/x.md" || d.Field != tc.field || d.Skipped == tc.loads || !strings.Contains(d.Error(), tc.says) {
				t.Fatalf("diagnostic %+v (%q): want field %q saying %q", d, d.Error(), tc.field, tc.says)
			}
			if !strings.HasPrefix(d.Error(), "/agents/x.md") || (tc.field != "" && !strings.Contains(d.Error(), "field "+tc.field)) {
				t.Fatalf("%q does not name the file and field", d.Error())
			}
			if ok && def.Name != "x" {
				t.Fatalf("loaded %+v", def)
			}
		})
	}
}

// Frontmatter that is not YAML is read as key: value lines, as the engine reads it.
func TestParseBadYAMLLines(t *testing.T) {
	def, _, ok := Parse("x.md", []byte("---\nname: x\ndescription: [unclosed\ntools: Bash, Read\n---\nbody\n"))
	if !ok || def.Description != "[unclosed" || !slicesEqual(def.Tools, []string{"Bash", "Read"}) {
		t.Fatalf("ok %v, %+v", ok, def)
	}
}

func slicesEqual(a, b []string) bool { return cmp.Equal(a, b) }

// Frontmatter hooks become a settings hooks object, the Stop hooks under SubagentStop
// after the SubagentStop ones.
func TestParseHooks(t *testing.T) {
	text := "---\nname: x\ndescription: d\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: echo pre\n" +
		"  SubagentStop:\n    - hooks: [{type: command, command: echo sub}]\n  Stop:\n    - hooks: [{type: command, command: \"echo <stop> & more\"}]\n---\nbody\n"
	def, diags, ok := Parse("x.md", []byte(text))
	if !ok || len(diags) != 0 {
		t.Fatalf("ok %v, diagnostics %v", ok, diags)
	}
	var got map[string][]struct {
		Matcher string `json:"matcher"`
		Hooks   []struct {
			Command string `json:"command"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(def.Hooks, &got); err != nil {
		t.Fatal(err)
	}
	if _, ok := got["Stop"]; ok || len(got["PreToolUse"]) != 1 || got["PreToolUse"][0].Matcher != "Bash" {
		t.Fatalf("hooks %s", def.Hooks)
	}
	sub := got["SubagentStop"]
	if len(sub) != 2 || sub[0].Hooks[0].Command != "echo sub" || sub[1].Hooks[0].Command != "echo <stop> & more" {
		t.Fatalf("SubagentStop %s", def.Hooks)
	}
	if strings.Contains(string(def.Hooks), `\u003c`) {
		t.Fatalf("the commands are escaped: %s", def.Hooks)
	}
}

// The project's definition of a name replaces the user's; the others of both load; a
// malformed file is a diagnostic and the rest load; a missing directory is nothing.
func TestLoadPrecedence(t *testing.T) {
	root := t.TempDir()
	user, project := filepath.Join(root, "home", ".claude", "agents"), filepath.Join(root, "ws", ".claude", "agents")
	def := func(name, body string) string {
		return "---\nname: " + name + "\ndescription: " + body + "\n---\n" + body + "\n"
	}
	write(t, user, map[string]string{"probe.md": def("probe", "user probe"), "mine.md": def("mine", "user only"), "notes.txt": "not an agent"})
	write(t, project, map[string]string{"probe.md": def("probe", "project probe"), "other-file.md": def("theirs", "project only"),
		"broken.md": "---\ndescription: no name\n---\nx\n"})
	defs, diags := Load(user, project, filepath.Join(root, "missing"))
	var names, systems []string
	for _, d := range defs {
		names, systems = append(names, d.Name), append(systems, d.System)
	}
	if d := cmp.Diff([]string{"mine", "probe", "theirs"}, names); d != "" {
		t.Errorf("names (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"user only", "project probe", "project only"}, systems); d != "" {
		t.Errorf("systems (-want +got):\n%s", d)
	}
	if len(diags) != 1 || diags[0].File != filepath.Join(project, "broken.md") || diags[0].Field != "name" {
		t.Fatalf("diagnostics %v", diags)
	}
	if defs[1].Source != filepath.Join(project, "probe.md") {
		t.Fatalf("source %q", defs[1].Source)
	}
}

// A directory that cannot be read, and a file too large, are diagnostics.
func TestLoadUnreadable(t *testing.T) {
	root := t.TempDir()
	notDir := filepath.Join(root, "file")
	write(t, root, map[string]string{"file": "x", "big.md": "---\nname: big\ndescription: d\n---\n" + strings.Repeat("x", MaxFileBytes)})
	defs, diags := Load(notDir, root)
	if len(defs) != 0 || len(diags) != 2 {
		t.Fatalf("defs %v, diagnostics %v", defs, diags)
	}
	if diags[0].File != notDir || !diags[0].Skipped {
		t.Fatalf("first diagnostic %+v", diags[0])
	}
	if diags[1].File != filepath.Join(root, "big.md") || !strings.Contains(diags[1].Error(), "larger than") {
		t.Fatalf("second diagnostic %+v", diags[1])
	}
	var d Diagnostic
	if !errors.As(error(diags[1]), &d) {
		t.Fatal("a Diagnostic is an error")
	}
}

// disallowedTools, maxTurns and background, as Claude Code 2.1.328 reads them (cases
// subagent/frontmatter-disallowed, -maxturns and -background).
func TestParseChildFields(t *testing.T) {
	for _, tc := range []struct {
		name, front string
		disallowed  []string
		maxTurns    int
		background  bool
	}{
		{"none", "", nil, 0, false},
		{"comma list", "disallowedTools: Bash, Write\n", []string{"Bash", "Write"}, 0, false},
		{"yaml list", "disallowedTools: [Bash]\n", []string{"Bash"}, 0, false},
		{"star disallows none", "disallowedTools: '*'\n", nil, 0, false},
		{"maxTurns", "maxTurns: 3\n", nil, 3, false},
		{"maxTurns as text", "maxTurns: '2'\n", nil, 2, false},
		{"background", "background: true\n", nil, 0, true},
		{"background as text", "background: 'true'\n", nil, 0, true},
		{"background false", "background: false\n", nil, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def, diags, ok := Parse("x.md", []byte("---\nname: x\ndescription: d\n"+tc.front+"---\nbody\n"))
			if !ok || len(diags) != 0 {
				t.Fatalf("ok %v, diagnostics %v", ok, diags)
			}
			if !slicesEqual(def.Disallowed, tc.disallowed) || def.MaxTurns != tc.maxTurns || def.Background != tc.background {
				t.Errorf("disallowed %q, maxTurns %d, background %v", def.Disallowed, def.MaxTurns, def.Background)
			}
		})
	}
}
