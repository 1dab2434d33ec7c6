package loop

import (
	"context"
	"fmt"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
)

// What the model reads for a call a crash left without a result whose tool is not
// Resumable: one that had started, and one that had not.
const (
	msgInterrupted        = "the session stopped before this call finished, and it was not run again: it may or may not have taken effect"
	msgInterruptedUnbegun = "the session stopped before this call started, and it was not run"
)

// settleInterrupted gives a result to every call of the open turn's last response that a
// crash left without one, before the turn is closed interrupted: a provider refuses a
// history with a tool call and no result, and the model is owed what became of it
// (docs/design/SEMANTICS.md#551-resuming-a-crashed-batch). A call of a Resumable tool is
// dispatched again through the pipeline (the agent tool answers a child that finished from
// the log and runs only one that did not); any other gets an INTERRUPTED failure and never
// runs twice. Results are logged in model order, after a tool/call for a call that had
// none. It reports whether it appended anything.
func (a *Agent) settleInterrupted(ctx context.Context, st session.State) (bool, error) {
	var (
		resp     *dsh.AssistantMessageLogged
		calls    = map[string]int64{} // tool/call seq by call id, in the response's step
		answered = map[string]bool{}
	)
	for ev, err := range a.log.Events() {
		if err != nil {
			return false, err
		}
		switch ev.Type {
		case dsh.AssistantMessageLoggedType, dsh.ToolCallType, dsh.ToolResultLoggedType:
		default:
			continue
		}
		data, err := ev.Decode()
		if err != nil {
			return false, fmt.Errorf("event %d: %w", ev.Seq, err)
		}
		//dshvet:partial the switch on ev.Type above lets only these types through
		switch d := data.(type) {
		case dsh.AssistantMessageLogged:
			if d.Turn == st.LastTurn {
				resp = &d
				clear(calls)
				clear(answered)
			}
		case dsh.ToolCall:
			if resp != nil && d.Turn == resp.Turn && d.Step == resp.Step {
				calls[d.CallID] = ev.Seq
			}
		case dsh.ToolResultLogged:
			if resp != nil && d.Turn == resp.Turn && d.Step == resp.Step {
				for _, c := range d.Message.Content {
					if tr, ok := c.(dsh.ToolResultBlock); ok {
						answered[tr.ToolCallID] = true
					}
				}
			}
		}
	}
	if resp == nil {
		return false, nil
	}
	var blocks []dsh.ToolCallBlock
	for _, c := range resp.Message.Content {
		if blk, ok := c.(dsh.ToolCallBlock); ok && !answered[blk.ID] {
			blocks = append(blocks, blk)
		}
	}
	if len(blocks) == 0 {
		return false, nil
	}
	tctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	t := &turnRun{n: resp.Turn, ctx: tctx, cancel: cancel}
	b := &batch{a: a, t: t, step: resp.Step, ctx: withScope(tctx, scope{agent: a, turn: t.n, step: resp.Step}),
		slots: make([]slot, len(blocks)), settled: make(chan int, len(blocks))}
	for i, blk := range blocks {
		b.slots[i] = slot{block: blk, in: tools.Input{
			CallID: blk.ID, Name: blk.Name, Arguments: tools.ModelArguments(blk.Arguments), RawArguments: blk.Arguments,
			AgentID: a.id, Turn: t.n, Step: resp.Step, Hidden: a.calls.hidden(blk.Name)}}
	}
	interrupted := make([]string, len(blocks)) // the failure of each call that does not run
	// Every call gets its tool/call first (one the crash logged is kept), then the
	// resumable ones run at once, and the results are logged in model order.
	for i := range b.slots {
		s := &b.slots[i]
		def, ok := a.rt.Tools().Lookup(a.id, s.block.Name)
		resumable := ok && def.Resumable
		if resumable {
			b.create(s)
		}
		seq, begun := calls[s.block.ID]
		if begun {
			s.callSeq = seq
		} else {
			seq, err := b.logCall(s)
			if err != nil {
				return true, err
			}
			s.callSeq = seq
		}
		if !resumable {
			msg := msgInterrupted
			if !begun {
				msg = msgInterruptedUnbegun
			}
			interrupted[i] = msg
			continue
		}
		s.call.PreDispatch()
		b.inflight++
		go func() {
			s.call.Dispatch()
			b.settled <- i
		}()
	}
	for b.inflight > 0 {
		i := <-b.settled
		b.slots[i].done = true
		b.inflight--
	}
	for i := range b.slots {
		s := &b.slots[i]
		var res tools.Result
		if s.call != nil {
			res = s.call.Finish()
		} else {
			res = tools.Result{Outcome: tools.Fail(ctx, tools.NewError(tools.CodeInterrupted, interrupted[i]))}
		}
		if err := b.logResult(s, res); err != nil {
			return true, err
		}
	}
	return true, nil
}
