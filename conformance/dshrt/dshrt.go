// Package dshrt wires dsh's own runtime (runtime/tools, runtime/loop, runtime/session,
// runtime/llm, runtime/approval) into the conformance harness: New is the Factory the
// generated scenario tests run.
package dshrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshkit/dsh/bridges/dialect"
	"github.com/dshkit/dsh/conformance"
	sc "github.com/dshkit/dsh/generated/conformance"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runner"
	"github.com/dshkit/dsh/runtime/approval"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/loop"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
)

// Runtime is dsh's runtime under the conformance harness.
type Runtime struct {
	t     testing.TB
	hooks *dsh.Registry
	reg   *tools.Registry

	mu       sync.Mutex
	rt       *tools.Runtime
	approver func(ctx context.Context, toolName string) (dsh.ApprovalOutcome, error)
	model    *gatedModel
	opts     conformance.Options
	agents   map[string]*agent
	order    []string
	logs     map[string]*session.Log
	stores   map[string]*session.Memory // each agent's persisted session, for Resume
	closers  []func()
	mutation Mutation

	hookBridge hookBridge               // the attached hook bridge, if any
	turns      map[string]*runner.Turns // each agent's open turn, for the hook bridge

	subagents  *sc.Subagents     // the scenario's agent tool, if any
	agentTools map[string]func() // unregisters each agent's agent tool and closes its runner
}

// hookBridge is what dshrt uses of a loaded bridge.
type hookBridge = dialect.Bridge

// New is the conformance.Factory of dsh's runtime.
func New(t testing.TB) conformance.Runtime { return NewMutant(t, Intact) }

// NewMutant is New with a deliberate breakage (Intact: none).
func NewMutant(t testing.TB, m Mutation) conformance.Runtime {
	return &Runtime{
		t: t,
		// The decision audit hook is installed always; Config.Audit turns it on per agent.
		hooks:    dsh.NewRegistry(dsh.WithLogger(slog.New(slog.DiscardHandler)), loop.DecisionAudit()),
		reg:      tools.NewRegistry(),
		agents:   map[string]*agent{},
		logs:     map[string]*session.Log{},
		stores:   map[string]*session.Memory{},
		model:    &gatedModel{inner: llm.NewScripted().RecordRequests()},
		mutation: m,
		turns:    map[string]*runner.Turns{},

		agentTools: map[string]func(){},
	}
}

// Registrar returns the registry's plugin registrar for name (the root when name is
// empty); a mutant routes some points nowhere.
func (r *Runtime) Registrar(point, name string) *dsh.Registrar {
	if (r.mutation == GuardsIgnored && point == dsh.GuardEventName) ||
		(r.mutation == PostExecuteSkipped && point == dsh.PostToolEventName) ||
		(r.mutation == PreCompactIgnored && point == dsh.PreCompactEventName) {
		return dsh.NewRegistry(dsh.WithLogger(slog.New(slog.DiscardHandler))).Registrar
	}
	if name == "" {
		return r.hooks.Registrar
	}
	return r.hooks.Plugin(name)
}

// RegisterTool registers t globally.
func (r *Runtime) RegisterTool(t conformance.Tool) error {
	def := tools.Definition{
		Name: t.Name,
		Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
			v, err := t.Run(ctx, call{rc})
			var he *conformance.HarnessError
			if errors.As(err, &he) {
				return nil, tools.NewError(he.Code, he.Message)
			}
			return v, err
		},
	}
	if t.Parallel {
		def.IsConcurrencySafe = func(json.RawMessage) bool { return true }
	}
	if t.ExclusiveWhen != "" {
		marker := t.ExclusiveWhen
		def.IsConcurrencySafe = func(args json.RawMessage) bool { return !strings.Contains(string(args), marker) }
	}
	def.InputSchema = t.InputSchema
	if len(t.OutputSchema) > 0 {
		def.Output = &tools.Output{Schema: t.OutputSchema}
	}
	if t.Finalize != nil {
		def.FinalizeContent = func(_ dsh.ToolExecution, res dsh.ToolExecutionResult) ([]dsh.ContentBlock, error) {
			return t.Finalize(res)
		}
	}
	_, err := r.reg.Register(def)
	return err
}

// call adapts a tools.RunContext to conformance.Call.
type call struct{ rc *tools.RunContext }

func (c call) CallID() string { return c.rc.Exec().CallID }
func (c call) AgentID() string {
	if id := c.rc.Exec().AgentID; id != nil {
		return *id
	}
	return ""
}
func (c call) Arguments() json.RawMessage      { return c.rc.Exec().Arguments }
func (c call) Defer(msg dsh.UserMessage) error { return c.rc.DeferContext(msg) }
func (c call) Conclude()                       { c.rc.ConcludeTurn() }

// SetApprover mounts an approval service answering with fn.
func (r *Runtime) SetApprover(fn func(ctx context.Context, toolName string) (dsh.ApprovalOutcome, error)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.approver = fn
}

// SetOptions sets the loop's settings.
func (r *Runtime) SetOptions(o conformance.Options) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.opts = o
}

// tools returns the tool runtime, built on first use (after the setup).
func (r *Runtime) tools() *tools.Runtime {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rt != nil {
		return r.rt
	}
	var opts []tools.Option
	if r.approver != nil {
		svc := approval.NewService(approval.WithRecorder(approval.RecorderFunc(r.recordApproval)))
		fn, mutate := r.approver, r.mutation == ApprovalAlwaysAllows
		svc.AddAnswerer(digestAnswerer(func(ctx context.Context, req approval.Request) (approval.Decision, error) {
			if mutate {
				return approval.Decision{Outcome: dsh.ApprovalOutcomeAllowedOnce, ArgsDigest: req.ArgsDigest}, nil
			}
			out, err := fn(ctx, req.ToolName)
			if out == conformance.AllowedOnceStale {
				stale := tools.ArgsDigest(req.ModelArguments)
				if stale == "" || stale == req.ArgsDigest {
					stale = "sha256:stale"
				}
				return approval.Decision{Outcome: dsh.ApprovalOutcomeAllowedOnce, ArgsDigest: stale}, err
			}
			return approval.Decision{Outcome: out, ArgsDigest: req.ArgsDigest}, err
		}))
		opts = append(opts, tools.WithApprover(svc))
	}
	switch r.opts.RewriteConflict {
	case "fail":
		opts = append(opts, tools.WithRewriteConflict(tools.ConflictFail))
	case "ordered":
		opts = append(opts, tools.WithRewriteConflict(tools.ConflictOrdered))
	}
	if r.opts.RewriteDeadline > 0 {
		opts = append(opts, tools.WithRewriteDeadline(r.opts.RewriteDeadline))
	}
	opts = append(opts, tools.WithLogger(slog.New(slog.DiscardHandler)))
	r.rt = tools.New(r.reg, r.hooks, opts...)
	return r.rt
}

// recordApproval appends approval events to the log of the agent they concern.
func (r *Runtime) recordApproval(ctx context.Context, data dsh.SessionEventData) error {
	log := r.firstLog()
	if log == nil {
		return nil
	}
	_, err := log.Append(ctx, data)
	return err
}

// firstLog is the session log of the first agent created, or nil before there is one.
func (r *Runtime) firstLog() *session.Log {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.order) == 0 {
		return nil
	}
	return r.logs[r.order[0]]
}

// Execute runs a direct execution.
func (r *Runtime) Execute(ctx context.Context, in conformance.ExecuteInput) dsh.ToolExecutionResult {
	return r.tools().Execute(ctx, tools.Input{CallID: in.CallID, Name: in.Name, Arguments: in.Arguments, AgentID: in.AgentID}).Outcome
}

// Agent creates the agent with the id on first use.
func (r *Runtime) Agent(ctx context.Context, id string) (conformance.Agent, error) {
	rt := r.tools()
	r.mu.Lock()
	if a := r.agents[id]; a != nil {
		r.mu.Unlock()
		return a, nil
	}
	r.mu.Unlock()
	store := session.NewMemory()
	log, err := session.Open(ctx, store)
	if err != nil {
		return nil, err
	}
	r.follow(id, log)
	if err := r.attachAgentTool(id, log); err != nil {
		return nil, err
	}
	la, err := loop.New(ctx, r.config(id, rt, log))
	if err != nil {
		return nil, fmt.Errorf("dshrt: %w", err)
	}
	a := &agent{Agent: la, rt: r}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.agents[id] = a
	r.order = append(r.order, id)
	r.logs[id] = log
	r.stores[id] = store
	r.closers = append(r.closers, func() { _ = la.Close(); _ = log.Close() })
	return a, nil
}

// config is the loop config of the agent id over log.
func (r *Runtime) config(id string, rt *tools.Runtime, log *session.Log) loop.Config {
	r.mu.Lock()
	defer r.mu.Unlock()
	return loop.Config{
		ID: id, Registry: r.hooks, Tools: rt, Model: r.model, Log: log,
		MaxParallelToolCalls: r.opts.MaxParallelToolCalls, ContinuationCap: r.opts.ContinuationCap,
		SessionStartTimeout: r.opts.SessionStartTimeout, Audit: r.opts.Audit, Setup: r.opts.Setup, Instructions: r.opts.Instructions,
		ModelListenerTimeout: r.opts.ModelListenerTimeout,
		LLM:                  dsh.LLMCallConfig{Provider: "scripted", Model: "scripted"},
		Compaction: loop.CompactionConfig{ContextWindow: r.opts.Compaction.ContextWindow,
			ThresholdRatio: r.opts.Compaction.ThresholdRatio, ListenerTimeout: r.opts.Compaction.ListenerTimeout,
			Disabled: r.mutation == CompactionOff},
	}
}

// Resume closes the agent id and its log, reopens the log over the same store and
// resumes the agent from it (loop.Resume).
func (r *Runtime) Resume(ctx context.Context, id string) (conformance.Agent, error) {
	rt := r.tools()
	r.mu.Lock()
	old, store, oldLog := r.agents[id], r.stores[id], r.logs[id]
	r.mu.Unlock()
	if old == nil {
		return nil, fmt.Errorf("dshrt: no agent %q to resume", id)
	}
	if err := old.Agent.Close(); err != nil {
		return nil, fmt.Errorf("dshrt: close %q: %w", id, err)
	}
	if err := oldLog.Close(); err != nil {
		return nil, fmt.Errorf("dshrt: close the log of %q: %w", id, err)
	}
	log, err := session.Open(ctx, store)
	if err != nil {
		return nil, err
	}
	r.follow(id, log)
	if err := r.attachAgentTool(id, log); err != nil {
		return nil, err
	}
	la, err := loop.Resume(ctx, r.config(id, rt, log))
	if err != nil {
		_ = log.Close()
		return nil, fmt.Errorf("dshrt: resume %q: %w", id, err)
	}
	a := &agent{Agent: la, rt: r}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.agents[id] = a
	r.logs[id] = log
	r.closers = append(r.closers, func() { _ = la.Close(); _ = log.Close() })
	return a, nil
}

// Log returns the events of every agent's log, agent by agent in creation order.
func (r *Runtime) Log() []conformance.LogEvent {
	r.mu.Lock()
	logs := make([]*session.Log, 0, len(r.order))
	for _, id := range r.order {
		logs = append(logs, r.logs[id])
	}
	mutate := r.mutation == ContextsBeforeResults
	r.mu.Unlock()
	var out []conformance.LogEvent
	for _, l := range logs {
		for e, err := range l.Events() {
			if err != nil {
				r.t.Errorf("dshrt: reading the log: %v", err)
				break
			}
			out = append(out, conformance.LogEvent{Type: e.Type, Data: e.Data})
		}
	}
	if mutate {
		out = contextsFirst(out)
	}
	return out
}

// Close closes every agent and log.
func (r *Runtime) Close() {
	r.mu.Lock()
	closers := r.closers
	r.closers = nil
	r.mu.Unlock()
	for _, c := range closers {
		c()
	}
	r.mu.Lock()
	b := r.hookBridge
	r.mu.Unlock()
	if b != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := b.Close(ctx); err != nil {
			r.t.Errorf("dshrt: closing the hook bridge: %v", err)
		}
	}
}

// agent adapts a loop.Agent to conformance.Agent.
type agent struct {
	*loop.Agent
	rt *Runtime
}

func (a *agent) Handle() dsh.Agent { return a.Agent }

// WaitIdle waits until the agent is idle and, with hooks attached, for the async hooks
// started so far (what they inject does not wake the agent).
func (a *agent) WaitIdle(ctx context.Context) error {
	if err := a.Wait(ctx); err != nil {
		return err
	}
	a.rt.mu.Lock()
	b := a.rt.hookBridge
	a.rt.mu.Unlock()
	if b == nil {
		return nil
	}
	if err := b.Wait(ctx); err != nil {
		return err
	}
	return a.Wait(ctx)
}

// Compact runs loop.Agent.Compact and names its outcome.
func (a *agent) Compact(ctx context.Context, instructions string) (string, error) {
	res, err := a.Agent.Compact(ctx, instructions)
	var de *loop.DeferredError
	var fe *loop.FailedError
	switch {
	case err == nil:
		return string(res.Outcome), nil
	case errors.Is(err, loop.ErrNothingToCompact):
		return "nothing", nil
	case errors.As(err, &de):
		return "deferred by " + de.Listener, nil
	case errors.As(err, &fe):
		return "failed", nil
	}
	return "", err
}

func (a *agent) Cancel(cause string, keepInbox bool) {
	var c dsh.AgentCancelCause = dsh.CancelUser{}
	switch cause {
	case "parent":
		c = dsh.CancelParent{}
	case "disposed":
		c = dsh.CancelDisposed{}
	}
	a.Agent.Cancel(c, keepInbox)
}

// digestAnswerer is an approval answerer that echoes the argument digest it answers for.
type digestAnswerer func(ctx context.Context, req approval.Request) (approval.Decision, error)

func (f digestAnswerer) Answer(ctx context.Context, req approval.Request) (dsh.ApprovalOutcome, error) {
	d, err := f(ctx, req)
	return d.Outcome, err
}

func (f digestAnswerer) AnswerDigest(ctx context.Context, req approval.Request) (approval.Decision, error) {
	return f(ctx, req)
}
