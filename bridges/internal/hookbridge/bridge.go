// Package hookbridge is the dialect-neutral half of the Claude Code and Codex bridges: it
// loads a dialect's hook files, registers one listener per mapped event on a
// dsh.Registrar, builds each event's input through the dialect's encoder, fires the
// matched hooks through hookproto, and maps the merged verdict onto the extension
// point's decision (docs/design/HOOK-PROTOCOLS.md#31-extension-points-and-decision-variants and the dsh bridge decisions). The dialect
// packages (bridges/claudecode, bridges/codex) supply the table and the wire encoding.
package hookbridge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/dshkit/dsh/bridges/dialect"
	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
	"github.com/dshkit/dsh/runtime/permrule"
)

// ErrNotFired, returned by a Behavior's Encode, says the dialect's engine does not fire
// the event in this case (Gemini CLI has no SessionStart after a compaction): no hook
// runs and the report is empty.
var ErrNotFired = errors.New("the dialect does not fire this event here")

// Behavior is how a dialect's bridge behaves, beyond the dialect-neutral path of this
// package: what a dialect package (bridges/claudecode, bridges/codex, bridges/gemini)
// supplies to New. It is not the dialect's name (hookproto.Dialect) nor its description
// to the commands (dialect.Descriptor).
type Behavior struct {
	// Name is the dialect's name.
	Name hookproto.Dialect
	// Table is the generated mapping table.
	Table *hookmap.Bridge
	// Encode builds the stdin bytes of an event from in; the bridge adds the trailing
	// newline when the table's StdinNewline asks for one.
	Encode func(in Input) ([]byte, error)
	// Rules are how the dialect's hook files load and run (shell, de-duplication,
	// matchers, plugin variables); nil means its table's alone (hookproto.TableRules).
	Rules *hookproto.Rules
	// ProjectFiles are the project-level hook files, relative to the project directory,
	// loaded when discovery is on (and the project is trusted).
	ProjectFiles []string
	// ProjectEnv, if set, returns the variables exported to every hook for a project
	// directory (Claude Code: CLAUDE_PROJECT_DIR).
	ProjectEnv func(projectDir string) []string
	// SessionEnv, if set, returns the variables exported to the hooks of one event of a
	// session (Claude Code: CLAUDECODE, CLAUDE_CODE_SESSION_ID).
	SessionEnv func(event string, s hookproto.Session) []string
	// Durations times each call's execution (a tools/execute wrapper) for the
	// PostToolUse input's DurationMS (Claude Code duration_ms).
	Durations bool
	// SubstituteProjectDir substitutes ${CLAUDE_PROJECT_DIR} in commands.
	SubstituteProjectDir bool
	// TrustHint says how to trust a project, for diagnostics.
	TrustHint string
	// Render is how the dialect writes its hooks' words for the model.
	Render Render
	// Revalidate says the dialect can run a call's PreToolUse hooks again on a rewritten
	// input: only then does Config.RevalidateAfterRewrite count.
	Revalidate bool
	// EndReason, if set, maps a canonical session-end reason to the dialect's (what its
	// SessionEnd matchers test and its input carries).
	EndReason func(reason string) string
	// NotificationText returns the message of a Notification whose subject (the table's
	// subject column at the point it fires at) is kind, about tool ("" outside a call).
	NotificationText func(kind, tool string) string
	// MapRewrite, if set, maps a hook's updatedInput, given in the dialect's tool_input
	// shape, back onto the tool's arguments (Codex: {command} for the shell tools).
	MapRewrite func(tool string, args, updated json.RawMessage) json.RawMessage
	// ToolName, if set, is the name a tool goes by for the hooks: what their matchers and
	// `if` conditions test (Codex reports its exec_command as "Bash"); the Encode writes
	// the tool_name itself from the tool's own name. Nil keeps the tool's own name.
	ToolName func(tool string) string
	// MatcherAliases, if set, are further names a tool's matchers may match it by (Codex:
	// Edit and Write for apply_patch); the hooks' tool_name stays ToolName's.
	MatcherAliases func(tool string) []string
	// UpdatedOutput, if set, reads the hooks' replacement of a successful result's output
	// from a report of the event at tools/post-execute (Claude Code's updatedToolOutput):
	// the content the model then reads, and whether there is one the tool's output shape
	// fits; the result's value and meta are kept.
	UpdatedOutput func(tool string, rep *hookproto.Report) ([]dsh.ContentBlock, bool)
	// OriginalInput says whether the PostToolUse input carries dsh_original_tool_input
	// after a rewrite (Claude Code; Codex's published input schema is closed).
	OriginalInput bool
	// Register, if set, registers the dialect's listeners at the points the bridge has no
	// listener for (the model call: agent/request, agent/response) and returns their
	// unregister funcs.
	Register func(b *Bridge, r *dsh.Registrar) []func()
}

// rules are the dialect's Rules, else its table's.
func (d Behavior) rules() hookproto.Rules {
	if d.Rules != nil {
		return *d.Rules
	}
	return hookproto.TableRules(d.Table)
}

// SessionEndReason is the dialect's session-end reason for a canonical one.
func (d Behavior) SessionEndReason(reason string) string {
	if d.EndReason != nil {
		return d.EndReason(reason)
	}
	return reason
}

// Options configure a bridge: the dialect-neutral [dialect.Config] every dialect
// package takes, passed through as given (see its fields; a dialect ignores what its
// Behavior does not use), and what only an Option sets.
type Options struct {
	dialect.Config
	// KillGrace and PipeGrace are the runner's delays (WithKillGrace; 0: the defaults).
	KillGrace, PipeGrace time.Duration
}

// Option adjusts a bridge.
type Option func(*Options)

// WithMessageIDs sets the generator of the ids of the messages the bridge adds (default:
// "<plugin>-<random hex>").
func WithMessageIDs(fn func() string) Option { return func(o *Options) { o.NewID = fn } }

// WithObserver registers fn to receive the report of every event that ran hooks, after
// the hooks finished and before the listener returns.
func WithObserver(fn func(*hookproto.Report)) Option { return func(o *Options) { o.Observe = fn } }

// WithAsyncObserver registers fn to receive every async hook run when it finishes, on
// the run's goroutine.
func WithAsyncObserver(fn func(hookproto.HookRun)) Option {
	return func(o *Options) { o.ObserveAsync = fn }
}

// WithKillGrace sets the delays of the runner: TERM to KILL on timeout, and how long to
// wait for output after a hook exits (0 keeps the defaults).
func WithKillGrace(kill, pipe time.Duration) Option {
	return func(o *Options) { o.KillGrace, o.PipeGrace = kill, pipe }
}

// Bridge is one loaded dialect bridge.
type Bridge struct {
	d      Behavior
	o      Options
	engine *hookproto.Engine
	diags  []hookproto.Diagnostic
	log    *slog.Logger

	calls *calls // the state of the tool calls in flight

	mu    sync.Mutex
	early map[string]bool // compactions whose session start ran at compaction/post-compact (the also column)

	// at lists, per extension point, the events with hooks the table maps there (its point
	// column), in table order; points lists those points in the order first seen.
	at     map[string][]string
	points []string
	// compact are the events with hooks whose also column moves the session start of a
	// committed compaction to compaction/post-compact, in table order.
	compact []also
}

// also is an also entry of the table and the event whose row holds it.
type also struct {
	event string
	hookmap.Also
}

// New loads the dialect's hook files per cfg (decisions 5, 9 and 10) and returns the
// bridge. Loading problems are diagnostics (Diagnostics), never an error; the error is
// for an unusable configuration.
func New(d Behavior, cfg dialect.Config, opts ...Option) (*Bridge, error) {
	o := Options{Config: cfg}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if d.Table == nil || d.Encode == nil {
		return nil, errors.New("hookbridge: dialect without table or encoder")
	}
	if o.Workspace == "" {
		return nil, fmt.Errorf("%s bridge: Workspace is required", d.Name)
	}
	ws, err := filepath.Abs(o.Workspace)
	if err != nil {
		return nil, fmt.Errorf("%s bridge: workspace: %w", d.Name, err)
	}
	o.Workspace = ws
	if o.ProjectDir == "" {
		o.ProjectDir = ws
	} else if o.ProjectDir, err = filepath.Abs(o.ProjectDir); err != nil {
		return nil, fmt.Errorf("%s bridge: project dir: %w", d.Name, err)
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	b := &Bridge{d: d, o: o, log: log, calls: newCalls()}
	if b.o.NewID == nil {
		b.o.NewID = func() string {
			var buf [12]byte
			_, _ = rand.Read(buf[:])
			return d.Table.Plugin + "-" + hex.EncodeToString(buf[:])
		}
	}

	var events, noMatcher []string
	for _, e := range d.Table.Events {
		events = append(events, e.Name)
		if e.Matcher == "" {
			noMatcher = append(noMatcher, e.Name)
		}
	}
	var srcs []hookproto.Source
	for _, f := range o.Files {
		srcs = append(srcs, hookproto.Source{Path: f})
	}
	if o.DiscoverProject {
		for _, rel := range d.ProjectFiles {
			if p := filepath.Join(o.ProjectDir, rel); hookproto.FileExists(p) {
				srcs = append(srcs, hookproto.Source{Path: p, Project: true})
			}
		}
	}
	for _, p := range o.Plugins {
		if p.Path == "" {
			p.Path = filepath.Join(p.PluginRoot, "hooks", "hooks.json")
		}
		srcs = append(srcs, p)
	}
	srcs = append(srcs, o.Sources...)
	hooks, diags := hookproto.LoadSources(srcs, hookproto.SourcesOptions{
		Dialect: d.Name, Events: events, NoMatcherEvents: noMatcher,
		ProjectDir: o.ProjectDir, Trusted: o.TrustProject,
		SubstituteProjectDir: d.SubstituteProjectDir, TrustHint: d.TrustHint,
		DefaultTimeout: time.Duration(d.Table.DefaultTimeoutSec) * time.Second, Rules: d.Rules, Table: d.Table,
	})
	b.diags = diags
	unfired := map[string]bool{} // an event that never fires is listed once, whatever names it
	for _, dg := range diags {
		if errors.Is(dg, hookproto.ErrUnfiredEvent) {
			if unfired[dg.Event] {
				continue
			}
			unfired[dg.Event] = true
		}
		log.Warn("hook configuration", "dialect", string(d.Name), "diagnostic", dg.Error())
	}
	var env []string
	if d.ProjectEnv != nil {
		env = d.ProjectEnv(o.ProjectDir)
	}
	b.engine = &hookproto.Engine{
		Table: d.Table, Config: hooks, Shell: d.rules().ShellArgv(o.Getenv), BaseEnv: o.BaseEnv, Sandbox: o.Sandbox, Env: env, Dir: o.Workspace,
		Recorder: o.Recorder, Logger: log, StderrSummaryMax: o.StderrSummaryMax,
		KillGrace: o.KillGrace, PipeGrace: o.PipeGrace, MCP: o.MCP, Model: o.HookModel, Agents: o.HookAgents,
	}
	b.at = map[string][]string{}
	for _, e := range d.Table.Events {
		if !b.has(e.Name) {
			continue
		}
		if len(b.at[e.Point]) == 0 {
			b.points = append(b.points, e.Point)
		}
		b.at[e.Point] = append(b.at[e.Point], e.Name)
		for _, a := range e.Also {
			if l, ok := alsoListenerOf(e.Point, a); ok && l.load != nil && b.applies(a) {
				l.load(b, e.Name, a)
			}
		}
	}
	return b, nil
}

// applies reports whether the table's also entry a holds for this bridge: an interactive
// one only on an interactive host, an engine one only when the bridge follows the engine.
func (b *Bridge) applies(a hookmap.Also) bool {
	return (!a.Interactive || b.o.Interactive) && (!a.Engine || !b.o.Canonical)
}

// Diagnostics returns what loading reported, in order.
func (b *Bridge) Diagnostics() []hookproto.Diagnostic { return slices.Clone(b.diags) }

// Config returns the loaded configuration.
func (b *Bridge) Config() *hookproto.Config { return b.engine.Config }

// Table returns the dialect's table.
func (b *Bridge) Table() *hookmap.Bridge { return b.d.Table }

// Close kills the async hooks still running and waits for them.
func (b *Bridge) Close(ctx context.Context) error { return b.engine.Close(ctx) }

// Wait waits for the async hooks still running to finish, without killing them.
func (b *Bridge) Wait(ctx context.Context) error { return b.engine.Wait(ctx) }

func (b *Bridge) has(event string) bool {
	if b.o.Events != nil && !slices.Contains(b.o.Events, event) {
		return false
	}
	return len(b.engine.Config.Groups(event)) > 0
}

// Has reports whether the dialect's event has hooks that run (Options.Events).
func (b *Bridge) Has(event string) bool { return b.has(event) }

// event is the event with hooks that the table maps to point (the first, in table order),
// or "".
func (b *Bridge) event(point string) string {
	if evs := b.at[point]; len(evs) > 0 {
		return evs[0]
	}
	return ""
}

// failureEvent is the tools/post-execute event with hooks that fires only for calls that
// ran and failed (the table's results column: "failure"), or "".
func (b *Bridge) failureEvent() string {
	for _, ev := range b.at[dsh.PostToolEventName] {
		if e, _ := b.d.Table.Lookup(ev); e.Results == "failure" {
			return ev
		}
	}
	return ""
}

// resultEvent is the tools/post-execute event with hooks that fires for a successful
// result (success) or for any failed one (results "success", or none), or "".
func (b *Bridge) resultEvent(success bool) string {
	ev, _ := b.resultEventRan(success, true)
	return ev
}

// resultEventRan is resultEvent for a call that ran or not (denied before it ran), and
// whether the event needs to know (results "ran": only the calls that ran).
func (b *Bridge) resultEventRan(success, ran bool) (string, bool) {
	for _, ev := range b.at[dsh.PostToolEventName] {
		e, _ := b.d.Table.Lookup(ev)
		switch {
		case e.Results == "" || (e.Results == "success" && success):
			return ev, false
		case e.Results == "ran":
			if ran {
				return ev, true
			}
			return "", true
		}
	}
	return "", false
}

func (b *Bridge) session(ctx context.Context, agentID string) hookproto.Session {
	var s hookproto.Session
	if b.o.Session != nil {
		s = b.o.Session(ctx, agentID)
	}
	if s.CWD == "" {
		s.CWD = b.o.Workspace
	}
	return s
}

// Fire encodes in and fires its event: the hook of a dialect's own listeners
// (Behavior.Register).
func (b *Bridge) Fire(ctx context.Context, in Input, subject string, inTurn bool, agent dsh.Agent) (*hookproto.Report, error) {
	return b.fire(ctx, in, subject, inTurn, agent)
}

// Session describes the session of the agent with the given id to the hooks.
func (b *Bridge) Session(ctx context.Context, agentID string) hookproto.Session {
	return b.session(ctx, agentID)
}

// Log is the bridge's logger.
func (b *Bridge) Log() *slog.Logger { return b.log }

// fire encodes in and fires the event.
func (b *Bridge) fire(ctx context.Context, in Input, subject string, inTurn bool, agent dsh.Agent) (*hookproto.Report, error) {
	return b.fireIgnoring(ctx, in, subject, inTurn, agent, "")
}

// fireIgnoring is fire, dropping the hooks' rewrites with the diagnostic ignore when it
// is set (see hookproto.Fire.IgnoreRewrite).
func (b *Bridge) fireIgnoring(ctx context.Context, in Input, subject string, inTurn bool, agent dsh.Agent, ignore string) (*hookproto.Report, error) {
	if m, ok := b.o.MCP.(hookproto.MCPTools); ok && in.ToolName != "" && in.MCP == nil {
		if t, ok := m.MCPTool(in.ToolName); ok {
			in.MCP = &t
		}
	}
	stdin, err := b.d.Encode(in)
	if errors.Is(err, ErrNotFired) {
		return &hookproto.Report{Merged: hookproto.Merged{Outcome: dsh.HookOutcomePass}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s input: %w", b.d.Name, in.Event, err)
	}
	// Every engine writes its strings unescaped but for JSON's own escapes (a hook that
	// greps its stdin for "&&" finds it).
	stdin = PlainStrings(stdin)
	if b.d.Table.StdinNewline {
		stdin = append(stdin, '\n')
	}
	var env []string
	if b.d.SessionEnv != nil {
		env = b.d.SessionEnv(in.Event, in.Session)
	}
	var call *permrule.Call
	if in.ToolName != "" {
		name := in.ToolName
		if b.d.ToolName != nil {
			name = b.d.ToolName(name)
			if subject == in.ToolName {
				subject = name
			}
		}
		call = &permrule.Call{Tool: name, Input: in.ToolInput}
	}
	var aliases []string
	if in.ToolName != "" && subject == call.Tool && b.d.MatcherAliases != nil {
		aliases = b.d.MatcherAliases(in.ToolName)
	}
	rep := b.engine.Fire(ctx, hookproto.Fire{
		Event: in.Event, Subject: subject, Aliases: aliases, Stdin: stdin, Dir: in.Session.CWD,
		Turn: in.Turn, InTurn: inTurn, Maintenance: in.Maintenance, OnAsync: b.asyncInjector(in.Event, agent), Env: env,
		IgnoreRewrite: ignore, Call: call, Verifier: in.Session.Verifier,
	})
	if b.o.Observe != nil && rep.Matched() {
		b.o.Observe(rep)
	}
	return rep, nil
}

// asyncInjector injects an async hook's contexts for the agent's next step (decision 7).
func (b *Bridge) asyncInjector(event string, agent dsh.Agent) func(hookproto.HookRun) {
	return func(run hookproto.HookRun) {
		if b.o.ObserveAsync != nil {
			b.o.ObserveAsync(run)
		}
		var texts []string
		for _, c := range run.Verdict.Contexts {
			if c != "" {
				texts = append(texts, hookproto.CapContext(c, hookproto.DefaultContextMax))
			}
		}
		if len(texts) == 0 {
			return
		}
		if agent == nil {
			b.log.Warn("async hook context dropped: no agent handle", "event", event, "handler", run.ID)
			return
		}
		if err := agent.Inject(context.Background(), b.message(texts)); err != nil {
			b.log.Warn("async hook context not injected", "event", event, "handler", run.ID, "error", err)
		}
	}
}

// message is one plugin-sourced user message with one text block per text.
func (b *Bridge) message(texts []string) dsh.UserMessage {
	blocks := make([]dsh.ContentBlock, len(texts))
	for i, t := range texts {
		blocks[i] = dsh.TextBlock{Text: t}
	}
	return dsh.UserMessage{
		ID: b.o.NewID(), Role: dsh.UserMessageRoleUser, Content: blocks,
		Source: dsh.SourcePlugin{Plugin: b.d.Table.Plugin},
	}
}
