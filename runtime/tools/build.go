package tools

import (
	"encoding/json"
	"errors"

	"github.com/dshkit/dsh/generated/dsh"
)

// errResultNotJSON is the failure of a result that cannot be materialized (B §4.8).
var errResultNotJSON = errors.New(msgResultNotJSON)

// buildSuccess builds the success result of a canonical value (docs/design/SEMANTICS.md#45-building-a-success-result), or
// the INVALID_TOOL_OUTPUT failure of an invalid one. value is the lossless encoding of the
// value, or verr why there is none.
func (c *call) buildSuccess(t *tool, value json.RawMessage, verr error, concluded bool) outcome {
	return c.buildSuccessText(t, value, verr, concluded, nil)
}

// buildSuccessText is buildSuccess with the value's text when the value is a string,
// which spares the default rendering from decoding it.
func (c *call) buildSuccessText(t *tool, value json.RawMessage, verr error, concluded bool, text *string) outcome {
	name := c.exec.Name
	if verr != nil {
		violation := msgValueNotLossless
		if !errors.Is(verr, errNotLossless) {
			violation = "value snapshot failed: " + printable(verr)
		}
		return failure(errInvalidOutput(name, violation))
	}
	if t.output != nil {
		if v := t.output.validate(value, "value"); v != "" {
			return failure(errInvalidOutput(name, v))
		}
	}
	out := t.def.Output
	var content []dsh.ContentBlock
	if out == nil || out.Render == nil {
		if text == nil {
			s := textOf(value)
			text = &s
		}
		content = []dsh.ContentBlock{dsh.TextBlock{Text: *text}}
	} else {
		rendered, err := callProjector(out.Render, c.exec.Arguments, value)
		if err != nil {
			return failure(errInvalidOutput(name, "output.render failed: "+message(err)))
		}
		if content, err = snapshotContent(rendered); err != nil {
			return failure(errInvalidOutput(name, "output.render returned non-lossless JSON"))
		}
	}
	o := outcome{value: value, content: content, concludes: concluded}
	if out != nil && out.PresentationMeta != nil && !c.nested() {
		meta, err := callProjector(out.PresentationMeta, c.exec.Arguments, value)
		if err != nil {
			return failure(errInvalidOutput(name, "output.presentationMeta failed: "+message(err)))
		}
		if o.meta, err = snapshotMeta(meta); err != nil {
			return failure(errInvalidOutput(name, "output.presentationMeta returned non-lossless JSON"))
		}
	}
	return o
}

// callProjector calls a render or presentationMeta projector with private copies of the
// arguments and the value, turning a panic into an error.
func callProjector[T any](f func(args, value json.RawMessage) (T, error), args, value json.RawMessage) (out T, err error) {
	defer func() {
		if p := recover(); p != nil {
			var zero T
			out, err = zero, &panicError{value: p}
		}
	}()
	return f(cloneRaw(args), cloneRaw(value))
}

// message is the failure message of err (B §3.2).
func message(err error) string {
	msg, _ := describe(err)
	return msg
}
