package tools

import (
	"context"

	"github.com/dshkit/dsh/generated/dsh"
)

// dispatch runs the tools/execute wrappers around core dispatch (docs/design/SEMANTICS.md#44-stage-c-dispatch-and-body): the
// candidate goes to post-execute, a wrapper or normalization failure is final.
func (c *call) dispatch() stage {
	var (
		r   dsh.ToolExecutionResult
		err error
	)
	c.wrapped = c.rt.hooks.Listens(dsh.ExecuteEventName)
	if c.wrapped {
		c.view(&c.exe.Exec, viewExecute)
		// The call is the wrappers' context: the caller's, plus itself for tools.Fail.
		r, err = c.rt.hooks.RunExecute(c, &c.exe, c.core)
	} else {
		// No wrapper: core dispatch's own result is the candidate, with nothing to
		// normalize.
		c.cand, _ = c.invoke(c.ctx)
	}

	// A started body is always awaited, even when a wrapper returned without waiting.
	c.mu.Lock()
	c.sealed = true
	c.mu.Unlock()
	c.body.Wait()

	if c.wrapped {
		ferr, failed := c.takeFinal()
		if err != nil {
			return c.settle(c.listenerFailure(err), toFinish)
		}
		if failed {
			return c.settle(c.finalFailure(ferr), toFinish)
		}
		if !c.normalize(r) {
			return toFinish
		}
	}
	o := &c.cand
	// B §4.4 step 3: the body's deferred contexts come first, for success and failure.
	if len(c.survivors) > 0 {
		o.contexts = append(c.survivors[:len(c.survivors):len(c.survivors)], o.contexts...)
	}
	// B §4.4 step 4: only a success is replaced by the abort code.
	if !o.failed && c.ctx.Err() != nil {
		*o = c.abortSuccess(*o)
	}
	return toPost
}

// core is the innermost step of tools/execute: body dispatch (B §4.4 step 1). wctx is the
// context the innermost wrapper passed to next.
func (c *call) core(wctx context.Context) dsh.ToolExecutionResult {
	o, ok := c.invoke(wctx)
	if !ok {
		// next was called as its wrapper returned: nobody normalizes this result.
		return o.result()
	}
	return c.mint(o)
}

// invoke is body dispatch under the context wctx: the body's result, or the failure
// that replaces it. ok is false when the run was already sealed (next was called as its
// wrapper returned), and nothing started.
func (c *call) invoke(wctx context.Context) (o outcome, ok bool) {
	bctx, stop := fuse(c.ctx, c.unwrapFinal(wctx))
	defer stop()
	if bctx.Err() != nil {
		return aborted(false), true
	}
	t := c.lookup()
	if t == nil {
		return failure(errUnknownTool(c.exec.Name)), true
	}
	// docs/design/REWRITE-COMPACTION.md#17-approval-binds-to-the-effective-arguments: an approved call's body gets exactly the arguments the
	// approval was given for (the body's view is a copy of these).
	if c.approved != "" && ArgsDigest(c.exec.Arguments) != c.approved {
		return failureOf("internal error: the arguments of the approved call changed before dispatch", nil), true
	}
	c.mu.Lock()
	if c.sealed {
		c.mu.Unlock()
		return aborted(false), false
	}
	c.bodyInvoked = true
	c.body.Add(1)
	defer c.body.Done()
	c.rc.c = c
	c.view(&c.rc.exec, viewBody)
	c.mu.Unlock()

	value, err := runBody(bctx, t.def.Run, &c.rc)
	deferred, concluded := c.rc.close()
	if err != nil {
		o = failure(err)
	} else {
		raw, verr := marshalValue(value)
		var text *string
		if s, ok := value.(string); ok && verr == nil {
			text = &s
		}
		if o = c.buildSuccessText(t, raw, verr, concluded, text); !o.failed && bctx.Err() != nil {
			o = aborted(true)
		}
	}
	c.mu.Lock()
	c.survivors = deferred
	c.mu.Unlock()
	return o, true
}

// runBody calls the body, turning a panic into an error.
func runBody(ctx context.Context, run func(context.Context, *RunContext) (any, error), rc *RunContext) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			v, err = nil, &panicError{value: p}
		}
	}()
	return run(ctx, rc)
}

// fuse returns the context the body runs under (docs/design/SEMANTICS.md#a1-the-bodys-context-follows-the-caller): the
// caller's own when the wrapper passed it on, else a context with w's values that is
// cancelled when either is.
func fuse(caller, w context.Context) (context.Context, func()) {
	if w == nil || sameContext(caller, w) {
		return caller, func() {}
	}
	ctx, cancel := context.WithCancelCause(w)
	if caller.Err() != nil {
		cancel(context.Cause(caller))
		return ctx, func() {}
	}
	stop := context.AfterFunc(caller, func() { cancel(context.Cause(caller)) })
	return ctx, func() {
		stop()
		cancel(context.Canceled)
	}
}

// sameContext reports whether a and b are the same context; a non-comparable context is
// never the same.
func sameContext(a, b context.Context) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

// mint records o, core dispatch's own result, and returns a copy of it for the wrappers,
// which normalize recognizes when it comes back.
func (c *call) mint(o outcome) dsh.ToolExecutionResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sealed {
		// next was called as its wrapper returned: nobody normalizes this result.
		handed := o.clone()
		return handed.result()
	}
	handed := o.clone()
	r := handed.result()
	v, _ := view(r)
	c.cand, c.hasMinted, c.handed = o, true, v.id()
	return r
}

// normalize makes what the wrappers returned the dispatch candidate (B §2.11): core
// dispatch's own result passes unchanged (with the contexts the wrappers attached); any
// other success is re-normalized through the output declaration (its authored content
// and meta are ignored); a failure is kept. It returns false for a final failure.
func (c *call) normalize(r dsh.ToolExecutionResult) bool {
	v, ok := view(r)
	if !ok {
		c.cand = c.finalFailure(errResultNotJSON)
		return false
	}
	contexts, err := snapshotMessages(v.contexts)
	if err != nil {
		c.cand = c.notLossless("tools/execute result", err)
		return false
	}
	c.mu.Lock()
	hasMinted, handed := c.hasMinted, c.handed
	c.mu.Unlock()
	switch {
	case hasMinted && v.id() == handed:
		// c.cand is core dispatch's own result.
	case v.failed:
		if err := v.snapshotFailure(); err != nil {
			c.cand = c.finalFailure(errResultNotJSON)
			return false
		}
		c.cand = v
	default:
		t := c.lookup()
		if t == nil {
			c.cand = c.finalFailure(errUnknownTool(c.exec.Name))
			return false
		}
		raw, verr := snapshotJSON(v.value)
		if c.cand = c.buildSuccess(t, raw, verr, c.concluded()); c.cand.failed {
			c.cand.contexts = c.survivors
			return false
		}
	}
	c.cand.contexts = contexts
	return true
}

// concluded reports whether the body called ConcludeTurn.
func (c *call) concluded() bool {
	c.mu.Lock()
	invoked := c.bodyInvoked
	c.mu.Unlock()
	return invoked && c.rc.isConcluded()
}

// invoked reports whether the body was invoked.
func (c *call) invoked() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bodyInvoked
}

// abortSuccess replaces a success by the cancellation failure for the body state,
// keeping its contexts (B §4.6); a failure is kept.
func (c *call) abortSuccess(o outcome) outcome {
	if o.failed {
		return o
	}
	f := aborted(c.invoked())
	f.contexts = o.contexts
	return f
}
