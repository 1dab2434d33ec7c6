package tools

import (
	"encoding/json"
	"slices"

	"github.com/dshkit/dsh/generated/dsh"
)

// MaxTailCalls is how many tail calls (tools/post-execute tail decisions) may chain after
// a call: the tail call past it fails at creation (CodeTailTooDeep), before any policy, so
// that listeners that keep answering a tail call with another one end the chain instead of
// running calls forever.
const MaxTailCalls = 16

// tailed records a post-execute tail decision: the candidate is kept as this call's result
// (FinalizeContent and tools/result see it), and Finish then runs the tail call, whose
// result replaces it. Arguments that are not lossless JSON fail the call instead.
func (c *call) tailed(d dsh.PostToolTail) {
	args, err := snapshotJSON(d.Arguments)
	if err != nil {
		c.cand = c.finalFailure(errTailArgs(d.Name, err))
		return
	}
	d.Arguments = args
	c.tail = &d
}

// finishTail runs the call's tail call to its end (once; later calls return the same
// result) and returns its result as the call's: its outcome, the tail calls that ran, the
// first halt of the chain, and this call's Exec.
func (k *Call) finishTail(res Result) Result {
	if k.next == nil {
		c := k.c
		original := c.exec.Name
		if c.exec.OriginalName != nil {
			original = *c.exec.OriginalName
		}
		k.next = c.rt.Start(c.caller, Input{
			CallID: c.exec.CallID, Name: c.tail.Name, Arguments: json.RawMessage(c.tail.Arguments),
			Turn: c.turn, Step: c.step, AgentID: c.agentID, Parent: c.exec.Parent,
			RootCallID: c.exec.RootCallID, depth: c.depth, original: original, tails: c.tails + 1,
		})
	}
	t := k.next.Finish()
	ran := k.next.c.exec
	out := Result{Exec: res.Exec, Outcome: t.Outcome, Halt: res.Halt,
		Tails: slices.Concat([]dsh.ToolTail{{Name: ran.Name, Arguments: cloneRaw(ran.Arguments)}}, t.Tails)}
	if out.Halt == nil {
		out.Halt = t.Halt
	}
	return out
}
