package differential

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Real hook configurations, kept under testdata/real as their projects publish them:
// devkit (github.com/5uck1ess/devkit at 580dbf8, MIT, its LICENSE beside it), a Claude
// Code plugin of shell guards, and the hooks block of claude-code-hooks-mastery's
// .claude/settings.json (github.com/disler/claude-code-hooks-mastery at 052ad1c), whose
// handlers run `uv run` on Python scripts. Each handler becomes a Hook with its event,
// matcher, timeout and other keys, whose script runs the configured command, so that the
// suite's recorder sees every run on both sides.

// realHooks reads the hooks block of the configuration file at path (under testdata),
// and returns its handlers as the case's hooks, from the settings source src.
func realHooks(path, src string) ([]Hook, error) {
	data, err := os.ReadFile(filepath.Join("testdata", path))
	if err != nil {
		return nil, err
	}
	var cfg struct {
		Hooks map[string][]struct {
			Matcher string           `json:"matcher"`
			Hooks   []map[string]any `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	events := make([]string, 0, len(cfg.Hooks))
	for ev := range cfg.Hooks {
		events = append(events, ev)
	}
	slices.Sort(events)
	var out []Hook
	group := 0
	for _, ev := range events {
		for _, g := range cfg.Hooks[ev] {
			group++
			for _, h := range g.Hooks {
				cmd, _ := h["command"].(string)
				if h["type"] != "command" || cmd == "" {
					return nil, fmt.Errorf("%s: %s: only command handlers are replayed", path, ev)
				}
				hk := Hook{Event: ev, Matcher: g.Matcher, Script: "exec " + cmd, Source: src, Group: group}
				if t, ok := h["timeout"].(float64); ok {
					hk.Timeout = int(t)
				}
				for k, v := range h {
					if k == "type" || k == "command" || k == "timeout" {
						continue
					}
					if hk.Fields == nil {
						hk.Fields = map[string]any{}
					}
					hk.Fields[k] = v
				}
				out = append(out, hk)
			}
		}
	}
	return out, nil
}

// mustRealHooks is realHooks for the suite's case table: a configuration that cannot be
// read is a broken checkout, so it panics naming the file.
func mustRealHooks(path, src string) []Hook {
	hooks, err := realHooks(path, src)
	if err != nil {
		panic(fmt.Sprintf("differential: real configuration: %v", err))
	}
	return hooks
}

// realCases run the real configurations: devkit as the plugin it is (its scripts copied
// into the plugin directory, Case.PluginFiles), on a call its guards let through and one
// its safety check blocks (a harmless command that names a destructive SQL statement);
// claude-code-hooks-mastery as the project settings it is (every `uv run` fails where uv
// is not installed, the same on both sides; what counts is that the file, with its
// SubagentStart, SubagentStop and Setup hooks, loads and runs its other events).
func realCases() []Case {
	claude := []string{"claude"}
	devkit := mustRealHooks("real/devkit/hooks/hooks.json", "")
	mastery := mustRealHooks("real/hooks-mastery/settings.json", "project")
	return []Case{
		{Name: "real/devkit-pass", Engines: claude, Plugin: true, PluginFiles: "real/devkit", Turns: oneCall, Hooks: devkit},
		{Name: "real/devkit-block", Engines: claude, Plugin: true, PluginFiles: "real/devkit", Hooks: devkit,
			Turns: []Turn{{Text: "running", Bash: []string{"echo 'DROP TABLE t' > note.txt; touch ran_1"}}, {Text: "finished"}}},
		{Name: "real/hooks-mastery", Engines: claude, Sources: true, Turns: oneCall, Hooks: mastery},
		// The same files with a subagent: their SubagentStart and SubagentStop hooks run
		// around the child (devkit's SubagentStop matcher, "Stop", names no agent type the
		// call starts, so only its tool hooks run inside the child).
		{Name: "real/devkit-subagent", Engines: claude, Plugin: true, PluginFiles: "real/devkit", Hooks: devkit,
			Turns:    []Turn{{Text: "delegating", Calls: []Call{subagentCall("CHILD-A: check")}}, {Text: "finished"}},
			Children: []Child{{Match: "CHILD-A", Turns: []Turn{{Text: "child running", Bash: []string{"touch ran_1; echo ok"}}, {Text: "ALL_TESTS_PASSING exit code 0"}}}}},
		{Name: "real/hooks-mastery-subagent", Engines: claude, Sources: true, Hooks: mastery,
			Turns:    []Turn{{Text: "delegating", Calls: []Call{subagentCall("CHILD-A: check")}}, {Text: "finished"}},
			Children: []Child{{Match: "CHILD-A", Turns: []Turn{{Text: "child running", Bash: []string{"touch ran_1; echo ok"}}, {Text: "child answer"}}}}},
	}
}

// copyTree copies the files under testdata/src into dst, keeping their modes.
func copyTree(src, dst string) error {
	root := filepath.Join("testdata", src)
	return filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if strings.HasSuffix(path, ".json") && filepath.Base(filepath.Dir(path)) == "hooks" {
			return nil // the case's hooks.json replaces it (each handler wrapped by the recorder)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
}
