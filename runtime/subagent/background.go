package subagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/session"
)

// Child is a child started in the background ([Runner.Spawn]): its turn runs on its own,
// the parent's call returning at once.
type Child struct {
	// ID is the child's agent id, CallID the parent's call that started it, Type its
	// agent type, Task its prompt and Description the call's description of it.
	ID, CallID, Type, Task, Description string
	// OutputFile is where its output can be read (Config.OutputFile; "": unknown).
	OutputFile string
	// Model is the model it calls.
	Model string
	// Started is when it started.
	Started time.Time

	done   chan struct{}
	cancel context.CancelCauseFunc
	res    Result
	err    error
}

// Done is closed when the child's turn has ended (or it was cancelled), and its
// [Child.Result] is known.
func (c *Child) Done() <-chan struct{} { return c.done }

// Result is how the child ended: valid once Done is closed.
func (c *Child) Result() (Result, error) {
	<-c.done
	return c.res, c.err
}

// Cancel cancels the child's turn for cause (recorded in its end); Done is closed once
// it has ended.
func (c *Child) Cancel(cause error) { c.cancel(cause) }

// Spawn starts a child for req in the background and returns at once, with the child's
// id known. The child runs on ctx's values but not its cancellation: it ends when its turn
// ends, when it is cancelled ([Child.Cancel]) or when the Runner is closed. It is recorded
// in the parent's log as a foreground child is, and a call id whose child finished before
// (the parent resumed after a crash) returns that child, done, without running it again.
// onEnd, if set, is called once the child's end is recorded and it is no longer listed as
// running, before Done is closed and [Runner.WaitBackground] returns (it wakes the parent).
// A request the Runner refuses fails before any child starts, and records nothing.
func (r *Runner) Spawn(ctx context.Context, req Request, onEnd func(*Child)) (*Child, error) {
	if res, ok := r.replay(req); ok {
		c := &Child{ID: res.AgentID, CallID: req.CallID, Type: res.Type, Task: req.Task, Description: req.Description,
			OutputFile: r.outputFile(res.AgentID), Model: res.Model, done: make(chan struct{}), cancel: func(error) {}, res: res}
		close(c.done)
		return c, nil
	}
	a, err := r.admit(req)
	if err != nil {
		return nil, err
	}
	a.background = true
	cctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	c := &Child{ID: a.id, CallID: req.CallID, Type: a.def.Name, Task: req.Task, Description: req.Description,
		OutputFile: r.outputFile(a.id), Model: r.modelOf(a.def), Started: time.Now(), done: make(chan struct{}), cancel: cancel}
	r.mu.Lock()
	r.background[c.ID] = c
	r.mu.Unlock()
	r.spawned.Add(1)
	go func() {
		defer r.spawned.Done()
		defer r.release()
		defer cancel(nil)
		c.res, c.err = r.runRecorded(cctx, a)
		r.mu.Lock()
		delete(r.background, c.ID)
		r.mu.Unlock()
		if onEnd != nil {
			onEnd(c)
		}
		close(c.done)
	}()
	return c, nil
}

// WaitBackground waits until every child started by Spawn has ended and its onEnd has
// returned, or ctx is done.
func (r *Runner) WaitBackground(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		r.spawned.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// BackgroundTasks lists the children running in the background as the session's
// background tasks, oldest first (loop.Config.BackgroundTasks).
func (r *Runner) BackgroundTasks() []dsh.BackgroundTask {
	var out []dsh.BackgroundTask
	for _, c := range r.Background() {
		t := dsh.BackgroundTask{ID: c.ID, Kind: "subagent", Status: dsh.BackgroundTaskStatusRunning, AgentType: c.Type}
		if c.Description != "" {
			d := c.Description
			t.Description = &d
		}
		out = append(out, t)
	}
	return out
}

// Background returns the children started by Spawn that are still running, oldest first.
func (r *Runner) Background() []*Child {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*Child, 0, len(r.background))
	for _, c := range r.background {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *Child) int { return a.Started.Compare(b.Started) })
	return out
}

// ResumeBackground finishes, for a parent resumed after a crash, what its children in the
// background left undone (the top-level parent's: a subagent/started marked background,
// whose call has its result, the launch; a call without one runs again as the loop resumes
// it, and starts its child anew then):
//
//   - a child the crash stopped while it ran (a subagent/started with no
//     subagent/finished) starts again on the call's task as the agent tool reads it
//     (Definition's Fields), as an unfinished child in the foreground does: with a new id
//     and log (the old log is kept); its end wakes parent with its notice;
//   - a child that ended, but whose notice the crash kept from parent (no message of the
//     notice's id in the parent's log), wakes parent with its notice now, from its
//     subagent/finished, and does not run again.
//
// It returns the children it started or whose notice it sent; a request the Runner
// refuses now (past a bound, an agent type no longer defined) is an error naming the call,
// and the others go on. A Runner whose agent tool was not made (Definition) does nothing.
func (r *Runner) ResumeBackground(ctx context.Context, parent dsh.Agent) ([]*Child, error) {
	r.mu.Lock()
	fields := r.fields
	r.mu.Unlock()
	if fields == nil {
		return nil, nil
	}
	var order []string // the calls of the parent's children, in start order
	started, answered, noticed := map[string]bool{}, map[string]bool{}, map[string]bool{}
	ended := map[string]string{} // the agent id of each call's finished child
	calls := map[string]dsh.ToolCall{}
	for _, data := range session.Decoded(r.cfg.ParentLog.Events()) {
		switch d := data.(type) {
		case dsh.SubagentStarted:
			if d.Depth == 1 && d.Background != nil && *d.Background && !started[d.CallID] {
				started[d.CallID] = true
				order = append(order, d.CallID)
			}
		case dsh.SubagentFinished:
			ended[d.CallID] = d.AgentID
		case dsh.ToolCall:
			calls[d.CallID] = d
		case dsh.ToolResultLogged:
			for _, b := range d.Message.Content {
				if tr, ok := b.(dsh.ToolResultBlock); ok {
					answered[tr.ToolCallID] = true
				}
			}
		case dsh.UserMessageLogged:
			noticed[d.Message.ID] = true // a notice's id is "task-" and the child's
		default:
			// Nothing else says which children were left undone.
		}
	}
	var out []*Child
	var errs []error
	for _, callID := range order {
		call, ok := calls[callID]
		if id := ended[callID]; !ok || !answered[callID] || (id != "" && noticed[noticeID(id)]) || call.Name != r.cfg.ToolName {
			continue
		}
		var in map[string]any
		if err := json.Unmarshal([]byte(call.Arguments), &in); err != nil {
			errs = append(errs, fmt.Errorf("subagent: the call %s left undone by a crash: its arguments: %w", callID, err))
			continue
		}
		req := Request{CallID: callID, ParentAgentID: parent.ID()}
		req.Task, _ = in[fields.Task].(string)
		if fields.Type != "" {
			req.Type, _ = in[fields.Type].(string)
		}
		if fields.Description != "" {
			req.Description, _ = in[fields.Description].(string)
		}
		// A finished child's Spawn answers from its subagent/finished at once, and onEnd
		// is not called: its notice is sent here.
		c, err := r.Spawn(ctx, req, func(c *Child) { r.notify(ctx, parent, c) })
		if err != nil {
			errs = append(errs, fmt.Errorf("subagent: the call %s left undone by a crash: %w", callID, err))
			continue
		}
		if ended[callID] != "" {
			r.notify(ctx, parent, c)
		}
		out = append(out, c)
	}
	return out, errors.Join(errs...)
}

// noticeID is the id of the message that tells a parent child agentID ended.
func noticeID(agentID string) string { return "task-" + agentID }
