package claudecode

import (
	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/generated/hookmap"
)

// Rules are how Claude Code's hook files load and run beyond its table: `sh -c`,
// identical commands de-duplicated, a top-level disableAllHooks honoured, name lists read
// as exact matchers and other matchers as its table's regex dialect (ECMAScript),
// CLAUDE_PROJECT_DIR given to every hook and CLAUDE_PLUGIN_ROOT and
// CLAUDE_PLUGIN_DATA to plugin hooks.
var Rules = hookproto.Rules{Shell: []string{"sh", "-c"}, Dedupe: true, DisableAllHooks: true, ExactListMatchers: true,
	RegexDialect:   hookproto.RegexDialect(hookmap.ClaudeCode.RegexDialect),
	PluginRootVars: []string{"CLAUDE_PLUGIN_ROOT"}, PluginDataVars: []string{"CLAUDE_PLUGIN_DATA"},
	ProjectDirVars: []string{"CLAUDE_PROJECT_DIR"}, QuotedPluginRoot: true}
