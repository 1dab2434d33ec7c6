// Package dialect describes a shell-hook dialect to the code that runs one: dsh run,
// dsh acp, dsh hooks run and the conformance runtime. Each dialect package
// (bridges/claudecode, bridges/codex, ...) exports one [Descriptor], built by its
// Descriptor function; the commands find a dialect by name in a [Registry]
// (bridges/dialects lists every dialect) and never test a dialect's name themselves.
//
// A descriptor holds what differs between dialects outside the hook protocol proper:
// the settings files and their hierarchy, the transcript the hooks read, the wording of
// the built-in tools, the Stop continuation cap, how the model provider places hook
// contexts, and the constructor of the bridge (which applies the dialect's model-facing
// rendering of hook contexts, denials and feedback). The protocol itself (events,
// extension points, exit codes, outputs, default timeout) is the generated table
// [Descriptor.Table] from spec/bridges.
package dialect

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
	"github.com/dshkit/dsh/runtime/sandbox"
	"github.com/dshkit/dsh/runtime/subagent"
)

// Descriptor describes one dialect. Build it with the dialect package's Descriptor
// function; its fields are read-only.
type Descriptor struct {
	// Name is the dialect's name, the --dialect value: the table's Dialect.
	Name string
	// Table is the generated mapping table (hookmap): the events the dialect maps, their
	// extension points and defaults (DefaultTimeoutSec).
	Table *hookmap.Bridge
	// Settings are the engine's settings files that hold hooks, in the engine's load
	// order (--setting-sources picks among them by Source).
	Settings []SettingsFile
	// TranscriptSuffix names the transcript kept beside a session log FILE: FILE without
	// its extension plus the suffix (".transcript.jsonl").
	TranscriptSuffix string
	// NewTranscript opens the transcript the hooks read at transcript_path, in the
	// engine's own format, for a session: path, the hooks' session id, the workspace.
	NewTranscript func(path, sessionID, workspace string) (Transcript, error)
	// SubagentTranscript, when set, is where the engine keeps the transcript of the child
	// agentID of the session whose transcript is at path (SubagentStop's
	// agent_transcript_path), and NewSubagentTranscript opens it; nil: it keeps none.
	SubagentTranscript    func(path, agentID string) string
	NewSubagentTranscript func(path, sessionID, agentID, workspace string) (Transcript, error)
	// ToolStyle is the runtime/tools/builtin Options.Style whose wording of the built-in
	// tools' results matches the engine's (a builtin.Style value).
	ToolStyle string
	// ContinuationCap is how many times a Stop hook may continue one turn in the engine
	// (math.MaxInt: no limit); --stop-cap overrides it.
	ContinuationCap int
	// ContinuationCapEnv, when set, names the environment variable with which the
	// engine's user raises ContinuationCap (a whole number; 0 or less: no limit);
	// --stop-cap overrides it too.
	ContinuationCapEnv string
	// HeadlessTrust says the engine's headless mode treats its workspace as a trusted
	// project (claude -p: no trust dialog, so its project hook files and commands load):
	// dsh run under the dialect loads them without --trust or dsh trust. The project's
	// .mcp.json, which the engine approves apart from trust, still needs them.
	HeadlessTrust bool
	// AgentDir is where the engine reads its agent definitions, under the user's home
	// and under the project's directory (Claude Code: .claude/agents, read by
	// bridges/claudecode/agents); "": the dialect has none.
	AgentDir string
	// AgentRoles, when set, loads the agent roles of the engine's user configuration
	// (Codex: the [agents.NAME] tables of $CODEX_HOME/config.toml, default
	// ~/.codex/config.toml), getenv reading the environment: the definitions its spawning
	// tool offers, and a problem of each role that did not load (naming file and key).
	AgentRoles func(getenv func(string) string, home string) ([]subagent.Definition, []error)
	// StreamJSON names the line format of the engine's headless --output-format
	// stream-json, which dsh run's stream-json then writes ("claude-code": claude -p's
	// messages); "": none, and stream-json writes dsh's own session events.
	StreamJSON string
	// StdinPrompt is how the engine's headless mode joins a piped stdin with the prompt
	// argument into the first user message (dsh run's PROMPT with a pipe on stdin).
	StdinPrompt StdinPrompt
	// ModelProvider is the provider whose wire the engine speaks ("anthropic",
	// "openai", "gemini"), as named by --model PROVIDER:MODEL.
	ModelProvider string
	// DeveloperContexts says whether the engine sends hook and plugin contexts to the
	// model as developer messages (the provider's Options.DeveloperContexts).
	DeveloperContexts bool
	// SystemContextModels are the models for which the engine sends hook contexts as
	// "system" messages on the Messages API (the provider's Options.SystemContextModels;
	// the table's systemContextModels).
	SystemContextModels []string
	// EnvFile says whether the bridge exports a per-session environment file to its
	// SessionStart hooks (Config.EnvFile; Claude Code's CLAUDE_ENV_FILE).
	EnvFile bool
	// Rules are how the dialect's hook files load (the shell, de-duplication, matcher
	// syntax, plugin variables); nil means the table's alone (hookproto.TableRules).
	// dsh run checks a --hooks file under them.
	Rules *hookproto.Rules
	// Revalidate says whether the bridge can run the PreToolUse hooks again on a
	// rewritten input (Config.RevalidateAfterRewrite).
	Revalidate bool
	// ReadStdin, if set, reads a hook input of an event in the dialect's own shape (its
	// tool results, its model requests and responses), for dsh hooks run; nil: the
	// common fields alone (ReadInput).
	ReadStdin func(event string, data []byte) (Input, error)
	// ToolPolicy, when set, is how the engine's settings narrow its toolset (Gemini CLI's
	// tools.core and tools.exclude; bridges/toolpolicy reads it); nil: the engine has no
	// such settings dsh reads.
	ToolPolicy *ToolPolicy
	// New loads a bridge of the dialect. Config.Canonical picks dsh's canonical
	// rendering of the hooks' words for the model; without it the bridge renders them as
	// the engine does.
	New func(cfg Config) (Bridge, error)
}

// DefaultTimeout is a hook's timeout when its handler sets none (the table's
// defaultTimeoutSec).
func (d *Descriptor) DefaultTimeout() time.Duration {
	return time.Duration(d.Table.DefaultTimeoutSec) * time.Second
}

// Plugin is the plugin name the bridge registers under and stamps on its messages.
func (d *Descriptor) Plugin() string { return d.Table.Plugin }

// Events are the names of the events the dialect maps, in the table's order.
func (d *Descriptor) Events() []string {
	out := make([]string, len(d.Table.Events))
	for i, e := range d.Table.Events {
		out[i] = e.Name
	}
	return out
}

// ProjectFiles are the project-level settings files, relative to the project
// directory, in load order: the Settings of ScopeProject.
func (d *Descriptor) ProjectFiles() []string { return ProjectFiles(d.Settings) }

// ProjectFiles are the files of settings of ScopeProject, relative to the project
// directory, in order.
func ProjectFiles(settings []SettingsFile) []string {
	var out []string
	for _, s := range settings {
		if s.Scope == ScopeProject {
			out = append(out, filepath.Join(s.Dir, s.File))
		}
	}
	return out
}

// Sources are the names of the settings sources (Settings' Source), in load order.
func (d *Descriptor) Sources() []string {
	var out []string
	for _, s := range d.Settings {
		if !slices.Contains(out, s.Source) {
			out = append(out, s.Source)
		}
	}
	return out
}

// Scope says where a settings file lives.
type Scope int

const (
	// ScopeUser: under the user's home directory (or the directory DirEnv names).
	ScopeUser Scope = iota
	// ScopeProject: under the project directory; it loads only when the project is
	// trusted.
	ScopeProject
	// ScopeSystem: at an absolute path.
	ScopeSystem
)

// SettingsFile is one level of a dialect's settings hierarchy.
type SettingsFile struct {
	// Source names the level for --setting-sources: "user", "project", "local", ...
	Source string
	// Scope says what Dir is relative to.
	Scope Scope
	// Dir is the directory: relative to the home directory (ScopeUser) or the project
	// directory (ScopeProject), or absolute (ScopeSystem).
	Dir string
	// DirEnv, when set and the variable is not empty, names the directory instead of Dir
	// (Codex's CODEX_HOME).
	DirEnv string
	// File is the file's name in Dir.
	File string
}

// Path is the file's path for a home and a project directory; getenv reads DirEnv (nil:
// os.Getenv).
func (s SettingsFile) Path(home, project string, getenv func(string) string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	if s.DirEnv != "" {
		if dir := getenv(s.DirEnv); dir != "" {
			return filepath.Join(dir, s.File)
		}
	}
	switch s.Scope {
	case ScopeProject:
		return filepath.Join(project, s.Dir, s.File)
	case ScopeSystem:
		return filepath.Join(s.Dir, s.File)
	}
	return filepath.Join(home, s.Dir, s.File)
}

// Transcript is the transcript the hooks read at transcript_path: it follows the session
// log's events.
type Transcript interface {
	// Observe writes what one logged event adds to the transcript.
	Observe(dsh.SessionEventData) error
	// Close flushes and closes the file.
	Close() error
}

// Config configures one bridge, whatever its dialect: each dialect package's Config is
// this type. A dialect ignores what it has no use for (see the Descriptor's EnvFile and
// Revalidate, and each package's Config).
type Config struct {
	// Files are explicitly named hook configuration files, loaded in order as given.
	Files []string
	// Plugins are plugin hook files (PluginRoot set; an empty Path means
	// <PluginRoot>/hooks/hooks.json).
	Plugins []hookproto.Source
	// Sources are further hook configurations, loaded after the others (a source's Data
	// instead of its file: an agent definition's frontmatter hooks).
	Sources []hookproto.Source
	// Workspace is the session workspace: the hooks' default working directory and the
	// default project directory. Required.
	Workspace string
	// ProjectDir is the project root (default Workspace).
	ProjectDir string
	// DiscoverProject also loads the project-level settings files that exist.
	DiscoverProject bool
	// TrustProject lets the discovered project files load.
	TrustProject bool
	// Session describes the session and turn of an event.
	Session hookproto.SessionFunc
	// Recorder receives the hook/invoked and hook/result records; nil records nothing.
	Recorder hookproto.Recorder
	// Logger receives diagnostics (nil: slog.Default()).
	Logger *slog.Logger
	// BaseEnv is the environment hooks start from (nil: the process's).
	BaseEnv []string
	// Sandbox, when set, confines the command hooks as Bash is (dsh run --sandbox-hooks);
	// nil runs them with the user's rights, as the engines do.
	Sandbox *sandbox.Sandbox
	// MCP calls the session's mounted MCP servers for mcp_tool hooks (nil: none is
	// mounted, and every mcp_tool hook fails as its server not being connected).
	MCP hookproto.MCPCaller
	// HookModel answers prompt hooks with the session's model (nil: every prompt hook
	// fails as a model error).
	HookModel hookproto.PromptModel
	// HookAgents runs agent hooks' verifiers over the session's tools (nil: every agent
	// hook blocks, its verifier unable to run).
	HookAgents hookproto.AgentVerifier
	// Getenv reads the harness environment, e.g. for $SHELL (nil: os.Getenv).
	Getenv func(string) string
	// Model is the model sent to hooks when the session names none.
	Model string
	// Canonical asks for dsh's canonical mapping and wording instead of the engine's.
	Canonical bool
	// Interactive says the host waits for the user's input between turns (dsh acp).
	Interactive bool
	// Events, if set, are the only events whose hooks run (dsh hooks run fires one): the
	// hooks of the others load, and are checked, but register no listener.
	Events []string
	// EnvFile is the per-session environment file exported to SessionStart hooks
	// (Descriptor.EnvFile dialects).
	EnvFile string
	// RevalidateAfterRewrite runs PreToolUse again on a rewritten input
	// (Descriptor.Revalidate dialects).
	RevalidateAfterRewrite bool
	// NewID generates the ids of the messages the bridge adds (nil: random).
	NewID func() string
	// Observe receives the report of every event that ran hooks.
	Observe func(*hookproto.Report)
	// ObserveAsync receives every async hook run when it finishes.
	ObserveAsync func(hookproto.HookRun)
	// StderrSummaryMax caps recorded stderr summaries (0: 500 characters).
	StderrSummaryMax int
	// Now is the clock of the stdin timestamps of dialects that send one (nil: time.Now).
	Now func() time.Time
}

// Bridge is a loaded bridge: a dsh plugin.
type Bridge interface {
	// Register registers the bridge's listeners and returns a func unregistering them.
	Register(r *dsh.Registrar) (unregister func())
	// Diagnostics returns what loading reported.
	Diagnostics() []hookproto.Diagnostic
	// Config returns the loaded hook configuration.
	Config() *hookproto.Config
	// Close kills the async hooks still running and waits for them.
	Close(ctx context.Context) error
	// Wait waits for the async hooks still running to finish.
	Wait(ctx context.Context) error
}

// Registry is a list of dialects, looked up by name.
type Registry []*Descriptor

// Lookup returns the dialect named name, or false.
func (r Registry) Lookup(name string) (*Descriptor, bool) {
	for _, d := range r {
		if d.Name == name {
			return d, true
		}
	}
	return nil, false
}

// Names are the dialects' names, in the registry's order.
func (r Registry) Names() []string {
	out := make([]string, len(r))
	for i, d := range r {
		out[i] = d.Name
	}
	return out
}

// StdinPrompt is how an engine joins a piped stdin with the prompt argument (echo data |
// claude -p "summarize"). An empty stdin leaves the prompt alone; stdin is kept as it
// came, its trailing newline too.
type StdinPrompt struct {
	// StdinFirst puts stdin before the prompt (Gemini CLI); else the prompt comes first.
	StdinFirst bool
	// Separator goes between the two ("\n": Claude Code).
	Separator string
	// Open and Close wrap stdin (Codex: "<stdin>\n" and "</stdin>"); when Close is set, a
	// stdin that does not end in a newline gets one before it.
	Open, Close string
}

// Join returns the user message of prompt and stdin as the engine makes it.
func (j StdinPrompt) Join(prompt, stdin string) string {
	switch {
	case stdin == "":
		return prompt
	case prompt == "":
		return stdin
	}
	if j.Close != "" && !strings.HasSuffix(stdin, "\n") {
		stdin += "\n"
	}
	stdin = j.Open + stdin + j.Close
	if j.StdinFirst {
		return stdin + j.Separator + prompt
	}
	return prompt + j.Separator + stdin
}

// ToolPolicy is how an engine's settings lists and policy files narrow its toolset: the
// dialect's table row (spec/bridges, #ToolPolicy), read by bridges/toolpolicy.
type ToolPolicy = hookmap.ToolPolicy
