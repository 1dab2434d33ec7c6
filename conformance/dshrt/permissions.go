package dshrt

import (
	"context"
	"fmt"

	"github.com/dshkit/dsh/bridges/permissions"
	sc "github.com/dshkit/dsh/generated/conformance"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
	"github.com/dshkit/dsh/runtime/permrule"
)

// AttachPermissions registers the permission plugin of Claude Code's table with the
// scenario's rules and mode; its decisions go to the first agent's log.
func (r *Runtime) AttachPermissions(p sc.PermissionRules) error {
	table := &hookmap.ClaudeCode
	t := table.Permissions
	mode, err := permissions.Mode(t, string(p.Mode))
	if err != nil {
		return err
	}
	var rules []permrule.Entry
	for _, l := range []struct {
		rules []string
		b     permrule.Behavior
	}{{p.Allow, permrule.Allow}, {p.Ask, permrule.Ask}, {p.Deny, permrule.Deny}} {
		es, err := permrule.Entries(l.rules, l.b, "permissions."+string(l.b))
		if err != nil {
			return fmt.Errorf("%w", err)
		}
		rules = append(rules, es...)
	}
	pl := &permissions.Plugin{
		Policy:     permrule.Policy{Rules: rules, Mode: mode, As: t.RulesAs},
		Env:        permrule.Env{Tools: permissions.RuleTable(table), Dir: "/workspace"},
		Texts:      t,
		Unanswered: t.Modes[string(p.Mode)].Unanswered,
		Record: func(ctx context.Context, rec dsh.DecisionRecorded) {
			_ = r.recordHook(ctx, rec)
		},
	}
	pl.Register(r.hooks.Plugin(pl.Name()))
	return nil
}
