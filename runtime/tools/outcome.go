package tools

import (
	"encoding/json"
	"strings"
	"unsafe"

	"github.com/dshkit/dsh/generated/dsh"
)

// outcome is the pipeline's private form of a result: every part is lossless JSON and
// owned by the call. It becomes a dsh.ToolExecutionResult only where one is handed out.
type outcome struct {
	failed    bool
	value     json.RawMessage // success only
	err       dsh.ToolError   // failure only
	content   []dsh.ContentBlock
	meta      json.RawMessage
	contexts  []dsh.UserMessage
	concludes bool // success only
}

// result returns o as a result value (ToolSuccess or ToolFailure), sharing o's memory.
func (o *outcome) result() dsh.ToolExecutionResult {
	content := o.content
	if content == nil {
		content = []dsh.ContentBlock{}
	}
	if o.failed {
		return dsh.ToolFailure{Error: o.err, Content: content, Meta: o.meta, AdditionalContexts: o.contexts}
	}
	s := dsh.ToolSuccess{Value: o.value, Content: content, Meta: o.meta, AdditionalContexts: o.contexts}
	if o.concludes {
		s.ConcludesTurn = newTrue()
	}
	return s
}

// clone returns a copy of o that shares no mutable memory with it.
func (o *outcome) clone() outcome {
	c := *o
	c.value = cloneRaw(o.value)
	c.meta = cloneRaw(o.meta)
	c.content = cloneContent(o.content)
	c.contexts = cloneMessages(o.contexts)
	if o.err.Info != nil {
		info := *o.err.Info
		c.err.Info = &info
	}
	return c
}

// id is the identity of o's memory, by which normalize recognizes core dispatch's own
// result coming back from the wrappers.
func (o *outcome) id() resultID {
	return resultID{failed: o.failed,
		value: unsafe.SliceData(o.value), valueLen: uint32(len(o.value)),
		content: unsafe.SliceData(o.content), contentLen: uint32(len(o.content)),
		meta: unsafe.SliceData(o.meta), metaLen: uint32(len(o.meta))}
}

// resultID is the identity of a result's value, content and meta memory (lengths modulo
// 2^32: a slice at the same address whose length differs by 4 GiB is not a concern).
type resultID struct {
	value, meta                   *byte
	content                       *dsh.ContentBlock
	valueLen, metaLen, contentLen uint32
	failed                        bool
}

// view returns the parts of a listener-provided result without copying or validating
// them (the registry hands over value variants only); ok is false for a nil result.
func view(r dsh.ToolExecutionResult) (o outcome, ok bool) {
	switch v := r.(type) {
	case dsh.ToolSuccess:
		return successView(v), true
	case dsh.ToolFailure:
		return failureView(v), true
	}
	return outcome{}, false
}

func successView(v dsh.ToolSuccess) outcome {
	return outcome{value: v.Value, content: v.Content, meta: v.Meta, contexts: v.AdditionalContexts,
		concludes: v.ConcludesTurn != nil && *v.ConcludesTurn}
}

func failureView(v dsh.ToolFailure) outcome {
	return outcome{failed: true, err: v.Error, content: v.Content, meta: v.Meta, contexts: v.AdditionalContexts}
}

// snapshotParts validates a failure's listener-provided parts and makes them private.
func (o *outcome) snapshotFailure() error {
	var err error
	if err := validText(o.err, "error"); err != nil {
		return err
	}
	if o.err.Info != nil {
		info := *o.err.Info
		o.err.Info = &info
	}
	if o.content, err = snapshotContent(o.content); err != nil {
		return err
	}
	if o.meta, err = snapshotMeta(o.meta); err != nil {
		return err
	}
	o.contexts, err = snapshotMessages(o.contexts)
	return err
}

// failureOf is the failure with message msg and info: content "Error: <msg>". The message
// and info are made JSON-safe (see jsonSafe): they come from Go errors, panics and policy
// reasons, whatever their bytes.
func failureOf(msg string, info *dsh.ToolErrorInfo) outcome {
	msg = jsonSafe(msg)
	if info != nil {
		if name, code := jsonSafe(info.Name), jsonSafe(info.Code); name != info.Name || code != info.Code {
			info = &dsh.ToolErrorInfo{Name: name, Code: code}
		}
	}
	return outcome{failed: true, err: dsh.ToolError{Message: msg, Info: info},
		content: []dsh.ContentBlock{dsh.TextBlock{Text: "Error: " + msg}}}
}

// jsonSafe returns s with each run of invalid UTF-8 bytes replaced by U+FFFD (encoding/json
// would write U+FFFD for them anyway, byte by byte). Text the pipeline derives from an error
// or a reason always makes a failure; a value, content or context that a party supplies with
// invalid bytes is not lossless instead.
func jsonSafe(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// failure is the failure of err (docs/design/SEMANTICS.md#32-what-a-failing-listener-becomes).
func failure(err error) outcome {
	msg, info := describe(err)
	return failureOf(msg, info)
}

// unknownTool is the failure of a call of an unknown tool refused at creation
// (WithUnknownTool): text is both its message and, as it is, its content.
func unknownTool(text string) outcome {
	text = jsonSafe(text)
	return outcome{failed: true, err: dsh.ToolError{Message: text, Info: &dsh.ToolErrorInfo{Name: NameToolNotFound, Code: CodeUnknownTool}},
		content: []dsh.ContentBlock{dsh.TextBlock{Text: text}}}
}

// denial is the failure of a policy denial: no info.
func denial(reason string) outcome { return failureOf(reason, nil) }

// aborted is the cancellation failure for the body state: ABORTED once the body was
// invoked, ABORTED_BEFORE_DISPATCH otherwise.
func aborted(bodyInvoked bool) outcome {
	if bodyInvoked {
		return failureOf(msgAborted, &dsh.ToolErrorInfo{Name: NameAbort, Code: CodeAborted})
	}
	return failureOf(msgAbortedBefore, &dsh.ToolErrorInfo{Name: NameAbort, Code: CodeAbortedBeforeDispatch})
}
