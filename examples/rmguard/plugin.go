// Package rmguard is an example native plugin, the model to copy: a guard that denies
// Bash commands running `rm -rf`, written against the generated surface (generated/dsh).
//
// The plugin is a type whose methods are typed listeners; `go generate` writes the
// registration glue (plugin_gen.go: Plugin.Register) with dshscaffold (go tool dshscaffold), so
// the glue always matches the extension points' current listener types.
package rmguard

import (
	"context"
	"encoding/json"
	"regexp"

	"github.com/dshkit/dsh/generated/dsh"
)

//go:generate go tool dshscaffold -type Plugin -events tools/guard -out plugin_gen.go

// Plugin denies destructive recursive removals.
type Plugin struct {
	// Tool is the shell tool whose command is checked (default "Bash").
	Tool string
}

// dangerous matches rm with both -r (or -R) and -f flags, in any order or grouping.
var dangerous = regexp.MustCompile(`\brm\s+(-[a-zA-Z]*[rR][a-zA-Z]*f[a-zA-Z]*|-[a-zA-Z]*f[a-zA-Z]*[rR][a-zA-Z]*|-[rR]\s+-f|-f\s+-[rR])\b`)

// Guard denies a shell call whose command runs rm -rf; it abstains on everything else.
// A guard cannot allow: a later listener can never undo this denial.
func (p *Plugin) Guard(ctx context.Context, pl *dsh.GuardPayload) dsh.GuardVerdict {
	tool := p.Tool
	if tool == "" {
		tool = "Bash"
	}
	if pl.Exec.Name != tool {
		return dsh.GuardAbstain{}
	}
	var in struct {
		Command string `json:"command"`
	}
	if err := json.Unmarshal(pl.Exec.Arguments, &in); err != nil {
		return dsh.GuardAbstain{}
	}
	if dangerous.MatchString(in.Command) {
		return dsh.GuardDeny{Reason: "rmguard: `rm -rf` is not allowed in this workspace"}
	}
	return dsh.GuardAbstain{}
}
