package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/dshkit/dsh/bridges/claudecode/agents"
	"github.com/dshkit/dsh/runner"
	"github.com/dshkit/dsh/runtime/subagent"
)

// agentDefinitions loads the agent definitions of the dialect's engine (its
// Descriptor.AgentDir: Claude Code's ~/.claude/agents, then the project's .claude/agents,
// whose definitions replace the user's of the same name). The project's load when its own
// files do (runner.Hooks.Trusted: --trust, dsh trust, or headless claude-code, as
// claude -p loads them); their frontmatter hooks only with --trust or dsh trust, as
// claude -p runs those of a project whose trust was accepted (case
// subagent/frontmatter-hooks-untrusted). Each problem of a file is one notice naming the
// file and field; the other definitions load. A dialect with AgentRoles (Codex) loads its
// roles from the user's configuration instead.
func (o runOptions) agentDefinitions(h runner.Hooks, workspace string, note func(string)) []subagent.Definition {
	if load := runner.Dialect(o.dialect).AgentRoles; load != nil {
		// Codex's roles, from the user's config.toml and $CODEX_HOME/agents.
		home, _ := os.UserHomeDir()
		defs, errs := load(os.Getenv, home)
		for _, e := range errs {
			note("agent role " + e.Error())
		}
		return defs
	}
	dir := runner.Dialect(o.dialect).AgentDir
	if dir == "" {
		return nil
	}
	var user, project string
	if home, err := os.UserHomeDir(); err == nil {
		user = filepath.Join(home, filepath.FromSlash(dir))
	}
	if h.Trusted() {
		project = filepath.Join(h.Project(workspace), filepath.FromSlash(dir))
		if project == user {
			project = "" // the home directory's own project: its definitions are the user's
		}
	}
	defs, diags := agents.Load(user, project)
	for _, d := range diags {
		note("agent definition " + d.Error())
	}
	if project == "" || h.Trust {
		return defs
	}
	for i, d := range defs {
		if len(d.Hooks) > 0 && filepath.Dir(d.Source) == project {
			note(fmt.Sprintf("agent definition %s: field hooks: not run (the project is not trusted; pass --trust, or run dsh trust once, to run them)", d.Source))
			defs[i].Hooks = nil
		}
	}
	return slices.Clip(defs)
}
