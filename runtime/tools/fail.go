package tools

import (
	"context"
	"log/slog"
	"time"

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
	if c, ok := ctx.Value(finalKey{}).(*call); ok {
		c.fail(err)
	}
	o := failure(err)
	return o.result()
}

// errNilFail is the failure of Fail(ctx, nil).
var errNilFail = &Error{Name: NameHarnessError, Code: "NIL_ERROR", Message: "tools.Fail called with a nil error"}

// finalKey is the context key under which a wrapped call's context holds the call.
type finalKey struct{}

// The call is the context its tools/execute wrappers get: the caller's context, plus the
// call itself under finalKey for Fail. Being its own context, it costs no allocation.

// Deadline is the caller's.
func (c *call) Deadline() (time.Time, bool) { return c.ctx.Deadline() }

// Done is the caller's.
func (c *call) Done() <-chan struct{} { return c.ctx.Done() }

// Err is the caller's.
func (c *call) Err() error { return c.ctx.Err() }

// Value returns the call for finalKey and defers to the caller's context otherwise.
func (c *call) Value(key any) any {
	if _, ok := key.(finalKey); ok {
		return c
	}
	return c.ctx.Value(key)
}

// fail records err as the call's final failure, unless one is recorded or the wrappers are
// over (the run is sealed). The record lives in the runtime's finals map, not in the call,
// whose size is tuned (see size_test.go); dispatch takes it out.
func (c *call) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.sealed {
		c.rt.finals.LoadOrStore(c, err)
	}
}

// takeFinal removes and returns the call's final failure, if a wrapper recorded one.
func (c *call) takeFinal() (error, bool) {
	v, ok := c.rt.finals.LoadAndDelete(c)
	if !ok {
		return nil, false
	}
	return v.(error), true
}

// unwrapFinal returns the caller's context when w is the call itself, passed on unchanged
// by the wrappers, so that the body runs under the caller's context without a fused one.
func (c *call) unwrapFinal(w context.Context) context.Context {
	if cc, ok := w.(*call); ok && cc == c {
		return c.ctx
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
