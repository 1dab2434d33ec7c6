package tools

import (
	"context"
	"log/slog"

	"github.com/dshkit/dsh/generated/dsh"
)

// Call is one tool call driven stage by stage, for the agent loop's scheduler
// (docs/design/SEMANTICS.md#54-tool-batch-scheduling-and-ordering): pre-dispatch serially in model order, dispatch concurrently
// within a parallel group, and finishing (post-execute, FinalizeContent, tools/result) at
// commit, in model order. Each method first runs the stages before it that have not run;
// a stage a call skips (after a final failure or a denial) does nothing. A Call is not
// safe for concurrent use: call its methods one after the other (from any goroutines).
type Call struct {
	c    *call                   // the call; the stage it is at is c.at
	out  dsh.ToolExecutionResult // the final outcome, once c.finished
	next *Call                   // the tail call that replaces the result, once started
}

// Start creates a call (docs/design/SEMANTICS.md#42-stage-a-creation): it reads in once, mints the token, captures
// the visible definition's FinalizeContent, runs the tools/rewrite-input phase
// (docs/design/REWRITE-COMPACTION.md#11-placement-and-ordering to docs/design/REWRITE-COMPACTION.md#14-validation-and-failure-fail-closed; see Rewritten and Mode), and snapshots and validates the
// effective arguments. ctx is the caller's context for every stage, the rewriters' too.
func (rt *Runtime) Start(ctx context.Context, in Input) *Call {
	if ctx == nil {
		ctx = context.Background()
	}
	c := rt.newCall(ctx, in)
	k := &c.staged // one allocation for the call and its handle
	k.c = c
	k.guard(func() { k.c.at = k.c.create(in) })
	return k
}

// Exec returns the sealed call (with its own copy of the arguments).
func (k *Call) Exec() dsh.ToolExecution {
	v := k.c.exec
	v.Arguments = cloneRaw(v.Arguments)
	v.ModelArguments = cloneRaw(v.ModelArguments)
	if v.AgentID != nil {
		id := *v.AgentID
		v.AgentID = &id
	}
	if v.OriginalName != nil {
		name := *v.OriginalName
		v.OriginalName = &name
	}
	return v
}

// Rewritten returns what the tools/rewrite-input phase made of the call, for its tool/call
// and tool/result records (the zero Rewritten when no listener ran).
func (k *Call) Rewritten() Rewritten { return k.c.rewritten() }

// Mode classifies the call for the loop's scheduler (docs/design/SEMANTICS.md#410-classification-and-registry-rules) on its
// effective arguments, those a tools/rewrite-input rewrite made (a rewrite may turn a
// read into a write): ModeExclusive for a call whose creation already failed.
func (k *Call) Mode() Mode {
	if k.c.at != toPolicy {
		return ModeExclusive
	}
	return modeOf(k.c.def, k.c.exec.Arguments)
}

// Skip settles a call whose pre-dispatch has not run as ABORTED_BEFORE_DISPATCH, for a
// scheduler that created it and then starts no further call; Finish then runs
// FinalizeContent and the tools/result observers as for any call. A call already past
// creation's final failures, or already started, is left as it is.
func (k *Call) Skip() {
	if k.c.at == toPolicy {
		k.c.cand, k.c.at = aborted(false), toFinish
	}
}

// Halt returns the halt decided for the call so far (after PreDispatch: a pre-execute
// halt, on which the scheduler starts no further call), or nil.
func (k *Call) Halt() *Halt {
	if k.c.halt == nil {
		return nil
	}
	h := *k.c.halt
	return &h
}

// PreDispatch runs pre-dispatch (B §4.3): the abort check, the tools/pre-execute
// waterfall, ask resolution and the guards.
func (k *Call) PreDispatch() {
	if k.c.at == toPolicy {
		k.guard(func() { k.c.at = k.c.policy() })
	}
}

// Dispatch runs the tools/execute wrappers around the body (B §4.4), if pre-dispatch
// allowed the call. It returns once a started body has settled.
func (k *Call) Dispatch() {
	k.PreDispatch()
	if k.c.at == toDispatch {
		k.guard(func() { k.c.at = k.c.dispatch() })
	}
}

// Finish runs post-execute (B §4.7) where it applies, then FinalizeContent and the
// tools/result observers (B §4.8), and returns the result; later calls return the same
// result.
func (k *Call) Finish() Result {
	k.Dispatch()
	if k.c.at == toPost {
		k.guard(func() { k.c.postExecute(); k.c.at = toFinish })
	}
	if !k.c.finished {
		k.guard(func() { k.out = k.c.finish() })
		if k.out == nil { // finish itself failed
			k.out = k.c.cand.result()
		}
		k.c.finished = true
	}
	res := Result{Exec: k.c.exec, Outcome: k.out, Halt: k.c.halt}
	if k.c.tail == nil {
		return res
	}
	return k.finishTail(res)
}

// guard runs one stage with a safety net for a defect of the runtime itself (plugin code
// is recovered where it runs): a panic makes the call's candidate a final failure.
func (k *Call) guard(stage func()) {
	defer func() {
		if p := recover(); p != nil {
			k.c.rt.log.LogAttrs(k.c.ctx, slog.LevelError, "tools: internal error",
				slog.String("tool", k.c.exec.Name), slog.String("callId", k.c.exec.CallID), slog.Any("panic", p))
			k.c.cand, k.c.at = failureOf("internal error: "+printable(p), nil), toFinish
		}
	}()
	stage()
}
