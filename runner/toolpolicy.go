package runner

import (
	"context"
	"fmt"
	"os"

	"github.com/dshkit/dsh/bridges/toolpolicy"
	"github.com/dshkit/dsh/generated/dsh"
)

// toolPolicyPlugin builds the session's tool-settings plugin (bridges/toolpolicy) from the
// settings files the permissions are read from and the policy files of the table's
// directories, when the dialect has a tool policy (dialect.Descriptor.ToolPolicy: Gemini
// CLI's tools.core, tools.exclude and ~/.gemini/policies). It returns nil when they
// narrow nothing. A malformed list, policy file or rule is an error naming the file and
// the field or rule, wrapping ErrPermissions: the session does not start.
func (s *Session) toolPolicyPlugin() (Plugin, error) {
	t := s.cfg.Hooks.desc().ToolPolicy
	if t == nil {
		return nil, nil
	}
	var files []toolpolicy.Source
	for _, src := range s.permissionSources() {
		files = append(files, toolpolicy.Source{Path: src.Path, Project: src.Project})
	}
	settings, err := toolpolicy.Load(t, files, s.cfg.Hooks.Trust)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPermissions, err)
	}
	for _, ig := range settings.Ignored {
		s.note(fmt.Sprintf("tool settings not loaded: %s (the project is not trusted; pass --trust to load them)", ig))
	}
	home, _ := os.UserHomeDir()
	policies, err := toolpolicy.LoadPolicies(t, home, "/")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPermissions, err)
	}
	for _, sk := range policies.Skipped {
		s.note("policy files not loaded: " + sk)
	}
	if settings.Empty() && len(policies.Rules) == 0 {
		return nil, nil
	}
	log := s.cfg.Log
	return &toolpolicy.Plugin{Table: t, Settings: settings, Policies: policies.Rules,
		Record: func(ctx context.Context, rec dsh.DecisionRecorded) {
			if _, err := log.Append(context.WithoutCancel(ctx), rec); err != nil {
				s.logger.Error("tool settings: cannot record a decision", "err", err)
			}
		}}, nil
}
