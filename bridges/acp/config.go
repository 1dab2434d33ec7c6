package acp

import (
	"context"
	"iter"
	"log/slog"

	"github.com/dshkit/dsh/bridges/mcp"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/loop"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
)

// AgentID is the loop agent id of every ACP session (each session has its own registries).
const AgentID = "main"

// Permissions is which tool calls ask the client before they run.
type Permissions string

const (
	// PermissionsAsk asks for every call except Read and MCP tools annotated read-only by
	// a trusted server (Config.MCP.TrustedServers) (the default, like Claude Code's
	// default mode).
	PermissionsAsk Permissions = "ask"
	// PermissionsAllow asks for none; a hook's or plugin's ask decision still asks.
	PermissionsAllow Permissions = "allow"
)

// SessionSpec describes a session being created or loaded, for Config.Setup.
type SessionSpec struct {
	// ID is the ACP session id.
	ID string
	// CWD is the session's absolute working directory: the workspace of its tools.
	CWD string
	// Log is the session's durable log; LogPath is its file.
	Log     *session.Log
	LogPath string
	// Loaded is true for session/load.
	Loaded bool
}

// Env is what Config.Setup builds for one session: the registries, model and hooks the
// agent loop runs with. The ACP bridge adds its own listeners (permissions, tool progress,
// prompt correlation) and the session's MCP tools to them.
type Env struct {
	// Hooks is the session's listener registry (native plugins and hook bridges).
	Hooks *dsh.Registry
	// Tools is the session's tool registry (the built-in tools).
	Tools *tools.Registry
	// Model and LLM are the model and its call configuration.
	Model llm.Model
	LLM   dsh.LLMCallConfig
	// System is the system prompt.
	System string
	// MCPServers are mounted in the session before its own mcpServers (a session server
	// of the same name replaces one of these): --mcp-config and the project's .mcp.json.
	MCPServers []mcp.ServerConfig
	// ContinuationCap is the loop's Stop continuation cap (loop.Config.ContinuationCap;
	// 0 is the loop's default).
	ContinuationCap int
	// Compaction configures the session's compaction (loop.Config.Compaction): the
	// model's context window, the threshold. A prompt "/compact [instructions]" compacts
	// the idle session instead of starting a turn.
	Compaction loop.CompactionConfig
	// ToolOptions are added to the session's tool runtime options (e.g.
	// tools.WithRewriteDeadline for hook bridges, whose PreToolUse hooks run in the
	// rewrite phase under their own timeouts).
	ToolOptions []tools.Option
	// FileText, if set, reads a file's current text for the diff that a Write's tool card
	// and permission prompt show, as the Write tool itself could read it: it must apply the
	// tools' confinement and caps (builtin.CurrentText with the session's tool options
	// does). An error shows no diff. Default: builtin.CurrentText with the session's cwd
	// as the workspace and the default caps.
	FileText func(ctx context.Context, filePath string) (text string, exists bool, err error)
	// Started, if set, is called with the agent once it exists (hook bridges need it; dsh
	// acp records the session's sandbox then); an error fails the session's opening.
	Started func(context.Context, *loop.Agent) error
	// Close, if set, releases what Setup acquired (hook bridges); called once.
	Close func()
	// SetChildRuntime, if set, is given the tool runtime the children of the session's
	// agent (its subagents) must run their calls on: the session's own, with the
	// editor's permission requests (runner.Session.SetChildRuntime).
	SetChildRuntime func(rt func() *tools.Runtime)
	// ObserveChildren, if set, is given the observer of the session's children: their tool
	// calls are shown as tool calls of the prompt that runs them, marked with the child
	// (runner.Session.ObserveChildren).
	ObserveChildren func(observe func(agentID string, lineage dsh.Lineage, log *session.Log) (done func()))
	// ChildEvents, if set, reads the log of a child session (its id as the parent's
	// subagent/started records it): session/load shows the child's tool calls again as
	// they were shown live. An error ends that child's replay, logged, not the load.
	ChildEvents func(sessionID string) iter.Seq2[session.Event, error]
}

// Config configures a Server.
type Config struct {
	// Setup builds a session's environment. Required.
	Setup func(ctx context.Context, spec SessionSpec) (*Env, error)
	// SessionsDir holds the session logs, one <sessionId>.jsonl each (and the transcripts
	// the hooks read beside them); created private (0700) when missing. Required unless
	// Logs is set.
	SessionsDir string
	// Logs, if set, keeps the session logs instead of SessionsDir (dsh acp --sessions
	// postgres://... sets one on PostgreSQL).
	Logs LogStore
	// MCP configures the MCP clients (Dir is set per session).
	MCP mcp.Options
	// Permissions is the default permission policy (default PermissionsAsk).
	Permissions Permissions
	// Name and Version are reported in agentInfo (default "dsh", "dev").
	Name, Version string
	// Logger receives diagnostics (stderr in dsh acp; default: discard).
	Logger *slog.Logger
	// MaxInFlight bounds the requests of the connection being handled at once (default
	// DefaultMaxInFlight). A request past the bound is answered at once with
	// CodeServerBusy, from the reading goroutine: while the client does not read its
	// output, that answer blocks, and so reading stops (backpressure) and memory stays
	// flat however many requests the client sends.
	MaxInFlight int
	// MaxOpenSessions bounds the sessions kept open (default DefaultMaxOpenSessions).
	// Past it, the least recently used idle sessions (no prompt in flight) are closed:
	// their agent, hooks, MCP servers and log file are released. A session closed so is
	// reopened from its log, as session/load does but without replaying it to the client,
	// when a prompt names it (or loaded again by session/load).
	MaxOpenSessions int
}

// Defaults of Config's bounds.
const (
	// DefaultMaxInFlight is the default Config.MaxInFlight.
	DefaultMaxInFlight = 64
	// DefaultMaxOpenSessions is the default Config.MaxOpenSessions.
	DefaultMaxOpenSessions = 16
)

// LogStore keeps session logs by session id, for a Server whose logs are not JSONL files.
type LogStore interface {
	// Create returns the store of a new session, id.
	Create(ctx context.Context, id string) (session.Store, error)
	// Load returns the store of the existing session id: an error wrapping fs.ErrNotExist
	// when there is no such session (session/load then answers the spec's
	// Resource-not-found error).
	Load(ctx context.Context, id string) (session.Store, error)
}
