package loop

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
)

// Defaults of the optional Config fields.
const (
	// DefaultMaxParallelToolCalls is the default cap on tool calls in flight at once.
	DefaultMaxParallelToolCalls = 10
	// DefaultContinuationCap is the default number of times a turn may continue from a
	// natural stop (docs/design/SEMANTICS.md#a9-the-stop-loop-is-capped).
	DefaultContinuationCap = 8
	// DefaultSessionStartTimeout is the default bound on the agent/session-start listeners
	// (docs/design/SEMANTICS.md#a6-session-start-is-awaited-and-bounded).
	DefaultSessionStartTimeout = 5 * time.Second
	// DefaultSessionEndTimeout is the default bound on each agent/session-end listener
	// (Claude Code gives its SessionEnd hooks 1.5 s).
	DefaultSessionEndTimeout = 1500 * time.Millisecond
	// DefaultThresholdRatio is the default share of the context window at which pressure
	// compaction runs.
	DefaultThresholdRatio = 0.8
	// DefaultRetainRatio is the default share of the context window the newest messages
	// may keep, uncompacted, after a checkpoint.
	DefaultRetainRatio = 0.16
	// DefaultMaxConsecutiveDefers is the default defer cap: the pressure attempt after this
	// many consecutive deferred ones is overridden and runs.
	DefaultMaxConsecutiveDefers = 3
	// DefaultCompactionListenerTimeout is the default bound on each compaction listener.
	DefaultCompactionListenerTimeout = 5 * time.Second
	// DefaultModelListenerTimeout is the default bound on each agent/request and
	// agent/response listener.
	DefaultModelListenerTimeout = 10 * time.Second
)

// CompactionConfig configures compaction (docs/design/REWRITE-COMPACTION.md#22-design-a-compaction-phase-with-two-typed-points). With no context
// window known for the model, pressure compaction is off; overflow compaction (a request
// failing with CONTEXT_WINDOW_EXCEEDED) and manual compaction (Agent.Compact) work
// whatever the window.
type CompactionConfig struct {
	// ContextWindow is the model's context window, in tokens (0: unknown).
	ContextWindow int
	// Windows are per-model context windows, keyed "provider/model" or "model"; they win
	// over ContextWindow.
	Windows map[string]int
	// ThresholdRatio is the share of the window at which a step boundary compacts (0: 0.8).
	ThresholdRatio float64
	// RetainRatio is the share of the window the newest whole messages keep after a
	// checkpoint (0: 0.16).
	RetainRatio float64
	// MaxConsecutiveDefers is the defer cap (0: 3; negative: a defer is never overridden).
	MaxConsecutiveDefers int
	// ListenerTimeout bounds each compaction/pre-compact and compaction/post-compact
	// listener, and the agent/session-start listeners of the source compact (0: 5 s).
	ListenerTimeout time.Duration
	// SummaryMaxTokens caps the summarizer's output (0: the config's maxTokens).
	SummaryMaxTokens int
	// Disabled turns automatic compaction off (pressure and overflow); manual compaction
	// still works.
	Disabled bool
}

// Config configures an Agent. ID, Registry, Model and Log are required.
type Config struct {
	// ID is the agent id: the subject of every agent/* and tools/* event the agent
	// dispatches, so that listeners registered with Registrar.ForAgent(ID) see only it.
	ID string
	// SessionID is recorded in session/created by New; empty mints one.
	SessionID string
	// Workspace, when set, is recorded in session/created by New as the session's working
	// directory (dsh run --continue finds a workspace's sessions by it).
	Workspace string
	// Registry holds the listeners of every event the agent dispatches.
	Registry *dsh.Registry
	// Tools runs the agent's tool calls; nil means a runtime with no tools over Registry.
	// It must dispatch through Registry (Tools.Hooks() == Registry).
	Tools *tools.Runtime
	// Model streams the responses.
	Model llm.Model
	// Log is the agent's durable session log. New needs an empty log, Resume a log that
	// New started for the same ID.
	Log *session.Log
	// System is the system prompt of every request.
	System string
	// LLM is the agent's call configuration: the seed agent/request listeners refine.
	LLM dsh.LLMCallConfig
	// MaxParallelToolCalls caps the parallel tool calls in flight (0: 10; 1: serial).
	MaxParallelToolCalls int
	// ContinuationCap caps how many times one turn continues from a natural stop through
	// input steered at agent/turn-stopping (0: 8; negative: no continuation at all).
	ContinuationCap int
	// Setup, when set, runs agent/setup with this trigger when the agent is created (not
	// when it is resumed), before agent/session-start.
	Setup dsh.SetupTrigger
	// Instructions are the instruction files the host loaded into the agent's context (the
	// text itself the host injects): agent/instructions-loaded runs for each, in order,
	// when the agent is created (after agent/setup) or resumed, and again after each
	// automatic compaction (reason compact for a file read as the session started).
	Instructions []dsh.InstructionFile
	// SessionStartTimeout bounds the agent/session-start listeners (0: 5 s).
	SessionStartTimeout time.Duration
	// SessionEndTimeout bounds each agent/session-end listener Close runs (0: 1.5 s).
	SessionEndTimeout time.Duration
	// Audit appends a decision/recorded event for every decision a listener resolves at a
	// policy point (docs/design/SEMANTICS.md#a12-native-decisions-can-be-audited). It needs a Registry created with the
	// DecisionAudit option.
	Audit bool
	// Compaction configures compaction.
	Compaction CompactionConfig
	// ModelListenerTimeout bounds each agent/request and agent/response listener (0: 10 s;
	// negative: unbounded, run on the driver's goroutine). A listener still running at its
	// bound fails the request closed.
	ModelListenerTimeout time.Duration
	// Logger receives the agent's diagnostics (default: discard).
	Logger *slog.Logger
	// Subagent, when set, makes the agent a subagent: a child agent that a tool call of
	// another agent started (docs/design/SUBAGENTS.md#the-tool-and-the-child-loop). It fires
	// agent/subagent-start in place of agent/session-start and agent/subagent-stop in
	// place of agent/turn-stopping, and never agent/session-end; its session/created
	// records its lineage, and its tool calls carry it.
	Subagent *Subagent
	// BackgroundTasks, when set, lists the session's tasks running in the background (the
	// children runtime/subagent started so) for agent/turn-stopping and
	// agent/subagent-stop; it is called on the agent's goroutine and must not block.
	BackgroundTasks func() []dsh.BackgroundTask
}

// Subagent is what makes an agent a subagent (Config.Subagent).
type Subagent struct {
	// Lineage is the child's identity: its parent agent, the call that started it, its
	// type and depth (1 or more).
	Lineage dsh.Lineage
	// ParentSessionID is the id of the parent's session, recorded in the child's
	// session/created.
	ParentSessionID string
	// Task is the child's task, the prompt of its first turn, for the
	// agent/subagent-start payload (the caller sends it with Followup).
	Task string
}

// Errors of New and Resume.
var (
	// ErrInvalidConfig is wrapped by New and Resume for a config missing a required field.
	ErrInvalidConfig = errors.New("loop: invalid config")
	// ErrLogNotEmpty is returned by New for a log that already holds events.
	ErrLogNotEmpty = errors.New("loop: New needs an empty session log (use Resume)")
	// ErrNotResumable is wrapped by Resume for a log New did not start for this agent.
	ErrNotResumable = errors.New("loop: the session log cannot be resumed by this agent")
)

// normalized checks c and fills in its defaults.
func (c Config) normalized() (Config, error) {
	switch {
	case c.ID == "":
		return c, fmt.Errorf("%w: empty ID", ErrInvalidConfig)
	case c.Registry == nil:
		return c, fmt.Errorf("%w: nil Registry", ErrInvalidConfig)
	case c.Model == nil:
		return c, fmt.Errorf("%w: nil Model", ErrInvalidConfig)
	case c.Log == nil:
		return c, fmt.Errorf("%w: nil Log", ErrInvalidConfig)
	}
	if sa := c.Subagent; sa != nil {
		l := sa.Lineage
		switch {
		case l.ParentAgentID == "" || l.ParentCallID == "" || l.AgentType == "":
			return c, fmt.Errorf("%w: Subagent.Lineage needs parentAgentId, parentCallId and agentType", ErrInvalidConfig)
		case l.Depth < 1:
			return c, fmt.Errorf("%w: Subagent.Lineage.Depth %d is not 1 or more", ErrInvalidConfig, l.Depth)
		}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Tools == nil {
		c.Tools = tools.New(nil, c.Registry, tools.WithLogger(c.Logger))
	} else if c.Tools.Hooks() != c.Registry {
		return c, fmt.Errorf("%w: Tools dispatches the tools/* events through another registry", ErrInvalidConfig)
	}
	if c.MaxParallelToolCalls <= 0 {
		c.MaxParallelToolCalls = DefaultMaxParallelToolCalls
	}
	if c.ContinuationCap == 0 {
		c.ContinuationCap = DefaultContinuationCap
	} else if c.ContinuationCap < 0 {
		c.ContinuationCap = 0
	}
	if c.SessionEndTimeout <= 0 {
		c.SessionEndTimeout = DefaultSessionEndTimeout
	}
	if c.SessionStartTimeout <= 0 {
		c.SessionStartTimeout = DefaultSessionStartTimeout
	}
	if c.ModelListenerTimeout == 0 {
		c.ModelListenerTimeout = DefaultModelListenerTimeout
	}
	cc := &c.Compaction
	switch {
	case cc.ContextWindow < 0:
		return c, fmt.Errorf("%w: negative Compaction.ContextWindow %d", ErrInvalidConfig, cc.ContextWindow)
	case cc.ThresholdRatio < 0 || cc.ThresholdRatio > 1:
		return c, fmt.Errorf("%w: Compaction.ThresholdRatio %v is not in (0, 1]", ErrInvalidConfig, cc.ThresholdRatio)
	case cc.RetainRatio < 0 || cc.RetainRatio >= 1:
		return c, fmt.Errorf("%w: Compaction.RetainRatio %v is not in (0, 1)", ErrInvalidConfig, cc.RetainRatio)
	}
	for k, v := range cc.Windows {
		if v < 0 {
			return c, fmt.Errorf("%w: negative Compaction.Windows[%q] %d", ErrInvalidConfig, k, v)
		}
	}
	if cc.ThresholdRatio == 0 {
		cc.ThresholdRatio = DefaultThresholdRatio
	}
	if cc.RetainRatio == 0 {
		cc.RetainRatio = DefaultRetainRatio
	}
	if cc.MaxConsecutiveDefers == 0 {
		cc.MaxConsecutiveDefers = DefaultMaxConsecutiveDefers
	}
	if cc.ListenerTimeout <= 0 {
		cc.ListenerTimeout = DefaultCompactionListenerTimeout
	}
	return c, nil
}
