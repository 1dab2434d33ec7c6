package loop

import (
	"context"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
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

// BenchmarkModelStepCost isolates what the model-call points add to one step: preparing
// the request of a step (seed, tools, history, header check) of an agent that ran 10 turns,
// with no agent/request listener and with one pass-through listener; and the agent/response
// fold of a two-block response with one pass-through listener (what respond adds before
// logging). The listener's cost per step is the difference of request/pass and
// request/none, plus response/pass; request/pass-unbounded runs the listener on the
// driver's goroutine (Config.ModelListenerTimeout < 0).
func BenchmarkModelStepCost(b *testing.B) {
	for _, c := range []string{"request/none", "request/pass", "request/pass-unbounded", "response/pass"} {
		b.Run(c, func(b *testing.B) {
			e := newEnv(b)
			e.register(okTool("echo", true))
			e.model = &cycleModel{}
			if c == "request/pass-unbounded" {
				e.cfg.ModelListenerTimeout = -1
			}
			if strings.HasPrefix(c, "request/pass") {
				e.reg.Plugin("pass").OnRequest(func(context.Context, *dsh.RequestPayload) (dsh.RequestDecision, error) {
					return dsh.RequestPass{}, nil
				})
			}
			if c == "response/pass" {
				e.reg.Plugin("pass").OnResponse(func(context.Context, *dsh.ResponsePayload) (dsh.ResponseDecision, error) {
					return dsh.ResponseAccept{}, nil
				})
			}
			a := e.agent()
			for i := range 10 {
				followup(b, a, "u"+string(rune('a'+i)), "go")
				wait(b, a)
			}
			t := &turnRun{n: 11, ctx: context.Background()}
			ctx := withScope(t.ctx, scope{agent: a, turn: t.n, step: 1})
			resp := llm.Response{Content: []dsh.ContentBlock{dsh.TextBlock{Text: "done"}, dsh.ToolCallBlock{ID: "c1", Name: "echo", Arguments: "{}"}},
				Finish: dsh.ChunkFinish{Reason: dsh.FinishReasonToolCalls}}
			b.ReportAllocs()
			for b.Loop() {
				if c == "response/pass" {
					c := &a.calls
					orig := dsh.ModelResponse{Content: resp.Content, Finish: resp.Finish.Reason}
					f := &c.sf
					*f = responseFold{cur: orig}
					if c.sfApply == nil {
						c.sfApply = f.apply
					}
					f.p = &dsh.ResponsePayload{Agent: a, AgentID: a.id, Turn: t.n, Step: 1, Response: orig, Original: orig}
					if err := a.reg.RunResponse(ctx, f.p, a.cfg.ModelListenerTimeout, c.sfApply); err != nil {
						b.Fatal(err)
					}
					continue
				}
				if _, err := a.prepareRequest(ctx, t, 1, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
