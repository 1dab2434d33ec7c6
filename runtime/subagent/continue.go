package subagent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/loop"
	"github.com/dshkit/dsh/runtime/session"
)

// Errors [Runner.Continue] fails with (wrapped; test with errors.Is).
var (
	// ErrUnknownAgent is an agent id no child of the Runner (or of the parent's log) has.
	ErrUnknownAgent = errors.New("subagent: no such agent")
	// ErrRunning is a child whose turn has not ended: it cannot be given another yet.
	ErrRunning = errors.New("subagent: the agent's turn is running")
	// ErrNotReopenable is a Runner whose Logs cannot open a child's log again.
	ErrNotReopenable = errors.New("subagent: the children's logs cannot be reopened")
)

// Reopener is [Logs] that can open a child's existing log again, for its next turn
// ([Runner.Continue]). MemoryLogs and FileLogs are.
type Reopener interface {
	// Reopen opens the log of the child session id, which Create made; close releases it.
	Reopen(ctx context.Context, sessionID string) (log *session.Log, close func(), err error)
}

// agentRecord is what the Runner knows of a child it started, or that the parent's log
// says was started: enough to give it another turn.
type agentRecord struct {
	callID, sessionID, agentType string
	lineage                      dsh.Lineage
	// task is its first turn's prompt ("" when read from the log: a resumed loop does not
	// need it).
	task string
	// running says a turn of it runs; last is its latest turn's Child (nil: none known in
	// this process), and finished its latest subagent/finished record (nil: none).
	running  bool
	last     *Child
	finished *dsh.SubagentFinished
	// liveMu guards live, the loop of its running turn (nil between turns), into which
	// Continue steers a message.
	liveMu sync.Mutex
	live   *loop.Agent
}

// readParentLog reads the children the parent's log records: each start, and the end of
// each of their turns (the last one per call is what a resumed parent replays).
func (r *Runner) readParentLog() error {
	owner := ""
	for ev, err := range r.cfg.ParentLog.Events() {
		if err != nil {
			return err
		}
		switch ev.Type {
		case dsh.SessionCreatedType, dsh.SubagentStartedType, dsh.SubagentFinishedType:
		default:
			continue
		}
		data, err := ev.Decode()
		if err != nil {
			return fmt.Errorf("event %d (%s): %w", ev.Seq, ev.Type, err)
		}
		switch d := data.(type) {
		case dsh.SessionCreated:
			if owner == "" {
				owner = d.AgentID
			}
		case dsh.SubagentStarted:
			lineage := dsh.Lineage{ParentCallID: d.CallID, AgentType: d.AgentType, Depth: d.Depth}
			if d.Depth == 1 {
				// A child at depth 1 is the log owner's.
				lineage.ParentAgentID = owner
			}
			r.agents[d.AgentID] = &agentRecord{callID: d.CallID, sessionID: d.SessionID, agentType: d.AgentType, lineage: lineage}
		case dsh.SubagentFinished:
			r.finished[d.CallID] = d
			if rec := r.agents[d.AgentID]; rec != nil {
				rec.finished = &d
			}
		default:
			// Unreachable: only the three types above are decoded.
		}
	}
	return nil
}

// Agent returns the latest turn of the child id as a Child: a running one, or one whose
// turn ended (in this process, or, read from the parent's log, before a restart: its
// Result is the recorded one, Replayed). ok is false for an id no child has, or a child
// whose first turn has not ended and that this process did not start.
func (r *Runner) Agent(id string) (c *Child, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.agents[id]
	switch {
	case rec == nil:
		return nil, false
	case rec.last != nil:
		return rec.last, true
	case rec.finished == nil:
		return nil, false
	}
	res := replayed(*rec.finished)
	res.Type = rec.agentType
	c = &Child{ID: id, CallID: rec.callID, Type: rec.agentType, OutputFile: r.outputFile(id),
		done: make(chan struct{}), cancel: func(error) {}, res: res}
	close(c.done)
	rec.last = c
	return c, true
}

// ContinueOptions are how [Runner.Continue] gives its message to a child whose turn is
// running.
type ContinueOptions struct {
	// Interrupt aborts the running turn (loop.Agent.Cancel with the user's cause, the
	// inbox kept: a call still running ends ABORTED, and the turn ends aborted, with no
	// agent/subagent-stop) and gives the message to a new turn of the same run, which
	// reads Aborted first: as Codex 0.169.0's send_input with interrupt
	// (codex/subagent-send-interrupt). The child's run ends, and agent/subagent-stop
	// fires, once that turn does. A child whose turn has ended gets its next turn as
	// without it.
	Interrupt bool
	// Aborted, when set, is the text of the message an interrupted child reads before
	// the message (Codex's <turn_aborted> note: the send tool's toolset row's
	// interrupted); "": the message alone.
	Aborted string
}

// Continue gives msg to the child agentID, and returns at once. A child whose turn is
// running reads it at its turn's next step (loop.Agent.Steer), as Codex 0.169.0 gives a
// running child send_input's message (codex/subagent-send-running), or, with
// opts.Interrupt, at the start of the turn that follows the running one, which is
// aborted: the running turn's Child is returned (nil for a foreground child, whose call
// returns its result), and onEnd is not used. A child whose turn ended gets another
// turn, in the background: its loop is resumed from its own log (loop.Resume: it reads
// its history, and a turn a crash left open is closed, never run again) and msg is the
// new turn's prompt. That turn ends as a first one does: agent/subagent-stop, then a
// subagent/finished record in the parent's log (the same call id; the last one is what a
// resumed parent answers). It fires no agent/subagent-start. onEnd is as for
// [Runner.Spawn]. It fails with ErrUnknownAgent, ErrRunning (the child's turn is
// starting or ending, and cannot take the message now), ErrNotReopenable, ErrClosed or
// ErrTooMany, and then changes nothing.
func (r *Runner) Continue(ctx context.Context, agentID string, msg dsh.UserMessage, opts ContinueOptions, onEnd func(*Child)) (*Child, error) {
	r.mu.Lock()
	rec, closed := r.agents[agentID], r.closed
	r.mu.Unlock()
	if rec != nil && !closed {
		if c, steered, err := r.steer(ctx, agentID, rec, msg, opts); steered {
			return c, err
		}
	}
	reopen, ok := r.cfg.Logs.(Reopener)
	if !ok {
		return nil, ErrNotReopenable
	}
	r.mu.Lock()
	rec = r.agents[agentID]
	var (
		def Definition
		err error
	)
	switch {
	case r.closed:
		err = ErrClosed
	case rec == nil:
		err = fmt.Errorf("%w: %s", ErrUnknownAgent, agentID)
	case rec.running || r.background[agentID] != nil || (rec.last == nil && rec.finished == nil):
		err = fmt.Errorf("%w: %s", ErrRunning, agentID)
	case rec.lineage.ParentAgentID == "":
		err = fmt.Errorf("%w: %s: the parent of a child at depth %d is not recorded", ErrUnknownAgent, agentID, rec.lineage.Depth)
	case r.running >= r.cfg.MaxRunning:
		err = fmt.Errorf("%w: %d are running (the limit is %d)", ErrTooMany, r.running, r.cfg.MaxRunning)
	}
	if err == nil {
		if def, ok = r.defs[rec.agentType]; !ok {
			err = &UnknownTypeError{Type: rec.agentType, Types: r.typeNames()}
		}
	}
	if err != nil {
		r.mu.Unlock()
		return nil, err
	}
	rec.running = true
	r.running++
	r.wg.Add(1)
	cctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	c := &Child{ID: agentID, CallID: rec.callID, Type: def.Name, Task: textOf(msg), OutputFile: r.outputFile(agentID),
		Model: r.modelOf(def), Started: time.Now(), done: make(chan struct{}), cancel: cancel}
	rec.last = c
	r.background[agentID] = c
	t := childTurn{id: agentID, sid: rec.sessionID, def: def, lineage: rec.lineage, resume: true, task: rec.task, msg: msg}
	r.mu.Unlock()
	r.spawned.Add(1)
	go func() {
		defer r.spawned.Done()
		defer r.release()
		defer cancel(nil)
		c.res, c.err = r.continueRecorded(cctx, reopen, t)
		r.mu.Lock()
		delete(r.background, agentID)
		rec.running = false
		r.mu.Unlock()
		if onEnd != nil {
			onEnd(c)
		}
		close(c.done)
	}()
	return c, nil
}

// steer gives msg to the running turn of the child agentID (rec's), if it has one: steered
// says it did (or failed to, err). With opts.Interrupt the turn is cancelled first; the
// note (opts.Aborted) waits in the next-step list without waking the child, and msg,
// steered into a turn being cancelled, in the next-turn list (loop.Agent.Steer): the
// turn that follows the cancelled one claims both, the note first.
func (r *Runner) steer(ctx context.Context, agentID string, rec *agentRecord, msg dsh.UserMessage, opts ContinueOptions) (c *Child, steered bool, err error) {
	rec.liveMu.Lock()
	defer rec.liveMu.Unlock()
	if rec.live == nil {
		return nil, false, nil
	}
	if opts.Interrupt {
		rec.live.Cancel(dsh.CancelUser{}, true)
		if opts.Aborted != "" {
			if err := rec.live.Inject(ctx, dsh.UserText(msg.Source, opts.Aborted)); err != nil {
				return nil, true, fmt.Errorf("subagent: giving agent %s the interruption's note: %w", agentID, err)
			}
		}
	}
	if err := rec.live.Steer(ctx, msg); err != nil {
		return nil, true, fmt.Errorf("subagent: giving agent %s the message: %w", agentID, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if c = r.background[agentID]; c == nil {
		c = rec.last
	}
	return c, true, nil
}

// setLive makes child the running loop of the child id (nil: none), which Continue steers
// messages into.
func (r *Runner) setLive(id string, child *loop.Agent) {
	r.mu.Lock()
	rec := r.agents[id]
	r.mu.Unlock()
	if rec != nil {
		rec.liveMu.Lock()
		rec.live = child
		rec.liveMu.Unlock()
	}
}

// waitTurns waits until the child's loop is idle: its turn ended, and so did any turn a
// message steered in as it ended started (Continue). A message still pending then stays
// in the child's log, for its next turn.
func (r *Runner) waitTurns(ctx context.Context, id string, child *loop.Agent) error {
	r.mu.Lock()
	rec := r.agents[id]
	r.mu.Unlock()
	for {
		if err := child.Wait(ctx); err != nil {
			return err
		}
		if rec == nil {
			return nil
		}
		rec.liveMu.Lock()
		idle := child.Status() == dsh.AgentStatusIdle
		if idle {
			rec.live = nil
		}
		rec.liveMu.Unlock()
		if idle {
			return nil
		}
	}
}

// continueRecorded runs the later turn t over the child's reopened log and records its end
// in the parent's log.
func (r *Runner) continueRecorded(ctx context.Context, reopen Reopener, t childTurn) (Result, error) {
	began := time.Now()
	var res Result
	log, closeLog, err := reopen.Reopen(ctx, t.sid)
	if err != nil {
		res = failedTurn(ctx, t.id, fmt.Errorf("reopening its log: %w", err))
	} else {
		t.log = log
		res = r.turn(ctx, t)
		closeLog()
	}
	res.Type, res.Duration, res.Model = t.def.Name, time.Since(began), r.modelOf(t.def)
	return res, r.recordEnd(ctx, t.lineage.ParentCallID, res)
}

// textOf is the text of msg's text blocks.
func textOf(msg dsh.UserMessage) string {
	s := ""
	for _, b := range msg.Content {
		if tb, ok := b.(dsh.TextBlock); ok {
			s += tb.Text
		}
	}
	return s
}
