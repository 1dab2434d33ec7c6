// Package hookproto is the dialect-neutral machinery shared by the Claude Code, Codex and
// Gemini CLI shell-hook bridges: loading hooks.json / settings.json hook configurations (with
// project trust), compiling matchers, running hook commands safely (process groups,
// timeouts, output caps), running them in parallel or detached, the table-driven codec
// (Decode: exit code, stdout and stderr to a Verdict through a generated hookmap table)
// and merge (MergeVerdicts), the hook/invoked and hook/result records (Engine, Recorder),
// and the outcome vocabulary and summaries. No dialect's protocol is hand-written here:
// the tables in generated/hookmap (spec/bridges) say what each output means. The design
// is docs/design/HOOK-PROTOCOLS.md ("dsh bridge decisions" first).
package hookproto

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dshkit/dsh/generated/hookmap"
)

// Dialect is the name of a shell-hook protocol: one of the spec's #HookDialect strings.
// What a dialect's bridge does is hookbridge.Behavior, and how the commands find and
// build one is dialect.Descriptor; the facts of each live in its package and its table.
type Dialect string

const (
	// ClaudeCode is the Claude Code hook protocol (docs/design/HOOK-PROTOCOLS.md#1-claude-code-hook-protocol).
	ClaudeCode Dialect = "claude-code"
	// Codex is the Codex CLI hook protocol (docs/design/HOOK-PROTOCOLS.md#2-codex-hook-protocol).
	Codex Dialect = "codex"
	// Gemini is the Gemini CLI hook protocol (docs/design/GEMINI-HOOKS.md).
	Gemini Dialect = "gemini"
)

// DefaultTimeout returns the timeout of a handler that sets none: the defaultTimeoutSec of
// the dialect's generated table (spec/bridges: 60 s for Claude Code, dsh bridge decision 4;
// 600 s for Codex, decision 2); 0 for a dialect without a table.
func (d Dialect) DefaultTimeout() time.Duration {
	if b := hookmap.Lookup(string(d)); b != nil {
		return time.Duration(b.DefaultTimeoutSec) * time.Second
	}
	return 0
}

// Errors wrapped by a [Diagnostic]; test them with errors.Is.
var (
	// ErrConfigRead: the configuration file could not be read.
	ErrConfigRead = errors.New("cannot read hook configuration")
	// ErrConfigSyntax: the configuration is not a JSON object.
	ErrConfigSyntax = errors.New("invalid hook configuration")
	// ErrMalformed: an entry does not have the expected JSON shape.
	ErrMalformed = errors.New("malformed hook entry")
	// ErrUnsupportedEvent: the event is not one the bridge supports.
	ErrUnsupportedEvent = errors.New("unsupported hook event")
	// ErrUnfiredEvent: the event is one of the engine's that dsh never fires (its table's
	// Unfired): its hooks load and never run. Its diagnostic skips nothing.
	ErrUnfiredEvent = errors.New("hooks that never fire")
	// ErrUnsupportedHandler: the handler type is neither "command" nor one the dialect's
	// table lists (Claude Code's http; prompt, agent, mcp_tool, or unknown).
	ErrUnsupportedHandler = errors.New("unsupported hook handler type")
	// ErrUnknownDialect: the dialect has no [Rules] (neither given nor named here).
	ErrUnknownDialect = errors.New("unknown hook dialect")
	// ErrDialectMismatch: [Merge] was given configurations of different dialects.
	ErrDialectMismatch = errors.New("hook configurations of different dialects")
)

// Diagnostic reports one problem met while loading a configuration. Loading goes on
// past it; Skipped says what was left out because of it. A Diagnostic is an error that
// unwraps to its cause (one of the Err* variables, or a *[MatcherError]).
type Diagnostic struct {
	// File is the configuration's source ([LoadOptions.Source]); may be empty.
	File string
	// Path is the JSON path of the offending value, e.g. "hooks.PreToolUse[0].hooks[1]";
	// empty when the whole file is concerned.
	Path string
	// Event is the hook event concerned, if any.
	Event string
	// Skipped is what was not loaded: "file", "event", "group", "handler", or "" when the
	// entry still loaded (e.g. with its default timeout).
	Skipped string
	// Err is the cause.
	Err error
}

// Error formats the diagnostic as "file: path: cause (group skipped)".
func (d Diagnostic) Error() string {
	var b strings.Builder
	for _, s := range []string{d.File, d.Path} {
		if s != "" {
			b.WriteString(s + ": ")
		}
	}
	b.WriteString(d.Err.Error())
	if d.Skipped != "" {
		b.WriteString(" (" + d.Skipped + " skipped)")
	}
	return b.String()
}

// Unwrap returns the cause.
func (d Diagnostic) Unwrap() error { return d.Err }

// LoadOptions configures [Load] and [LoadFile].
type LoadOptions struct {
	// Dialect selects the protocol rules; required.
	Dialect Dialect
	// Source names the configuration in diagnostics and handlers (LoadFile defaults it
	// to the file path).
	Source string
	// Events is the set of events the caller supports; any other event is skipped with a
	// diagnostic. Nil accepts every event.
	Events []string
	// NoMatcherEvents lists events without a matcher subject (e.g. UserPromptSubmit,
	// Stop): their groups' matchers are dropped before validation and match everything.
	NoMatcherEvents []string
	// PluginRoot marks the file as a plugin's hooks and is the plugin's root directory.
	// Claude Code substitutes ${CLAUDE_PLUGIN_ROOT}; Codex substitutes ${PLUGIN_ROOT} and
	// ${CLAUDE_PLUGIN_ROOT} (and the data keys below) only when it is set.
	PluginRoot string
	// Plugin is the plugin's id as the engine names it in the texts the model reads
	// (Claude Code: "name@marketplace", "name@inline" for --plugin-dir); optional.
	Plugin string
	// PluginData is the plugin's data directory (${CLAUDE_PLUGIN_DATA}, Codex also
	// ${PLUGIN_DATA}); optional.
	PluginData string
	// ProjectDir is the project root substituted for ${CLAUDE_PROJECT_DIR} (Claude Code
	// only) when set.
	ProjectDir string
	// Rules are the dialect's loading rules; nil means its table's alone ([TableRules]).
	Rules *Rules
	// Table supplies the rules its fields state (nil: the generated table of Dialect, if
	// any): the unit of a configured timeout, what a timeout of 0 or less does, sequential
	// groups, the events' matcher kinds, invalid regexes as exact strings, de-duplication
	// by name, and the settings block ({enabled, disabled}).
	Table *hookmap.Bridge
	// DefaultTimeout is the timeout of a handler that sets none: the bridge passes its
	// table's defaultTimeoutSec. Zero means the dialect's generated table's
	// ([Dialect.DefaultTimeout]).
	DefaultTimeout time.Duration
}

// Handler is one loaded handler, in the order of its file: a command, or an http hook
// (HTTP set).
type Handler struct {
	// Event is the hook event, e.g. "PreToolUse".
	Event string
	// Source is the configuration it came from ([LoadOptions.Source]).
	Source string
	// Path is its JSON path, e.g. "hooks.PreToolUse[0].hooks[1]".
	Path string
	// Group is the index of its group in the event's array in Source.
	Group int
	// Index is its index in the group's hooks array.
	Index int
	// Matcher is its group's matcher.
	Matcher Matcher
	// Command is the command line (shell form), or the program (exec form), after
	// ${...} substitution; an http hook's URL.
	Command string
	// Configured is Command as the file wrote it, before substitution (the engines quote
	// it so in the texts the model reads).
	Configured string
	// Quoted, when set, is how the engine quotes the command in an exit-2 blocking error
	// instead: a plugin's root variables substituted (Rules.QuotedPluginRoot).
	Quoted string
	// Args, when non-nil (even empty), selects the exec form: Command runs with these
	// arguments and no shell. Substituted like Command.
	Args []string
	// Timeout is the configured timeout, or the dialect's default.
	Timeout time.Duration
	// Async marks a handler to run detached, never awaited (dsh bridge decision 7).
	Async bool
	// Plugin is the id of the plugin the handler comes from ("" for a settings file).
	Plugin string
	// Name is the handler's configured name ("" when it has none).
	Name string
	// Sequential says its group set "sequential": true (Bridge.SequentialGroups): every
	// matched hook of the event then runs in order.
	Sequential bool
	// StatusMessage is the text to show while it runs; may be empty.
	StatusMessage string
	// Env holds the KEY=value pairs to export to this handler besides the harness
	// environment: the plugin and project variables of dsh bridge decision 5 that
	// LoadOptions set.
	Env []string
	// MatchErr is set, on a handler [Config.Match] returns, when its group's matcher
	// could not decide for the subject (it wraps [ErrMatcherUndecided]). The handler is
	// returned rather than skipped: the engine runs no process for it and records a
	// fail-closed outcome (it blocks where exit 2 would), so that a guard whose matcher
	// cannot be decided never lets a call through silently.
	MatchErr error
	// SubstErr is set at load on a shell-form handler whose command text would receive a
	// ${...} substitution that is not a plain value (a *[SubstitutionError]): the engine
	// runs no process for it and records a fail-closed outcome.
	SubstErr error
	// HTTP is an http handler's request (type "http"): its input is posted to HTTP.URL
	// and the answer's body read as stdout. Nil for a command.
	HTTP *HTTPHandler
	// Options are its "if", "onFailure" and "asyncRewake" ([HandlerOptions]).
	Options HandlerOptions
	// MCP is an mcp_tool handler's call (type "mcp_tool"): the tool's text is read as
	// stdout. Nil for a command.
	MCP *MCPToolHandler
	// Prompt is a prompt handler's model request (type "prompt"): the model's answer
	// becomes the hook's output. Nil for a command.
	Prompt *PromptHandler
	// Agent is an agent handler's verifier, nil for other types.
	Agent *AgentHandler
	// ContextLimit is a command handler's additionalContextLimit (Codex), 0 when unset: a
	// context of its hook over it is spilled as the table's ContextLimit says
	// (docs/design/HOOK-PROTOCOLS.md#113-mcp_tool-prompt-and-agent-handlers).
	ContextLimit int
}

// Group is one {matcher, hooks} entry with its loaded handlers (never empty).
type Group struct {
	// Event is the hook event.
	Event string
	// Source is the configuration it came from.
	Source string
	// Path is its JSON path, e.g. "hooks.PreToolUse[0]".
	Path string
	// Index is its index in the event's array in Source.
	Index int
	// Matcher is the compiled matcher (matches everything when absent or dropped).
	Matcher Matcher
	// Sequential says the group set "sequential": true.
	Sequential bool
	// Handlers are its loaded handlers in configuration order.
	Handlers []Handler
}

// Config is a loaded hook configuration: per event, the ordered groups that loaded. The
// zero value and nil are empty configurations. A Config is not modified after loading
// and is safe for concurrent use.
type Config struct {
	// Dialect is the protocol it was loaded under.
	Dialect Dialect
	// DisabledBy names the Claude Code settings file whose "disableAllHooks": true turned
	// every hook off ("" when none did). A disabled configuration has no groups.
	DisabledBy string
	// Disabled are the hook names (a handler's name, else its command) a settings block
	// turned off (Bridge.SettingsBlock); they never match.
	Disabled []string
	// DedupeByName runs identical hooks (same name and command) once (Gemini CLI).
	DedupeByName bool
	// AllowedHTTPHookURLs are the URL patterns http hooks may post to, from the settings
	// files' allowedHttpHookUrls (several files' lists add up); nil when no file sets it
	// (every URL allowed), empty when they set it empty (none).
	AllowedHTTPHookURLs []string
	// HTTPHookAllowedEnvVars, when non-nil, narrows every http hook's allowedEnvVars to
	// the names it lists (httpHookAllowedEnvVars, the files' lists added up).
	HTTPHookAllowedEnvVars []string
	groups                 map[string][]Group
	dedupe                 bool // identical commands run once at an event (Rules.Dedupe)
}

// Events returns the names of the events that have at least one group, sorted.
func (c *Config) Events() []string {
	if c == nil {
		return nil
	}
	names := make([]string, 0, len(c.groups))
	for ev := range c.groups {
		names = append(names, ev)
	}
	sort.Strings(names)
	return names
}

// Groups returns the event's groups in configuration order.
func (c *Config) Groups(event string) []Group {
	if c == nil {
		return nil
	}
	return slices.Clone(c.groups[event])
}

// Handlers returns all of the event's handlers in configuration order, whatever their
// matchers, without de-duplication.
func (c *Config) Handlers(event string) []Handler {
	if c == nil {
		return nil
	}
	var out []Handler
	for _, g := range c.groups[event] {
		out = append(out, g.Handlers...)
	}
	return out
}

// Match returns, in configuration order, the handlers of event whose group matcher
// matches subject (pass "" for events without a matcher subject: their matchers were
// dropped at load). A group whose matcher cannot decide ([Matcher.Test]) is not skipped:
// its handlers are returned with Handler.MatchErr set. In Claude Code a handler whose
// command and args equal an earlier matched one's is left out, so it runs once (dsh bridge
// decision 3); Codex keeps every copy.
func (c *Config) Match(event, subject string) []Handler {
	return c.MatchWhere(event, subject, nil)
}

// MatchWhere is Match keeping only the handlers runs accepts (nil: all), tested before
// de-duplication, as Claude Code tests a handler's "if" before it de-duplicates. A group
// whose matcher does not match subject matches when it matches one of aliases.
func (c *Config) MatchWhere(event, subject string, runs func(Handler) bool, aliases ...string) []Handler {
	if c == nil {
		return nil
	}
	var out []Handler
	seen := map[string]bool{}
	for _, g := range c.groups[event] {
		ok, merr := g.Matcher.Test(subject)
		for _, a := range aliases {
			if !ok && merr == nil {
				ok, merr = g.Matcher.Test(a)
			}
		}
		if !ok && merr == nil {
			continue
		}
		for _, h := range g.Handlers {
			h.MatchErr = merr
			if c.disabled(h) || (runs != nil && !runs(h)) {
				continue
			}
			if c.DedupeByName {
				k := strconv.Quote(h.Name) + " " + dedupeKey(h)
				if seen[k] {
					continue
				}
				seen[k] = true
			} else if c.dedupe {
				k := dedupeKey(h)
				if seen[k] {
					continue
				}
				seen[k] = true
			}
			out = append(out, h)
		}
	}
	return out
}

// disabled reports whether a settings block turned h off: its name, else its command,
// is listed.
func (c *Config) disabled(h Handler) bool {
	name := h.Name
	if name == "" {
		name = h.Configured
	}
	return slices.Contains(c.Disabled, name)
}

func dedupeKey(h Handler) string {
	if h.HTTP != nil {
		return "http " + strconv.Quote(h.HTTP.URL) // as Claude Code: the same URL posts once
	}
	if h.MCP != nil {
		in, _ := json.Marshal(h.MCP.Input)
		return fmt.Sprintf("mcp_tool %q %q %s %q", h.MCP.Server, h.MCP.Tool, in, h.Options.OnFailure)
	}
	if h.Prompt != nil {
		return fmt.Sprintf("prompt %q %q", h.Prompt.Prompt, h.Prompt.Model)
	}
	if h.Agent != nil {
		return fmt.Sprintf("agent %q %q", h.Agent.Prompt, h.Agent.Model)
	}
	k := "sh " + strconv.Quote(h.Command)
	if h.Args != nil {
		k = "exec " + strconv.Quote(h.Command)
		for _, a := range h.Args {
			k += " " + strconv.Quote(a)
		}
	}
	return k
}

// Merge combines configurations loaded from several files into one, each event's groups
// in argument order; when one of them has DisabledBy set, the result has it and no groups
// (Claude Code's disableAllHooks). Nil configurations are ignored; mixing dialects is an error. Claude
// Code de-duplication (identical command string plus args runs once) applies to the
// result through [Config.Match]; Codex does not de-duplicate.
func Merge(configs ...*Config) (*Config, error) {
	out := &Config{groups: map[string][]Group{}}
	for _, c := range configs {
		if c == nil {
			continue
		}
		out.dedupe = out.dedupe || c.dedupe
		if out.Dialect == "" {
			out.Dialect = c.Dialect
		} else if c.Dialect != "" && c.Dialect != out.Dialect {
			return nil, fmt.Errorf("%w: %s and %s", ErrDialectMismatch, out.Dialect, c.Dialect)
		}
		for ev, gs := range c.groups {
			out.groups[ev] = append(out.groups[ev], gs...)
		}
		out.Disabled = append(out.Disabled, c.Disabled...)
		out.AllowedHTTPHookURLs = addList(out.AllowedHTTPHookURLs, c.AllowedHTTPHookURLs)
		out.HTTPHookAllowedEnvVars = addList(out.HTTPHookAllowedEnvVars, c.HTTPHookAllowedEnvVars)
		out.DedupeByName = out.DedupeByName || c.DedupeByName
		if out.DisabledBy == "" {
			out.DisabledBy = c.DisabledBy
		}
	}
	if out.DisabledBy != "" {
		// Claude Code: "disableAllHooks": true in any settings file turns every hook off.
		out.groups = map[string][]Group{}
	}
	return out, nil
}

// addList adds a settings list to the lists of the files before it: nil (no file set it)
// stays nil until one does, and a list set empty stays set.
func addList(acc, list []string) []string {
	if list == nil {
		return acc
	}
	return append(append([]string{}, acc...), list...)
}

// httpURLs are the URL patterns http hooks may post to (nil: any URL).
func (c *Config) httpURLs() []string {
	if c == nil {
		return nil
	}
	return c.AllowedHTTPHookURLs
}

// httpEnvVars narrows the variables http hooks' headers may read (nil: no narrowing).
func (c *Config) httpEnvVars() []string {
	if c == nil {
		return nil
	}
	return c.HTTPHookAllowedEnvVars
}
