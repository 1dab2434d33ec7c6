package stalegone

import (
	"context"

	"github.com/dshkit/dsh/generated/dsh"
)

// Plugin had a Guard method, renamed since go generate last ran: plugin_gen.go does not
// compile, and the standalone checker says why.
type Plugin struct{}

func (p *Plugin) Deny(ctx context.Context, pl *dsh.GuardPayload) dsh.GuardVerdict { // want `Plugin.Deny has the type of dsh.GuardListener but plugin_gen.go does not register it, so it never runs: dshscaffold registers tools/guard's listener as a method named Guard: rename it Guard, add tools/guard`
	return dsh.GuardDeny{Reason: "no"}
}
