package codex

import (
	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/generated/hookmap"
)

// Rules are how Codex's hook files load and run beyond its table: `$SHELL -c` (else
// /bin/sh; the engine, 0.169.0, runs no login shell, so hooks keep the caller's PATH),
// matchers in its table's regex dialect (RE2, for Rust's regex), every copy of a command kept, timeoutSec read too, and PLUGIN_ROOT and PLUGIN_DATA and
// their CLAUDE_ aliases given to plugin hooks.
var Rules = hookproto.Rules{Shell: []string{"/bin/sh", "-c"}, ShellEnv: "SHELL", TimeoutAlias: "timeoutSec",
	RegexDialect:   hookproto.RegexDialect(hookmap.Codex.RegexDialect),
	PluginRootVars: []string{"PLUGIN_ROOT", "CLAUDE_PLUGIN_ROOT"}, PluginDataVars: []string{"PLUGIN_DATA", "CLAUDE_PLUGIN_DATA"},
	PluginVarsNeedRoot: true}
