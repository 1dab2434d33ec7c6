package tools

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/dshkit/dsh/generated/dsh"
)

// Error names of the structured failures (ToolErrorInfo.Name).
const (
	// NameHarnessError is the name of a structured error a tool body, listener or plugin
	// raised (the default Name of an Error).
	NameHarnessError = "HarnessError"
	// NameToolNotFound is the name of an UNKNOWN_TOOL failure.
	NameToolNotFound = "ToolNotFoundError"
	// NameToolOutput is the name of an INVALID_TOOL_OUTPUT failure.
	NameToolOutput = "ToolOutputError"
	// NameToolArgs is the name of an INVALID_ARGS failure.
	NameToolArgs = "ToolArgsError"
	// NameAbort is the name of the ABORTED and ABORTED_BEFORE_DISPATCH failures.
	NameAbort = "AbortError"
)

// Error codes of the structured failures (ToolErrorInfo.Code).
const (
	// CodeUnknownTool: no tool of that name is visible to the call.
	CodeUnknownTool = "UNKNOWN_TOOL"
	// CodeInvalidToolOutput: the tool's value, content or meta is not valid output.
	CodeInvalidToolOutput = "INVALID_TOOL_OUTPUT"
	// CodeInvalidArgs: the arguments violate the tool's input schema.
	CodeInvalidArgs = "INVALID_ARGS"
	// CodeAborted: the caller cancelled the call after the body was invoked.
	CodeAborted = "ABORTED"
	// CodeAbortedBeforeDispatch: the caller cancelled the call before the body was invoked.
	CodeAbortedBeforeDispatch = "ABORTED_BEFORE_DISPATCH"
	// CodeInterrupted: a crash left the call without a result and its tool is not
	// Resumable; the resumed agent does not run it again (it may have taken effect).
	CodeInterrupted = "INTERRUPTED"
	// CodeNestingTooDeep: RunContext.Execute nested the call more than MaxNesting deep.
	CodeNestingTooDeep = "NESTING_TOO_DEEP"
	// CodeTailTooDeep: the call is a tail call past the MaxTailCalls of its chain.
	CodeTailTooDeep = "TAIL_TOO_DEEP"
	// CodeTailInvalid: a tools/post-execute tail decision's arguments are not lossless
	// JSON.
	CodeTailInvalid = "TAIL_INVALID"
)

// Error is a structured error: a tool body, a listener, a guard, an approver or a finalizer
// returns (or panics with) an *Error, possibly wrapped, to give the failure result an
// error.info {Name, Code}. A plain error gives a failure without info.
type Error struct {
	// Name is the error class; empty means NameHarnessError.
	Name string
	// Code is the machine-readable code, e.g. "BOOM".
	Code string
	// Message is the human-readable message; the model sees "Error: <Message>".
	Message string
}

// NewError returns a HarnessError with code and message.
func NewError(code, message string) *Error {
	return &Error{Name: NameHarnessError, Code: code, Message: message}
}

// Error returns e.Message.
func (e *Error) Error() string { return e.Message }

// info returns the ToolErrorInfo of e.
func (e *Error) info() *dsh.ToolErrorInfo {
	name := e.Name
	if name == "" {
		name = NameHarnessError
	}
	return &dsh.ToolErrorInfo{Name: name, Code: e.Code}
}

// Fixed messages of the pipeline (docs/design/SEMANTICS.md#210-ask-resolution-the-approval-seam, docs/design/SEMANTICS.md#42-stage-a-creation, docs/design/SEMANTICS.md#46-cancellation-codes, docs/design/SEMANTICS.md#47-stage-d-applying-post-execute, docs/design/SEMANTICS.md#48-stage-e-materialization-finalization-observation).
const (
	msgArgsNotJSON         = "tool execution arguments must be losslessly JSON-serializable"
	msgAbortedBefore       = "tool call aborted before dispatch"
	msgAborted             = "tool call aborted"
	msgResultNotJSON       = "tool result must be losslessly JSON-serializable"
	msgBlocked             = "tool result blocked by post-execute policy"
	msgAcceptBoth          = "tools/post-execute accept decision cannot replace both value and content"
	msgValueOfFailed       = "tools/post-execute cannot replace the value of a failed result"
	msgValueNotLossless    = "value is not lossless JSON"
	unprintableThrownValue = "<unprintable thrown value>"
)

func quoted(name string) string { return `"` + name + `"` }

func errUnknownTool(name string) *Error {
	return &Error{Name: NameToolNotFound, Code: CodeUnknownTool, Message: "unknown tool " + quoted(name)}
}

func errInvalidOutput(name, violation string) *Error {
	return &Error{Name: NameToolOutput, Code: CodeInvalidToolOutput,
		Message: "tool " + quoted(name) + " returned invalid output: " + violation}
}

func errNestingTooDeep(name string) *Error {
	return &Error{Code: CodeNestingTooDeep,
		Message: "tool " + quoted(name) + " is nested more than " + strconv.Itoa(MaxNesting) + " calls deep"}
}

func errTailTooDeep(name string) *Error {
	return &Error{Code: CodeTailTooDeep,
		Message: "tail call " + quoted(name) + " is past the " + strconv.Itoa(MaxTailCalls) + " tail calls a call may chain"}
}

func errTailArgs(name string, err error) *Error {
	return &Error{Code: CodeTailInvalid,
		Message: "tools/post-execute tail call " + quoted(name) + ": arguments are not lossless JSON: " + err.Error()}
}

func errInvalidArgs(violations string) *Error {
	return &Error{Name: NameToolArgs, Code: CodeInvalidArgs, Message: "invalid arguments: " + violations}
}

// panicError is a recovered panic of a tool body, finalizer, renderer, approver or
// classifier: the failure a returned error at that point becomes, with the panic value in
// the message (docs/design/SEMANTICS.md#a4-a-panic-is-a-failure-like-any-other).
type panicError struct{ value any }

// Error renders the panic value.
func (e *panicError) Error() string { return "panic: " + printable(e.value) }

// Unwrap returns the panic value when it is an error, so that a panicking *Error keeps
// its info.
func (e *panicError) Unwrap() error {
	err, _ := e.value.(error)
	return err
}

// printable renders a thrown value: an error's message, a Stringer's string, a string, or
// fmt's rendering; "<unprintable thrown value>" when even that panics.
func printable(v any) (s string) {
	defer func() {
		if recover() != nil {
			s = unprintableThrownValue
		}
	}()
	switch v := v.(type) {
	case error:
		return v.Error()
	case fmt.Stringer:
		return v.String()
	case string:
		return v
	}
	return fmt.Sprint(v)
}

// describe returns the message and info of the failure err (docs/design/SEMANTICS.md#32-what-a-failing-listener-becomes): the
// message of the error a listener returned or the panic it raised (without the registry's
// wrapping), and the info of the first *Error in its chain.
func describe(err error) (msg string, info *dsh.ToolErrorInfo) {
	var le *dsh.ListenerError
	switch {
	case safeAs(err, &le) && le.Panic != nil:
		msg = "panic: " + printable(le.Panic)
	case le != nil && le.Err != nil:
		msg = printable(le.Err)
	default:
		msg = printable(err)
	}
	var te *Error
	var ie InfoError
	switch {
	case safeAs(err, &te) && te != nil:
		info = te.info()
	case safeAs(err, &ie) && ie != nil:
		in := ie.ToolErrorInfo()
		info = &in
	}
	return msg, info
}

// InfoError is implemented by errors that carry a structured error identity of their own
// (a plugin's or a test harness's): a failure made from one gets its info {name, code},
// as from an *Error (docs/design/SEMANTICS.md#32-what-a-failing-listener-becomes).
type InfoError interface {
	error
	// ToolErrorInfo returns the error's {name, code}.
	ToolErrorInfo() dsh.ToolErrorInfo
}

// safeAs is errors.As that treats a panicking Unwrap or As method as no match.
func safeAs[T any](err error, target *T) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return errors.As(err, target)
}
