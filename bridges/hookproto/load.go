package hookproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dshkit/dsh/generated/hookmap"
)

// LoadFile reads and loads the configuration file at path (see [Load]). A missing or
// unreadable file, or one larger than [MaxConfigBytes], is a single [ErrConfigRead]
// diagnostic and an empty configuration.
func LoadFile(path string, opts LoadOptions) (*Config, []Diagnostic) {
	if opts.Source == "" {
		opts.Source = path
	}
	var data []byte
	f, err := os.Open(path)
	if err == nil {
		data, err = ReadAtMost(f, MaxConfigBytes)
		f.Close()
	}
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
// for Codex "timeoutSec") is in seconds. A handler of a type the dialect's table lists
// besides "command" (Claude Code's "http": url, headers, allowedEnvVars) loads with that
// type's default timeout, and the settings that restrict it (allowedHttpHookUrls,
// httpHookAllowedEnvVars) are read into the Config. The returned Config is never nil.
func Load(data []byte, opts LoadOptions) (*Config, []Diagnostic) {
	if opts.Table == nil {
		opts.Table = hookmap.Lookup(string(opts.Dialect))
	}
	l := &loader{opts: opts, cfg: &Config{Dialect: opts.Dialect, groups: map[string][]Group{}}}
	if opts.Table != nil {
		l.cfg.DedupeByName = opts.Table.DedupeByName
	}
	switch {
	case opts.Rules != nil:
		l.rules, l.known = *opts.Rules, true
	case opts.Table != nil:
		// A dialect described by its table alone.
		l.rules, l.known = TableRules(opts.Table), true
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
	rules Rules // the dialect's rules (opts.Rules, else its table's)
	known bool  // rules were found
	cfg   *Config
	diags []Diagnostic
	subst *strings.Replacer
	vars  [][3]string // the substituted variables: name, placeholder, value
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
	l.httpSettings(top)
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
		if _, ok := l.handlerType(HTTPHandlerType); ok && !wrapped && (ev == AllowedHTTPHookURLsKey || ev == HTTPHookAllowedEnvVarsKey) {
			continue // a settings file without hooks: its http settings are no events
		}
		if supported != nil && !supported[ev] {
			if wrapped || kindOf(raw) == "array" {
				err := NotFired(l.opts.Table, ev)
				skipped := "event"
				if errors.Is(err, ErrUnfiredEvent) {
					skipped = "" // its hooks load, and never run
				}
				if err == nil {
					err = fmt.Errorf("%w %q", ErrUnsupportedEvent, ev)
				}
				l.diag(path, ev, skipped, err)
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

// unfiredError is the diagnostic of an event that never fires; it unwraps to
// [ErrUnfiredEvent].
type unfiredError struct{ event, why string }

func (e unfiredError) Error() string {
	return "hooks for " + e.event + " never fire in dsh: " + e.why
}

func (e unfiredError) Unwrap() error { return ErrUnfiredEvent }

// NotFired says why the engine's event ev has no row of t that fires it: an
// [ErrUnfiredEvent] error for an event dsh never fires (t.Unfired: its hooks load and
// never run), an [ErrUnsupportedEvent] error for one it does not fire yet (t.Pending: a
// file naming it fails to load). It is nil for any other event, fired or unknown.
func NotFired(t *hookmap.Bridge, ev string) error {
	if t == nil {
		return nil
	}
	if why, ok := t.Unfired[ev]; ok {
		return unfiredError{ev, why}
	}
	if where, ok := t.Pending[ev]; ok {
		return fmt.Errorf("%w %q: an event of the engine that dsh does not fire yet (it would fire %s)", ErrUnsupportedEvent, ev, where)
	}
	return nil
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
		m, err := l.compile(path+".matcher", ev, pattern)
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
	h := Handler{
		Event: ev, Source: g.Source, Path: path, Group: g.Index, Index: index,
		Matcher: g.Matcher, Timeout: l.defaultTimeout(), Env: l.env, Sequential: g.Sequential,
	}
	switch ht, listed := l.handlerType(typ); {
	case typ == "" || typ == "command":
		if t := l.opts.Table; t != nil {
			if sec, ok := t.EventTimeoutSec[ev]; ok {
				h.Timeout = time.Duration(sec) * time.Second
			}
		}
	case listed && ht.Refused != "":
		l.diag(path, ev, "handler", fmt.Errorf("%w %q: %s", ErrUnsupportedHandler, typ, ht.Refused))
		return Handler{}, false
	case listed && ht.RefusedAt[ev] != "":
		l.diag(path, ev, "handler", fmt.Errorf("%w %q at %s: %s", ErrUnsupportedHandler, typ, ev, ht.RefusedAt[ev]))
		return Handler{}, false
	case listed:
		h.Timeout = time.Duration(ht.DefaultTimeoutSec) * time.Second
		if sec, ok := ht.EventTimeoutSec[ev]; ok {
			h.Timeout = time.Duration(sec) * time.Second
		}
	case slices.Contains(knownHandlerTypes, typ):
		l.diag(path, ev, "handler", fmt.Errorf("%w %q: %s", ErrUnsupportedHandler, typ, l.handlersRun()))
		return Handler{}, false
	default:
		l.diag(path, ev, "handler", fmt.Errorf("%w: unknown type %q", ErrUnsupportedHandler, typ))
		return Handler{}, false
	}
	if s, ok := optString(obj["name"]); ok {
		h.Name = s
	}
	ok = true
	switch typ {
	case HTTPHandlerType:
		ok = l.httpHandler(&h, obj)
	case MCPToolHandlerType:
		ok = l.mcpToolHandler(&h, obj)
	case PromptHandlerType:
		ok = l.promptHandler(&h, obj)
	case AgentHandlerType:
		ok = l.agentHandler(&h, obj)
	default:
		ok = l.commandHandler(&h, obj)
	}
	if !ok {
		return Handler{}, false
	}
	if !l.handlerOptions(&h, obj) {
		return Handler{}, false
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
	if o := l.opts; o.PluginRoot != "" && h.HTTP == nil && h.MCP == nil && h.Prompt == nil {
		h.Plugin = o.Plugin
		if l.rules.QuotedPluginRoot {
			// As the engine quotes it in a blocking error: the root variables substituted,
			// bare $VAR too in a shell-form command.
			q := h.Configured
			for _, v := range l.rules.PluginRootVars {
				q = strings.ReplaceAll(q, "${"+v+"}", o.PluginRoot)
				if h.Args == nil {
					q = regexp.MustCompile(`\$`+v+`\b`).ReplaceAllLiteralString(q, o.PluginRoot)
				}
			}
			h.Quoted = q
		}
	}
	if l.subst != nil && h.HTTP == nil && h.MCP == nil && h.Prompt == nil {
		if h.Args == nil {
			if err := unsafeSubstitution(h.Command, l.vars); err != nil {
				h.SubstErr = err
				l.diag(path+".command", ev, "", fmt.Errorf("%w; it blocks where exit 2 would", err))
			}
		}
		h.Command = l.subst.Replace(h.Command)
		for i, a := range h.Args {
			h.Args[i] = l.subst.Replace(a)
		}
	}
	return h, true
}

// commandHandler reads a command handler's fields into h: command, args, async.
func (l *loader) commandHandler(h *Handler, obj map[string]json.RawMessage) bool {
	path, ev := h.Path, h.Event
	var ok bool
	if h.Command, ok = optString(obj["command"]); !ok || h.Command == "" {
		what := "a command handler needs a non-empty command string"
		l.malformed(path+".command", ev, "handler", what, obj["command"])
		return false
	}
	if araw := obj["args"]; kindOf(araw) != "null" {
		h.Args = []string{}
		if err := json.Unmarshal(araw, &h.Args); err != nil {
			l.malformed(path+".args", ev, "handler", "args must be an array of strings", araw)
			return false
		}
	}
	if araw := obj["async"]; kindOf(araw) != "null" {
		if kindOf(araw) != "boolean" {
			l.malformed(path+".async", ev, "handler", "async must be a boolean", araw)
			return false
		}
		_ = json.Unmarshal(araw, &h.Async)
	}
	return l.commandFields(h, obj)
}

// httpHandler reads an http handler's fields into h: url (an absolute http or https
// URL), headers (an object of header names to strings), allowedEnvVars (an array of
// names). Its Command is the URL, as the engine names the hook.
func (l *loader) httpHandler(h *Handler, obj map[string]json.RawMessage) bool {
	path, ev := h.Path, h.Event
	raw, ok := optString(obj["url"])
	if !ok || raw == "" {
		l.malformed(path+".url", ev, "handler", "an http handler needs a non-empty url string", obj["url"])
		return false
	}
	if u, err := url.Parse(raw); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		l.malformed(path+".url", ev, "handler", "url must be an absolute http or https URL", obj["url"])
		return false
	}
	hh := &HTTPHandler{URL: raw}
	if hraw := obj["headers"]; kindOf(hraw) != "null" {
		if kindOf(hraw) != "object" || json.Unmarshal(hraw, &hh.Headers) != nil {
			l.malformed(path+".headers", ev, "handler", "headers must be an object of header names to strings", hraw)
			return false
		}
		for _, name := range slices.Sorted(maps.Keys(hh.Headers)) {
			switch {
			case !validHeaderName(strings.TrimSpace(name)):
				l.malformed(jsonPath(path+".headers", name), ev, "handler", "a header name must be an HTTP token", json.RawMessage(strconv.Quote(name)))
				return false
			case slices.Contains([]string{"content-length", "transfer-encoding"}, strings.ToLower(strings.TrimSpace(name))):
				// As Claude Code: the request's length comes from its body.
				l.diag(jsonPath(path+".headers", name), ev, "", fmt.Errorf("%w: header %s ignored: the request's length comes from its body", ErrMalformed, strings.TrimSpace(name)))
				delete(hh.Headers, name)
			}
		}
	}
	if araw := obj["allowedEnvVars"]; kindOf(araw) != "null" {
		hh.AllowedEnvVars = []string{}
		if kindOf(araw) != "array" || json.Unmarshal(araw, &hh.AllowedEnvVars) != nil {
			l.malformed(path+".allowedEnvVars", ev, "handler", "allowedEnvVars must be an array of variable names", araw)
			return false
		}
	}
	h.HTTP, h.Command = hh, raw
	return true
}

// knownHandlerTypes are the handler types of the engines dsh bridges; a type that none
// has is "unknown" in a diagnostic.
var knownHandlerTypes = []string{"command", "http", "prompt", "agent", "mcp_tool"}

// handlerType is the table's row for a handler type other than "command", and whether it
// lists it.
func (l *loader) handlerType(typ string) (hookmap.HandlerType, bool) {
	if l.opts.Table == nil {
		return hookmap.HandlerType{}, false
	}
	ht, ok := l.opts.Table.Handlers[typ]
	return ht, ok
}

// handlersRun says which handler types the dialect runs: "claude-code runs command,
// agent, http, mcp_tool and prompt handlers", "gemini runs only command handlers"; a type
// the table refuses is not one it runs.
func (l *loader) handlersRun() string {
	types := []string{"command"}
	if l.opts.Table != nil {
		for _, typ := range slices.Sorted(maps.Keys(l.opts.Table.Handlers)) {
			if l.opts.Table.Handlers[typ].Refused == "" {
				types = append(types, typ)
			}
		}
	}
	if len(types) == 1 {
		return fmt.Sprintf("%s runs only command handlers", l.opts.Dialect)
	}
	return fmt.Sprintf("%s runs %s and %s handlers", l.opts.Dialect, strings.Join(types[:len(types)-1], ", "), types[len(types)-1])
}

// httpSettings reads the settings keys that restrict http hooks, when the dialect runs
// them: a list that is not an array of strings allows nothing, as in the engine.
func (l *loader) httpSettings(top map[string]json.RawMessage) {
	if _, ok := l.handlerType(HTTPHandlerType); !ok {
		return
	}
	for _, s := range []struct {
		key  string
		dst  *[]string
		none string
	}{
		{AllowedHTTPHookURLsKey, &l.cfg.AllowedHTTPHookURLs, "no http hook may run"},
		{HTTPHookAllowedEnvVarsKey, &l.cfg.HTTPHookAllowedEnvVars, "no variable may be read into an http hook's headers"},
	} {
		raw, ok := top[s.key]
		if !ok {
			continue
		}
		list := []string{}
		if kindOf(raw) != "array" || json.Unmarshal(raw, &list) != nil {
			l.malformed(s.key, "", "", s.key+" must be an array of strings", raw, s.none)
			list = []string{}
		}
		*s.dst = list
	}
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
// else under the dialect's rules. A regex the dialect rejects is an error, or, under the
// table's InvalidRegexExact (Gemini CLI), an exact string with a diagnostic at path.
func (l *loader) compile(path, ev, pattern string) (Matcher, error) {
	if t := l.opts.Table; t != nil {
		e, _ := t.Lookup(ev)
		switch e.MatcherKind {
		case "exact":
			return Exact(pattern), nil
		case "regex":
			if t.InvalidRegexExact {
				pattern = strings.TrimSpace(pattern)
			}
			m, err := CompileRegex(l.rules, l.opts.Dialect, pattern)
			if err != nil && t.InvalidRegexExact {
				var me *MatcherError
				if errors.As(err, &me) {
					me.Event = ev
				}
				l.diag(path, ev, "", fmt.Errorf("%w; compared as an exact string, as %s does with a pattern it cannot compile", err, l.opts.Dialect))
				return Exact(pattern), nil
			}
			return m, err
		}
	}
	return Compile(l.rules, l.opts.Dialect, pattern)
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
			l.vars = append(l.vars, [3]string{v[0], "${" + v[0] + "}", v[1]})
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
