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
	// natural stop (SEMANTICS.md Part A item 9).
	DefaultContinuationCap = 8
	// DefaultSessionStartTimeout is the default bound on the agent/session-start listeners
	// (SEMANTICS.md Part A item 6).
	DefaultSessionStartTimeout = 5 * time.Second
)

// Config configures an Agent. ID, Registry, Model and Log are required.
type Config struct {
	// ID is the agent id: the subject of every agent/* and tools/* event the agent
	// dispatches, so that listeners registered with Registrar.ForAgent(ID) see only it.
	ID string
	// SessionID is recorded in session/created by New; empty mints one.
	SessionID string
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
	// SessionStartTimeout bounds the agent/session-start listeners (0: 5 s).
	SessionStartTimeout time.Duration
	// Audit appends a decision/recorded event for every decision a listener resolves at a
	// policy point (SEMANTICS.md Part A item 12). It needs a Registry created with the
	// DecisionAudit option.
	Audit bool
	// Logger receives the agent's diagnostics (default: discard).
	Logger *slog.Logger
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
	if c.SessionStartTimeout <= 0 {
		c.SessionStartTimeout = DefaultSessionStartTimeout
	}
	return c, nil
}
