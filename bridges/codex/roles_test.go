package codex_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshkit/dsh/bridges/codex"
)

// TestLoadAgentRoles: the [agents.NAME] tables of config.toml are roles in name order,
// each with its description, and the developer_instructions and model of its
// config_file (relative to config.toml); the settings of [agents] are not roles; a role
// without a description, with a config_file that is missing or does not parse, or with
// a key it does not know (reported, the role still loads) is an error naming the file and
// key, and the other roles load.
func TestLoadAgentRoles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("agents/reviewer.toml", "developer_instructions = \"Review carefully\"\nmodel = \"gpt-5.2\"\n")
	write("agents/broken.toml", "developer_instructions = \n")
	file := write("config.toml", `model = "m"
[agents]
max_threads = 4
[agents.reviewer]
description = " Reviews code "
config_file = "./agents/reviewer.toml"
nickname_candidates = ["Ada"]
[agents.plain]
description = "Plain role"
[agents.nodesc]
config_file = "./agents/reviewer.toml"
[agents.missing]
description = "Its file is missing"
config_file = "./agents/none.toml"
[agents.broken]
description = "Its file does not parse"
config_file = "./agents/broken.toml"
[agents.typo]
description = "A key Codex does not know"
descripton = "x"
`)
	defs, errs := codex.LoadAgentRoles(file)
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
	}
	if strings.Join(names, ",") != "plain,reviewer,typo" {
		t.Fatalf("roles %v", names)
	}
	if d := defs[1]; d.Description != "Reviews code" || d.System != "Review carefully" || d.Model != "gpt-5.2" || d.Source != filepath.Join(dir, "agents", "reviewer.toml") {
		t.Errorf("reviewer %+v", d)
	}
	if d := defs[0]; d.Description != "Plain role" || d.System != "" || d.Source != file {
		t.Errorf("plain %+v", d)
	}
	want := map[string]string{
		"agents.broken.config_file":  "does not parse",
		"agents.missing.config_file": "no such file",
		"agents.nodesc.description":  "agent role `nodesc` must define a description",
		"agents.typo.descripton":     "unknown key, ignored",
	}
	if len(errs) != len(want) {
		t.Errorf("errors %v", errs)
	}
	for _, err := range errs {
		var re *codex.RoleError
		if !errors.As(err, &re) || re.File != file || !strings.Contains(re.Problem, want[re.Key]) || want[re.Key] == "" {
			t.Errorf("error %v", err)
		}
		if !strings.HasPrefix(err.Error(), file+": agents.") {
			t.Errorf("error %q does not name the file and key", err)
		}
	}
	if defs, errs := codex.LoadAgentRoles(filepath.Join(dir, "none.toml")); defs != nil || errs != nil {
		t.Errorf("a missing config.toml: %v %v", defs, errs)
	}
	bad := write("bad.toml", "[agents\n")
	if _, errs := codex.LoadAgentRoles(bad); len(errs) != 1 || !strings.Contains(errs[0].Error(), "does not parse") {
		t.Errorf("a config.toml that does not parse: %v", errs)
	}
	// UserAgentRoles reads $CODEX_HOME/config.toml, else ~/.codex/config.toml.
	env := func(v string) func(string) string { return func(string) string { return v } }
	if defs, _ := codex.UserAgentRoles(env(dir), "/nowhere"); len(defs) != 3 {
		t.Errorf("CODEX_HOME: %d roles", len(defs))
	}
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte("[agents.x]\ndescription = \"x\"\n"), 0o644)
	if defs, _ := codex.UserAgentRoles(env(""), home); len(defs) != 1 || defs[0].Name != "x" {
		t.Errorf("home: %v", defs)
	}
}

// TestUserAgentRolesWithRoleFiles: the role files of $CODEX_HOME/agents are roles after
// config.toml's, in file name order (measured: codex/subagent-role-file), each with its
// description, instructions and model; a file that does not parse, lacks its name,
// description or developer_instructions, or repeats a name, is an error naming the file
// and key and is left out; a role's config_file there is not a role of its own.
func TestUserAgentRolesWithRoleFiles(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "codexhome")
	write := func(name, text string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("config.toml", "[agents.reviewer]\ndescription = \"Reviews\"\nconfig_file = \"./agents/reviewer.toml\"\n")
	write("agents/reviewer.toml", "developer_instructions = \"Review carefully\"\n")
	write("agents/writer.toml", "name = \"writer\"\ndescription = \"Writes\"\ndeveloper_instructions = \"Write well\"\nmodel = \"gpt-5.2\"\nsandbox_mode = \"read-only\"\n")
	write("agents/writer2.toml", "name = \"writer\"\ndescription = \"Again\"\ndeveloper_instructions = \"x\"\n")
	write("agents/again.toml", "name = \"reviewer\"\ndescription = \"Again\"\ndeveloper_instructions = \"x\"\n")
	write("agents/noinstr.toml", "name = \"noinstr\"\ndescription = \"Lacks\"\n")
	write("agents/nodesc.toml", "name = \"nodesc\"\ndeveloper_instructions = \"x\"\n")
	write("agents/noname.toml", "description = \"d\"\ndeveloper_instructions = \"x\"\n")
	write("agents/broken.toml", "name = [\n")
	write("agents/notes.txt", "not a role")
	env := map[string]string{"CODEX_HOME": dir}
	defs, errs := codex.UserAgentRoles(func(k string) string { return env[k] }, home)
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
	}
	if strings.Join(names, ",") != "reviewer,writer" {
		t.Fatalf("roles %v, want reviewer (config.toml) then writer (its file)", names)
	}
	if w := defs[1]; w.Description != "Writes" || w.System != "Write well" || w.Model != "gpt-5.2" || w.Source != filepath.Join(dir, "agents", "writer.toml") {
		t.Errorf("writer = %+v", w)
	}
	want := map[string]string{
		"again.toml":   "name: duplicate agent role name `reviewer`",
		"broken.toml":  "failed to parse agent role file",
		"noinstr.toml": "developer_instructions: agent role file must define `developer_instructions`",
		"nodesc.toml":  "description: agent role `nodesc` must define a description",
		"noname.toml":  "name: agent role file must define a non-empty `name`",
		"writer2.toml": "name: duplicate agent role name `writer`",
	}
	if len(errs) != len(want) {
		t.Errorf("errors %v, want one per file of %v", errs, want)
	}
	for _, err := range errs {
		var re *codex.RoleError
		if !errors.As(err, &re) {
			t.Errorf("%v is not a *RoleError", err)
			continue
		}
		w, ok := want[filepath.Base(re.File)]
		if !ok || !strings.Contains(err.Error(), w) || !strings.HasPrefix(err.Error(), re.File+": ") {
			t.Errorf("error %q, want the file and %q", err, w)
		}
	}
}
