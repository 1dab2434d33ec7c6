package tools

import (
	"context"
	"log/slog"
	"sync"

	"github.com/dshkit/dsh/generated/dsh"
)

// Fail ends the call whose tools/execute wrapper got ctx with a final failure made from err:
// its message is err's (an *Error or InfoError also gives its {name, code}), the model sees
// "Error: <message>", and, as for a failing listener, tools/post-execute does not run (the
// finalizer and tools/result still do). A timeout or retry wrapper returns it:
//
//	return tools.Fail(ctx, tools.NewError("TIMEOUT", "Bash timed out after 30s"))
//
// The first Fail of a call wins, whatever the wrappers then return. Fail returns that
// failure as a result, so a wrapper unit-tested outside a pipeline (ctx not from one)
// returns it too, and nothing else happens.
func Fail(ctx context.Context, err error) dsh.ToolExecutionResult {
	if err == nil {
		err = errNilFail
	}
	if fc, ok := ctx.Value(finalKey{}).(*finalCtx); ok {
		fc.fail(err)
	}
	o := failure(err)
	return o.result()
}

// errNilFail is the failure of Fail(ctx, nil).
var errNilFail = &Error{Name: NameHarnessError, Code: "NIL_ERROR", Message: "tools.Fail called with a nil error"}

// finalKey is the context key of the finalCtx of a wrapped call.
type finalKey struct{}

// finalCtx is the context the tools/execute wrappers of a call get: the caller's, plus the
// slot Fail records a final failure in.
type finalCtx struct {
	context.Context
	mu  sync.Mutex
	err error
}

// Value returns fc for finalKey and defers to the caller's context otherwise.
func (fc *finalCtx) Value(key any) any {
	if _, ok := key.(finalKey); ok {
		return fc
	}
	return fc.Context.Value(key)
}

func (fc *finalCtx) fail(err error) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.err == nil {
		fc.err = err
	}
}

// failed returns the error of the first Fail, or nil.
func (fc *finalCtx) failed() error {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return fc.err
}

// unwrapFinal returns the caller's context when w is the call's own finalCtx passed on
// unchanged, so that the body runs under the caller's context without a fused one.
func unwrapFinal(caller, w context.Context) context.Context {
	if fc, ok := w.(*finalCtx); ok && sameContext(fc.Context, caller) {
		return caller
	}
	return w
}

// notLossless is the final failure of contexts a listener returned that cannot be used:
// the failure is the reference's "not losslessly JSON-serializable"; the log names what
// was wrong (the field and the message's index).
func (c *call) notLossless(where string, err error) outcome {
	c.rt.log.LogAttrs(c.ctx, slog.LevelWarn, "tools: unusable contexts",
		slog.String("tool", c.exec.Name), slog.String("callId", c.exec.CallID),
		slog.String("from", where), slog.Any("error", err))
	return c.finalFailure(errResultNotJSON)
}
