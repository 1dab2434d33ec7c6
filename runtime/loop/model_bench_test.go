package loop

import (
	"context"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
)

// BenchmarkModelPoints measures one more turn (two model steps, two tool calls) at N=10
// prior turns on a memory store, as BenchmarkTurnAt does, with no model-call listener and
// with one pass-through listener on agent/request, on agent/response, and on both. The
// cost of a listener per step is half the difference of a turn with and without it
// (docs/performance.md, "The model-call points").
func BenchmarkModelPoints(b *testing.B) {
	passRequest := func(reg *dsh.Registry) {
		reg.Plugin("pass").OnRequest(func(context.Context, *dsh.RequestPayload) (dsh.RequestDecision, error) {
			return dsh.RequestPass{}, nil
		})
	}
	passResponse := func(reg *dsh.Registry) {
		reg.Plugin("pass").OnResponse(func(context.Context, *dsh.ResponsePayload) (dsh.ResponseDecision, error) {
			return dsh.ResponseAccept{}, nil
		})
	}
	for _, c := range []struct {
		name  string
		setup func(*dsh.Registry)
	}{
		{"none", nil},
		{"pass-request", passRequest},
		{"pass-response", passResponse},
		{"pass-both", func(reg *dsh.Registry) { passRequest(reg); passResponse(reg) }},
	} {
		b.Run(c.name, func(b *testing.B) { benchTurnAt(b, "memory", 10, c.setup) })
	}
}
