package codex

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/dshkit/dsh/runtime/subagent"
)

// RoleError is a problem of one agent role of a Codex config.toml or role file: the file,
// the key (agents.NAME or agents.NAME.FIELD of config.toml, a role file's key; "" for the
// whole file) and what is wrong. The other roles still load.
type RoleError struct {
	File, Key, Problem string
}

func (e *RoleError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("%s: %s", e.File, e.Problem)
	}
	return fmt.Sprintf("%s: %s: %s", e.File, e.Key, e.Problem)
}

// UserAgentRoles loads the agent roles of the user's config.toml, $CODEX_HOME/config.toml
// or home/.codex/config.toml when CODEX_HOME is unset (LoadAgentRoles), then those of the
// role files of that directory's agents folder (LoadRoleFiles). Codex reads the project's
// .codex/agents only for a trusted project (not measured headless: a role there was not
// offered in codex/subagent-role); dsh reads none.
func UserAgentRoles(getenv func(string) string, home string) ([]subagent.Definition, []error) {
	dir := getenv("CODEX_HOME")
	if dir == "" {
		if home == "" {
			return nil, nil
		}
		dir = filepath.Join(home, ".codex")
	}
	defs, errs := LoadAgentRoles(filepath.Join(dir, "config.toml"))
	more, moreErrs := LoadRoleFiles(filepath.Join(dir, "agents"), defs)
	return append(defs, more...), append(errs, moreErrs...)
}

// roleFile is a standalone role file: a role's configuration layer with its name,
// description and instructions (the keys dsh reads; the others configure the child, and
// are not reported).
type roleFile struct {
	Name                  *string  `toml:"name"`
	Description           *string  `toml:"description"`
	DeveloperInstructions *string  `toml:"developer_instructions"`
	Model                 string   `toml:"model"`
	NicknameCandidates    []string `toml:"nickname_candidates"`
}

// LoadRoleFiles reads the standalone agent role files of dir (*.toml, in file name order),
// as Codex 0.169.0 reads $CODEX_HOME/agents (measured: codex/subagent-role-file): each file
// defines a role by its name, description and developer_instructions (its child's
// instructions, as System) and an optional model. A file that does not parse, or lacks one
// of the three, and one whose name a role of have or of an earlier file has, is a
// *RoleError naming the file and key, in Codex's words ("must define a non-empty `name`",
// "agent role `NAME` must define a description", "must define `developer_instructions`",
// "duplicate agent role name"), and is left out. A file that is a role of have's
// config_file (its Source) is that role's configuration, not a role of its own. A folder
// that does not exist has no roles.
func LoadRoleFiles(dir string, have []subagent.Definition) ([]subagent.Definition, []error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []error{&RoleError{File: dir, Problem: err.Error()}}
	}
	taken := map[string]string{}
	configs := map[string]bool{}
	for _, d := range have {
		taken[d.Name] = d.Source
		configs[filepath.Clean(d.Source)] = true
	}
	var defs []subagent.Definition
	var errs []error
	for _, e := range entries { // os.ReadDir sorts by file name
		path := filepath.Join(dir, e.Name())
		if e.IsDir() || filepath.Ext(e.Name()) != ".toml" || configs[filepath.Clean(path)] {
			continue
		}
		fail := func(key, problem string) { errs = append(errs, &RoleError{File: path, Key: key, Problem: problem}) }
		data, err := os.ReadFile(path)
		if err != nil {
			fail("", err.Error())
			continue
		}
		var f roleFile
		if err := toml.Unmarshal(data, &f); err != nil {
			fail("", "failed to parse agent role file: "+err.Error())
			continue
		}
		name := strings.TrimSpace(deref(f.Name))
		switch {
		case name == "":
			fail("name", "agent role file must define a non-empty `name`")
			continue
		case strings.TrimSpace(deref(f.Description)) == "":
			fail("description", fmt.Sprintf("agent role `%s` must define a description", name))
			continue
		case strings.TrimSpace(deref(f.DeveloperInstructions)) == "":
			fail("developer_instructions", "agent role file must define `developer_instructions`")
			continue
		}
		if first, dup := taken[name]; dup {
			fail("name", fmt.Sprintf("duplicate agent role name `%s` (%s defines it first; this file is ignored)", name, first))
			continue
		}
		taken[name] = path
		defs = append(defs, subagent.Definition{Name: name, Description: strings.TrimSpace(*f.Description),
			System: *f.DeveloperInstructions, Model: f.Model, Source: path})
	}
	return defs, errs
}

// deref is *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// roleToml is an [agents.NAME] table of config.toml.
type roleToml struct {
	Description        *string  `toml:"description"`
	ConfigFile         *string  `toml:"config_file"`
	NicknameCandidates []string `toml:"nickname_candidates"`
}

// roleConfig is a role's config_file: the configuration its child runs with (the keys dsh
// reads).
type roleConfig struct {
	DeveloperInstructions string `toml:"developer_instructions"`
	Model                 string `toml:"model"`
}

// roleKeys are the keys of a role's table.
var roleKeys = []string{"description", "config_file", "nickname_candidates"}

// agentsKeys are the keys of [agents] that are settings, not roles.
var agentsKeys = []string{"max_threads", "max_depth", "job_max_runtime_seconds", "interrupt_message"}

// LoadAgentRoles reads the agent roles of a Codex config.toml (its [agents.NAME] tables:
// description, config_file, nickname_candidates), as Codex 0.169.0 offers them to
// spawn_agent's agent_type (measured: codex/subagent-role): each becomes a Definition
// named NAME with its description, the developer_instructions of its config_file (a path
// relative to config.toml's directory) as System and its model. A file that does not
// exist has no roles; a role without a description, a config_file that cannot be read or
// parsed, or a malformed table is a *RoleError naming the file and key, and that role
// alone is left out (an unknown key is reported and ignored; Codex's "agent role `NAME` must define a description"). The roles
// come in name order.
func LoadAgentRoles(file string) ([]subagent.Definition, []error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []error{&RoleError{File: file, Key: "agents", Problem: err.Error()}}
	}
	var doc struct {
		Agents map[string]any `toml:"agents"`
	}
	if err := toml.Unmarshal(data, &doc); err != nil {
		return nil, []error{&RoleError{File: file, Key: "agents", Problem: "the file does not parse: " + err.Error()}}
	}
	var defs []subagent.Definition
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(doc.Agents)) {
		if slices.Contains(agentsKeys, name) {
			continue
		}
		key := "agents." + name
		fail := func(k, problem string) { errs = append(errs, &RoleError{File: file, Key: k, Problem: problem}) }
		table, ok := doc.Agents[name].(map[string]any)
		if !ok {
			fail(key, "not a table")
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(table)) {
			if !slices.Contains(roleKeys, k) {
				fail(key+"."+k, "unknown key, ignored (a role has "+strings.Join(roleKeys, ", ")+")")
			}
		}
		raw, _ := toml.Marshal(table)
		var role roleToml
		if err := toml.Unmarshal(raw, &role); err != nil {
			fail(key, err.Error())
			continue
		}
		if role.Description == nil || strings.TrimSpace(*role.Description) == "" {
			fail(key+".description", fmt.Sprintf("agent role `%s` must define a description", name))
			continue
		}
		def := subagent.Definition{Name: name, Description: strings.TrimSpace(*role.Description), Source: file}
		if role.ConfigFile != nil {
			path := *role.ConfigFile
			if !filepath.IsAbs(path) {
				path = filepath.Join(filepath.Dir(file), path)
			}
			cdata, err := os.ReadFile(path)
			if err != nil {
				fail(key+".config_file", err.Error())
				continue
			}
			var cfg roleConfig
			if err := toml.Unmarshal(cdata, &cfg); err != nil {
				fail(key+".config_file", path+" does not parse: "+err.Error())
				continue
			}
			def.System, def.Model = cfg.DeveloperInstructions, cfg.Model
			def.Source = path
		}
		defs = append(defs, def)
	}
	return defs, errs
}
