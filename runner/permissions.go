package runner

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/dshkit/dsh/bridges/permissions"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/permrule"
)

// Permissions are a session's permission rules and mode (bridges/permissions): the
// rules of the settings files the hooks come from (the named file, --setting-sources,
// and the project's own files, whose allow rules and defaultMode need Hooks.Trust), of
// Allowed and Disallowed, under Mode.
type Permissions struct {
	// Mode is the permission mode (--permission-mode); "": the settings' defaultMode,
	// else PermissionBypass.
	Mode string
	// Allowed and Disallowed are the values of --allowedTools and --disallowedTools: allow
	// and deny rules, several to a value (comma or space separated).
	Allowed, Disallowed []string
}

// ErrPermissions is wrapped by the error of a permission setting dsh cannot apply: a rule
// that does not parse, a mode the dialect does not have, rules for a dialect without
// them. The session does not start: a rule the user wrote is never left out.
var ErrPermissions = errors.New("permissions")

// PermissionMode is the session's permission mode, as its hooks see it: the one
// --permission-mode or the settings' defaultMode chose, else bypassPermissions.
func (s *Session) PermissionMode() string {
	if m := s.cfg.Hooks.PermissionMode; m != "" {
		return m
	}
	return PermissionBypass
}

// permissionPlugin builds the session's permission plugin from Config.Permissions and the
// settings files, and resolves the mode the hooks see (Hooks.PermissionMode). It returns
// nil when no rule and no mode restricts anything. A dialect whose table has no
// permissions takes Mode default (every call but Read asks) and bypassPermissions only.
func (s *Session) permissionPlugin() (Plugin, error) {
	cfg, h := s.cfg.Permissions, &s.cfg.Hooks
	table := h.desc().Table
	t := table.Permissions
	if t == nil {
		switch {
		case len(cfg.Allowed) > 0 || len(cfg.Disallowed) > 0:
			return nil, fmt.Errorf("%w: --allowedTools and --disallowedTools: the %s dialect has no permission rules", ErrPermissions, h.desc().Name)
		case cfg.Mode != "" && cfg.Mode != PermissionBypass && cfg.Mode != PermissionDefault:
			return nil, fmt.Errorf("%w: --permission-mode %s: the %s dialect has the modes %s and %s only", ErrPermissions, cfg.Mode, h.desc().Name, PermissionDefault, PermissionBypass)
		}
		if cfg.Mode != "" {
			h.PermissionMode = cfg.Mode
		}
		if cfg.Mode == PermissionDefault {
			return pluginFunc(func(r *dsh.Registrar) func() { return r.OnPreTool(askUnlessRead) }), nil
		}
		return nil, nil
	}
	settings, err := permissions.Load(t, s.permissionSources(), h.Trust)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPermissions, err)
	}
	for _, ig := range settings.Ignored {
		s.note(fmt.Sprintf("permissions not loaded: %s (the project is not trusted; pass --trust to load them)", ig))
	}
	rules := settings.Rules
	for _, f := range []struct {
		name   string
		values []string
		b      permrule.Behavior
	}{{"--allowedTools", cfg.Allowed, permrule.Allow}, {"--disallowedTools", cfg.Disallowed, permrule.Deny}} {
		entries, err := permissions.FlagRules(f.name, f.values, f.b)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrPermissions, err)
		}
		rules = append(rules, entries...)
	}
	name := cfg.Mode
	if name == "" {
		name = settings.DefaultMode
	}
	if name != "" {
		h.PermissionMode = name // else the host's (dsh acp: default under --permissions ask)
	} else {
		name = PermissionBypass
	}
	mode, err := permissions.Mode(t, name)
	if err != nil {
		return nil, fmt.Errorf("%w: --permission-mode: %w", ErrPermissions, err)
	}
	if len(rules) == 0 && mode.Otherwise == permrule.Allow && len(mode.Refuse) == 0 {
		return nil, nil // nothing to decide
	}
	home, _ := os.UserHomeDir()
	log := s.cfg.Log
	return &permissions.Plugin{
		Policy:     permrule.Policy{Rules: rules, Mode: mode, As: t.RulesAs},
		Env:        permrule.Env{Tools: permissions.RuleTable(table), Dir: s.cfg.Workspace, Home: home, Root: h.project(s.cfg.Workspace)},
		Texts:      t,
		Unanswered: t.Modes[name].Unanswered,
		Record: func(ctx context.Context, rec dsh.DecisionRecorded) {
			if _, err := log.Append(context.WithoutCancel(ctx), rec); err != nil {
				s.logger.Error("permissions: cannot record a decision", "err", err)
			}
		},
	}, nil
}

// permissionSources are the settings files the permissions are read from: those the
// hooks load (the --setting-sources files and the named file), and the project's own,
// marked as such.
func (s *Session) permissionSources() []permissions.Source {
	h := &s.cfg.Hooks
	var out []permissions.Source
	for _, p := range h.settingFiles(s.cfg.Workspace) {
		out = append(out, permissions.Source{Path: p})
	}
	for _, p := range ProjectHookFiles(h.Dialect, h.project(s.cfg.Workspace)) {
		out = append(out, permissions.Source{Path: p, Project: true})
	}
	if h.File != "" {
		out = append(out, permissions.Source{Path: h.File})
	}
	return out
}

// pluginFunc adapts a registration function to a Plugin.
type pluginFunc func(r *dsh.Registrar) func()

// Register calls f.
func (f pluginFunc) Register(r *dsh.Registrar) func() { return f(r) }
