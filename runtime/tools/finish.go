package tools

import (
	"log/slog"

	"github.com/dshkit/dsh/generated/dsh"
)

// finish applies the captured finalizer once and publishes the result to the tools/result
// observers (SEMANTICS.md B §4.8). Every candidate is already materialized: the pipeline
// snapshots whatever a listener supplies when it takes it.
func (c *call) finish(o outcome) Result {
	if c.finalize != nil {
		o = c.applyFinalize(o)
	}
	observed := o.clone()
	c.res = dsh.ToolResultPayload{Exec: c.view(), Result: observed.result()}
	if err := c.rt.hooks.EmitToolResult(c.ctx, &c.res); err != nil {
		c.rt.log.LogAttrs(c.ctx, slog.LevelDebug, "tools: tools/result observer failed",
			slog.String("tool", c.exec.Name), slog.String("callId", c.exec.CallID), slog.Any("error", err))
	}
	// The call is over: its private exec and outcome become the caller's.
	return Result{Exec: c.exec, Outcome: o.result(), Halt: c.halt}
}

// applyFinalize runs the finalizer on o; it may replace only the content. A failing
// finalizer, or one returning content that is not lossless, gives the failure of that
// error, with the contexts that survive every failure.
func (c *call) applyFinalize(o outcome) outcome {
	in := o.clone()
	content, err := callFinalize(c.finalize, c.view(), in.result())
	if err == nil && content != nil {
		if content, err = snapshotContent(content); err != nil {
			err = errResultNotJSON
		}
	}
	if err != nil {
		c.rt.log.LogAttrs(c.ctx, slog.LevelWarn, "tools: finalizer failed",
			slog.String("tool", c.exec.Name), slog.String("callId", c.exec.CallID), slog.Any("error", err))
		return c.finalFailure(err)
	}
	if content != nil {
		o.content = content
	}
	return o
}

// callFinalize calls a finalizer, turning a panic into an error.
func callFinalize(f func(dsh.ToolExecution, dsh.ToolExecutionResult) ([]dsh.ContentBlock, error),
	exec dsh.ToolExecution, r dsh.ToolExecutionResult) (content []dsh.ContentBlock, err error) {
	defer func() {
		if p := recover(); p != nil {
			content, err = nil, &panicError{value: p}
		}
	}()
	return f(exec, r)
}
