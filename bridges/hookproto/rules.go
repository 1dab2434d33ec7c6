package hookproto

import "os"

// Rules are how a dialect's hook configurations load and run, beyond its mapping table:
// the shell of shell-form handlers, de-duplication, the settings keys it honours, its
// matcher syntax and the variables it gives plugins. Every rule that differs between
// dialects is a field here, so that no code tests a dialect's name; a dialect package
// passes its own (LoadOptions.Rules, SourcesOptions.Rules) or uses the rules of the
// dialects hookproto names ([Dialect.Rules]).
type Rules struct {
	// Shell is the argv prefix of shell-form handlers, e.g. ["sh", "-c"].
	Shell []string
	// ShellEnv names a variable of the harness environment whose value, when set,
	// replaces Shell[0] (Codex's $SHELL).
	ShellEnv string
	// Dedupe runs identical command handlers (same command string and args) matched at
	// one event once (dsh bridge decision 3).
	Dedupe bool
	// DisableAllHooks honours a top-level "disableAllHooks": true.
	DisableAllHooks bool
	// ExactListMatchers reads a matcher made only of ASCII letters, digits, '_', '-', ' ',
	// ',' and '|' as an exact list of names; otherwise every matcher is a regex.
	ExactListMatchers bool
	// TimeoutAlias is a handler key read for the timeout when "timeout" is absent or null
	// ("" for none).
	TimeoutAlias string
	// PluginRootVars, PluginDataVars and ProjectDirVars are the variables substituted as
	// ${NAME} in a handler's command and exported to it for the plugin root, the plugin
	// data directory and the project directory, in this order (each only when set).
	PluginRootVars, PluginDataVars, ProjectDirVars []string
	// PluginVarsNeedRoot gives those variables to plugin files only (a PluginRoot set).
	PluginVarsNeedRoot bool
}

// ShellArgv is the argv prefix a shell-form handler runs under; getenv reads the
// harness environment (nil means [os.Getenv]).
func (r Rules) ShellArgv(getenv func(string) string) []string {
	shell := append([]string(nil), r.Shell...)
	if len(shell) == 0 {
		shell = []string{"sh", "-c"}
	}
	if r.ShellEnv != "" {
		if getenv == nil {
			getenv = os.Getenv
		}
		if sh := getenv(r.ShellEnv); sh != "" {
			shell[0] = sh
		}
	}
	return shell
}

// knownRules are the rules of the dialects this package names.
var knownRules = map[Dialect]Rules{
	// Claude Code runs `sh -c`, de-duplicates identical commands, honours
	// disableAllHooks, reads name lists as exact matchers, and gives every hook
	// CLAUDE_PROJECT_DIR and plugin hooks CLAUDE_PLUGIN_ROOT and CLAUDE_PLUGIN_DATA.
	ClaudeCode: {Shell: []string{"sh", "-c"}, Dedupe: true, DisableAllHooks: true, ExactListMatchers: true,
		PluginRootVars: []string{"CLAUDE_PLUGIN_ROOT"}, PluginDataVars: []string{"CLAUDE_PLUGIN_DATA"},
		ProjectDirVars: []string{"CLAUDE_PROJECT_DIR"}},
	// Codex runs `$SHELL -c` (else /bin/sh; the engine, 0.169.0, runs no login shell, so
	// hooks keep the caller's PATH), keeps every copy of a command, reads timeoutSec
	// too, and gives plugin hooks PLUGIN_ROOT and PLUGIN_DATA and their CLAUDE_ aliases.
	Codex: {Shell: []string{"/bin/sh", "-c"}, ShellEnv: "SHELL", TimeoutAlias: "timeoutSec",
		PluginRootVars: []string{"PLUGIN_ROOT", "CLAUDE_PLUGIN_ROOT"}, PluginDataVars: []string{"PLUGIN_DATA", "CLAUDE_PLUGIN_DATA"},
		PluginVarsNeedRoot: true},
}

// Rules returns the rules of d, and false for a dialect this package does not name (a
// dialect package then passes its own).
func (d Dialect) Rules() (Rules, bool) {
	r, ok := knownRules[d]
	return r, ok
}
