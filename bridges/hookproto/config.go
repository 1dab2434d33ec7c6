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
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dshkit/dsh/generated/hookmap"
)

// Dialect names a shell-hook protocol. Its values are the spec's #HookDialect strings.
type Dialect string

const (
	// ClaudeCode is the Claude Code hook protocol (docs/design/HOOK-PROTOCOLS.md#1-claude-code-hook-protocol).
	ClaudeCode Dialect = "claude-code"
	// Codex is the Codex CLI hook protocol (docs/design/HOOK-PROTOCOLS.md#2-codex-hook-protocol).
	Codex Dialect = "codex"
	// Gemini is the Gemini CLI hook protocol (docs/design/GEMINI-HOOKS.md); its rules come
	// from its package (bridges/gemini) and its table (LoadOptions.Table).
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

// Shell returns the argv prefix a shell-form handler runs under, for [Command.Shell], by
// d's [Rules] (Claude Code: `sh -c`; Codex: `$SHELL -c`, else `/bin/sh -c`); getenv reads
// the harness environment (nil means [os.Getenv]).
func (d Dialect) Shell(getenv func(string) string) []string {
	r, _ := d.Rules()
	return r.ShellArgv(getenv)
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
	// ErrUnsupportedHandler: the handler type is not "command" (http, prompt, agent,
	// mcp_tool, or unknown).
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
	// PluginData is the plugin's data directory (${CLAUDE_PLUGIN_DATA}, Codex also
	// ${PLUGIN_DATA}); optional.
	PluginData string
	// ProjectDir is the project root substituted for ${CLAUDE_PROJECT_DIR} (Claude Code
	// only) when set.
	ProjectDir string
	// Rules are the dialect's loading rules; nil means [Dialect.Rules] of Dialect.
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

// Handler is one loaded command handler, in the order of its file.
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
	// ${...} substitution.
	Command string
	// Configured is Command as the file wrote it, before substitution (the engines quote
	// it so in the texts the model reads).
	Configured string
	// Args, when non-nil (even empty), selects the exec form: Command runs with these
	// arguments and no shell. Substituted like Command.
	Args []string
	// Timeout is the configured timeout, or the dialect's default.
	Timeout time.Duration
	// Async marks a handler to run detached, never awaited (dsh bridge decision 7).
	Async bool
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
	groups       map[string][]Group
	dedupe       bool // identical commands run once at an event (Rules.Dedupe)
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
// dropped at load). In Claude Code a handler whose command and args equal an earlier
// matched one's is left out, so it runs once (dsh bridge decision 3); Codex keeps every
// copy.
func (c *Config) Match(event, subject string) []Handler {
	if c == nil {
		return nil
	}
	var out []Handler
	seen := map[string]bool{}
	for _, g := range c.groups[event] {
		if !g.Matcher.Match(subject) {
			continue
		}
		for _, h := range g.Handlers {
			if c.disabled(h) {
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

// LoadFile reads and loads the configuration file at path (see [Load]). A missing or
// unreadable file is a single [ErrConfigRead] diagnostic and an empty configuration.
func LoadFile(path string, opts LoadOptions) (*Config, []Diagnostic) {
	if opts.Source == "" {
		opts.Source = path
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return &Config{Dialect: opts.Dialect}, []Diagnostic{{
			File: opts.Source, Skipped: "file", Err: fmt.Errorf("%w: %w", ErrConfigRead, err),
		}}
	}
	return Load(data, opts)
}

// Load parses a hook configuration: the settings.json / hooks.json shape
// {"hooks": {Event: [{"matcher"?, "hooks": [handler…]}]}} or the wrapper-less plugin
// form {Event: […]} (used when there is no top-level "hooks"; there, top-level keys
// that are not arrays and not supported events are metadata such as "description").
//
// Loading never fails whole (dsh bridge decision 9): invalid JSON is one diagnostic and
// an empty configuration; an unsupported event, an unsupported handler type, a malformed
// entry or an invalid matcher skips only that event, group or handler, with a
// [Diagnostic] naming the file and JSON path. Unknown fields are ignored. Groups left
// without handlers disappear. A handler without "type" is a command; its "timeout" (and
// for Codex "timeoutSec") is in seconds. The returned Config is never nil.
func Load(data []byte, opts LoadOptions) (*Config, []Diagnostic) {
	if opts.Table == nil {
		opts.Table = hookmap.Lookup(string(opts.Dialect))
	}
	l := &loader{opts: opts, cfg: &Config{Dialect: opts.Dialect, groups: map[string][]Group{}}}
	if opts.Table != nil {
		l.cfg.DedupeByName = opts.Table.DedupeByName
	}
	if opts.Rules != nil {
		l.rules, l.known = *opts.Rules, true
	} else {
		l.rules, l.known = opts.Dialect.Rules()
	}
	if !l.known && opts.Table != nil {
		// A dialect described by its table alone (Gemini CLI): its shell, no other rule.
		l.rules, l.known = Rules{Shell: opts.Table.Shell}, true
	}
	l.cfg.dedupe = l.rules.Dedupe
	l.load(data)
	if l.cfg.DisabledBy != "" {
		l.cfg.groups = map[string][]Group{}
	}
	return l.cfg, l.diags
}

type loader struct {
	opts  LoadOptions
	rules Rules // the dialect's rules (opts.Rules, else the Dialect's)
	known bool  // rules were found
	cfg   *Config
	diags []Diagnostic
	subst *strings.Replacer
	env   []string
}

func (l *loader) diag(path, event, skipped string, err error) {
	l.diags = append(l.diags, Diagnostic{File: l.opts.Source, Path: path, Event: event, Skipped: skipped, Err: err})
}

// malformed reports a value of the wrong shape: "<what>, got <raw>" plus an optional
// "; <then>" saying what was done instead of skipping.
func (l *loader) malformed(path, event, skipped, what string, raw json.RawMessage, then ...string) {
	got := "nothing"
	if raw != nil {
		got = string(bytes.Join(bytes.Fields(raw), []byte(" ")))
		if cut, ok := cutRunes(got, 40); ok {
			got = cut + "…"
		}
	}
	msg := what + ", got " + got
	for _, t := range then {
		msg += "; " + t
	}
	l.diag(path, event, skipped, fmt.Errorf("%w: %s", ErrMalformed, msg))
}

func (l *loader) load(data []byte) {
	if !l.known {
		l.diag("", "", "file", fmt.Errorf("%w %q", ErrUnknownDialect, l.opts.Dialect))
		return
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		if err == nil {
			err = errors.New("want a JSON object, got null")
		}
		l.diag("", "", "file", fmt.Errorf("%w: %w", ErrConfigSyntax, err))
		return
	}
	if raw, ok := top["disableAllHooks"]; ok && l.rules.DisableAllHooks {
		var off bool
		if json.Unmarshal(raw, &off) != nil {
			l.malformed("disableAllHooks", "", "", "disableAllHooks must be a boolean", raw, "ignored")
		} else if off {
			l.cfg.DisabledBy = l.opts.Source
			if l.cfg.DisabledBy == "" {
				l.cfg.DisabledBy = "(settings)"
			}
		}
	}
	if t := l.opts.Table; t != nil && t.SettingsBlock != "" {
		l.settingsBlock(t.SettingsBlock, top[t.SettingsBlock])
	}
	events, prefix, wrapped := top, "", false
	if raw, ok := top["hooks"]; ok {
		wrapped, prefix = true, "hooks"
		if kindOf(raw) != "object" && kindOf(raw) != "null" {
			l.malformed("hooks", "", "file", `"hooks" must be an object of events`, raw)
			return
		}
		events = nil
		_ = json.Unmarshal(raw, &events) // an object: cannot fail
	}
	l.setupPlugin()
	supported := setOf(l.opts.Events)
	names := make([]string, 0, len(events))
	for ev := range events {
		names = append(names, ev)
	}
	sort.Strings(names)
	for _, ev := range names {
		raw, path := events[ev], jsonPath(prefix, ev)
		if t := l.opts.Table; t != nil && t.SettingsBlock != "" && wrapped && slices.Contains(settingsBlockKeys, ev) {
			continue // Gemini CLI reads these keys of "hooks" as settings, not events
		}
		if supported != nil && !supported[ev] {
			if wrapped || kindOf(raw) == "array" {
				l.diag(path, ev, "event", fmt.Errorf("%w %q", ErrUnsupportedEvent, ev))
			}
			continue
		}
		switch kindOf(raw) {
		case "null":
			continue
		case "array":
		default:
			if wrapped || supported != nil {
				l.malformed(path, ev, "event", "an event must hold an array of groups", raw)
			}
			continue
		}
		var groups []json.RawMessage
		_ = json.Unmarshal(raw, &groups)
		for i, graw := range groups {
			if g, ok := l.group(ev, i, fmt.Sprintf("%s[%d]", path, i), graw); ok {
				l.cfg.groups[ev] = append(l.cfg.groups[ev], g)
			}
		}
	}
}

func (l *loader) group(ev string, index int, path string, raw json.RawMessage) (Group, bool) {
	var obj map[string]json.RawMessage
	if kindOf(raw) != "object" {
		l.malformed(path, ev, "group", "a group must be an object", raw)
		return Group{}, false
	}
	_ = json.Unmarshal(raw, &obj)
	g := Group{Event: ev, Source: l.opts.Source, Path: path, Index: index}
	if t := l.opts.Table; t != nil && t.SequentialGroups {
		if sraw := obj["sequential"]; kindOf(sraw) == "boolean" {
			_ = json.Unmarshal(sraw, &g.Sequential)
		} else if kindOf(sraw) != "null" {
			l.malformed(path+".sequential", ev, "", "sequential must be a boolean", sraw, "ignored")
		}
	}
	if mraw, ok := obj["matcher"]; ok && !slices.Contains(l.opts.NoMatcherEvents, ev) {
		var pattern string
		switch kindOf(mraw) {
		case "null":
		case "string":
			_ = json.Unmarshal(mraw, &pattern)
		default:
			l.malformed(path+".matcher", ev, "group", "a matcher must be a string", mraw)
			return Group{}, false
		}
		m, err := l.compile(ev, pattern)
		if err != nil {
			var me *MatcherError
			if errors.As(err, &me) {
				me.Event = ev
			}
			l.diag(path+".matcher", ev, "group", err)
			return Group{}, false
		}
		g.Matcher = m
	}
	hraw := obj["hooks"]
	if kindOf(hraw) != "array" {
		l.malformed(path+".hooks", ev, "group", `a group's "hooks" must be an array of handlers`, hraw)
		return Group{}, false
	}
	var handlers []json.RawMessage
	_ = json.Unmarshal(hraw, &handlers)
	for i, h := range handlers {
		if hd, ok := l.handler(g, i, fmt.Sprintf("%s.hooks[%d]", path, i), h); ok {
			g.Handlers = append(g.Handlers, hd)
		}
	}
	return g, len(g.Handlers) > 0
}

func (l *loader) handler(g Group, index int, path string, raw json.RawMessage) (Handler, bool) {
	ev := g.Event
	if kindOf(raw) != "object" {
		l.malformed(path, ev, "handler", "a handler must be an object", raw)
		return Handler{}, false
	}
	var obj map[string]json.RawMessage
	_ = json.Unmarshal(raw, &obj)
	typ, ok := optString(obj["type"])
	if !ok {
		l.malformed(path+".type", ev, "handler", "a handler type must be a string", obj["type"])
		return Handler{}, false
	}
	switch typ {
	case "", "command":
	case "http", "prompt", "agent", "mcp_tool":
		l.diag(path, ev, "handler", fmt.Errorf("%w %q: only command handlers run", ErrUnsupportedHandler, typ))
		return Handler{}, false
	default:
		l.diag(path, ev, "handler", fmt.Errorf("%w: unknown type %q", ErrUnsupportedHandler, typ))
		return Handler{}, false
	}
	h := Handler{
		Event: ev, Source: g.Source, Path: path, Group: g.Index, Index: index,
		Matcher: g.Matcher, Timeout: l.defaultTimeout(), Env: l.env, Sequential: g.Sequential,
	}
	if s, ok := optString(obj["name"]); ok {
		h.Name = s
	}
	if h.Command, ok = optString(obj["command"]); !ok || h.Command == "" {
		what := "a command handler needs a non-empty command string"
		l.malformed(path+".command", ev, "handler", what, obj["command"])
		return Handler{}, false
	}
	if araw := obj["args"]; kindOf(araw) != "null" {
		h.Args = []string{}
		if err := json.Unmarshal(araw, &h.Args); err != nil {
			l.malformed(path+".args", ev, "handler", "args must be an array of strings", araw)
			return Handler{}, false
		}
	}
	if araw := obj["async"]; kindOf(araw) != "null" {
		if kindOf(araw) != "boolean" {
			l.malformed(path+".async", ev, "handler", "async must be a boolean", araw)
			return Handler{}, false
		}
		_ = json.Unmarshal(araw, &h.Async)
	}
	if s, ok := optString(obj["statusMessage"]); ok {
		h.StatusMessage = s
	} else {
		l.malformed(path+".statusMessage", ev, "", "statusMessage must be a string", obj["statusMessage"], "ignored")
	}
	key := "timeout"
	if l.rules.TimeoutAlias != "" && kindOf(obj[key]) == "null" {
		key = l.rules.TimeoutAlias
	}
	if traw := obj[key]; kindOf(traw) != "null" {
		var sec float64
		unit, expire := "s", false
		if t := l.opts.Table; t != nil {
			unit, expire = t.TimeoutUnit, t.NonPositiveTimeout == "expire"
		}
		number := kindOf(traw) == "number" && json.Unmarshal(traw, &sec) == nil
		if unit == "ms" {
			sec /= 1000
		}
		if expire && number && sec <= 0 {
			// Gemini CLI arms its timer with the value as is: 0 or less fires at once,
			// so the hook times out and the action proceeds.
			h.Timeout = ExpireAtOnce
			l.malformed(path+"."+key, ev, "", key+" must be positive", traw, "the hook times out at once, as the engine does")
		} else if !number || !(sec > 0 && sec <= maxTimeoutSeconds) {
			l.malformed(path+"."+key, ev, "", key+" must be a positive number of "+unitName(unit), traw,
				fmt.Sprintf("using the default %v", h.Timeout))
		} else {
			h.Timeout = time.Duration(sec * float64(time.Second))
		}
	}
	h.Configured = h.Command
	if l.subst != nil {
		h.Command = l.subst.Replace(h.Command)
		for i, a := range h.Args {
			h.Args[i] = l.subst.Replace(a)
		}
	}
	return h, true
}

func unitName(unit string) string {
	if unit == "ms" {
		return "milliseconds"
	}
	return "seconds"
}

// ExpireAtOnce is the timeout of a handler whose configured timeout of 0 or less expires
// at once (Bridge.NonPositiveTimeout "expire").
const ExpireAtOnce = time.Millisecond

// settingsBlockKeys are the keys of a Gemini "hooks" object that are settings, not events.
var settingsBlockKeys = []string{"enabled", "disabled", "notifications"}

// settingsBlock applies a settings file's {enabled, disabled} block (Bridge.SettingsBlock):
// enabled false turns every hook off, disabled names hooks that do not run.
func (l *loader) settingsBlock(key string, raw json.RawMessage) {
	if kindOf(raw) == "null" {
		return
	}
	var blk struct {
		Enabled  *bool           `json:"enabled"`
		Disabled json.RawMessage `json:"disabled"`
	}
	if kindOf(raw) != "object" || json.Unmarshal(raw, &blk) != nil {
		l.malformed(key, "", "", key+" must be an object {enabled, disabled}", raw, "ignored")
		return
	}
	if blk.Enabled != nil && !*blk.Enabled {
		l.cfg.DisabledBy = l.opts.Source
		if l.cfg.DisabledBy == "" {
			l.cfg.DisabledBy = "(settings)"
		}
	}
	if kindOf(blk.Disabled) != "null" {
		if json.Unmarshal(blk.Disabled, &l.cfg.Disabled) != nil {
			l.malformed(key+".disabled", "", "", "disabled must be an array of hook names", blk.Disabled, "ignored")
			l.cfg.Disabled = nil
		}
	}
}

// compile compiles an event's matcher under the table's matcher kind when it states one,
// else under the dialect's rules.
func (l *loader) compile(ev, pattern string) (Matcher, error) {
	if t := l.opts.Table; t != nil {
		e, _ := t.Lookup(ev)
		switch e.MatcherKind {
		case "exact":
			return Exact(pattern), nil
		case "regex":
			return CompileRegex(l.opts.Dialect, pattern, t.InvalidRegexExact)
		}
	}
	return compile(l.rules, l.opts.Dialect, pattern)
}

// defaultTimeout is a handler's timeout when it sets none (LoadOptions.DefaultTimeout).
func (l *loader) defaultTimeout() time.Duration {
	if l.opts.DefaultTimeout > 0 {
		return l.opts.DefaultTimeout
	}
	return l.opts.Dialect.DefaultTimeout()
}

// maxTimeoutSeconds bounds a configured timeout (a year) so the Duration cannot overflow.
const maxTimeoutSeconds = 365 * 24 * 3600

// setupPlugin prepares the ${...} substitutions and the exported variables of dsh bridge
// decision 5 from LoadOptions.
func (l *loader) setupPlugin() {
	o, r := l.opts, l.rules
	var vars [][2]string
	if o.PluginRoot != "" || !r.PluginVarsNeedRoot {
		for _, set := range []struct {
			names []string
			value string
		}{{r.PluginRootVars, o.PluginRoot}, {r.PluginDataVars, o.PluginData}, {r.ProjectDirVars, o.ProjectDir}} {
			for _, n := range set.names {
				vars = append(vars, [2]string{n, set.value})
			}
		}
	}
	var pairs []string
	for _, v := range vars {
		if v[1] != "" {
			pairs = append(pairs, "${"+v[0]+"}", v[1])
			l.env = append(l.env, v[0]+"="+v[1])
		}
	}
	l.env = slices.Clip(l.env)
	if len(pairs) > 0 {
		l.subst = strings.NewReplacer(pairs...)
	}
}

// optString decodes an optional string: absent or null is "", true; another kind is false.
func optString(raw json.RawMessage) (string, bool) {
	var s string
	switch kindOf(raw) {
	case "null":
		return "", true
	case "string":
		return s, json.Unmarshal(raw, &s) == nil
	}
	return "", false
}

// kindOf names the JSON kind of raw; absent (nil) counts as "null".
func kindOf(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "null"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func setOf(names []string) map[string]bool {
	if names == nil {
		return nil
	}
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// jsonPath appends key to prefix in dotted form, quoting keys that are not identifiers.
func jsonPath(prefix, key string) string {
	ident := key != ""
	for _, r := range key {
		if !(r == '_' || r == '$' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			ident = false
		}
	}
	if !ident {
		return prefix + "[" + strconv.Quote(key) + "]"
	}
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}
