package dispatch

// What the runners of every authority kind share: the state of one run, single-use next,
// the calling of a listener with its panic recovered, and the check of a terminal.

import (
	"fmt"
	"reflect"
	"sync/atomic"
)

// runState collects the first failure of one run; a failure is final. It is read after every
// listener, so reading it is one atomic load.
type runState struct {
	err atomic.Pointer[error]
}

func (r *runState) fail(err error) {
	r.err.CompareAndSwap(nil, &err)
}

func (r *runState) failure() error {
	if p := r.err.Load(); p != nil {
		return *p
	}
	return nil
}

// nextUse tracks the uses of one next value in one word: bit 0 is set once the listener
// returned, the bits above count the calls.
type nextUse struct {
	state atomic.Uint32
}

// use records a call of next and says whether it may proceed: it returns ErrNextReused for
// a second call (the listener's failure, recorded in run) and a wrapped ErrNextReused for a
// call made after the listener returned.
func (n *nextUse) use(run *runState, event, listener string) error {
	s := n.state.Add(2)
	switch {
	case s&1 != 0:
		return fmt.Errorf("%w: called after the listener returned", ErrNextReused)
	case s>>1 > 1:
		run.fail(&ListenerError{Event: event, Listener: listener, Err: ErrNextReused})
		return ErrNextReused
	}
	return nil
}

func (n *nextUse) done() { n.state.Or(1) }

// call calls f, turning a panic into the listener's *ListenerError.
func call(event, listener string, f func()) (le *ListenerError) {
	defer func() {
		if v := recover(); v != nil {
			le = panicError(event, listener, v)
		}
	}()
	f()
	return nil
}

// panicError is the *ListenerError of a listener that panicked with v.
func panicError(event, listener string, v any) *ListenerError {
	err, ok := v.(error)
	if ok {
		err = fmt.Errorf("panic: %w", err)
	} else {
		err = fmt.Errorf("panic: %v", v)
	}
	return &ListenerError{Event: event, Listener: listener, Err: err, Panic: v}
}

// isNil reports whether v is nil or holds a nil pointer, func, map, slice, channel or
// interface.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch reflect.TypeOf(v).Kind() {
	case reflect.Pointer, reflect.Func, reflect.Map, reflect.Slice, reflect.Chan, reflect.Interface:
		return reflect.ValueOf(v).IsNil()
	}
	return false
}

// checkTerminal checks what a terminal returned: the checked value, or the failure of the
// run (the check's error, naming the event's terminal).
func checkTerminal[D any](event string, d D, check func(D) (D, error)) (D, error) {
	d, err := check(d)
	if err != nil {
		var zero D
		return zero, fmt.Errorf("dsh: %s terminal: %w", event, err)
	}
	return d, nil
}

// CheckRecord is the check of a record result: a value, never nil or unknown, returned
// as is.
func CheckRecord[D any](d D) (D, error) { return d, nil }
