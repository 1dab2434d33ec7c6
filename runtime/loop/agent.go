package loop

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
)

// Agent is one dsh agent: a durable inbox, a driver that runs turns of steps over a model
// and a tool runtime, and the dispatch of every agent/* event to the listeners of a
// registry. Its methods are safe for concurrent use. Create it with New or Resume.
type Agent struct {
	id     string
	cfg    Config
	reg    *dsh.Registry
	rt     *tools.Runtime
	model  llm.Model
	log    *session.Log
	logger *slog.Logger
	// base is the agent's lifetime context: the values of the context New or Resume got,
	// never cancelled, carrying the agent's scope (see scope.go). Appends use it, so that
	// a cancelled turn can still record its end.
	base context.Context

	// mut serializes inbox mutations, across their appends (inbox.go).
	mut sync.Mutex

	mu        sync.Mutex // guards the fields below; never held across an append or a call-out
	nextTurn  []dsh.UserMessage
	nextStep  []dsh.UserMessage
	lastTurn  int
	running   bool          // a driver is running (status running)
	idle      chan struct{} // closed once the agent is idle
	turn      *turnRun      // the current turn, while running
	latched   bool          // a waking send landed on an aborted turn: replay a wake when idle
	closed    bool
	maint     bool // a manual compaction holds the idle agent (compaction.go)
	maintWake bool // a waking send arrived during the manual compaction: wake after it

	// req is the state of the requests, owned by the driver (one at a time).
	req requestState
	// calls is the reusable state of the model-call folds, owned by the driver.
	calls modelCalls

	// resumed is the context Resume found (ok false for New); set before the agent is
	// shared, read-only afterwards.
	resumed ResumedContext
}

// turnRun is one turn: its number, its signal, and how it is being stopped.
type turnRun struct {
	n      int
	ctx    context.Context
	cancel context.CancelCauseFunc
	prompt bool // the first claim ended with a next-turn prompt

	blocked *dsh.TurnEndBlocked // the reason of a step that ended endBlocked (driver only)
	answer  *string             // the text of the turn's last assistant message (driver only)

	// Guarded by Agent.mu.
	cause   dsh.AgentCancelCause // the first Cancel or Halt cause: the turn ends aborted with it
	aborted bool                 // Cancel aborted the signal (a Halt does not)
	discard bool                 // a Cancel without keepInbox: the batch's contexts are discarded
}

// cancelError is the cause of a cancelled turn context.
type cancelError struct{ cause dsh.AgentCancelCause }

func (e cancelError) Error() string { return "loop: turn cancelled (" + string(e.cause.Kind()) + ")" }

// New creates an agent over an empty session log: it appends session/created, then runs
// the agent/session-start listeners with source startup, awaited and bounded by
// Config.SessionStartTimeout (docs/design/SEMANTICS.md#a6-session-start-is-awaited-and-bounded). Messages they Inject reach the
// first request. A failing or overrunning listener cannot veto startup: a failure is
// logged, an overrun is cancelled and recorded as session/start-listener-overrun. The
// agent is idle until a waking send (Followup or Steer).
func New(ctx context.Context, cfg Config) (*Agent, error) {
	cfg, err := cfg.normalized()
	if err != nil {
		return nil, err
	}
	if cfg.Log.Len() != 0 {
		return nil, ErrLogNotEmpty
	}
	a := newAgent(ctx, cfg)
	sid := cfg.SessionID
	if sid == "" {
		sid = "ses_" + rand.Text()
	}
	created := dsh.SessionCreated{SessionID: sid, AgentID: a.id}.WithSpecVersion(dsh.SpecVersion)
	if cfg.Workspace != "" {
		created = created.WithWorkspace(cfg.Workspace)
	}
	if sa := cfg.Subagent; sa != nil {
		lineage := sa.Lineage
		created.Lineage = &lineage
		if sa.ParentSessionID != "" {
			created = created.WithParentSessionID(sa.ParentSessionID)
		}
	}
	if _, err := a.log.Append(a.base, created); err != nil {
		return nil, fmt.Errorf("loop: new agent %q: %w", a.id, err)
	}
	a.req.first = dsh.HeaderReasonInitial
	if a.cfg.Setup != "" {
		a.setup(ctx, a.cfg.Setup)
	}
	for _, f := range a.cfg.Instructions {
		a.instructionsLoaded(ctx, f, nil)
	}
	if a.cfg.Subagent != nil {
		a.subagentStart(ctx)
		return a, nil
	}
	a.sessionStart(ctx, dsh.SessionStartPayload{Source: dsh.SessionStartSourceStartup}, a.cfg.SessionStartTimeout)
	return a, nil
}

// Resume re-creates an agent from its session log: it replays the log (session.Replay),
// settles the calls a crash left without a result (a Resumable tool's run again, others
// fail INTERRUPTED; docs/design/SEMANTICS.md#551-resuming-a-crashed-batch), closes a turn
// a crash left open with turn/end{interrupted}, restores the turn counter,
// the inbox and the request header, and runs the agent/instructions-loaded listeners
// (Config.Instructions, as read for this run) and the agent/session-start listeners with
// source resume, like New. Pending inbox messages wait for the next waking send.
func Resume(ctx context.Context, cfg Config) (*Agent, error) {
	cfg, err := cfg.normalized()
	if err != nil {
		return nil, err
	}
	if err := checkOwner(cfg.Log, cfg.ID); err != nil {
		return nil, err
	}
	a := newAgent(ctx, cfg)
	// One pass over the log: Replay folds the turn state while the request state folds
	// the headers and the history, so that the first request after resuming only reads
	// the events appended since.
	var foldErr error
	st, err := session.Replay(func(yield func(session.Event, error) bool) {
		for ev, err := range cfg.Log.Events() {
			if err == nil {
				if foldErr = a.req.fold(ev, true); foldErr != nil {
					return
				}
			}
			if !yield(ev, err) {
				return
			}
		}
	})
	if err == nil {
		err = foldErr
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotResumable, err)
	}
	if st.TurnOpen {
		settled, err := a.settleInterrupted(ctx, st)
		if err != nil {
			return nil, fmt.Errorf("loop: resume agent %q: settling the calls a crash interrupted: %w", a.id, err)
		}
		if settled {
			// The results are in the log: the turn is closed after them.
			st.Events = int64(a.log.Len())
		}
	}
	if err := session.CloseInterrupted(a.base, a.log, st); err != nil {
		return nil, fmt.Errorf("loop: resume agent %q: %w", a.id, err)
	}
	a.lastTurn = st.LastTurn
	a.nextTurn, a.nextStep = st.NextTurn, st.NextStep
	if id := a.req.openAttempt; id != "" {
		// A crash between compaction/start and compaction/end: the attempt is stale. Its
		// lock is released, no pre- or post-compact runs for it, and the next attempt
		// works; a checkpoint it wrote (the commit point) stands.
		a.logger.Warn("loop: a stale compaction attempt was left open by a crash", "compactionId", id)
		a.req.openAttempt = ""
	}
	a.req.first = dsh.HeaderReasonResume
	a.resumed = a.req.resumedContext()
	for _, f := range a.cfg.Instructions {
		a.instructionsLoaded(ctx, f, nil)
	}
	if a.cfg.Subagent == nil {
		// A resumed child fires no agent/subagent-start: its first request, with the
		// contexts that start gave it, is in its log already.
		a.sessionStart(ctx, dsh.SessionStartPayload{Source: dsh.SessionStartSourceResume}, a.cfg.SessionStartTimeout)
	}
	return a, nil
}

// checkOwner checks that log starts with the session/created of agent id.
func checkOwner(log *session.Log, id string) error {
	for ev := range log.Events() {
		if ev.Type != dsh.SessionCreatedType {
			return fmt.Errorf("%w: it starts with %s, not %s", ErrNotResumable, ev.Type, dsh.SessionCreatedType)
		}
		data, err := ev.Decode()
		if err != nil {
			return fmt.Errorf("%w: %w", ErrNotResumable, err)
		}
		if owner := data.(dsh.SessionCreated).AgentID; owner != id {
			return fmt.Errorf("%w: it belongs to agent %q", ErrNotResumable, owner)
		}
		return nil
	}
	return fmt.Errorf("%w: it is empty", ErrNotResumable)
}

// newAgent returns an idle agent over cfg.
func newAgent(ctx context.Context, cfg Config) *Agent {
	if ctx == nil {
		ctx = context.Background()
	}
	a := &Agent{
		id:     cfg.ID,
		cfg:    cfg,
		reg:    cfg.Registry,
		rt:     cfg.Tools,
		model:  cfg.Model,
		log:    cfg.Log,
		logger: cfg.Logger.With("agent", cfg.ID),
		idle:   make(chan struct{}),
	}
	close(a.idle)
	a.req.usageAt = -1
	a.base = withScope(context.WithoutCancel(ctx), scope{agent: a})
	return a
}

// ID returns the agent id.
func (a *Agent) ID() string { return a.id }

// Status returns whether the agent is running a turn or idle.
func (a *Agent) Status() dsh.AgentStatus {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.running {
		return dsh.AgentStatusRunning
	}
	return dsh.AgentStatusIdle
}

// Wait blocks until the agent is idle (its driver exited and agent/status idle was
// emitted) or ctx is done.
func (a *Agent) Wait(ctx context.Context) error {
	for {
		a.mu.Lock()
		ch, running := a.idle, a.running
		a.mu.Unlock()
		select {
		case <-ch:
			if !running {
				return nil
			}
			// The run that was going on ended; check whether another one started.
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Inbox returns copies of the pending next-turn and next-step messages, in order.
func (a *Agent) Inbox() (nextTurn, nextStep []dsh.UserMessage) {
	a.mu.Lock()
	turn, step := a.nextTurn, a.nextStep
	a.mu.Unlock()
	return cloneMessages(turn), cloneMessages(step)
}

// ErrClosed is returned by the sends of a closed agent.
var ErrClosed = errors.New("loop: agent closed")

// Close disposes of the agent: it cancels the current turn with the cause disposed,
// keeping the inbox (it stays in the log for a later Resume), waits until the agent
// is idle, and then (the first time) runs the agent/session-end listeners, each bounded
// by Config.SessionEndTimeout. Sends fail with ErrClosed afterwards. The session log is not closed: it
// belongs to the caller. Close is idempotent.
func (a *Agent) Close() error {
	a.mu.Lock()
	first := !a.closed
	a.closed = true
	a.latched = false
	a.mu.Unlock()
	a.Cancel(dsh.CancelDisposed{}, true)
	err := a.Wait(context.Background())
	if first && a.cfg.Subagent == nil {
		// A child's end is its parent's subagent/finished, not a session end.
		a.sessionEnd(dsh.SessionEndReasonClose)
	}
	return err
}

// emit logs the failure of an observer run; observers cannot change anything.
func (a *Agent) emit(event string, err error) {
	if err != nil {
		a.logger.Debug("loop: observer failed", "event", event, "err", err)
	}
}

// emitStatus emits agent/status.
func (a *Agent) emitStatus(s dsh.AgentStatus) {
	a.emit(dsh.StatusEventName, a.reg.EmitStatus(a.base, &dsh.StatusPayload{Agent: a, AgentID: a.id, Status: s}))
}
