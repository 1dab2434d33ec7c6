package cli

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/dshkit/dsh/bridges/permissions"
	"github.com/dshkit/dsh/runner"
)

// permissionFlags defines dsh run's permission flags: --permission-mode, --allowedTools
// and --disallowedTools (and claude's spellings --allowed-tools, --disallowed-tools).
func (o *runOptions) permissionFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.permissionMode, "permission-mode", "", "the permission mode (default: the settings' defaultMode, else bypassPermissions)")
	fs.Var(&o.allowedTools, "allowedTools", "allow rules, e.g. \"Bash(git *)\" (repeatable)")
	fs.Var(&o.allowedTools, "allowed-tools", "the same as --allowedTools")
	fs.Var(&o.disallowedTools, "disallowedTools", "deny rules, e.g. \"Bash(rm *)\" (repeatable)")
	fs.Var(&o.disallowedTools, "disallowed-tools", "the same as --disallowedTools")
}

// permissionModes are the modes --permission-mode takes under the chosen dialect: its
// table's, or default and bypassPermissions for a dialect without permission rows.
func (o runOptions) permissionModes() []string {
	if t := o.desc().Table.Permissions; t != nil {
		return permissions.ModeNames(t)
	}
	return []string{runner.PermissionBypass, runner.PermissionDefault}
}

// permissionProblem is the usage error of the permission flags, or "".
func (o runOptions) permissionProblem() string {
	if t := o.desc().Table.Permissions; t != nil && t.Unsupported[o.permissionMode] != "" {
		return fmt.Sprintf("--permission-mode %s: dsh does not have it: %s (want %s)", o.permissionMode, t.Unsupported[o.permissionMode], orList(o.permissionModes()))
	}
	if o.permissionMode != "" && !slices.Contains(o.permissionModes(), o.permissionMode) {
		return fmt.Sprintf("--permission-mode %s: want %s (the %s dialect's modes)", o.permissionMode, orList(o.permissionModes()), o.dialect)
	}
	if (len(o.allowedTools) > 0 || len(o.disallowedTools) > 0) && o.desc().Table.Permissions == nil {
		return fmt.Sprintf("--allowedTools and --disallowedTools: the %s dialect has no permission rules (claude-code has)", o.dialect)
	}
	for _, f := range []struct {
		name   string
		values []string
	}{{"--allowedTools", o.allowedTools}, {"--disallowedTools", o.disallowedTools}} {
		if _, err := permissions.FlagRules(f.name, f.values, "deny"); err != nil {
			return strings.ReplaceAll(err.Error(), "\n", "; ")
		}
	}
	return ""
}
