// Package runner builds one dsh session from one Config: the model, the built-in tools,
// the MCP servers, the native plugins, the hook bridge of a dialect, the approval policy
// and the limits (max turns, Stop continuations, compaction), all on a session log the
// caller opened. dsh run and dsh acp (package cli) and the conformance harness
// (conformance/dshrt) build their sessions with it, as adk-go's runner.New(Config) does.
//
// It sits at the top of the module, beside cli, not under runtime/: the wiring needs the
// hook bridges (bridges/dialect, bridges/dialects, bridges/hookproto) and MCP
// (bridges/mcp), and runtime/ imports no bridge. It imports no provider SDK and no
// database driver, so that the conformance harness links neither: the caller opens the
// model (Config.OpenModel) and the session log (Config.Log; package runner/logstore
// opens one where it lives: a JSONL file, memory or PostgreSQL).
package runner

import (
	"context"
	"errors"
	"fmt"
	"github.com/dshkit/dsh/bridges/prompts"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dshkit/dsh/bridges/mcp"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/loop"
	"github.com/dshkit/dsh/runtime/sandbox"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/subagent"
	"github.com/dshkit/dsh/runtime/tools"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// Config is what one session is built from.
type Config struct {
	// Workspace is the session's working directory, an absolute path: the built-in
	// tools' confinement root, where Bash and the hooks run. Required.
	Workspace string
	// SessionID is dsh's id of the session, as its session/created records it (see
	// SessionID). Required.
	SessionID string
	// Log is the session log, opened by the caller. Required.
	Log *session.Log
	// Logger receives the diagnostics (nil: discarded).
	Logger *slog.Logger
	// OpenModel opens the session's model. Required.
	OpenModel ModelOpener
	// Plugins are native plugins, registered in order before the hook bridge, each
	// under its PluginName.
	Plugins []Plugin
	// Hooks says which hooks run, through the bridge of which dialect.
	Hooks Hooks
	// Prompts says what the session adds to the model's input besides the prompt: the
	// system prompt, the dialect's instruction files and slash commands.
	Prompts Prompts
	// Setup, when set, runs agent/setup with this trigger when the session's agent is
	// created, before agent/session-start (dsh run --init, --init-only, --maintenance, as
	// claude -p has them: Claude Code's Setup hooks run there); a resumed agent runs none.
	Setup dsh.SetupTrigger
	// Env is the environment Bash, the hooks and the MCP servers start from (nil: the
	// process's own).
	Env []string
	// MCP says which MCP servers the session has.
	MCP MCP
	// Limits bound the session's turns.
	Limits Limits
	// Permissions are the session's permission rules and mode (dsh run --permission-mode,
	// --allowedTools, --disallowedTools, and the settings files' permissions). Their
	// listener runs after the plugins' and the hooks', so that their decisions come first;
	// a rule that does not parse fails New with ErrPermissions.
	Permissions Permissions
	// Sandbox confines Bash (runtime/sandbox): its mode, the directories it may write
	// besides the workspace (Policy.Workspace is set to Workspace) and its network; nil, or
	// danger-full-access, runs Bash with the user's rights. A sandbox the system cannot
	// enforce fails New, saying why; it never runs unconfined. When it is not nil, Start
	// records it in the log (session/sandbox), danger-full-access included.
	Sandbox *sandbox.Policy
	// Subagents configures the children of the dialect's agent tool.
	Subagents Subagents
	// Note receives the one-line notices meant for the user: project hooks or MCP
	// servers not loaded for want of trust, MCP servers that failed to start (nil: the
	// Logger's warnings).
	Note func(string)
}

// ModelOpener opens a session's model and names its call configuration. sessionID is the
// id providers that send one see (the hooks' session id); placement asks for the
// engine's placement of the hooks' contexts (the dialect's, when hooks load and
// Hooks.Canonical is off; the zero value otherwise).
type ModelOpener func(sessionID string, placement ContextPlacement) (llm.Model, dsh.LLMCallConfig, error)

// ContextPlacement is where the engine of a hook dialect puts the hooks' contexts on
// the wire (bridges/dialect.Descriptor).
type ContextPlacement struct {
	// Developer sends them as developer messages (Codex).
	Developer bool
	// SystemModels are the models (path.Match patterns) for which they go as "system"
	// messages on the Messages API (Claude Code's default model).
	SystemModels []string
}

// MCP is a session's MCP servers: those of ConfigFile (Claude Code's .mcp.json shape)
// and, under Hooks.Trust, the project directory's .mcp.json.
type MCP struct {
	// ConfigFile is the servers file (dsh run --mcp-config); "" for none.
	ConfigFile string
	// Mount starts the servers and registers their tools in the session's tool registry
	// (dsh run); without it they are only listed in Session.MCPServers, for the host to
	// mount (dsh acp).
	Mount bool
}

// Limits bound a session's turns.
type Limits struct {
	// MaxTurns ends a turn before its model step MaxTurns+1 (0: no limit); the listener
	// runs before every other pre-step listener. Session.MaxTurnsReached reports it.
	MaxTurns int
	// StopCap is how many times a Stop hook may continue one turn (0: never); nil: as
	// the dialect's engine does when hooks load, else the loop's default.
	StopCap *int
	// ContextWindow is the model's context window in tokens (0: none); nil: the model's,
	// from llm.ContextWindow (none for a scripted model).
	ContextWindow *int
	// CompactThreshold is the share of the window at which to compact (0: the loop's
	// default).
	CompactThreshold float64
}

// Session is a built session: what a host needs to run its agent.
type Session struct {
	// Hooks is the extension point registry, with the plugins and the hook bridge.
	Hooks *dsh.Registry
	// Tools is the tool registry: the built-in tools, and the MCP servers' when mounted.
	Tools *tools.Registry
	// Builtin is the built-in tools' options (a host reads files through them).
	Builtin builtin.Options
	// mcpSet is the session's mounted MCP servers (nil: none), which mcp_tool hooks call.
	mcpSet *mcp.Set
	// Model is the session's model, and LLM its call configuration.
	Model llm.Model
	LLM   dsh.LLMCallConfig
	// Turns follows the log for the hook bridge; SetAgent it once the agent exists.
	Turns *Turns
	// System is the system prompt.
	System string
	// Instructions are the instruction files the session read (Config.Prompts).
	Instructions []prompts.File
	// ContinuationCap is the loop's Stop continuation cap.
	ContinuationCap int
	// Compaction is the loop's compaction configuration.
	Compaction loop.CompactionConfig
	// ToolOptions are the tool runtime options the hooks need.
	ToolOptions []tools.Option
	// MCPServers are the MCP servers for the host to mount (when MCP.Mount is off).
	MCPServers []mcp.ServerConfig

	// evalModel is the model as opened, which prompt hooks call; exchange is the last
	// main request and answer that went through Model.
	evalModel llm.Model
	exchange  *exchange

	// agents runs the children of the dialect's agent tool (nil: none).
	agents *subagent.Runner
	// transcript is the hooks' transcript_path and hookSession their session_id ("":
	// no hooks): a child's transcript goes where the dialect keeps it beside it.
	transcript, hookSession string
	// childMu guards childRuntime (the tool runtime children run their calls on; nil:
	// Runtime) and childObservers (see ObserveChildren).
	childMu        sync.Mutex
	childRuntime   func() *tools.Runtime
	childObservers []ChildObserver

	// reads are the files the agents' conversations read in this run, from readsFrom on
	// (the toolset's read-before-edit rule; nil: its rows have none).
	reads     *builtin.ReadLog
	readsFrom int64

	cfg     Config
	logger  *slog.Logger
	closers []func()
	// childHooks installs an agent definition's own hooks for one child (attachHooks);
	// nil when no hooks load.
	childHooks func(def subagent.Definition, agentID string) (func(), error)
	// verifierHooks registers the session's hook bridge on an agent hook's verifier's
	// registry (attachHooks; nil when no hooks load), and verifiers holds the agent ids of
	// the verifiers running, whose hooks see that id and the verifier's mode (hookAgents).
	verifierHooks func(r *dsh.Registrar) (unregister func())
	verifiers     sync.Map
	// taskReminder is the dialect's task reminder (nil: none); Attach replays the log to it.
	taskReminder *builtin.TaskReminder
	maxMu        sync.Mutex
	maxTurns     bool
}

// New builds the session cfg describes, in this order: the MCP servers started, the
// built-in tools (with the dialect's CLAUDE_ENV_FILE when it has one and hooks load; Codex's
// resource tools read the servers), the max-turns listener and the servers' tools, the
// native plugins, the hook bridge, the retry policy of a real
// provider and the approval policy. Close releases what it made.
func New(ctx context.Context, cfg Config) (s *Session, err error) {
	switch {
	case cfg.Log == nil:
		return nil, errors.New("runner: Config.Log is required")
	case cfg.OpenModel == nil:
		return nil, errors.New("runner: Config.OpenModel is required")
	case cfg.Workspace == "":
		return nil, errors.New("runner: Config.Workspace is required")
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s = &Session{cfg: cfg, logger: logger, Tools: tools.NewRegistry(), Hooks: dsh.NewRegistry(dsh.WithLogger(logger))}
	// made, not s: a `return nil, err` has set s to nil by the time this runs.
	made := s
	defer func() {
		if err != nil {
			made.Close()
			s = nil
		}
	}()
	h := &s.cfg.Hooks
	h.findProjectHooks(cfg.Workspace, s.note)
	h.agentHooks = slices.ContainsFunc(cfg.Subagents.Definitions, func(d subagent.Definition) bool { return len(d.Hooks) > 0 })
	var placement ContextPlacement
	if h.loads() && !h.Canonical {
		placement = ContextPlacement{Developer: h.desc().DeveloperContexts, SystemModels: h.desc().SystemContextModels}
	}
	s.Model, s.LLM, err = cfg.OpenModel(HookSessionID(cfg.SessionID), placement)
	if err != nil {
		return nil, err
	}
	// Prompt hooks that judge the conversation send the last exchange the loop had; their
	// own requests go to the model unrecorded.
	s.evalModel, s.exchange = s.Model, &exchange{}
	s.Model = recordingModel{Model: s.Model, last: s.exchange}
	envFile := ""
	if h.loads() && h.desc().EnvFile {
		// Claude Code's CLAUDE_ENV_FILE: SessionStart hooks write exports the session's
		// Bash commands source.
		dir, err := os.MkdirTemp("", "dsh-env-")
		if err != nil {
			return nil, err
		}
		s.closers = append(s.closers, func() { _ = os.RemoveAll(dir) })
		envFile = filepath.Join(dir, "env.sh")
	}
	var sb *sandbox.Sandbox
	if p := cfg.Sandbox; p != nil && p.Mode != sandbox.DangerFullAccess {
		pol := *p
		pol.Workspace = cfg.Workspace
		if sb, err = sandbox.New(ctx, pol); err != nil {
			return nil, err
		}
		s.closers = append(s.closers, sb.Close)
	}
	// Before the tools, which its mode may word otherwise (and before the hooks: it
	// resolves the mode they see as permission_mode).
	perm, err := s.permissionPlugin()
	if err != nil {
		return nil, err
	}
	s.Builtin = builtin.Options{Workspace: cfg.Workspace, EnvFile: envFile, Style: h.toolStyle(), Env: cfg.Env, Sandbox: sb, Model: s.LLM.Model,
		PermissionMode: s.PermissionMode(), Tasks: &builtin.TaskList{}}
	if s.reads = builtin.NewReadLog(s.Builtin.Style, cfg.Workspace); s.reads != nil {
		// The engine's reads count within a run (a resumed session reads again).
		s.Builtin.ReadFiles, s.readsFrom = s.reads, cfg.Log.Len()
	}
	// The MCP servers start before the built-in tools, which read them (Codex's resource
	// tools), and register their tools after them.
	if err := s.mcp(ctx); err != nil {
		return nil, err
	}
	if s.mcpSet != nil {
		s.Builtin.MCPResources = s.mcpSet
	}
	if s.Builtin.Agent, err = s.subagents(); err != nil {
		return nil, err
	}
	unregister, err := builtin.Register(s.Tools, s.Builtin)
	if err != nil {
		return nil, err
	}
	// Ends the commands Codex's exec_command left running, before the sandbox goes.
	s.closers = append(s.closers, unregister)
	if n := cfg.Limits.MaxTurns; n > 0 {
		// First of all listeners, so that no plugin or hook runs for a step past the limit.
		s.Hooks.Plugin("max-turns").OnPreStep(s.maxTurnsListener(n))
	}
	// The dialect's task reminder reads the task tools' list (spec/toolsets' task_reminder).
	if s.taskReminder, err = builtin.NewTaskReminder(s.Builtin, s.Tools, s.cfg.Hooks.desc().Table.Plugin); err != nil {
		return nil, err
	} else if s.taskReminder != nil {
		s.taskReminder.Register(s.Hooks.Plugin("task-reminder"))
	}
	s.registerMCP()
	s.remindSession()
	for _, p := range cfg.Plugins {
		p.Register(s.Hooks.Plugin(PluginName(p)))
	}
	if err := s.attachPrompts(); err != nil {
		return nil, err
	}
	s.Turns = &Turns{}
	s.closers = append(s.closers, cfg.Log.Subscribe(s.Turns.Observe))
	toolSettings, err := s.toolPolicyPlugin()
	if err != nil {
		return nil, err
	}
	if h.loads() {
		closeHooks, err := s.attachHooks(envFile)
		if err != nil {
			return nil, err
		}
		s.closers = append(s.closers, closeHooks)
	}
	if p := builtin.NewSearchRetry(s.Builtin, s.Tools, s.searchReminder); p != nil {
		// The dialect's engine answers some failures of a request that declared deferred
		// tools by withdrawing its tool search (spec/toolsets' search "withdraw"); around
		// dsh's retry policy, which gets every other failure.
		p.Register(s.Hooks.Plugin("tool-search-retry"))
	}
	if s.LLM.Provider != "scripted" {
		// dsh's retry policy for a real provider's failed requests, registered last, so
		// that a plugin's agent/request-error listener runs around it and may replace it.
		s.Hooks.Plugin("retry").OnRequestError(llm.RetryPolicy{}.Listener())
	}
	if perm != nil {
		perm.Register(s.Hooks.Plugin("permissions"))
	}
	if toolSettings != nil {
		toolSettings.Register(s.Hooks.Plugin("tool-settings"))
	}
	s.System = cfg.Prompts.system(cfg.Workspace)
	s.ContinuationCap, s.Compaction = s.continuationCap(), s.compaction()
	if h.loads() {
		// The bridges' tools/rewrite-input listener runs the PreToolUse hooks, which their
		// own timeouts bound (600 s by default), so the fold gets no deadline of its own (its
		// 30 s default would cut a slow hook and fail its call).
		s.ToolOptions = []tools.Option{tools.WithRewriteDeadline(0)}
	}
	// The dialect's engine refuses a call of a tool it does not have in its own words,
	// before any hook (spec/toolsets' "unknown").
	unknown, err := builtin.UnknownToolText(s.Builtin.Style, s.Tools)
	if err != nil {
		return nil, err
	}
	if unknown != nil {
		s.ToolOptions = append(s.ToolOptions, tools.WithUnknownTool(unknown))
	}
	return s, nil
}

// Runtime is the session's tool runtime, logging to the session's logger.
func (s *Session) Runtime() *tools.Runtime {
	return tools.New(s.Tools, s.Hooks, append([]tools.Option{tools.WithLogger(s.logger)}, s.ToolOptions...)...)
}

// Start creates the session's agent with the id agentID on a new tool runtime (resuming
// it from the log when resume is set) and tells the hook bridge its handle.
func (s *Session) Start(ctx context.Context, agentID string, resume bool) (*loop.Agent, error) {
	cfg := loop.Config{ID: agentID, SessionID: s.cfg.SessionID, Workspace: s.cfg.Workspace, Registry: s.Hooks, Tools: s.Runtime(), Model: s.Model,
		Log: s.cfg.Log, LLM: s.LLM, Logger: s.logger, System: s.System, ContinuationCap: s.ContinuationCap,
		Compaction: s.Compaction, Setup: s.cfg.Setup, Instructions: instructionFiles(s.Instructions),
		BackgroundTasks: s.BackgroundTasks}
	start := loop.New
	if resume {
		start = loop.Resume
	}
	a, err := start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := s.Attach(ctx, a); err != nil {
		_ = a.Close()
		return nil, err
	}
	if resume && s.agents != nil {
		// The children a crash stopped in the background run again, and the notices it
		// kept from a are sent; their ends wake a.
		children, err := s.agents.ResumeBackground(ctx, a)
		for _, c := range children {
			s.note(fmt.Sprintf("the %s agent of call %s was in the background when the session stopped: its end reaches the agent now (agent %s)", c.Type, c.CallID, c.ID))
		}
		if err != nil {
			s.note(err.Error())
		}
	}
	return a, nil
}

// Attach completes the start of a, the session's agent, made by Start or by a server that
// makes its own (dsh acp): it records the sandbox in the log (a session/sandbox event, when
// Config.Sandbox is set), follows the log for the files a's conversation reads (the
// toolset's read-before-edit rule) and tells the hook bridge the agent's handle.
func (s *Session) Attach(ctx context.Context, a *loop.Agent) error {
	if rec, ok := s.sandboxApplied(); ok {
		if _, err := s.cfg.Log.Append(ctx, rec); err != nil {
			return fmt.Errorf("recording the sandbox: %w", err)
		}
	}
	if s.taskReminder != nil {
		// A resumed conversation counts on from its log, as the engine's does.
		for e, err := range s.cfg.Log.Events() {
			if err != nil {
				return fmt.Errorf("reading the log for the task reminder: %w", err)
			}
			if data, err := e.Decode(); err == nil {
				s.taskReminder.Replay(a.ID(), data)
			}
		}
	}
	if s.reads != nil {
		cancel, err := s.reads.Watch(a.ID(), s.cfg.Log, s.readsFrom)
		if err != nil {
			return fmt.Errorf("reading the files read from the log: %w", err)
		}
		s.closers = append(s.closers, cancel)
	}
	s.Turns.SetAgent(a)
	return nil
}

// sandboxApplied is the session/sandbox record of Config.Sandbox (none when it is nil): the
// mode, and under workspace-write the directories a command may write.
func (s *Session) sandboxApplied() (dsh.SandboxApplied, bool) {
	p := s.cfg.Sandbox
	if p == nil {
		return dsh.SandboxApplied{}, false
	}
	rec := dsh.SandboxApplied{Mode: dsh.SandboxMode(p.Mode), Network: p.Network || p.Mode == sandbox.DangerFullAccess}
	if sb := s.Builtin.Sandbox; sb != nil && p.Mode == sandbox.WorkspaceWrite {
		rec.WritableRoots = sb.WritableRoots()
	}
	return rec, true
}

// MaxTurnsReached says whether Limits.MaxTurns ended a turn.
func (s *Session) MaxTurnsReached() bool {
	s.maxMu.Lock()
	defer s.maxMu.Unlock()
	return s.maxTurns
}

// Close detaches the hooks, stops the MCP servers and removes what New made, in the
// reverse order of their making.
func (s *Session) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

// note passes a notice to Config.Note, else to the logger.
func (s *Session) note(msg string) {
	if s.cfg.Note != nil {
		s.cfg.Note(msg)
		return
	}
	s.logger.Warn(msg)
}

// maxTurnsListener is Limits.MaxTurns n: a pre-step listener that halts the turn before
// its step n+1 (as claude -p --max-turns counts the model's steps).
func (s *Session) maxTurnsListener(n int) func(context.Context, *dsh.PreStepPayload, dsh.PreStepNext) (dsh.PreStepDecision, error) {
	return func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		if p.Step > n {
			s.maxMu.Lock()
			s.maxTurns = true
			s.maxMu.Unlock()
			return dsh.PreStepHalt{Reason: fmt.Sprintf("reached --max-turns %d", n)}, nil
		}
		return next.Call(ctx)
	}
}

// continuationCap is the loop's Stop continuation cap: Limits.StopCap when set, else
// what the dialect's engine does when hooks load (Claude Code continues a turn at most 8
// times, Codex without limit), else the loop's default.
func (s *Session) continuationCap() int {
	switch c := s.cfg.Limits.StopCap; {
	case c != nil && *c == 0:
		return -1 // loop.Config: negative means no continuation
	case c != nil && *c > 0:
		return *c
	case s.cfg.Hooks.loads():
		d := s.cfg.Hooks.desc()
		env := s.cfg.Env
		if env == nil {
			env = os.Environ()
		}
		if n, ok := capFromEnv(env, d.ContinuationCapEnv); ok {
			if n <= 0 {
				return math.MaxInt
			}
			return n
		}
		return d.ContinuationCap
	}
	return loop.DefaultContinuationCap
}

// capFromEnv reads the whole number the variable name holds in env (KEY=value pairs; the
// last one counts); ok is false when name is empty, unset or not a whole number.
func capFromEnv(env []string, name string) (int, bool) {
	if name == "" {
		return 0, false
	}
	for i := len(env) - 1; i >= 0; i-- {
		if v, found := strings.CutPrefix(env[i], name+"="); found {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			return n, err == nil
		}
	}
	return 0, false
}

// compaction is the loop's compaction config: the window of Limits.ContextWindow, else
// the model's from the table of known models.
func (s *Session) compaction() loop.CompactionConfig {
	window := 0
	switch {
	case s.cfg.Limits.ContextWindow != nil:
		window = *s.cfg.Limits.ContextWindow
	case s.LLM.Provider != "scripted":
		window = llm.ContextWindow(s.LLM.Model)
	}
	return loop.CompactionConfig{ContextWindow: window, ThresholdRatio: s.cfg.Limits.CompactThreshold}
}

// askUnlessRead is --permission-mode default for a dialect without permission rows: a
// top-level call to any tool but Read that the other listeners allow needs approval.
func askUnlessRead(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
	d, err := next.Call(ctx)
	if err != nil {
		return d, err
	}
	if _, allow := d.(dsh.PreToolAllow); allow && p.Exec.Parent.IsZero() && p.Exec.Name != "Read" {
		return dsh.PreToolAsk{}, nil
	}
	return d, nil
}
