package hookbridge

import (
	"sync"
	"time"

	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/generated/dsh"
)

// call is what the bridge keeps about one tool call between its listeners: what the
// pre-execute, approval and execute listeners learn and the post-execute listener
// delivers. It lives in calls from the first listener that records something until the
// call's post-execute or result listener ends it.
type call struct {
	// contexts are the PreToolUse contexts waiting for the tool result.
	contexts []string
	// denied is the rendered result text of a call PreToolUse or PermissionRequest denied
	// (Render.Deny, Render.PermissionDeny); isDenied says it is set.
	denied   string
	isDenied bool
	// ask is the ask of a call PreToolUse asked about with a reason (Render.AskDenied).
	ask *askDenial
	// took is how long the call executed; dispatched says the execute wrapper ran it.
	took       time.Duration
	dispatched bool
	// halt is the continue:false reason of a call let run (Render.PreHaltRunsTool);
	// halts says it is set.
	halt  string
	halts bool
}

// callKey identifies a call between the rewrite phase and pre-execute, before the
// runtime gives it a token.
type callKey struct{ agent, call string }

// calls holds the state of the tool calls in flight. A call's state is created by
// update and removed whole by end (or drop), so no part of it outlives the call.
type calls struct {
	mu     sync.Mutex
	tokens map[dsh.Token]*call
	// fired holds the PreToolUse report of a call whose hooks ran in the rewrite phase,
	// until its pre-execute listener replays it (each hook runs once per call). The
	// rewrite phase has no token yet: the report is keyed by agent and call id.
	fired map[callKey]*hookproto.Report
}

// newCalls returns an empty set of calls.
func newCalls() *calls {
	return &calls{tokens: map[dsh.Token]*call{}, fired: map[callKey]*hookproto.Report{}}
}

// update applies fn to the state of the call t, creating it; the zero token (a call the
// runtime does not identify) keeps no state.
func (cs *calls) update(t dsh.Token, fn func(*call)) {
	if t.IsZero() {
		return
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c := cs.tokens[t]
	if c == nil {
		c = &call{}
		cs.tokens[t] = c
	}
	fn(c)
}

// end removes the state of the call t and returns it (the zero state when it has none).
func (cs *calls) end(t dsh.Token) call {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c := cs.tokens[t]
	delete(cs.tokens, t)
	if c == nil {
		return call{}
	}
	return *c
}

// keepFired keeps the rewrite phase's PreToolUse report of the call k.
func (cs *calls) keepFired(k callKey, rep *hookproto.Report) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.fired[k] = rep
}

// takeFired returns (and forgets) the rewrite phase's PreToolUse report of the call k,
// or nil.
func (cs *calls) takeFired(k callKey) *hookproto.Report {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	rep := cs.fired[k]
	delete(cs.fired, k)
	return rep
}

// drop forgets everything about a call: its report, when its pre-execute never ran (a
// failed rewrite), and its state, when its post-execute never ran.
func (cs *calls) drop(k callKey, t dsh.Token) {
	cs.takeFired(k)
	cs.end(t)
}

// len is how many calls have state or a kept report (for tests).
func (cs *calls) len() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.tokens) + len(cs.fired)
}
