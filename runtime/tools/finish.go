package tools

import (
	"log/slog"

	"github.com/dshkit/dsh/generated/dsh"
)

// finish applies the captured finalizer once to the candidate and publishes the result to
// the tools/result observers (docs/design/SEMANTICS.md#48-stage-e-materialization-finalization-observation). Every candidate is already
// materialized: the pipeline snapshots whatever a listener supplies when it takes it.
func (c *call) finish() dsh.ToolExecutionResult {
	if c.finalizer() != nil {
		c.applyFinalize()
	}
	if c.rt.hooks.Listens(dsh.ToolResultEventName) {
		observed := c.cand.clone()
		c.view(&c.res.Exec, viewResult)
		c.res.Result = observed.result()
		if err := c.rt.hooks.EmitToolResult(c.ctx, &c.res); err != nil {
			c.rt.log.LogAttrs(c.ctx, slog.LevelDebug, "tools: tools/result observer failed",
				slog.String("tool", c.exec.Name), slog.String("callId", c.exec.CallID), slog.Any("error", err))
		}
	}
	// The call is over: its private outcome becomes the caller's.
	return c.cand.result()
}

// applyFinalize runs the finalizer on the candidate; it may replace only the content. A
// failing finalizer, or one returning content that is not lossless, gives the failure of
// that error, with the contexts that survive every failure.
func (c *call) applyFinalize() {
	in := c.cand.clone()
	var exec dsh.ToolExecution
	c.view(&exec, viewFinalize)
	content, err := callFinalize(c.finalizer(), exec, in.result())
	if err == nil && content != nil {
		if content, err = snapshotContent(content); err != nil {
			err = errResultNotJSON
		}
	}
	if err != nil {
		c.rt.log.LogAttrs(c.ctx, slog.LevelWarn, "tools: finalizer failed",
			slog.String("tool", c.exec.Name), slog.String("callId", c.exec.CallID), slog.Any("error", err))
		c.cand = c.finalFailure(err)
		return
	}
	if content != nil {
		c.cand.content = content
	}
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
