package loop

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
)

// batch is the tool batch of one step (docs/design/SEMANTICS.md#54-tool-batch-scheduling-and-ordering).
type batch struct {
	a     *Agent
	t     *turnRun
	step  int
	ctx   context.Context // the step's context
	slots []slot

	started   int      // slots started so far, a prefix
	committed int      // slots committed so far, a prefix of the started ones
	inflight  int      // started slots whose dispatch has not settled
	settled   chan int // indexes of slots whose dispatch settled

	contexts  []dsh.UserMessage // the additionalContexts of the committed results, in order
	concluded bool
	err       error // an internal failure: no further call starts
}

// slot is one call of the batch.
type slot struct {
	block   dsh.ToolCallBlock
	in      tools.Input
	callSeq int64
	call    *tools.Call
	done    bool           // dispatch settled
	result  *dsh.BatchCall // the committed result, for agent/post-batch
}

// runBatch runs the tool calls of a step and reports whether a committed success
// concluded the turn. Calls run in groups: an exclusive call alone, as a barrier; parallel
// calls in a rolling pool of at most Config.MaxParallelToolCalls. tool/call and tool/result
// are logged in model order; the results' contexts go to the end of the next-step inbox
// after the last tool/result. Once the turn is being stopped (Cancel, Halt, a halt
// decision) no call starts; the in-flight ones drain and are committed, and every
// unstarted call gets a tool/call and an ABORTED_BEFORE_DISPATCH tool/result. An internal
// failure (a failed append) stops the batch without fabricating results.
func (a *Agent) runBatch(ctx context.Context, t *turnRun, step int, blocks []dsh.ToolCallBlock) (bool, error) {
	b := &batch{a: a, t: t, step: step, ctx: ctx, slots: make([]slot, len(blocks)), settled: make(chan int, len(blocks))}
	for i, blk := range blocks {
		b.slots[i] = slot{block: blk, in: tools.Input{
			CallID: blk.ID, Name: blk.Name, Arguments: tools.ModelArguments(blk.Arguments), RawArguments: blk.Arguments,
			AgentID: a.id, Turn: t.n, Step: step, Hidden: a.calls.hidden(blk.Name)}}
		if sa := a.cfg.Subagent; sa != nil {
			lineage := sa.Lineage
			b.slots[i].in.Lineage = &lineage
		}
	}
	b.run()
	if b.err != nil {
		return b.concluded, b.err
	}
	return b.concluded, b.postBatch()
}

// run schedules the groups, then settles the rest of the batch.
func (b *batch) run() {
	n := len(b.slots)
	for b.started < n && !b.stopping() {
		if b.mode(b.started) == tools.ModeExclusive {
			b.start()
			b.drain()
			continue
		}
		limit := b.a.cfg.MaxParallelToolCalls
		first := true
		for b.started < n && !b.stopping() {
			for b.inflight >= limit {
				b.waitOne()
			}
			if b.stopping() {
				break
			}
			// Re-classified just before it starts: a call that is no longer parallel is
			// the next barrier, once the pool drained.
			if !first && b.mode(b.started) != tools.ModeParallel {
				break
			}
			first = false
			b.start()
		}
		b.drain()
	}
	b.drain()
	if b.err == nil {
		for b.started < n {
			b.synthetic()
		}
	}
	b.accept()
}

// stopping reports whether no further call may start.
func (b *batch) stopping() bool {
	return b.err != nil || b.a.stopCause(b.t) != nil
}

// mode classifies slot i (B §4.10) on its effective arguments: the slot is created first
// (docs/design/REWRITE-COMPACTION.md#11-placement-and-ordering: parse, the tools/rewrite-input fold, validation), so that a
// rewrite that turns a read into a write makes the call exclusive.
func (b *batch) mode(i int) tools.Mode {
	return b.create(&b.slots[i]).Mode()
}

// create creates the call of s once (tools.Runtime.Start): its rewrite phase runs on the
// scheduler's goroutine, in model order, before the call is logged.
func (b *batch) create(s *slot) *tools.Call {
	if s.call == nil {
		s.call = b.a.rt.Start(withScope(b.ctx, scope{agent: b.a, turn: b.t.n, step: b.step, callID: s.block.ID}), s.in)
	}
	return s.call
}

// start starts the next slot: tool/call (with the effective arguments), then pre-dispatch
// on the scheduler's goroutine (serially, in model order), then dispatch on its own
// goroutine. Post-execute, FinalizeContent and tools/result run when the slot is
// committed (Finish), in model order. A batch stopped meanwhile (while the slot's
// rewriters ran) starts nothing: the slot is settled as unstarted.
func (b *batch) start() {
	if b.stopping() {
		return
	}
	i := b.started
	s := &b.slots[i]
	b.create(s)
	seq, err := b.logCall(s)
	if err != nil {
		b.err = err
		return
	}
	b.started++
	s.callSeq = seq
	s.call.PreDispatch()
	if h := s.call.Halt(); h != nil {
		// Part A item 7: a pre-execute halt denies this call and starts no further one.
		b.a.haltTurn(b.t, h.Reason)
	}
	b.inflight++
	go func() {
		s.call.Dispatch()
		b.settled <- i
	}()
}

// logCall appends the tool/call of s: its arguments as the model wrote them, or the
// effective ones with the model's beside them and the rewrite chain when a
// tools/rewrite-input rewrite changed them (docs/design/REWRITE-COMPACTION.md#15-durable-record).
func (b *batch) logCall(s *slot) (int64, error) {
	rec := dsh.ToolCall{Turn: b.t.n, Step: b.step, CallID: s.block.ID, Name: s.block.Name, Arguments: s.block.Arguments}
	if s.call != nil {
		rw := s.call.Rewritten()
		if rw.Changed {
			raw := s.block.Arguments
			rec.Arguments, rec.ModelArguments = rw.Arguments, &raw
		}
		rec.Rewrite, rec.RewriteError = rw.Rewrite, rw.Error
	}
	ev, err := b.a.log.Append(b.a.base, rec)
	if err != nil {
		return 0, fmt.Errorf("loop: tool/call %q: %w", s.block.ID, err)
	}
	return ev.Seq, nil
}

// waitOne waits for one in-flight dispatch to settle and commits what became contiguous.
// Settled calls are committed only while the scheduler waits (for pool capacity, or for
// the group to drain), so that the tool/call events of calls started together precede
// their results.
func (b *batch) waitOne() {
	i := <-b.settled
	b.slots[i].done = true
	b.inflight--
	b.commit()
}

// drain waits for every in-flight dispatch and commits it.
func (b *batch) drain() {
	for b.inflight > 0 {
		b.waitOne()
	}
	b.commit()
}

// commit commits the settled slots that follow the committed prefix, in model order:
// finish, tool/result citing the tool/call, the contexts, concludesTurn, a halt.
func (b *batch) commit() {
	for b.committed < b.started && b.slots[b.committed].done {
		s := &b.slots[b.committed]
		b.committed++
		b.record(s, s.call.Finish())
	}
}

// record logs res as the result of s and keeps its contexts, conclusion and halt.
func (b *batch) record(s *slot, res tools.Result) {
	if err := b.logResult(s, res); err != nil {
		if b.err == nil {
			b.err = err
		}
		return
	}
	b.contexts = append(b.contexts, res.AdditionalContexts()...)
	if b.a.reg.Listens(dsh.PostBatchEventName) {
		b.keep(s, res)
	}
	if res.ConcludesTurn() {
		b.concluded = true
	}
	if res.Halt != nil {
		b.a.haltTurn(b.t, res.Halt.Reason)
	}
}

// logResult appends the tool/result of s.
func (b *batch) logResult(s *slot, res tools.Result) error {
	content := res.Content()
	if content == nil {
		content = []dsh.ContentBlock{}
	}
	rec := dsh.ToolResultLogged{Turn: b.t.n, Step: b.step, Message: dsh.UserMessage{
		ID:      fmt.Sprintf("tr_%d_%d_%s", b.t.n, b.step, s.block.ID),
		Role:    dsh.UserMessageRoleUser,
		Content: []dsh.ContentBlock{dsh.ToolResultBlock{ToolCallID: s.block.ID, Content: content, IsError: res.IsError()}},
		Source:  dsh.SourceTool{CallID: s.block.ID},
	}}
	if s.call != nil {
		rec.RewriteNotice = s.call.Rewritten().Notice
	}
	if len(res.Tails) > 0 {
		rec.Tails = res.Tails
	}
	switch o := res.Outcome.(type) {
	case dsh.ToolSuccess:
		rec.Meta = o.Meta
	case dsh.ToolFailure:
		rec.Meta = o.Meta
		if o.Error.Info != nil {
			info := *o.Error.Info
			rec.Error = &info
		}
	}
	if _, err := b.a.log.Append(b.a.base, rec, session.WithSources(s.callSeq)); err != nil {
		return fmt.Errorf("loop: tool/result %q: %w", s.block.ID, err)
	}
	return nil
}

// synthetic settles the next unstarted slot of a stopped batch: its tool/call and an
// ABORTED_BEFORE_DISPATCH result, from the pipeline run under a cancelled context (so
// tools/result observers see it too).
func (b *batch) synthetic() {
	s := &b.slots[b.started]
	seq, err := b.logCall(s)
	b.started++
	if err != nil {
		b.err = err
		return
	}
	s.callSeq = seq
	if s.call != nil {
		// Created (and rewritten) while being classified, never started.
		s.call.Skip()
		b.record(s, s.call.Finish())
		return
	}
	ctx, cancel := context.WithCancel(withScope(b.ctx, scope{agent: b.a, turn: b.t.n, step: b.step, callID: s.block.ID}))
	cancel()
	s.call = b.a.rt.Start(ctx, s.in) // a cancelled context runs no rewriter
	b.record(s, s.call.Finish())
}

// keep keeps s's committed result for agent/post-batch: the arguments it ran with and the
// content the model reads.
func (b *batch) keep(s *slot, res tools.Result) {
	args := json.RawMessage(s.block.Arguments)
	if s.call != nil {
		if a := s.call.Exec().Arguments; a != nil {
			args = a
		}
	}
	content := res.Content()
	if content == nil {
		content = []dsh.ContentBlock{}
	}
	s.result = &dsh.BatchCall{CallID: s.block.ID, Name: s.block.Name, Arguments: args, Content: content, IsError: res.IsError()}
}

// postBatch runs agent/post-batch once every call of the batch has its tool/result and the
// results' contexts were accepted, unless the turn is being stopped or the batch failed:
// every listener runs; a failure ends the turn error (returned).
func (b *batch) postBatch() error {
	if b.err != nil || b.a.stopCause(b.t) != nil || !b.a.reg.Listens(dsh.PostBatchEventName) {
		return nil
	}
	calls := make([]dsh.BatchCall, 0, len(b.slots))
	for _, s := range b.slots {
		if s.result != nil {
			calls = append(calls, *s.result)
		}
	}
	return b.a.reg.NotifyPostBatch(b.ctx, &dsh.PostBatchPayload{
		Agent: b.a, AgentID: b.a.id, Turn: b.t.n, Step: b.step, Calls: calls})
}

// accept puts the batch's contexts at the end of the next-step inbox, after every
// tool/result (B §5.5), unless a Cancel without keepInbox discards them (Part A item 11).
func (b *batch) accept() {
	if len(b.contexts) == 0 {
		return
	}
	if b.a.discarding(b.t) {
		b.a.emitDiscarded(dsh.InboxTargetNextStep, b.contexts)
		return
	}
	if err := b.a.insert(b.a.base, dsh.InboxTargetNextStep, b.contexts); err != nil && b.err == nil {
		b.err = err
	}
}
