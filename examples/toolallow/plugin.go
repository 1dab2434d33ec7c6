// Package toolallow is an example native plugin at the model request point: it cuts the
// tools offered to the model down to an allow-list, per request. The tools stay registered
// (the request/header still lists them all); only what this request offers changes, which
// request/rewritten records, and a call of that step to a tool the request did not offer
// fails as an unknown tool. Gemini CLI's BeforeToolSelection (allowedFunctionNames, or
// mode NONE) maps onto the same decision.
package toolallow

import (
	"context"

	"github.com/dshkit/dsh/generated/dsh"
)

//go:generate go tool dshscaffold -type Plugin -events agent/request -out plugin_gen.go

// Plugin restricts the tools of every request to Allow; with ReadOnlyAfter > 0, the steps
// after that one of each turn get no tool at all.
type Plugin struct {
	// Allow lists the tools the model may see; names of tools that are not registered are
	// ignored (an allow-list never adds a tool).
	Allow []string
	// ReadOnlyAfter, when positive, offers no tool from the step after it on.
	ReadOnlyAfter int
}

// OnRequest restricts the request's tools.
func (p *Plugin) OnRequest(ctx context.Context, pl *dsh.RequestPayload) (dsh.RequestDecision, error) {
	if p.ReadOnlyAfter > 0 && pl.Step > p.ReadOnlyAfter {
		return dsh.RequestRestrict{Allow: []string{}, Reason: ptr("toolallow: no tools after step " + itoa(p.ReadOnlyAfter))}, nil
	}
	return dsh.RequestRestrict{Allow: p.Allow, Reason: ptr("toolallow")}, nil
}

func ptr[T any](v T) *T { return &v }

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
