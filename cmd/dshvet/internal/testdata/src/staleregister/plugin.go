package staleregister

import (
	"context"

	"github.com/dshkit/dsh/generated/dsh"
)

//go:generate go tool dshscaffold -type Plugin -events tools/guard -out plugin_gen.go

type Plugin struct{}

// Guard is registered by plugin_gen.go.
func (p *Plugin) Guard(ctx context.Context, pl *dsh.GuardPayload) dsh.GuardVerdict {
	return dsh.GuardAbstain{}
}

// OnPreTool was added after go generate ran.
func (p *Plugin) OnPreTool(ctx context.Context, pl *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) { // want `Plugin.OnPreTool has the type of dsh.PreToolListener but plugin_gen.go does not register it, so it never runs: add tools/pre-execute to the dshscaffold -events of the //go:generate line and re-run go generate`
	return next.Call(ctx)
}

// Observe on a value receiver is in the pointer's method set too.
func (p Plugin) Observe(ctx context.Context, pl *dsh.ToolResultPayload) { // want `Plugin.Observe has the type of dsh.ToolResultListener .* add tools/result`
}

// helper has no listener type.
func (p *Plugin) helper(ctx context.Context) {}

// Other is not a plugin (no scaffolded Register): its listener-shaped methods are its business.
type Other struct{}

func (o *Other) Guard(ctx context.Context, pl *dsh.GuardPayload) dsh.GuardVerdict {
	return dsh.GuardAbstain{}
}
