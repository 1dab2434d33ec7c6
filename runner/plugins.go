package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/generated/dsh"
)

// Plugin is a native dsh plugin: a type with the Register method that dshscaffold
// writes (go generate), registering its typed listeners on a registrar. A plugin with a
// Name() string method is registered under that name, else under its type's name
// (PluginName).
type Plugin interface {
	Register(r *dsh.Registrar) (unregister func())
}

// PluginName is p's Name() when it has one, else its type's name in lower case (the
// package's name for a type named Plugin, as dshscaffold's plugins are).
func PluginName(p Plugin) string {
	if n, ok := p.(interface{ Name() string }); ok && n.Name() != "" {
		return n.Name()
	}
	t := reflect.TypeOf(p)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() == "Plugin" && t.PkgPath() != "" {
		return t.PkgPath()[strings.LastIndex(t.PkgPath(), "/")+1:]
	}
	return strings.ToLower(t.Name())
}

// LoadPluginDirs reads Claude Code plugin directories as `claude --plugin-dir` does: the
// manifest .claude-plugin/plugin.json (optional; when present it must be a JSON object
// whose "name", if set, is a string, and whose "hooks", if set, names the hooks file
// relative to the plugin root) and the hooks file (default hooks/hooks.json, either
// {"hooks": {...}} or a bare event map). A plugin whose manifest is malformed, or that
// has no hooks file, is a problem naming the file and field; the other plugins still load.
func LoadPluginDirs(dirs []string) (sources []hookproto.Source, problems []string) {
	for _, dir := range dirs {
		root, err := filepath.Abs(dir)
		if err != nil {
			problems = append(problems, fmt.Sprintf("--plugin-dir %s: %v", dir, err))
			continue
		}
		if st, err := os.Stat(root); err != nil || !st.IsDir() {
			problems = append(problems, fmt.Sprintf("--plugin-dir %s: not a directory", dir))
			continue
		}
		hooks := filepath.Join(root, "hooks", "hooks.json")
		name := filepath.Base(root) // the manifest's name, when it has one
		manifest := filepath.Join(root, ".claude-plugin", "plugin.json")
		if data, err := os.ReadFile(manifest); err == nil {
			var m map[string]json.RawMessage
			dec := json.NewDecoder(bytes.NewReader(data))
			if err := dec.Decode(&m); err != nil || m == nil {
				problems = append(problems, fmt.Sprintf("%s: not a JSON object (%v); plugin skipped", manifest, errOr(err, "null")))
				continue
			}
			if raw, ok := m["name"]; ok {
				var s string
				if json.Unmarshal(raw, &s) != nil {
					problems = append(problems, fmt.Sprintf("%s: field \"name\": want a string; plugin skipped", manifest))
					continue
				}
				name = s
			}
			if raw, ok := m["hooks"]; ok {
				var s string
				if json.Unmarshal(raw, &s) != nil {
					problems = append(problems, fmt.Sprintf("%s: field \"hooks\": want a path string (inline hooks are not supported); plugin skipped", manifest))
					continue
				}
				hooks = filepath.Join(root, filepath.FromSlash(s))
			}
		}
		if _, err := os.Stat(hooks); err != nil {
			problems = append(problems, fmt.Sprintf("--plugin-dir %s: no hooks file %s; plugin skipped", dir, hooks))
			continue
		}
		// Claude Code names a --plugin-dir plugin "<name>@inline" in what the model reads.
		sources = append(sources, hookproto.Source{Path: hooks, PluginRoot: root, Plugin: name + "@inline"})
	}
	return sources, problems
}

func errOr(err error, s string) string {
	if err != nil {
		return err.Error()
	}
	return s
}
