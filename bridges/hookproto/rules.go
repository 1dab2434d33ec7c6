package hookproto

import (
	"os"

	"github.com/dshkit/dsh/generated/hookmap"
)

// Rules are how a dialect's hook configurations load and run, beyond its mapping table:
// the shell of shell-form handlers, de-duplication, the settings keys it honours, its
// matcher syntax and the variables it gives plugins. Every rule that differs between
// dialects is a field here, so that no code tests a dialect's name. Each dialect package
// holds its own (claudecode.Rules, codex.Rules, gemini.Rules) and passes them
// (LoadOptions.Rules, SourcesOptions.Rules); without them a dialect loads under its
// table alone ([TableRules]).
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
	// RegexDialect is the syntax of the dialect's regex matchers: ECMAScript for the
	// engines that build a JavaScript RegExp, RE2 for Codex's Rust regex ("" is RE2).
	RegexDialect RegexDialect
	// TimeoutAlias is a handler key read for the timeout when "timeout" is absent or null
	// ("" for none).
	TimeoutAlias string
	// PluginRootVars, PluginDataVars and ProjectDirVars are the variables substituted as
	// ${NAME} in a handler's command and exported to it for the plugin root, the plugin
	// data directory and the project directory, in this order (each only when set).
	PluginRootVars, PluginDataVars, ProjectDirVars []string
	// PluginVarsNeedRoot gives those variables to plugin files only (a PluginRoot set).
	PluginVarsNeedRoot bool
	// QuotedPluginRoot says the engine quotes a plugin hook's command, in the texts the
	// model reads, with its root variables (PluginRootVars) substituted (Claude Code).
	QuotedPluginRoot bool
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

// TableRules are the rules of a dialect described by its table alone: its shell and its
// regex dialect, no other rule.
func TableRules(b *hookmap.Bridge) Rules {
	return Rules{Shell: b.Shell, RegexDialect: RegexDialect(b.RegexDialect)}
}
