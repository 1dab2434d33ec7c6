package hookproto

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
	"github.com/dshkit/dsh/runtime/permrule"
	"github.com/dshkit/dsh/runtime/sandbox"
)

// Recorder appends session-log records. The bridges append their hook/invoked and
// hook/result records (dsh.HookInvoked, dsh.HookResult) through it; a runtime adapts its
// session log to it. Record must be safe for concurrent use.
type Recorder interface {
	Record(ctx context.Context, data dsh.SessionEventData) error
}

// RecorderFunc adapts a function to a Recorder.
type RecorderFunc func(ctx context.Context, data dsh.SessionEventData) error

// Record calls f.
func (f RecorderFunc) Record(ctx context.Context, data dsh.SessionEventData) error {
	return f(ctx, data)
}

// Engine fires one dialect's hooks: it matches the configured handlers of an event, runs
// them (in parallel; async ones detached), decodes and merges their output through the
// dialect's table, and records them. It is safe for concurrent use; configure it before
// the first Fire and do not change it afterwards.
type Engine struct {
	// Table is the dialect's mapping table (hookmap.ClaudeCode, hookmap.Codex).
	Table *hookmap.Bridge
	// Config holds the loaded handlers.
	Config *Config
	// Shell is the argv prefix of shell-form handlers (Rules.ShellArgv).
	Shell []string
	// BaseEnv is the environment every handler starts from (Command.BaseEnv); nil means
	// the harness's (os.Environ()).
	BaseEnv []string
	// Sandbox, when set, confines every command handler (Command.Sandbox).
	Sandbox *sandbox.Sandbox
	// Env holds KEY=value pairs every handler gets besides the base environment and
	// its own Handler.Env.
	Env []string
	// Dir is the working directory of a run whose Fire.Dir is empty.
	Dir string
	// Recorder receives hook/invoked and hook/result inside open turns; nil records
	// nothing.
	Recorder Recorder
	// Detached runs async handlers; nil runs them under an internal tracker that
	// Close drains.
	Detached *Detached
	// Logger receives diagnostics (nil: slog.Default()).
	Logger *slog.Logger
	// StderrSummaryMax caps the stderr summary (0: DefaultStderrSummaryMax).
	StderrSummaryMax int
	// KillGrace and PipeGrace tune the runner (0: the defaults).
	KillGrace, PipeGrace time.Duration
	// HTTPClient sends the http hooks' requests (redirects are never followed, whatever
	// its CheckRedirect); nil means one of the engine's own ([NewHTTPClient]), made at
	// the first http hook. The guard against addresses that are not public is
	// NewHTTPClient's transport's: a client of the caller's has the caller's rules.
	HTTPClient *http.Client
	// MCP calls the mounted MCP servers' tools for mcp_tool hooks; nil: every mcp_tool
	// hook fails as its server not being connected.
	MCP MCPCaller
	// Model answers prompt hooks; nil: every prompt hook fails as a model error.
	Model PromptModel
	// Agents runs agent hooks' verifiers; nil: every agent hook blocks, its verifier
	// unable to run.
	Agents AgentVerifier
	// TempDir is where the table's ContextLimit spills contexts over a handler's limit;
	// "" means os.TempDir().
	TempDir string

	own  atomic.Pointer[Detached]
	http atomic.Pointer[http.Client]
}

// Fire is one occurrence of an external event.
type Fire struct {
	// Event is the external event name, e.g. "PreToolUse".
	Event string
	// Subject is what matchers test (tool name, SessionStart source); "" for events
	// without a matcher.
	Subject string
	// Aliases are further names a matcher may match the subject by (Codex's apply_patch
	// fires the matchers of Edit and Write too); the hooks still see Subject.
	Aliases []string
	// Stdin is the encoded input JSON.
	Stdin []byte
	// Dir is the working directory of the hooks (the session cwd); "" means Engine.Dir.
	Dir string
	// Turn is the 1-based number of the open turn; records are written only when
	// InTurn is set.
	Turn int
	// InTurn says whether the event fires inside an open turn.
	InTurn bool
	// Maintenance is the compaction attempt the event fires for (PreCompact, PostCompact,
	// SessionStart[compact]): its records carry it as their owner, and they are written
	// with or without an open turn (Turn 0 outside one).
	Maintenance string
	// OnAsync, if set, receives the outcome of each async handler when it finishes, on
	// the run's goroutine.
	OnAsync func(HookRun)
	// Env holds KEY=value pairs this event's handlers get besides Engine.Env (e.g. the
	// session id variable); a handler's own Handler.Env still wins.
	Env []string
	// IgnoreRewrite, if set, drops every run's rewrite (Verdict.Rewrite) and adds this
	// text to its diagnostics, so that its hook/result says why (a revalidation pass).
	IgnoreRewrite string
	// Call is the tool call of a tool event, which handlers' "if" rules are tested
	// against (HandlerOptions.If); nil: the rules cannot be told, and their hooks run.
	Call *permrule.Call
	// Verifier says the event is a call of an agent hook's verifier: its prompt and
	// agent handlers do not run (Session.Verifier), and are not recorded.
	Verifier bool

	vars commandVars // the table's command variables for this stdin (set by Fire)
}

// commandVars are the $NAME substitutions and exported variables of one event
// (Bridge.CommandVars).
type commandVars struct {
	subst *strings.Replacer
	env   []string
	vars  [][3]string // name, placeholder, value
}

// commandVars reads the table's command variables from the event's stdin: each $NAME is
// replaced, shell-quoted, in the command text and exported as NAME (Gemini CLI). A
// value that is not plain ([PlainValue]) refuses the hooks whose command holds its
// $NAME (see [Engine.refusal]).
func (e *Engine) commandVars(stdin []byte) commandVars {
	var cv commandVars
	if len(e.Table.CommandVars) == 0 {
		return cv
	}
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(stdin, &fields)
	names := make([]string, 0, len(e.Table.CommandVars))
	for n := range e.Table.CommandVars {
		names = append(names, n)
	}
	// Longer names first, so that no name replaces the prefix of another.
	sort.Slice(names, func(i, j int) bool {
		return len(names[i]) > len(names[j]) || len(names[i]) == len(names[j]) && names[i] < names[j]
	})
	var pairs []string
	for _, n := range names {
		var val string
		_ = json.Unmarshal(fields[e.Table.CommandVars[n]], &val)
		pairs = append(pairs, "$"+n, ShellQuote(val))
		cv.vars = append(cv.vars, [3]string{n, "$" + n, val})
		cv.env = append(cv.env, n+"="+val)
	}
	cv.subst = strings.NewReplacer(pairs...)
	return cv
}

// ShellQuote quotes s as one POSIX shell word: unchanged when it holds only safe
// characters, else in single quotes; "" for an empty s (as Gemini CLI substitutes it).
func ShellQuote(s string) string {
	if s == "" {
		return ""
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./:@%+=,", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// runSequential runs the handlers one after the other (a matched group set "sequential":
// true): a hook that exits 0 passes on what the table's PassOn column names (else its
// rewrite, into the event's Rewrite.Stdin field) to the hooks after it, shallowly merged
// into that stdin field or appended to it (PassOn.Join).
func (e *Engine) runSequential(ctx context.Context, ev *hookmap.Event, hs []Handler, cmds []Command, f Fire) []Result {
	out := make([]Result, len(cmds))
	stdin := f.Stdin
	for i := range cmds {
		cmds[i].Stdin = stdin
		out[i] = Run(ctx, cmds[i])
		if out[i].ExitCode == nil || *out[i].ExitCode != 0 {
			continue
		}
		next, err := e.passOn(ev, out[i], stdin)
		switch {
		case err != nil:
			e.logger().WarnContext(ctx, "sequential hook output not passed on", "event", ev.Name, "command", hs[i].Command, "error", err)
		case next != nil:
			stdin = next
		}
	}
	return out
}

// passOn returns stdin as the hooks after a sequential hook that printed r see it; nil
// when the hook passes nothing on.
func (e *Engine) passOn(ev *hookmap.Event, r Result, stdin []byte) ([]byte, error) {
	po := ev.PassOn
	if po == nil {
		if ev.Rewrite == nil || ev.Rewrite.Stdin == "" {
			return nil, nil
		}
		v := Decode(e.Table, ev, r)
		if len(v.Rewrite) == 0 {
			return nil, nil
		}
		return MergeField(stdin, ev.Rewrite.Stdin, v.Rewrite)
	}
	val, ok := lookup(Output(e.Table, r), po.Output)
	if !ok || val == nil {
		return nil, nil
	}
	if po.Join == "" {
		patch, err := json.Marshal(val)
		if err != nil {
			return nil, err
		}
		return MergeField(stdin, po.Stdin, patch)
	}
	text, isText := val.(string)
	if !isText {
		return nil, nil // the engine appends strings only
	}
	return editField(stdin, po.Stdin, func(raw json.RawMessage) ([]byte, error) {
		var cur string
		if err := json.Unmarshal(raw, &cur); err != nil {
			return nil, fmt.Errorf("stdin field %q is not a string", po.Stdin)
		}
		return marshalText(cur + po.Join + text)
	})
}

// marshalText is the JSON string of s, with <, > and & as they are.
func marshalText(s string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// MergeField returns the JSON object obj with its top-level field shallowly merged with
// the object patch ({...obj[field], ...patch}), its other fields and their order kept.
func MergeField(obj []byte, field string, patch json.RawMessage) ([]byte, error) {
	var p map[string]json.RawMessage
	if err := json.Unmarshal(patch, &p); err != nil || p == nil {
		return nil, fmt.Errorf("the rewrite is not an object")
	}
	return editField(obj, field, func(raw json.RawMessage) ([]byte, error) {
		var cur map[string]json.RawMessage
		if json.Unmarshal(raw, &cur) != nil || cur == nil {
			cur = map[string]json.RawMessage{}
		}
		keys := orderedKeys(raw)
		for _, k := range orderedKeys(patch) {
			if _, ok := cur[k]; !ok {
				keys = append(keys, k)
			}
			cur[k] = p[k]
		}
		var b bytes.Buffer
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteByte(':')
			b.Write(cur[k])
		}
		b.WriteByte('}')
		return b.Bytes(), nil
	})
}

// editField returns the JSON object obj with the value of its top-level field replaced
// by what edit makes of it, its other fields, their order and their bytes kept.
func editField(obj []byte, field string, edit func(raw json.RawMessage) ([]byte, error)) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("stdin is not a JSON object")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if t != field {
			continue
		}
		end := int(dec.InputOffset())
		start := end - len(raw)
		val, err := edit(raw)
		if err != nil {
			return nil, err
		}
		return slices.Concat(obj[:start], val, obj[end:]), nil
	}
	return nil, fmt.Errorf("stdin has no field %q", field)
}

// orderedKeys returns the keys of the JSON object raw in document order.
func orderedKeys(raw []byte) []string {
	var keys []string
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		k, _ := t.(string)
		keys = append(keys, k)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return keys
		}
	}
	return keys
}

// HookRun is one handler's run and what it came to.
type HookRun struct {
	// Handler is the configured handler.
	Handler Handler
	// ID is its handler id, "<dialect>:<Event>:<n>", shared by its hook/invoked and
	// hook/result records.
	ID string
	// Result is how the process ended.
	Result Result
	// Verdict is its decoded outcome.
	Verdict Verdict
	// StderrSummary is the recorded stderr summary ("" when stderr is blank).
	StderrSummary string
	// Rewrite is what became of the run's rewrite (Verdict.Rewrite) once the event's runs
	// fold in configuration order: applied or overridden by a later replacement; "" when
	// it rewrote nothing.
	Rewrite dsh.HookRewrite
}

// Record is the hook/result record of the run.
func (h HookRun) Record(turn int) dsh.HookResult {
	rec := dsh.HookResult{
		Turn:       turn,
		Point:      h.Handler.Event,
		HandlerID:  h.ID,
		Outcome:    h.Verdict.Outcome,
		ExitCode:   h.Result.ExitCode,
		DurationMS: int(h.Result.Duration.Milliseconds()),
	}
	if h.StderrSummary != "" {
		s := h.StderrSummary
		rec.StderrSummary = &s
	}
	if len(h.Verdict.Notices) > 0 {
		s := strings.Join(h.Verdict.Notices, "\n")
		rec.Notice = &s
	}
	if len(h.Verdict.Diagnostics) > 0 {
		s := strings.Join(h.Verdict.Diagnostics, "\n")
		rec.Diagnostic = &s
	}
	rec.Rewrite = h.Rewrite
	return rec
}

// markRewrites sets each run's Rewrite: a rewrite is overridden when a later run (in
// configuration order) replaces the arguments, applied otherwise.
func markRewrites(runs []HookRun) {
	replaced := false
	for i := len(runs) - 1; i >= 0; i-- {
		if len(runs[i].Verdict.Rewrite) == 0 {
			continue
		}
		runs[i].Rewrite = dsh.HookRewriteApplied
		if replaced {
			runs[i].Rewrite = dsh.HookRewriteOverridden
		}
		if !runs[i].Verdict.RewriteMerge {
			replaced = true
		}
	}
}

// Report is what one Fire came to.
type Report struct {
	// Event is the event's table entry.
	Event *hookmap.Event
	// Hooks are the synchronous runs, in configuration order.
	Hooks []HookRun
	// Async is how many async handlers were started detached.
	Async int
	// Merged is the merge of the synchronous runs' verdicts.
	Merged Merged
}

// Matched reports whether any handler (synchronous or async) matched.
func (r *Report) Matched() bool { return r != nil && (len(r.Hooks) > 0 || r.Async > 0) }

var handlerSeq atomic.Uint64

// NewHandlerID returns a fresh handler id "<dialect>:<event>:<n>", n counting process-wide.
func NewHandlerID(dialect, event string) string {
	return fmt.Sprintf("%s:%s:%d", dialect, event, handlerSeq.Add(1))
}

func (e *Engine) logger() *slog.Logger {
	if e.Logger != nil {
		return e.Logger
	}
	return slog.Default()
}

func (e *Engine) detached() *Detached {
	if e.Detached != nil {
		return e.Detached
	}
	if d := e.own.Load(); d != nil {
		return d
	}
	d := NewDetached(context.Background(), e.Logger)
	if e.own.CompareAndSwap(nil, d) {
		return d
	}
	return e.own.Load()
}

// Close drains the internal detached tracker (not a Detached the caller supplied): it
// kills every running async hook and waits for them.
func (e *Engine) Close(ctx context.Context) error {
	if d := e.own.Load(); d != nil {
		return d.Drain(ctx)
	}
	return nil
}

// Wait waits for the async hooks started through the internal tracker to finish,
// without killing them; it returns ctx.Err() if ctx ends first.
func (e *Engine) Wait(ctx context.Context) error {
	return e.detached().Wait(ctx)
}

// Fire runs every handler of f.Event that matches f.Subject (dsh bridge decisions 3, 4
// and 7). In an open turn, hook/invoked records are appended in configuration order
// before any hook starts, and hook/result records in configuration order once all have
// finished, so the log does not depend on finishing order. Async handlers start
// detached and are not recorded; their outcome goes to f.OnAsync. An event the table
// does not map, or with no matching handler, returns an empty report.
func (e *Engine) Fire(ctx context.Context, f Fire) *Report {
	rep := &Report{Merged: Merged{Outcome: dsh.HookOutcomePass}}
	if e.Table == nil {
		return rep
	}
	ev, ok := e.Table.Lookup(f.Event)
	if !ok {
		return rep
	}
	rep.Event = &ev
	var sync, async []Handler
	for _, h := range e.Config.MatchWhere(f.Event, f.Subject, func(h Handler) bool { return e.runs(h, f) && !(f.Verifier && h.runsModel()) }, f.Aliases...) {
		if h.Async {
			async = append(async, h)
		} else {
			sync = append(sync, h)
		}
	}
	log := e.logger()
	record := e.Recorder != nil && (f.InTurn || f.Maintenance != "")
	var owner *string
	if f.Maintenance != "" {
		m := f.Maintenance
		owner = &m
	}
	runs := make([]HookRun, len(sync))
	cmds := make([]Command, len(sync))
	sequential := false
	f.vars = e.commandVars(f.Stdin)
	for i, h := range sync {
		sequential = sequential || h.Sequential
		runs[i] = HookRun{Handler: h, ID: NewHandlerID(e.Table.Dialect, f.Event)}
		cmds[i] = e.command(h, f)
		if record {
			inv := dsh.HookInvoked{
				Turn: f.Turn, Point: f.Event, Dialect: dsh.HookDialect(e.Table.Dialect),
				HandlerID: runs[i].ID, Command: h.Command, Maintenance: owner,
			}
			if m := h.Matcher.String(); m != "" {
				inv.Matcher = &m
			}
			if err := e.Recorder.Record(ctx, inv); err != nil {
				log.WarnContext(ctx, "hook/invoked not recorded", "handler", runs[i].ID, "error", err)
			}
		}
	}
	for _, h := range async {
		e.startAsync(ctx, &ev, h, f)
		rep.Async++
	}
	// A hook that cannot run safely, or whose matcher could not decide, runs no process
	// and fails closed.
	refused := make([]error, len(sync))
	var runIdx []int
	var runHs []Handler
	var runCmds []Command
	for i, h := range sync {
		if refused[i] = e.refusal(h, f); refused[i] == nil {
			runIdx, runHs, runCmds = append(runIdx, i), append(runHs, h), append(runCmds, cmds[i])
		}
	}
	var ran []Result
	if sequential {
		ran = e.runSequential(ctx, &ev, runHs, runCmds, f)
	} else {
		ran = RunAll(ctx, runCmds)
	}
	results := make([]Result, len(sync))
	for j, i := range runIdx {
		results[i] = ran[j]
	}
	verdicts := make([]Verdict, len(runs))
	for i := range runs {
		runs[i].Result = results[i]
		if refused[i] != nil {
			runs[i].Verdict = FailClosed(&ev, refused[i])
		} else {
			runs[i].Verdict = e.afterRun(&ev, runs[i].Handler, results[i], Decode(e.Table, &ev, results[i]))
			e.limitContexts(&f, runs[i].Handler, &runs[i].Verdict)
		}
		if f.IgnoreRewrite != "" && len(runs[i].Verdict.Rewrite) > 0 {
			runs[i].Verdict.Rewrite, runs[i].Verdict.RewriteMerge = nil, false
			runs[i].Verdict.Diagnostics = append(runs[i].Verdict.Diagnostics, f.IgnoreRewrite)
		}
		runs[i].StderrSummary = StderrSummary(results[i].Stderr, e.StderrSummaryMax)
		verdicts[i] = runs[i].Verdict
		e.logRun(ctx, runs[i])
	}
	markRewrites(runs)
	if record {
		for _, r := range runs {
			res := r.Record(f.Turn)
			res.Maintenance = owner
			if err := e.Recorder.Record(ctx, res); err != nil {
				log.WarnContext(ctx, "hook/result not recorded", "handler", r.ID, "error", err)
			}
		}
	}
	rep.Hooks = runs
	rep.Merged = MergeVerdicts(&ev, verdicts)
	return rep
}

// refusal says why h must not run at f, or nil: its matcher could not decide
// (Handler.MatchErr), or a variable substituted into its shell-form command text is not a
// plain value (Handler.SubstErr at load, the table's command variables here).
func (e *Engine) refusal(h Handler, f Fire) error {
	switch {
	case h.MatchErr != nil:
		return h.MatchErr
	case h.SubstErr != nil:
		return h.SubstErr
	case h.HTTP != nil, h.MCP != nil, h.Prompt != nil, h.Agent != nil:
		return nil // no command text: nothing is substituted into it
	case h.Args == nil:
		return unsafeSubstitution(h.Command, f.vars.vars)
	}
	return nil
}

func (e *Engine) command(h Handler, f Fire) Command {
	dir := f.Dir
	if dir == "" {
		dir = e.Dir
	}
	env := make([]string, 0, len(e.Env)+len(f.Env)+len(h.Env))
	env = append(append(append(append(env, e.Env...), f.Env...), f.vars.env...), h.Env...)
	command := h.Command
	if f.vars.subst != nil {
		command = f.vars.subst.Replace(command)
	}
	c := Command{
		Shell: e.Shell, Command: command, Args: h.Args, Stdin: f.Stdin, Dir: dir, BaseEnv: e.BaseEnv, Env: env, Sandbox: e.Sandbox,
		Timeout: h.Timeout, KillGrace: e.KillGrace, PipeGrace: e.PipeGrace,
	}
	switch {
	case h.HTTP != nil:
		c.HTTP = e.httpRequest(h)
	case h.MCP != nil:
		c.Invoke = e.mcpCall(h.MCP, f.Stdin)
	case h.Prompt != nil:
		c.Invoke = e.promptCall(h.Prompt, f.Stdin)
	case h.Agent != nil:
		c.Invoke = e.agentCall(h.Agent, f.Stdin)
	}
	return c
}

// mcpCall is an mcp_tool hook's call: its input interpolated from the hook's input, the
// tool called through Engine.MCP, its text the answer; isError and failures are errors.
func (e *Engine) mcpCall(m *MCPToolHandler, stdin []byte) func(context.Context) ([]byte, error) {
	return func(ctx context.Context) ([]byte, error) {
		args, err := m.Interpolate(stdin)
		if err != nil {
			return nil, err
		}
		if e.MCP == nil {
			return nil, fmt.Errorf("%w: MCP server '%s' not connected", ErrMCPUnavailable, m.Server)
		}
		text, isErr, err := e.MCP.CallHookTool(ctx, m.Server, m.Tool, args)
		switch {
		case err != nil:
			return nil, err
		case isErr && text == "":
			return nil, ErrMCPTool
		case isErr:
			return nil, fmt.Errorf("%w: %s", ErrMCPTool, text)
		}
		return []byte(text), nil
	}
}

// promptCall is a prompt hook's model request through Engine.Model; the answer becomes
// the hook's output (PromptHandler.PromptOutput).
func (e *Engine) promptCall(p *PromptHandler, stdin []byte) func(context.Context) ([]byte, error) {
	return func(ctx context.Context) ([]byte, error) {
		if e.Model == nil {
			return nil, fmt.Errorf("%w: no model to evaluate prompt hooks", ErrPromptModel)
		}
		answer, err := e.Model.EvaluateHook(ctx, p.Eval(stdin))
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("%w: %w", ErrPromptModel, err)
		}
		return p.PromptOutput(answer)
	}
}

// httpRequest is h's request: its headers with the variables they may read from the
// engine's base environment (allowedEnvVars, narrowed by the settings'
// httpHookAllowedEnvVars), the settings' URL patterns, the engine's client.
func (e *Engine) httpRequest(h Handler) *HTTPRequest {
	allowed := h.HTTP.AllowedEnvVars
	if narrow := e.Config.httpEnvVars(); narrow != nil {
		allowed = slices.DeleteFunc(slices.Clone(allowed), func(n string) bool { return !slices.Contains(narrow, n) })
	}
	base := e.BaseEnv
	if base == nil {
		base = os.Environ()
	}
	header := make(http.Header, len(h.HTTP.Headers))
	for name, value := range h.HTTP.Headers {
		v, refused := InterpolateHeader(value, allowed, base)
		if len(refused) > 0 {
			e.logger().Warn("http hook header reads variables its allowedEnvVars does not list: sent empty, as the engine does",
				"url", h.HTTP.URL, "header", name, "variables", strings.Join(refused, ","), "source", h.Source)
		}
		header.Set(strings.TrimSpace(name), v)
	}
	return &HTTPRequest{URL: h.HTTP.URL, Header: header, Client: e.httpClient(), AllowedURLs: e.Config.httpURLs()}
}

// httpClient is HTTPClient, else the engine's own.
func (e *Engine) httpClient() *http.Client {
	if e.HTTPClient != nil {
		return e.HTTPClient
	}
	if c := e.http.Load(); c != nil {
		return c
	}
	e.http.CompareAndSwap(nil, NewHTTPClient())
	return e.http.Load()
}

func (e *Engine) startAsync(ctx context.Context, ev *hookmap.Event, h Handler, f Fire) {
	id := NewHandlerID(e.Table.Dialect, f.Event)
	if err := e.refusal(h, f); err != nil {
		// An async hook decides nothing: not running it is recorded, no more.
		run := HookRun{Handler: h, ID: id, Verdict: FailClosed(ev, err)}
		run.Verdict.Outcome, run.Verdict.Reason = dsh.HookOutcomeError, ""
		e.logRun(ctx, run)
		if f.OnAsync != nil {
			f.OnAsync(run)
		}
		return
	}
	cmd := e.command(h, f)
	// Never awaited: the run outlives the event (not its tracker).
	e.detached().Go(context.WithoutCancel(ctx), cmd, func(res Result) {
		// f carries the event's command variables (set by Fire before it starts any run).
		run := HookRun{Handler: h, ID: id, Result: res, Verdict: Decode(e.Table, ev, res),
			StderrSummary: StderrSummary(res.Stderr, e.StderrSummaryMax)}
		e.limitContexts(&f, h, &run.Verdict)
		e.logRun(ctx, run)
		if f.OnAsync != nil {
			f.OnAsync(run)
		}
	})
}

func (e *Engine) logRun(ctx context.Context, r HookRun) {
	v := r.Verdict
	if len(v.Diagnostics) == 0 && len(v.Notices) == 0 {
		return
	}
	level := slog.LevelInfo
	switch v.Outcome {
	case dsh.HookOutcomeError, dsh.HookOutcomeTimeout, dsh.HookOutcomeFailed:
		level = slog.LevelWarn
	}
	attrs := []any{"handler", r.ID, "event", r.Handler.Event, "command", r.Handler.Command,
		"source", r.Handler.Source, "outcome", string(v.Outcome)}
	if len(v.Diagnostics) > 0 {
		attrs = append(attrs, "diagnostics", strings.Join(v.Diagnostics, "; "))
	}
	if len(v.Notices) > 0 {
		attrs = append(attrs, "notices", strings.Join(v.Notices, "; "))
	}
	e.logger().Log(ctx, level, "hook run", attrs...)
}
