// Package subagent runs child agents: a tool call of one agent (the parent) starts a
// second agent loop (the child) on a task, and the child's final answer is the call's
// result (docs/design/SUBAGENTS.md). The child is the same runtime/loop agent, over the
// parent's registry (so every plugin and hook sees its events, marked with its lineage),
// tool runtime and model, with a session log of its own in the parent's store; the
// parent's log records each child's start and end (subagent/started, subagent/finished),
// so that a parent resumed after a crash returns a finished child's answer without
// running it again.
//
// A Runner belongs to one parent session: its agent tool ([Runner.Definition]) is
// registered in the session's tool registry under the name and schema of the dialect's
// engine.
package subagent

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/loop"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
)

// Defaults of the optional Config fields.
const (
	// DefaultMaxDepth is how deep children may nest by default: 1, a child offers no
	// agent tool of its own.
	DefaultMaxDepth = 1
	// DefaultMaxRunning is how many children may run at once by default, per parent
	// session.
	DefaultMaxRunning = 8
	// GeneralPurpose is the agent type that is always there.
	GeneralPurpose = "general-purpose"
)

// Errors a call can fail with (wrapped; test with errors.Is).
var (
	// ErrUnknownType is an agent type no definition has.
	ErrUnknownType = errors.New("subagent: unknown agent type")
	// ErrTooDeep is a call past Config.MaxDepth.
	ErrTooDeep = errors.New("subagent: too deep")
	// ErrTooMany is a call past Config.MaxRunning children running at once.
	ErrTooMany = errors.New("subagent: too many children running")
	// ErrClosed is a call after the Runner was closed.
	ErrClosed = errors.New("subagent: runner closed")
	// ErrNoTools is a call of a definition whose tools name no tool of the registry.
	ErrNoTools = errors.New("subagent: no tools")
)

// Definition is one agent type a child can run (Claude Code's .claude/agents/*.md).
type Definition struct {
	// Name is the agent type (subagent_type).
	Name string
	// Description says when to use it (the agent tool's description lists it).
	Description string
	// System is the child's system prompt.
	System string
	// Tools are the names of the tools the child is offered; nil offers every tool of the
	// parent's registry (the agent tool only below Config.MaxDepth) but Disallowed.
	Tools      []string
	Disallowed []string
	// Model, when set, is the model the child calls instead of the parent's.
	Model string
	// Source is where the definition comes from (a file path), for diagnostics; empty
	// for a built-in one.
	Source string
	// Hooks are the definition's own hooks, in its host's configuration shape (Claude
	// Code's frontmatter hooks as a settings hooks object): Config.BeforeChild installs them
	// for its children's lifetime. The Runner does not read them.
	Hooks json.RawMessage
	// MaxTurns, when positive, bounds the child's model steps: its turn ends before step
	// MaxTurns+1 (the tools of step MaxTurns run, and no agent/subagent-stop fires), and
	// it completes with its last text, marked Result.TurnLimit.
	MaxTurns int
	// Background runs every child of the definition in the background, whatever the call
	// asks.
	Background bool
}

// UnknownTypeError is a call naming an agent type no definition has (it wraps
// ErrUnknownType).
type UnknownTypeError struct {
	// Type is the type the call named; Types are the types there are, in Types order.
	Type  string
	Types []string
}

func (e *UnknownTypeError) Error() string {
	return fmt.Sprintf("%v %q (the types are %s)", ErrUnknownType, e.Type, strings.Join(e.Types, ", "))
}

// Unwrap returns ErrUnknownType.
func (e *UnknownTypeError) Unwrap() error { return ErrUnknownType }

// NoToolsError is how a child of a definition whose tools name none the registry has
// ends: it was created (agent/subagent-start fired, as Claude Code fires SubagentStart)
// and never ran (it wraps ErrNoTools).
type NoToolsError struct {
	// Type is the agent type; Unrecognized are its tool names that name no tool.
	Type         string
	Unrecognized []string
}

func (e *NoToolsError) Error() string {
	return fmt.Sprintf("%v: the tools of agent type %s name no tool (unrecognized: %s)", ErrNoTools, e.Type, strings.Join(e.Unrecognized, ", "))
}

// Unwrap returns ErrNoTools.
func (e *NoToolsError) Unwrap() error { return ErrNoTools }

// Logs opens the session log of a new child, in the parent's store.
type Logs interface {
	// Create opens a new, empty log for the child session id; close releases it.
	Create(ctx context.Context, sessionID string) (log *session.Log, close func(), err error)
}

// Config is what a Runner is built from. Registry, Tools, Model, Logs and ParentLog are
// required.
type Config struct {
	// Registry holds the listeners every child's events go through (the parent's).
	Registry *dsh.Registry
	// Tools makes the tool runtime a child runs its calls on (it must dispatch through
	// Registry).
	Tools func() *tools.Runtime
	// Model streams the children's responses, and LLM is their call configuration (a
	// definition's Model replaces its model).
	Model llm.Model
	LLM   dsh.LLMCallConfig
	// Logs opens each child's log.
	Logs Logs
	// ParentLog is the parent's session log: subagent/started and subagent/finished go
	// there, and a resumed parent finds its finished children in it.
	ParentLog *session.Log
	// ParentSessionID is the parent's session id, recorded in each child's
	// session/created.
	ParentSessionID string
	// Workspace is the children's working directory.
	Workspace string
	// Definitions are the agent types besides the built-in general-purpose one (a
	// definition of that name replaces it).
	Definitions []Definition
	// GeneralSystem is the built-in general-purpose agent's system prompt.
	GeneralSystem string
	// ToolName is the agent tool's name (never offered to a child at MaxDepth).
	ToolName string
	// ToolNames are further agent tools' names, never offered to a child at MaxDepth
	// either (Codex's multi_agent_v1 functions).
	ToolNames []string
	// DefaultType is the name of the built-in agent type, which a call that names none
	// gets ("": general-purpose, Claude Code's; Codex's is "default").
	DefaultType string
	// NewID makes a child's agent id (nil: Claude Code's shape, "a" and 16 hex digits).
	NewID func() string
	// MaxDepth bounds how deep children nest (0: 1).
	MaxDepth int
	// MaxRunning bounds how many children run at once (0: 8).
	MaxRunning int
	// ContinuationCap is each child's continuation cap (loop.Config).
	ContinuationCap int
	// Notice words the message that wakes the parent when a child it started in the
	// background ends (nil: the child's answer, or why it did not complete).
	Notice func(c *Child, res Result) []dsh.ContentBlock
	// OutputFile, when set, names where the output of the child agentID can be read
	// (Claude Code's launch text and notification name it: the child's transcript).
	OutputFile func(agentID string) string
	// OnChild, when set, is called with each child's id, lineage and log once the log is
	// open, before the child's first event: a host subscribes to it (a transcript, an
	// editor's view). The func it returns, if any, is called when the child has ended.
	OnChild func(agentID string, lineage dsh.Lineage, log *session.Log) (done func())
	// Logger receives the diagnostics (nil: discarded).
	Logger *slog.Logger
	// BeforeChild, when set, is called once a child of def has its agent id, before it
	// starts; the func it returns is called when the child has ended. A host scopes
	// listeners to the child there (Claude Code's frontmatter hooks, Definition.Hooks).
	// An error fails the child before it starts.
	BeforeChild func(ctx context.Context, def Definition, agentID string) (end func(), err error)
	// Refusal, when set, words a refused call's error for the model (UnknownTypeError,
	// NoToolsError, ...), as the dialect's engine words it; nil: the error's own text.
	Refusal func(err error) string
	// ToolKinds says how a child's calls count in its Result.ToolStats, by tool name (the
	// dialect's toolset row); nil: no ToolStats.
	ToolKinds map[string]ToolKind
	// Completion, when set, is the answer tool a child ends by (Gemini CLI's
	// complete_task); nil: a child ends when its turn does, its last text the answer.
	Completion *Completion
}

// Runner starts the children of one parent session. It is safe for concurrent use.
type Runner struct {
	cfg  Config
	defs map[string]Definition

	mu         sync.Mutex
	running    int
	closed     bool
	finished   map[string]dsh.SubagentFinished // by call id, from the parent's log
	fields     *Fields                         // the agent tool's, once Definition made it
	background map[string]*Child               // running, by agent id
	agents     map[string]*agentRecord         // every child started, by agent id (Continue)
	spawned    sync.WaitGroup                  // children started by Spawn until their onEnd returned
	wg         sync.WaitGroup
}

// New returns a Runner over cfg; it reads the children the parent's log already
// finished.
func New(cfg Config) (*Runner, error) {
	switch {
	case cfg.Registry == nil, cfg.Tools == nil, cfg.Model == nil, cfg.Logs == nil, cfg.ParentLog == nil:
		return nil, errors.New("subagent: Config needs Registry, Tools, Model, Logs and ParentLog")
	}
	cfg.MaxDepth = cmp.Or(cfg.MaxDepth, DefaultMaxDepth)
	cfg.MaxRunning = cmp.Or(cfg.MaxRunning, DefaultMaxRunning)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Runner{cfg: cfg, defs: map[string]Definition{}, finished: map[string]dsh.SubagentFinished{},
		background: map[string]*Child{}, agents: map[string]*agentRecord{}}
	r.defs[r.general()] = Definition{Name: r.general(), System: cfg.GeneralSystem,
		Description: "General-purpose agent for researching complex questions, searching for code, and executing multi-step tasks."}
	for _, d := range cfg.Definitions {
		r.defs[d.Name] = d
	}
	if err := r.readParentLog(); err != nil {
		return nil, fmt.Errorf("subagent: reading the parent's log: %w", err)
	}
	return r, nil
}

// general is the built-in agent type's name.
func (r *Runner) general() string { return cmp.Or(r.cfg.DefaultType, GeneralPurpose) }

// hasType says whether typ names an agent type ("" names the built-in one).
func (r *Runner) hasType(typ string) bool {
	_, ok := r.defs[cmp.Or(typ, r.general())]
	return ok
}

// Types returns the agent types, built-in first, then by name.
func (r *Runner) Types() []Definition {
	out := make([]Definition, 0, len(r.defs))
	for _, d := range r.defs {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b Definition) int {
		if (a.Name == r.general()) != (b.Name == r.general()) {
			if a.Name == r.general() {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// Request is one call of the agent tool.
type Request struct {
	// CallID is the parent's tool call id.
	CallID string
	// ParentAgentID is the parent's agent id, and ParentLineage its own lineage (nil at
	// the top).
	ParentAgentID string
	ParentLineage *dsh.Lineage
	// Type is the agent type ("" is general-purpose).
	Type string
	// Task is the child's prompt.
	Task string
	// Description is the call's short description of the task (optional).
	Description string
}

// Run starts a child for req and waits for its turn to end, or for ctx (the parent's
// call) to be done, which cancels the child. A request the Runner refuses (an unknown
// type, past a bound) fails before any child starts, and records nothing.
func (r *Runner) Run(ctx context.Context, req Request) (Result, error) {
	if res, ok := r.replay(req); ok {
		return res, nil
	}
	a, err := r.admit(req)
	if err != nil {
		return Result{}, err
	}
	defer r.release()
	return r.runRecorded(ctx, a)
}

// admitted is a request the Runner admitted: its slot among the running children is
// taken (release gives it back).
type admitted struct {
	req        Request
	def        Definition
	lineage    dsh.Lineage
	id         string
	background bool // started by Spawn
}

// replay returns the result of req's call when a child of it finished before.
func (r *Runner) replay(req Request) (Result, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f, ok := r.finished[req.CallID]
	if !ok {
		return Result{}, false
	}
	res := replayed(f)
	if c := r.cfg.Completion; c != nil {
		switch {
		case res.Outcome == dsh.SubagentOutcomeCompleted:
			res.Reason = c.Goal
		case errors.Is(res.Err, ErrNoCompletion):
			res.Reason = c.Missing
		}
	}
	res.Type = cmp.Or(req.Type, r.general())
	if def, ok := r.defs[res.Type]; ok {
		res.Model = r.modelOf(def)
	}
	return res, true
}

// runsInBackground says whether req's agent type runs its children in the background
// whatever the call asks (Definition.Background).
func (r *Runner) runsInBackground(req Request) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	def, ok := r.defs[cmp.Or(req.Type, r.general())]
	return ok && def.Background
}

// admit checks req against the definitions and bounds, and takes a slot.
func (r *Runner) admit(req Request) (admitted, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return admitted{}, ErrClosed
	}
	typ := cmp.Or(req.Type, r.general())
	def, ok := r.defs[typ]
	depth := 1
	if req.ParentLineage != nil {
		depth = req.ParentLineage.Depth + 1
	}
	switch {
	case !ok:
		return admitted{}, &UnknownTypeError{Type: typ, Types: r.typeNames()}
	case depth > r.cfg.MaxDepth:
		return admitted{}, fmt.Errorf("%w: a child at depth %d may not start another (the limit is %d)", ErrTooDeep, depth-1, r.cfg.MaxDepth)
	case r.running >= r.cfg.MaxRunning:
		return admitted{}, fmt.Errorf("%w: %d are running (the limit is %d)", ErrTooMany, r.running, r.cfg.MaxRunning)
	}
	r.running++
	r.wg.Add(1)
	id := ""
	if r.cfg.NewID != nil {
		id = r.cfg.NewID()
	} else {
		// An id shaped as Claude Code's: "a" and 16 hex digits.
		var b [8]byte
		_, _ = rand.Read(b[:])
		id = "a" + hex.EncodeToString(b[:])
	}
	return admitted{req: req, def: def, id: id,
		lineage: dsh.Lineage{ParentAgentID: req.ParentAgentID, ParentCallID: req.CallID, AgentType: def.Name, Depth: depth}}, nil
}

// release gives back the slot admit took.
func (r *Runner) release() {
	r.mu.Lock()
	r.running--
	r.mu.Unlock()
	r.wg.Done()
}

// runRecorded runs the admitted child and records its end in the parent's log.
func (r *Runner) runRecorded(ctx context.Context, a admitted) (Result, error) {
	began := time.Now()
	res, err := r.run(ctx, a)
	res.Type, res.Duration, res.Model = a.def.Name, time.Since(began), r.modelOf(a.def)
	if err != nil {
		return res, err
	}
	return res, r.recordEnd(ctx, a.req.CallID, res)
}

// recordEnd records the end of a child's turn, res, in the parent's log
// (subagent/finished of the call callID), where a resumed parent finds it.
func (r *Runner) recordEnd(ctx context.Context, callID string, res Result) error {
	ms := int(res.Duration.Milliseconds())
	fin := dsh.SubagentFinished{CallID: callID, AgentID: res.AgentID, Outcome: res.Outcome, ToolsUsed: res.ToolsUsed,
		ToolUses: &res.ToolUses, Tokens: &res.Tokens, DurationMS: &ms}
	if res.TurnLimit > 0 {
		fin.TurnLimit = &res.TurnLimit
	}
	if res.Outcome == dsh.SubagentOutcomeCompleted {
		fin.Answer = &res.Answer
	} else if res.Err != nil {
		msg := res.Err.Error()
		fin.Error = &msg
	}
	// The parent's call may be cancelled: the record outlives it.
	if _, err := r.cfg.ParentLog.Append(context.WithoutCancel(ctx), fin); err != nil {
		return fmt.Errorf("subagent: recording the end of %s: %w", res.AgentID, err)
	}
	r.mu.Lock()
	r.finished[callID] = fin
	if rec := r.agents[res.AgentID]; rec != nil {
		rec.finished = &fin
	}
	r.mu.Unlock()
	return nil
}

// run starts the admitted child and waits for its turn to end.
func (r *Runner) run(ctx context.Context, a admitted) (Result, error) {
	id, def, lineage, task := a.id, a.def, a.lineage, a.req.Task
	sid := "ses_" + rand.Text()
	started := dsh.SubagentStarted{CallID: lineage.ParentCallID, AgentID: id, AgentType: def.Name, SessionID: sid, Depth: lineage.Depth}
	if a.background {
		started.Background = &a.background
	}
	if _, err := r.cfg.ParentLog.Append(ctx, started); err != nil {
		return Result{}, fmt.Errorf("subagent: recording the start: %w", err)
	}
	r.mu.Lock()
	r.agents[id] = &agentRecord{callID: lineage.ParentCallID, sessionID: sid, agentType: def.Name, lineage: lineage, task: task}
	r.mu.Unlock()
	log, closeLog, err := r.cfg.Logs.Create(ctx, sid)
	if err != nil {
		return failedTurn(ctx, id, fmt.Errorf("opening its log: %w", err)), nil
	}
	defer closeLog()
	return r.turn(ctx, childTurn{id: id, sid: sid, def: def, lineage: lineage, log: log, task: task,
		msg: dsh.UserText(dsh.SourceTool{CallID: lineage.ParentCallID}, task)}), nil
}

// childTurn is one turn of a child: its first (a new loop over a new log) or a later one
// (resume: the loop resumed from the log, [Runner.Continue]).
type childTurn struct {
	id, sid string
	def     Definition
	lineage dsh.Lineage
	log     *session.Log
	resume  bool
	// task is the child's first task (its first turn's prompt); msg is this turn's.
	task string
	msg  dsh.UserMessage
}

// failedTurn is how a turn that could not run ends: cancelled when ctx is done, else failed
// with err.
func failedTurn(ctx context.Context, id string, err error) Result {
	if ctx.Err() != nil {
		return Result{AgentID: id, Outcome: dsh.SubagentOutcomeCancelled, Err: fmt.Errorf("it was cancelled: %w", context.Cause(ctx))}
	}
	return Result{AgentID: id, Outcome: dsh.SubagentOutcomeFailed, Err: err}
}

// turn runs one turn of the child t describes over its log and waits for it to end: its
// result is read from the events the turn appended.
func (r *Runner) turn(ctx context.Context, t childTurn) Result {
	id, def, lineage, log := t.id, t.def, t.lineage, t.log
	if r.cfg.OnChild != nil {
		if done := r.cfg.OnChild(id, lineage, log); done != nil {
			defer done()
		}
	}
	llmCfg := r.cfg.LLM
	llmCfg.Model = r.modelOf(def)
	system := def.System
	if def.Name == r.general() && system == "" {
		system = r.cfg.GeneralSystem
	}
	// The child's tools: its definition's, without the agent tool at the depth limit,
	// and its answer tool (registered for it alone).
	rt := r.cfg.Tools()
	restrict := r.childTools(def, lineage.Depth)
	var done *completer
	if c := r.cfg.Completion; c != nil {
		done = &completer{c: c}
		unregister, err := rt.Tools().RegisterForAgent(id, done.definition())
		if err != nil {
			return failedTurn(ctx, id, fmt.Errorf("registering its answer tool: %w", err))
		}
		defer unregister()
		if restrict == nil {
			for _, d := range rt.Tools().Visible("") {
				restrict = append(restrict, d.Name)
			}
		}
		restrict = append(restrict, c.Tool.Name)
	}
	if r.cfg.BeforeChild != nil {
		end, err := r.cfg.BeforeChild(ctx, def, id)
		if err != nil {
			return failedTurn(ctx, id, fmt.Errorf("starting it: %w", err))
		}
		defer end()
	}
	plugin := r.cfg.Registry.Plugin("subagent").ForAgent(id)
	defer plugin.Close()
	// The definition's limit of model steps, as Claude Code's maxTurns: the turn ends
	// before the step past it (first among the child's own listeners).
	var limited atomic.Bool
	if n := def.MaxTurns; n > 0 {
		plugin.OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
			if p.Step > n {
				limited.Store(true)
				return dsh.PreStepHalt{Reason: fmt.Sprintf("the agent type's limit of %d model steps", n)}, nil
			}
			return next.Call(ctx)
		})
	}
	if restrict != nil {
		plugin.OnRequest(func(ctx context.Context, p *dsh.RequestPayload) (dsh.RequestDecision, error) {
			reason := "the tools of agent type " + def.Name
			return dsh.RequestRestrict{Allow: restrict, Reason: &reason}, nil
		})
	}
	start := loop.New
	if t.resume {
		// A later turn: the loop is resumed from the child's log, so that it reads its
		// history (and closes a turn a crash left open); it fires no agent/subagent-start.
		start = loop.Resume
	}
	child, err := start(ctx, loop.Config{ID: id, SessionID: t.sid, Workspace: r.cfg.Workspace, Registry: r.cfg.Registry,
		Tools: rt, Model: r.cfg.Model, Log: log, System: system, LLM: llmCfg, Logger: r.cfg.Logger,
		ContinuationCap: r.cfg.ContinuationCap, BackgroundTasks: r.BackgroundTasks,
		Subagent: &loop.Subagent{Lineage: lineage, ParentSessionID: r.cfg.ParentSessionID, Task: t.task}})
	if err != nil {
		return failedTurn(ctx, id, err)
	}
	defer child.Close()
	// A definition whose tools name no tool: the child exists (agent/subagent-start has
	// fired, as Claude Code 2.1.328 fires SubagentStart) and never runs.
	if def.Tools != nil && len(r.known(def.Tools)) == 0 {
		return Result{AgentID: id, Outcome: dsh.SubagentOutcomeFailed, Err: &NoToolsError{Type: def.Name, Unrecognized: def.Tools}}
	}
	from := log.Len()
	// The task comes from the parent's call, not from the user: a child fires no
	// UserPromptSubmit (measured in Claude Code 2.1.328, case subagent/session-events).
	if err := child.Followup(ctx, t.msg); err != nil {
		return failedTurn(ctx, id, err)
	}
	// From now on a message for the child reaches its running turn (Continue).
	r.setLive(id, child)
	defer r.setLive(id, nil)
	for nudge := 0; ; nudge++ {
		if err := r.waitTurns(ctx, id, child); err != nil || ctx.Err() != nil {
			// The parent's call was cancelled: so is the child (its context is the call's,
			// so its turn may have ended first).
			child.Cancel(dsh.CancelDisposed{}, false)
			_ = child.Wait(context.WithoutCancel(ctx))
			return failedTurn(ctx, id, nil)
		}
		// A child that ends only by its answer tool and whose turn ended without it is
		// nudged (Gemini CLI's "final chance"), as often as the Completion says.
		if done == nil || nudge >= done.c.Nudges || ended(id, log, from, nil).Outcome != dsh.SubagentOutcomeCompleted {
			break
		}
		if _, ok := done.result(); ok {
			break
		}
		r.setLive(id, child)
		if err := child.Followup(ctx, dsh.UserText(dsh.SourceTool{CallID: lineage.ParentCallID}, done.c.Nudge)); err != nil {
			return failedTurn(ctx, id, err)
		}
	}
	res := ended(id, log, from, r.cfg.ToolKinds)
	if limited.Load() && res.Outcome == dsh.SubagentOutcomeCancelled {
		res.Outcome, res.Err, res.TurnLimit = dsh.SubagentOutcomeCompleted, nil, def.MaxTurns
	}
	if done != nil && res.Outcome == dsh.SubagentOutcomeCompleted {
		if answer, ok := done.result(); ok {
			res.Answer, res.Reason = answer, done.c.Goal
		} else {
			res.Outcome, res.Err, res.Answer, res.Reason = dsh.SubagentOutcomeFailed, ErrNoCompletion, "", done.c.Missing
		}
	}
	return res
}

// modelOf is the model a child of def calls: its definition's, else the parent's.
func (r *Runner) modelOf(def Definition) string {
	if def.Model != "" && def.Model != "inherit" {
		return def.Model
	}
	return r.cfg.LLM.Model
}

// childTools are the tool names a child of def at depth is offered, or nil for every
// tool the registry has.
func (r *Runner) childTools(def Definition, depth int) []string {
	atLimit := depth >= r.cfg.MaxDepth
	if def.Tools == nil {
		if !atLimit && len(def.Disallowed) == 0 {
			return nil
		}
		var names []string
		for _, d := range r.cfg.Tools().Tools().Visible("") {
			if (!r.isAgentTool(d.Name) || !atLimit) && !slices.Contains(def.Disallowed, d.Name) {
				names = append(names, d.Name)
			}
		}
		return names
	}
	names := make([]string, 0, len(def.Tools))
	for _, n := range r.known(def.Tools) {
		if !r.isAgentTool(n) || !atLimit {
			names = append(names, n)
		}
	}
	return names
}

// isAgentTool says whether name is one of the agent tools (Config.ToolName, ToolNames).
func (r *Runner) isAgentTool(name string) bool {
	return name == r.cfg.ToolName || slices.Contains(r.cfg.ToolNames, name)
}

// known are the names of names that the registry has a tool of, in the registry's order
// (a definition's names of no tool are dropped, as Claude Code drops them).
func (r *Runner) known(names []string) []string {
	var out []string
	for _, d := range r.cfg.Tools().Tools().Visible("") {
		if slices.Contains(names, d.Name) {
			out = append(out, d.Name)
		}
	}
	return out
}

// typeNames are the agent types' names, in Types order.
func (r *Runner) typeNames() []string {
	var names []string
	for _, d := range r.Types() {
		names = append(names, d.Name)
	}
	return names
}

// Close refuses new children, cancels those running in the background and waits for
// every running one (a foreground child ends with its parent's call, which the parent
// cancels).
func (r *Runner) Close() {
	r.mu.Lock()
	r.closed = true
	for _, c := range r.background {
		c.cancel(ErrClosed)
	}
	r.mu.Unlock()
	r.wg.Wait()
}
