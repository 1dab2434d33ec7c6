package tools

import (
	"errors"
	"slices"
	"strings"

	"github.com/dshkit/dsh/generated/dsh"
)

// postExecute runs the tools/post-execute waterfall over the candidate and applies its
// decision (SEMANTICS.md B §4.7).
func (c *call) postExecute(candidate outcome) outcome {
	payload := candidate.clone()
	c.post = dsh.PostToolPayload{Exec: c.view(), Result: payload.result()}
	decision, err := c.rt.hooks.RunPostTool(c.ctx, &c.post, nil)
	if err != nil {
		return c.listenerFailure(err)
	}
	var o outcome
	switch d := decision.(type) {
	case dsh.PostToolAccept:
		o = c.accept(candidate, d)
	case *dsh.PostToolAccept:
		o = c.accept(candidate, *d)
	case dsh.PostToolBlock:
		o = c.block(d)
	case *dsh.PostToolBlock:
		o = c.block(*d)
	case dsh.PostToolHalt:
		c.halted(d.Reason)
		o = candidate
	case *dsh.PostToolHalt:
		c.halted(d.Reason)
		o = candidate
	default:
		return c.finalFailure(errors.New("unreachable: tools/post-execute returned an unknown decision"))
	}
	// A success whose caller was cancelled meanwhile becomes the cancellation result.
	if c.ctx.Err() != nil {
		o = c.abortSuccess(o)
	}
	return o
}

// halted records a post-execute halt, unless an earlier halt was recorded.
func (c *call) halted(reason string) {
	if c.halt == nil {
		c.halt = &Halt{Reason: reason, Point: HaltPostExecute}
	}
}

// block turns the result into a failure whose content is the feedback; the decision's
// contexts replace every earlier one, including on the failure paths that follow.
func (c *call) block(d dsh.PostToolBlock) outcome {
	contexts, cerr := snapshotMessages(d.AdditionalContexts)
	c.survivors = contexts
	feedback, err := snapshotContent(d.Feedback)
	if err != nil || cerr != nil {
		return c.finalFailure(errResultNotJSON)
	}
	return outcome{failed: true, err: dsh.ToolError{Message: blockMessage(feedback)},
		content: feedback, contexts: contexts}
}

// blockMessage is the error message of block feedback: its text blocks joined by "\n", a
// non-text block written "[<kind> content]".
func blockMessage(feedback []dsh.ContentBlock) string {
	if len(feedback) == 0 {
		return msgBlocked
	}
	parts := make([]string, len(feedback))
	for i, b := range feedback {
		if t, ok := b.(dsh.TextBlock); ok {
			parts[i] = t.Text
		} else {
			parts[i] = "[" + string(b.Kind()) + " content]"
		}
	}
	return strings.Join(parts, "\n")
}

// accept applies an accept decision: it may replace the content or the value (not both)
// and appends its contexts.
func (c *call) accept(o outcome, d dsh.PostToolAccept) outcome {
	if d.Content != nil && len(d.Value) != 0 {
		return c.finalFailure(errors.New(msgAcceptBoth))
	}
	extra, err := snapshotMessages(d.AdditionalContexts)
	if err != nil {
		return c.finalFailure(errResultNotJSON)
	}
	contexts := o.contexts
	if len(extra) > 0 {
		contexts = slices.Concat(o.contexts, extra)
	}
	switch {
	case len(d.Value) != 0:
		if o.failed {
			return c.finalFailure(errors.New(msgValueOfFailed))
		}
		t := c.rt.tools.lookup(c.agentID, c.exec.Name)
		if t == nil {
			return c.finalFailure(errUnknownTool(c.exec.Name))
		}
		raw, verr := snapshotJSON(d.Value)
		o = c.buildSuccess(t, raw, verr, c.concluded())
	case d.Content != nil:
		content, err := snapshotContent(d.Content)
		if err != nil {
			return c.finalFailure(errResultNotJSON)
		}
		o.content = content
	}
	o.contexts = contexts
	return o
}
