package tools

import (
	"errors"
	"slices"
	"strings"

	"github.com/dshkit/dsh/generated/dsh"
)

// postExecute runs the tools/post-execute waterfall over the candidate and applies its
// decision to it (docs/design/SEMANTICS.md#47-stage-d-applying-post-execute).
func (c *call) postExecute() {
	if !c.rt.hooks.Listens(dsh.PostToolEventName) {
		// Nobody listens: the decision is accept{}, which keeps the candidate.
		c.abortSucceeded()
		return
	}
	payload := c.cand.clone()
	c.view(&c.post.Exec, viewPost)
	c.post.Result = payload.result()
	decision, err := c.rt.hooks.RunPostTool(c.ctx, &c.post, nil)
	if err != nil {
		c.cand = c.listenerFailure(err)
		return
	}
	switch d := decision.(type) {
	case dsh.PostToolAccept:
		c.accept(d)
	case dsh.PostToolBlock:
		c.cand = c.block(d)
	case dsh.PostToolHalt:
		c.halted(d.Reason)
	case dsh.PostToolTail:
		c.tailed(d)
	default:
		c.cand = c.finalFailure(errors.New("unreachable: tools/post-execute returned an unknown decision"))
		return
	}
	c.abortSucceeded()
}

// abortSucceeded makes a success whose caller was cancelled meanwhile the cancellation
// result.
func (c *call) abortSucceeded() {
	if !c.cand.failed && c.ctx.Err() != nil {
		c.cand = c.abortSuccess(c.cand)
	}
}

// halted records a post-execute halt, unless an earlier halt was recorded.
func (c *call) halted(reason string) {
	if c.halt == nil {
		c.halt = &Halt{Reason: jsonSafe(reason), Point: HaltPostExecute}
	}
}

// block turns the result into a failure whose content is the feedback; the decision's
// contexts replace every earlier one, including on the failure paths that follow.
func (c *call) block(d dsh.PostToolBlock) outcome {
	contexts, cerr := snapshotMessages(d.AdditionalContexts)
	c.survivors = contexts
	feedback, err := snapshotContent(d.Feedback)
	if cerr != nil {
		return c.notLossless("post-execute block", cerr)
	}
	if err != nil {
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

// accept applies an accept decision to the candidate: it may replace the content or the
// value (not both) and appends its contexts.
func (c *call) accept(d dsh.PostToolAccept) {
	if d.Content != nil && len(d.Value) != 0 {
		c.cand = c.finalFailure(errors.New(msgAcceptBoth))
		return
	}
	extra, err := snapshotMessages(d.AdditionalContexts)
	if err != nil {
		c.cand = c.notLossless("post-execute accept", err)
		return
	}
	contexts := c.cand.contexts
	if len(extra) > 0 {
		contexts = slices.Concat(c.cand.contexts, extra)
	}
	switch {
	case len(d.Value) != 0:
		if c.cand.failed {
			c.cand = c.finalFailure(errors.New(msgValueOfFailed))
			return
		}
		t := c.lookup()
		if t == nil {
			c.cand = c.finalFailure(errUnknownTool(c.exec.Name))
			return
		}
		raw, verr := snapshotJSON(d.Value)
		c.cand = c.buildSuccess(t, raw, verr, c.concluded())
	case d.Content != nil:
		content, err := snapshotContent(d.Content)
		if err != nil {
			c.cand = c.finalFailure(errResultNotJSON)
			return
		}
		c.cand.content = content
	case len(extra) == 0:
		return // accept{}: the candidate is unchanged
	}
	c.cand.contexts = contexts
}
