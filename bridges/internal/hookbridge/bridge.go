// Package hookbridge is the dialect-neutral half of the Claude Code and Codex bridges: it
// loads a dialect's hook files, registers one listener per mapped event on a
// dsh.Registrar, builds each event's input through the dialect's encoder, fires the
// matched hooks through hookproto, and maps the merged verdict onto the extension
// point's decision (docs/design/HOOK-PROTOCOLS.md#31-extension-points-and-decision-variants and the dsh bridge decisions). The dialect
// packages (bridges/claudecode, bridges/codex) supply the table and the wire encoding.
package hookbridge

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
	"github.com/dshkit/dsh/internal/jsonmerge"
)

// ErrNotFired, returned by a Dialect's Encode, says the dialect's engine does not fire
// the event in this case (Gemini CLI has no SessionStart after a compaction): no hook
// runs and the report is empty.
var ErrNotFired = errors.New("the dialect does not fire this event here")

// Input is the dialect-neutral content of one event's stdin; the dialect encodes it as
// its wire input type.
type Input struct {
	// Event is the external event name.
	Event string
	// Session describes the session and turn.
	Session hookproto.Session
	// Turn is the 1-based turn number (0 outside a turn).
	Turn int
	// Source is the SessionStart source.
	Source string
	// Reason is the canonical SessionEnd reason (the dialect maps it to its own).
	Reason string
	// Trigger is the compaction's origin, "manual" or "auto" (PreCompact, PostCompact).
	Trigger string
	// CustomInstructions are the /compact instructions (PreCompact; nil for none).
	CustomInstructions *string
	// CompactSummary is the checkpoint text (PostCompact).
	CompactSummary string
	// Maintenance is the compaction attempt the event fires for (PreCompact,
	// PostCompact, SessionStart[compact]): the owner of its hook records.
	Maintenance string
	// Prompt is the UserPromptSubmit prompt text.
	Prompt string
	// ToolName, ToolInput and ToolUseID describe the call (tool events).
	ToolName  string
	ToolInput json.RawMessage
	ToolUseID string
	// ToolResponse is the tool's result (PostToolUse).
	ToolResponse json.RawMessage
	// OriginalInput is the model's own arguments when a rewrite changed them (PostToolUse
	// dsh_original_tool_input); nil otherwise.
	OriginalInput json.RawMessage
	// StopHookActive is the Stop flag.
	StopHookActive bool
	// DurationMS is how long the call executed, in milliseconds (PostToolUse and
	// PostToolUseFailure; -1 when unknown).
	DurationMS int
	// Error is the failure's message (PostToolUseFailure).
	Error string
	// ErrorCode is the failure's machine-readable code, when it has one.
	ErrorCode string
	// IsInterrupt says the failed call was cancelled while it ran (PostToolUseFailure).
	IsInterrupt bool
	// NotificationType and Message describe a Notification.
	NotificationType, Message string
	// Resumed describes the context a resumed session starts from (SessionStart with
	// source resume; nil when the agent cannot say or the log held no model response).
	Resumed *Resumed
	// Request is the model request (a dialect's model-call events).
	Request *dsh.ModelRequest
	// Response is the model response (a dialect's model-call events).
	Response *dsh.ModelResponse
	// PromptResponse is the model's text of the turn (Gemini AfterAgent).
	PromptResponse string
	// ToolText is the text of the tool's result as the model reads it (PostToolUse).
	ToolText string
}

// Resumed is the context a resumed session starts from.
type Resumed struct {
	// SecondsSinceLastResponse is how long ago the last model response was logged,
	// rounded to the second.
	SecondsSinceLastResponse int
	// ContextTokens is the context's size (the last response's usage since the last
	// compaction, else the checkpoint's projected size, else an estimate).
	ContextTokens int
	// Measured is false right after a compaction: no response has cached the compacted
	// context yet.
	Measured bool
}

// resumeStater is what a resumed agent tells about its context (loop.Agent).
type resumeStater interface {
	ResumeStats() (lastResponse time.Time, tokens int, measured, ok bool)
}

// resumed returns what agent tells about the context it resumed from, at now; nil when
// it cannot say.
func resumed(agent dsh.Agent, now time.Time) *Resumed {
	rs, ok := agent.(resumeStater)
	if !ok {
		return nil
	}
	at, tokens, measured, ok := rs.ResumeStats()
	if !ok {
		return nil
	}
	secs := int(max(0, now.Sub(at).Round(time.Second)/time.Second))
	return &Resumed{SecondsSinceLastResponse: secs, ContextTokens: tokens, Measured: measured}
}

// Dialect is what a dialect package supplies.
type Dialect struct {
	// Name is the hookproto dialect.
	Name hookproto.Dialect
	// Table is the generated mapping table.
	Table *hookmap.Bridge
	// Encode builds the stdin bytes of an event from in; the bridge adds the trailing
	// newline when the table's StdinNewline asks for one.
	Encode func(in Input) ([]byte, error)
	// Rules are how the dialect's hook files load and run (shell, de-duplication,
	// matchers, plugin variables); nil means the rules hookproto has for Name
	// (hookproto.Dialect.Rules).
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
	// Canonical says the bridge follows dsh's canonical mapping where the real engine
	// departs from it: the table's also entries marked engine are left out (Claude Code's
	// SessionStart[compact] at compaction/post-compact, before PostCompact).
	Canonical bool
	// EndReason, if set, maps a canonical session-end reason to the dialect's (what its
	// SessionEnd matchers test and its input carries).
	EndReason func(reason string) string
	// NotificationText returns the message of a Notification whose subject (the table's
	// subject column at the point it fires at) is kind, about tool ("" outside a call).
	NotificationText func(kind, tool string) string
	// MapRewrite, if set, maps a hook's updatedInput, given in the dialect's tool_input
	// shape, back onto the tool's arguments (Codex: {command} for the shell tools).
	MapRewrite func(tool string, args, updated json.RawMessage) json.RawMessage
	// OriginalInput says whether the PostToolUse input carries dsh_original_tool_input
	// after a rewrite (Claude Code; Codex's published input schema is closed).
	OriginalInput bool
	// Register, if set, registers the dialect's listeners at the points the bridge has no
	// listener for (the model call: agent/request, agent/response) and returns their
	// unregister funcs.
	Register func(b *Bridge, r *dsh.Registrar) []func()
}

// rules are the dialect's Rules, else hookproto's for its name.
func (d Dialect) rules() hookproto.Rules {
	if d.Rules != nil {
		return *d.Rules
	}
	r, _ := d.Name.Rules()
	return r
}

// SessionEndReason is the dialect's session-end reason for a canonical one.
func (d Dialect) SessionEndReason(reason string) string {
	if d.EndReason != nil {
		return d.EndReason(reason)
	}
	return reason
}

// Options is the dialect-neutral configuration of a bridge; the dialect packages fill
// it from their Config (see claudecode.Config for the meaning of each field).
type Options struct {
	Files           []string              // explicitly named hook files, loaded as given
	Plugins         []hookproto.Source    // plugin hook files (PluginRoot set)
	Workspace       string                // default hook cwd and project directory
	ProjectDir      string                // project root (CLAUDE_PROJECT_DIR); default Workspace
	DiscoverProject bool                  // load Dialect.ProjectFiles under ProjectDir
	TrustProject    bool                  // let discovered project files load
	Session         hookproto.SessionFunc // session and turn of an event
	Recorder        hookproto.Recorder    // hook/invoked and hook/result sink
	Logger          *slog.Logger          // diagnostics
	StderrSummary   int                   // stderr summary cap (0: default)
	Getenv          func(string) string   // harness environment for $SHELL (nil: os.Getenv)
	BaseEnv         []string              // the environment hooks start from (nil: os.Environ())
	Interactive     bool                  // the host waits for input between turns (the table's also.interactive points)
	// RevalidateAfterRewrite runs a call's PreToolUse hooks a second time, at
	// pre-execute, on the effective input when the rewrite phase changed it.
	RevalidateAfterRewrite bool
	// Events, if set, are the only events whose hooks run; the others' load (and their
	// problems are diagnostics) but register nothing.
	Events []string

	// Set through Option.
	NewID        func() string
	Observe      func(*hookproto.Report)
	ObserveAsync func(hookproto.HookRun)
	KillGrace    time.Duration
	PipeGrace    time.Duration
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
	d      Dialect
	o      Options
	engine *hookproto.Engine
	diags  []hookproto.Diagnostic
	log    *slog.Logger

	mu     sync.Mutex
	stash  map[dsh.Token][]string      // PreToolUse contexts waiting for the tool result
	denied map[dsh.Token]string        // rendered result texts of calls PreToolUse denied (Render.Deny)
	asked  map[dsh.Token][2]string     // asked calls: the ask reason and its rendering (Render.AskDenied)
	took   map[dsh.Token]time.Duration // execution times of dispatched calls
	halts  map[dsh.Token]string        // continue:false reasons of calls let run (Render.PreHaltRunsTool)
	// fired holds the PreToolUse report of a call whose hooks ran in the rewrite phase,
	// until its pre-execute listener replays it (each hook runs once per call).
	fired map[callKey]*hookproto.Report
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

// callKey identifies a call between the rewrite phase and pre-execute.
type callKey struct{ agent, call string }

// New loads the dialect's hook files per o (decisions 5, 9 and 10) and returns the
// bridge. Loading problems are diagnostics (Diagnostics), never an error; the error is
// for an unusable configuration.
func New(d Dialect, o Options, opts ...Option) (*Bridge, error) {
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
	b := &Bridge{d: d, o: o, log: log, stash: map[dsh.Token][]string{}, denied: map[dsh.Token]string{}, halts: map[dsh.Token]string{}, asked: map[dsh.Token][2]string{}, took: map[dsh.Token]time.Duration{},
		fired: map[callKey]*hookproto.Report{}}
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
	cfg, diags := hookproto.LoadSources(srcs, hookproto.SourcesOptions{
		Dialect: d.Name, Events: events, NoMatcherEvents: noMatcher,
		ProjectDir: o.ProjectDir, Trusted: o.TrustProject,
		SubstituteProjectDir: d.SubstituteProjectDir, TrustHint: d.TrustHint,
		DefaultTimeout: time.Duration(d.Table.DefaultTimeoutSec) * time.Second, Rules: d.Rules, Table: d.Table,
	})
	b.diags = diags
	for _, dg := range diags {
		log.Warn("hook configuration", "dialect", string(d.Name), "diagnostic", dg.Error())
	}
	var env []string
	if d.ProjectEnv != nil {
		env = d.ProjectEnv(o.ProjectDir)
	}
	b.engine = &hookproto.Engine{
		Table: d.Table, Config: cfg, Shell: d.rules().ShellArgv(o.Getenv), BaseEnv: o.BaseEnv, Env: env, Dir: o.Workspace,
		Recorder: o.Recorder, Logger: log, StderrSummaryMax: o.StderrSummary,
		KillGrace: o.KillGrace, PipeGrace: o.PipeGrace,
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
			if b.applies(a) && a.Point == dsh.PostCompactEventName && e.Point == dsh.SessionStartEventName {
				b.compact = append(b.compact, also{e.Name, a})
			}
		}
	}
	return b, nil
}

// applies reports whether the table's also entry a holds for this bridge: an interactive
// one only on an interactive host, an engine one only when the bridge follows the engine.
func (b *Bridge) applies(a hookmap.Also) bool {
	return (!a.Interactive || b.o.Interactive) && (!a.Engine || !b.d.Canonical)
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
	for _, ev := range b.at[dsh.PostToolEventName] {
		if e, _ := b.d.Table.Lookup(ev); e.Results == "" || (e.Results == "success" && success) {
			return ev
		}
	}
	return ""
}

// Register registers, for each mapped event that has hooks, the listener of the extension
// point its table row names (plus, when the tools/pre-execute event has hooks, the
// post-execute and result listeners that deliver and clean up its contexts) and of the
// points its also column adds, and returns a func that unregisters them all. One event
// runs per point, but at tools/post-execute (per the results column, one for failures
// only and one for the other results); a second one is logged and does not run.
func (b *Bridge) Register(r *dsh.Registrar) (unregister func()) {
	var unregs []func()
	add := func(u ...func()) { unregs = append(unregs, u...) }
	// Each event with hooks goes to the extension point its table row names (the point
	// column of spec/bridges); the listener there fires that event.
	for _, point := range b.points {
		if b.d.Register != nil && (point == dsh.RequestEventName || point == dsh.ResponseEventName) {
			continue // the dialect's own listeners, below, run every event of the model call
		}
		if evs := b.at[point]; len(evs) > 1 && point != dsh.PostToolEventName {
			b.log.Warn("hook events not run: another event of the table runs at their extension point",
				"dialect", string(b.d.Name), "point", point, "runs", evs[0], "not run", strings.Join(evs[1:], ", "))
		}
		switch point {
		case dsh.SessionStartEventName:
			add(r.OnSessionStart(b.sessionStart))
		case dsh.PreStepEventName:
			add(r.OnPreStep(b.preStep))
		case dsh.PreToolEventName:
			// The hooks run once, in the rewrite phase, where their rewrites count; the
			// pre-execute listener replays their decision.
			add(r.OnRewriteInput(b.rewriteInput), r.OnPreTool(b.preTool))
		case dsh.ApprovalAnswerEventName:
			add(r.OnApprovalAnswer(b.approvalAnswer))
		case dsh.ApprovalPromptEventName:
			add(r.OnApprovalPrompt(b.approvalPrompt))
		case dsh.PostToolEventName:
			// Below, with the listeners the other tool events need there.
		case dsh.TurnStoppingEventName:
			add(r.OnTurnStopping(b.turnStopping))
		case dsh.SessionEndEventName:
			add(r.OnSessionEnd(b.sessionEnd))
		case dsh.PreCompactEventName:
			add(r.OnPreCompact(b.preCompact))
		case dsh.PostCompactEventName:
			add(r.OnPostCompact(b.postCompact))
		default:
			b.log.Warn("hook events not run: the bridge has no listener at their extension point",
				"dialect", string(b.d.Name), "point", point, "events", strings.Join(b.at[point], ", "))
		}
	}
	// The table's further points (its also column).
	for _, e := range b.d.Table.Events {
		if !b.has(e.Name) {
			continue
		}
		for _, a := range e.Also {
			switch {
			case !b.applies(a):
			case a.Point == dsh.StatusEventName:
				add(r.OnStatus(b.status(e.Name, a)))
			case a.Point == dsh.PostCompactEventName && e.Point == dsh.SessionStartEventName:
				// postCompact fires it (b.compact), registered above when an event of the
				// table runs there too.
				if len(b.at[dsh.PostCompactEventName]) == 0 && e.Name == b.compact[0].event {
					add(r.OnPostCompact(b.postCompact))
				}
			default:
				b.log.Warn("hook event not run at a further point: the bridge has no listener there",
					"dialect", string(b.d.Name), "event", e.Name, "point", a.Point)
			}
		}
	}
	pre, answer := b.event(dsh.PreToolEventName) != "", b.event(dsh.ApprovalAnswerEventName) != ""
	success, failure := b.resultEvent(true) != "", b.failureEvent() != ""
	// The execute wrapper times the calls (the success event's duration) and tells a
	// failed call that ran (the failure event) from a denied one.
	if failure || (success && b.d.Durations) {
		add(r.WrapExecute(b.timeExecute))
	}
	// Post-execute delivers the pre-execute contexts and renderings too.
	if success || failure || pre || answer {
		add(r.OnPostTool(b.postTool))
	}
	if pre || answer || failure {
		add(r.OnToolResult(b.toolResult))
	}
	if b.d.Register != nil {
		add(b.d.Register(b, r)...)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			for _, u := range unregs {
				u()
			}
		})
	}
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
// (Dialect.Register).
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
	stdin, err := b.d.Encode(in)
	if errors.Is(err, ErrNotFired) {
		return &hookproto.Report{Merged: hookproto.Merged{Outcome: dsh.HookOutcomePass}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s input: %w", b.d.Name, in.Event, err)
	}
	if b.d.Table.StdinNewline {
		stdin = append(stdin, '\n')
	}
	var env []string
	if b.d.SessionEnv != nil {
		env = b.d.SessionEnv(in.Event, in.Session)
	}
	rep := b.engine.Fire(ctx, hookproto.Fire{
		Event: in.Event, Subject: subject, Stdin: stdin, Dir: in.Session.CWD,
		Turn: in.Turn, InTurn: inTurn, Maintenance: in.Maintenance, OnAsync: b.asyncInjector(in.Event, agent), Env: env,
		IgnoreRewrite: ignore,
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

// sessionStart: contexts become one injected message; SessionStart cannot block.
func (b *Bridge) sessionStart(ctx context.Context, p *dsh.SessionStartPayload) error {
	if p.CompactionID != nil {
		b.mu.Lock()
		done := b.early[*p.CompactionID]
		delete(b.early, *p.CompactionID)
		b.mu.Unlock()
		if done {
			return nil // ran at compaction/post-compact (the table's also column)
		}
		return b.sessionStartCompact(ctx, b.event(dsh.SessionStartEventName), string(dsh.SessionStartSourceCompact), p.AgentID, *p.CompactionID, p.Turn, p.Agent)
	}
	in := Input{Event: b.event(dsh.SessionStartEventName), Session: b.session(ctx, p.AgentID), Source: string(p.Source)}
	if p.Source == dsh.SessionStartSourceResume && p.Agent != nil {
		in.Resumed = resumed(p.Agent, time.Now())
	}
	return b.sessionStartFire(ctx, in, p.Turn, p.Agent)
}

// sessionStartCompact runs the session-start hooks (event) of a committed compaction,
// with the source source: the hooks are the attempt's, inside its turn if any.
func (b *Bridge) sessionStartCompact(ctx context.Context, event, source, agentID, compactionID string, turn *int, agent dsh.Agent) error {
	in := b.compactContext(ctx, event, source, agentID, compactionID, turn)
	return b.sessionStartFire(ctx, in, turn, agent)
}

// compactContext is the input of the session-start event of a committed compaction.
func (b *Bridge) compactContext(ctx context.Context, event, source, agentID, compactionID string, turn *int) Input {
	in := b.compactInput(ctx, event, agentID, compactionID, "", turn)
	in.Source = source
	return in
}

// sessionStartFire fires SessionStart and injects its contexts.
func (b *Bridge) sessionStartFire(ctx context.Context, in Input, turn *int, agent dsh.Agent) error {
	msg, err := b.sessionStartRun(ctx, in, turn, agent)
	if err != nil || msg == nil {
		return err
	}
	if agent == nil {
		return fmt.Errorf("%s hook contexts: the payload has no agent handle", in.Event)
	}
	return agent.Inject(ctx, *msg)
}

// sessionStartRun fires SessionStart and returns the message of its contexts (nil for
// none).
func (b *Bridge) sessionStartRun(ctx context.Context, in Input, turn *int, agent dsh.Agent) (*dsh.UserMessage, error) {
	rep, err := b.fire(ctx, in, in.Source, in.Session.TurnOpen && turn != nil, agent)
	if err != nil {
		return nil, err
	}
	switch rep.Merged.Outcome {
	case dsh.HookOutcomeBlock, dsh.HookOutcomeDeny, dsh.HookOutcomeHalt:
		b.log.Info("session-start hooks cannot block startup; ignored", "event", in.Event, "outcome", string(rep.Merged.Outcome), "reason", rep.Merged.Reason)
	}
	if len(rep.Merged.Contexts) == 0 {
		return nil, nil
	}
	msg := b.message(b.contexts(in.Event, in.Source, rep))
	return &msg, nil
}

// userPrompt joins the text of the user-sourced messages of a batch; ok is false when
// the batch holds none (a tool continuation or a steered plugin message), where
// UserPromptSubmit does not fire.
func userPrompt(msgs []dsh.UserMessage) (string, bool) {
	var parts []string
	found := false
	for _, m := range msgs {
		if m.Source == nil || m.Source.Kind() != dsh.SourceUserKind {
			continue
		}
		found = true
		for _, c := range m.Content {
			switch t := c.(type) {
			case dsh.TextBlock:
				parts = append(parts, t.Text)
			}
		}
	}
	return strings.Join(parts, "\n"), found
}

// preStep maps UserPromptSubmit: block rejects, halt halts, contexts are appended to the
// downstream enter decision (and dropped otherwise).
func (b *Bridge) preStep(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
	prompt, ok := userPrompt(p.Messages)
	if !ok {
		return next.Call(ctx)
	}
	s := b.session(ctx, p.AgentID)
	s.Turn, s.TurnOpen = p.Turn, true
	ev := b.event(dsh.PreStepEventName)
	rep, err := b.fire(ctx, Input{Event: ev, Session: s, Turn: p.Turn, Prompt: prompt}, "", true, p.Agent)
	if err != nil {
		return nil, err
	}
	switch rep.Merged.Outcome {
	case dsh.HookOutcomeHalt:
		return dsh.PreStepHalt{Reason: rep.Merged.Reason}, nil
	case dsh.HookOutcomeBlock, dsh.HookOutcomeDeny:
		reason := rep.Merged.Reason
		return dsh.PreStepReject{Reason: &reason}, nil
	}
	d, err := next.Call(ctx)
	if err != nil || len(rep.Merged.Contexts) == 0 {
		return d, err
	}
	var msgs []dsh.UserMessage
	switch e := d.(type) {
	case dsh.PreStepEnter:
		msgs = e.Messages
	default:
		b.log.Info("prompt hook contexts dropped: the step was not entered", "event", ev, "decision", string(d.Kind()))
		return d, nil
	}
	out := make([]dsh.UserMessage, 0, len(msgs)+1)
	if b.d.Render.PromptContextsFirst {
		out = append(append(out, b.message(b.contexts(ev, "", rep))), msgs...)
		return dsh.PreStepEnter{Messages: out}, nil
	}
	out = append(append(out, msgs...), b.message(b.contexts(ev, "", rep)))
	return dsh.PreStepEnter{Messages: out}, nil
}

func agentID(ex dsh.ToolExecution) string {
	if ex.AgentID != nil {
		return *ex.AgentID
	}
	return ""
}

func toolInput(ex dsh.ToolExecution) json.RawMessage {
	if len(ex.Arguments) == 0 {
		return json.RawMessage("{}")
	}
	return ex.Arguments
}

// preTool maps PreToolUse: deny denies, ask asks the approval seam, halt halts; allow and
// pass call next (allow never pre-approves). Contexts are kept for the tool result.
func (b *Bridge) preTool(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
	ex := p.Exec
	ev := b.event(dsh.PreToolEventName)
	s := b.session(ctx, agentID(ex))
	rep := b.takeFired(agentID(ex), ex.CallID)
	if rep == nil {
		// No rewrite phase ran for the call (no model arguments to rewrite): fire here.
		in := Input{Event: ev, Session: s, Turn: s.Turn, ToolName: ex.Name, ToolInput: toolInput(ex), ToolUseID: ex.CallID}
		var err error
		if rep, err = b.fire(ctx, in, ex.Name, ex.AgentID != nil && s.TurnOpen, s.Agent); err != nil {
			return nil, err
		}
	} else if b.o.RevalidateAfterRewrite && len(ex.ModelArguments) > 0 {
		// The rewrite phase changed the input: run the hooks again on the effective input
		// (revalidateAfterRewrite); the stricter of the two passes decides, the first
		// pass's contexts are kept, and a second-pass updatedInput is ignored.
		in := Input{Event: ev, Session: s, Turn: s.Turn, ToolName: ex.Name, ToolInput: toolInput(ex), ToolUseID: ex.CallID}
		second, err := b.fireIgnoring(ctx, in, ex.Name, ex.AgentID != nil && s.TurnOpen, s.Agent, revalidateIgnored)
		if err != nil {
			return nil, err
		}
		for _, h := range second.Hooks {
			for _, d := range h.Verdict.Diagnostics {
				if d == revalidateIgnored {
					b.log.Warn("tool hook rewrite ignored in the revalidation pass", "event", ev, "handler", h.ID, "call", ex.CallID)
				}
			}
		}
		if strictness(second.Merged.Outcome) > strictness(rep.Merged.Outcome) {
			first := rep.Merged.Contexts
			cp := *second
			cp.Merged.Contexts = first
			rep = &cp
		}
	}
	if len(rep.Merged.Contexts) > 0 && !ex.Token.IsZero() {
		texts := b.contexts(ev, ex.Name, rep)
		b.mu.Lock()
		b.stash[ex.Token] = append(b.stash[ex.Token], texts...)
		b.mu.Unlock()
	}
	switch rep.Merged.Outcome {
	case dsh.HookOutcomeHalt:
		if b.d.Render.PreHaltRunsTool && !ex.Token.IsZero() {
			// The engine lets the call run and ends the turn after it (postTool halts).
			b.mu.Lock()
			b.halts[ex.Token] = rep.Merged.Reason
			b.mu.Unlock()
			return next.Call(ctx)
		}
		return dsh.PreToolHalt{Reason: rep.Merged.Reason}, nil
	case dsh.HookOutcomeDeny, dsh.HookOutcomeBlock:
		if b.d.Render.Deny != nil && !ex.Token.IsZero() {
			text := b.d.Render.Deny(ex.Name, toolInput(ex), rep)
			b.mu.Lock()
			b.denied[ex.Token] = text
			b.mu.Unlock()
		}
		return dsh.PreToolDeny{Reason: rep.Merged.Reason}, nil
	case dsh.HookOutcomeAsk:
		var reason *string
		if r := rep.Merged.Reason; r != "" {
			reason = &r
			if b.d.Render.AskDenied != nil && !ex.Token.IsZero() {
				b.mu.Lock()
				b.asked[ex.Token] = [2]string{r, b.d.Render.AskDenied(r)}
				b.mu.Unlock()
			}
		}
		return dsh.PreToolAsk{Reason: reason}, nil
	}
	return next.Call(ctx)
}

// revalidateIgnored is the diagnostic of a second-pass PreToolUse hook whose updatedInput
// the revalidation ignored.
const revalidateIgnored = "updatedInput ignored: revalidateAfterRewrite runs the hooks on the rewritten input and does not rewrite it again"

// strictness orders PreToolUse outcomes for the revalidation pass: halt, then a denial,
// then ask, then everything else.
func strictness(o dsh.HookOutcome) int {
	switch o {
	case dsh.HookOutcomeHalt:
		return 3
	case dsh.HookOutcomeDeny, dsh.HookOutcomeBlock:
		return 2
	case dsh.HookOutcomeAsk:
		return 1
	}
	return 0
}

// timeExecute records how long a call's execution took, for PostToolUse's duration.
func (b *Bridge) timeExecute(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
	start := time.Now()
	res := next.Call(ctx)
	if !p.Exec.Token.IsZero() {
		b.mu.Lock()
		b.took[p.Exec.Token] = time.Since(start)
		b.mu.Unlock()
	}
	return res
}

// duration returns (and forgets) a call's execution time in ms, -1 when unknown, and
// whether the call was dispatched (when the execute wrapper is registered).
func (b *Bridge) duration(t dsh.Token) (int, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	d, ok := b.took[t]
	delete(b.took, t)
	if !ok {
		return -1, false
	}
	if !b.d.Durations {
		return -1, true
	}
	return int(d.Milliseconds()), true
}

// takeDenied returns (and forgets) the rendered denial of a call and its halt reason.
func (b *Bridge) takeDenied(t dsh.Token) (denied string, isDenied bool, halt string, halts bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	denied, isDenied = b.denied[t]
	halt, halts = b.halts[t]
	delete(b.denied, t)
	delete(b.halts, t)
	delete(b.asked, t)
	return denied, isDenied, halt, halts
}

// askDenied returns the rendering of an asked call's result when the runtime denied it
// with the ask's reason (no one could answer).
func (b *Bridge) askDenied(t dsh.Token, result dsh.ToolExecutionResult) (string, bool) {
	b.mu.Lock()
	a, ok := b.asked[t]
	b.mu.Unlock()
	if !ok {
		return "", false
	}
	var f *dsh.ToolFailure
	switch r := result.(type) {
	case dsh.ToolFailure:
		f = &r
	}
	if f == nil || f.Error.Message != a[0] {
		return "", false
	}
	return a[1], true
}

func (b *Bridge) unstash(t dsh.Token) []string {
	if t.IsZero() {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.stash[t]
	delete(b.stash, t)
	return c
}

// toolResult drops PreToolUse contexts of a call whose post-execute never ran, and the
// report of one whose pre-execute never ran (a failed rewrite).
func (b *Bridge) toolResult(_ context.Context, p *dsh.ToolResultPayload) {
	b.takeFired(agentID(p.Exec), p.Exec.CallID)
	b.unstash(p.Exec.Token)
	b.takeDenied(p.Exec.Token)
	b.duration(p.Exec.Token)
}

// toolResponse is the tool_response of a successful result: its value, or its text.
func toolResponse(s dsh.ToolSuccess) json.RawMessage {
	if len(s.Value) > 0 {
		return s.Value
	}
	data, _ := json.Marshal(Text(s.Content))
	return data
}

// Text is the text blocks of content joined by newlines: what the engines' transcripts and
// tool_response carry for a message or a tool result.
func Text(content []dsh.ContentBlock) string {
	var parts []string
	for _, c := range content {
		if t, ok := c.(dsh.TextBlock); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// postTool maps PostToolUse (successful results only, decision 8) and delivers the
// PreToolUse contexts: block becomes feedback, halt halts; otherwise next, then the hook
// contexts are prepended to the downstream decision's contexts.
func (b *Bridge) postTool(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
	texts := b.unstash(p.Exec.Token)
	askText, asked := b.askDenied(p.Exec.Token, p.Result)
	took, dispatched := b.duration(p.Exec.Token)
	deniedText, isDenied, haltReason, halts := b.takeDenied(p.Exec.Token)
	if asked {
		deniedText, isDenied = askText, true
	}
	if isDenied {
		// The dialect's wording of the denial replaces dsh's "Error: <reason>".
		d, err := next.Call(ctx)
		if err != nil {
			return d, err
		}
		acc := dsh.PostToolAccept{Content: []dsh.ContentBlock{dsh.TextBlock{Text: deniedText}}}
		if len(texts) > 0 {
			acc.AdditionalContexts = []dsh.UserMessage{b.message(texts)}
		}
		if x, ok := d.(dsh.PostToolAccept); ok {
			acc.AdditionalContexts = append(acc.AdditionalContexts, x.AdditionalContexts...)
		}
		return acc, nil
	}
	var (
		succ *dsh.ToolSuccess
		fail *dsh.ToolFailure
	)
	switch r := p.Result.(type) {
	case dsh.ToolSuccess:
		succ = &r
	case dsh.ToolFailure:
		fail = &r
	}
	if ev := b.failureEvent(); fail != nil && dispatched && ev != "" {
		// A call that ran and failed (a denied call never reaches dispatch).
		ex := p.Exec
		s := b.session(ctx, agentID(ex))
		interrupted := fail.Error.Info != nil && fail.Error.Info.Code == abortedCode
		in := Input{Event: ev, Session: s, Turn: s.Turn, ToolName: ex.Name, ToolInput: toolInput(ex),
			ToolUseID: ex.CallID, DurationMS: took, Error: fail.Error.Message, IsInterrupt: interrupted}
		rep, err := b.fire(ctx, in, ex.Name, ex.AgentID != nil && s.TurnOpen, s.Agent)
		if err != nil {
			return nil, err
		}
		texts = append(texts, b.contexts(ev, ex.Name, rep)...)
		if rep.Merged.Outcome == dsh.HookOutcomeHalt {
			if len(texts) > 0 {
				b.log.Info("tool hook contexts dropped: the turn halts", "event", ev, "count", len(texts))
			}
			return dsh.PostToolHalt{Reason: rep.Merged.Reason}, nil
		}
	}
	if ev := b.resultEvent(succ != nil); (succ != nil || fail != nil) && ev != "" {
		ex := p.Exec
		s := b.session(ctx, agentID(ex))
		in := Input{Event: ev, Session: s, Turn: s.Turn, ToolName: ex.Name, ToolInput: toolInput(ex),
			ToolUseID: ex.CallID, DurationMS: took}
		if succ != nil {
			in.ToolResponse, in.ToolText = toolResponse(*succ), Text(succ.Content)
		} else {
			in.Error, in.ToolText = fail.Error.Message, Text(fail.Content)
			if fail.Error.Info != nil {
				in.ErrorCode = fail.Error.Info.Code
			}
			in.ToolResponse, _ = json.Marshal(in.ToolText)
		}
		if b.d.OriginalInput && len(ex.ModelArguments) > 0 {
			in.OriginalInput = ex.ModelArguments
		}
		rep, err := b.fire(ctx, in, ex.Name, ex.AgentID != nil && s.TurnOpen, s.Agent)
		if err != nil {
			return nil, err
		}
		post := b.contexts(ev, ex.Name, rep)
		switch rep.Merged.Outcome {
		case dsh.HookOutcomeBlock, dsh.HookOutcomeDeny:
			if b.d.Render.PostBlock != nil {
				// The result stays; the reason follows it as feedback (Claude Code).
				texts = append(texts, b.d.Render.PostBlock(ex.Name, rep))
				rep.Merged.Outcome = dsh.HookOutcomePass
			}
		}
		texts = append(texts, post...)
		switch rep.Merged.Outcome {
		case dsh.HookOutcomeHalt:
			if len(texts) > 0 {
				b.log.Info("tool hook contexts dropped: the turn halts", "event", ev, "count", len(texts))
			}
			return dsh.PostToolHalt{Reason: rep.Merged.Reason}, nil
		case dsh.HookOutcomeBlock, dsh.HookOutcomeDeny:
			blk := dsh.PostToolBlock{Feedback: []dsh.ContentBlock{dsh.TextBlock{Text: rep.Merged.Reason}}}
			if len(texts) > 0 {
				blk.AdditionalContexts = []dsh.UserMessage{b.message(texts)}
			}
			return blk, nil
		}
	}
	if halts {
		if len(texts) > 0 {
			b.log.Info("tool hook contexts dropped: the turn halts", "count", len(texts))
		}
		return dsh.PostToolHalt{Reason: haltReason}, nil
	}
	d, err := next.Call(ctx)
	if err == nil && (succ != nil || fail != nil) {
		var content []dsh.ContentBlock
		suffix := ""
		if succ != nil {
			content = succ.Content
		} else {
			content = fail.Content
		}
		if b.d.Render.ResultContexts && len(texts) > 0 {
			suffix = "\n\n" + strings.Join(texts, "\n")
		}
		if x, ok := appendText(content, d, b.rewriteNote(p.Exec, succ != nil)+suffix); ok {
			d = x
			if suffix != "" {
				texts = nil
			}
		}
	}
	if err != nil || len(texts) == 0 {
		return d, err
	}
	msg := b.message(texts)
	prepend := func(ms []dsh.UserMessage) []dsh.UserMessage {
		out := make([]dsh.UserMessage, 0, len(ms)+1)
		return append(append(out, msg), ms...)
	}
	switch x := d.(type) {
	case dsh.PostToolAccept:
		x.AdditionalContexts = prepend(x.AdditionalContexts)
		return x, nil
	case dsh.PostToolBlock:
		x.AdditionalContexts = prepend(x.AdditionalContexts)
		return x, nil
	}
	b.log.Info("tool hook contexts dropped: the downstream decision carries none", "decision", string(d.Kind()))
	return d, nil
}

// rewriteNote is the table's rewrite note (Rewrite.Note) for the successful result of a
// call whose arguments a rewrite changed; "" otherwise.
func (b *Bridge) rewriteNote(ex dsh.ToolExecution, success bool) string {
	ev, ok := b.d.Table.Lookup(b.event(dsh.PreToolEventName))
	if !ok || ev.Rewrite == nil || !success || len(ex.ModelArguments) == 0 {
		return ""
	}
	return ev.Rewrite.Note
}

// appendText appends suffix to the last text block of content (a new block when it has
// none) as the downstream decision's content, when that decision keeps the content.
func appendText(content []dsh.ContentBlock, d dsh.PostToolDecision, suffix string) (dsh.PostToolDecision, bool) {
	x, ok := d.(dsh.PostToolAccept)
	if suffix == "" || !ok || x.Content != nil || x.Value != nil {
		return d, false
	}
	x.Content = append(slices.Clone(content), dsh.TextBlock{Text: suffix})
	if n := len(content); n > 0 {
		if t, ok := content[n-1].(dsh.TextBlock); ok {
			x.Content = append(slices.Clone(content[:n-1]), dsh.TextBlock{Text: t.Text + suffix})
		}
	}
	return x, true
}

// turnStopping maps Stop: block steers the reason into another step, halt ends the turn.
func (b *Bridge) turnStopping(ctx context.Context, p *dsh.TurnStoppingPayload) error {
	s := b.session(ctx, p.AgentID)
	s.Turn, s.TurnOpen = p.Turn, true
	ev := b.event(dsh.TurnStoppingEventName)
	in := Input{Event: ev, Session: s, Turn: p.Turn, StopHookActive: p.StopHookActive}
	rep, err := b.fire(ctx, in, "", true, p.Agent)
	if err != nil {
		return err
	}
	switch rep.Merged.Outcome {
	case dsh.HookOutcomeHalt:
		if p.Agent == nil {
			return errors.New("stop hook halt: the payload has no agent handle")
		}
		p.Agent.Halt(rep.Merged.Reason)
	case dsh.HookOutcomeBlock, dsh.HookOutcomeDeny:
		if p.Agent == nil {
			return errors.New("stop hook block: the payload has no agent handle")
		}
		texts := []string{rep.Merged.Reason}
		if b.d.Render.Stop != nil {
			texts = b.d.Render.Stop(rep)
		}
		msg := b.message(texts)
		if f := b.d.Render.StopForm; f != "" {
			msg.Source = dsh.SourcePlugin{Plugin: b.d.Table.Plugin, Form: f}
		}
		return p.Agent.Steer(ctx, msg)
	default:
		if b.d.Render.StopContexts && len(rep.Merged.Contexts) > 0 {
			if p.Agent == nil {
				return errors.New("stop hook context: the payload has no agent handle")
			}
			return p.Agent.Steer(ctx, b.message(b.contexts(ev, "", rep)))
		}
	}
	return nil
}

// sessionEnd maps SessionEnd: the hooks run for cleanup; nothing they print or exit with
// changes anything (the session is over), so outcomes other than pass are only logged.
// The runtime bounds the listener (agent/session-end); its context ending kills the hooks.
func (b *Bridge) sessionEnd(ctx context.Context, p *dsh.SessionEndPayload) error {
	s := b.session(ctx, p.AgentID)
	in := Input{Event: b.event(dsh.SessionEndEventName), Session: s, Reason: string(p.Reason)}
	rep, err := b.fire(ctx, in, b.d.SessionEndReason(string(p.Reason)), false, nil)
	if err != nil {
		return err
	}
	if o := rep.Merged.Outcome; o != dsh.HookOutcomePass && o != "" {
		b.log.Info("session-end hooks cannot change anything; ignored", "event", in.Event, "outcome", string(o), "reason", rep.Merged.Reason)
	}
	return nil
}

// compactInput is the input of a compaction event: the session, the attempt's turn
// (none for a manual compaction), the trigger and the attempt as owner.
func (b *Bridge) compactInput(ctx context.Context, event, agentID, compactionID string, origin dsh.CompactionOrigin, turn *int) Input {
	s := b.session(ctx, agentID)
	in := Input{Event: event, Session: s, Trigger: string(origin), Maintenance: compactionID}
	in.Session.Turn, in.Session.TurnOpen = 0, false
	if turn != nil {
		in.Turn, in.Session.Turn, in.Session.TurnOpen = *turn, *turn, true
	} else {
		// A manual compaction is its own prompt (Claude Code gives /compact a prompt_id):
		// every hook of the attempt gets the same id.
		in.Session.PromptID = hookproto.UUIDFor(compactionID)
	}
	return in
}

// preCompact maps PreCompact (docs/design/REWRITE-COMPACTION.md#23-mapping-claude-code-and-codex-hooks), matched on the origin (manual,
// auto): a block (exit 2, decision "block") defers the compaction, plain stdout on exit 0
// becomes summarizer instructions, a halt (Codex continue:false) defers it and halts the
// open turn. A dialect whose PreCompact only observes (Codex) says so in its table
// (spec/bridges/codex.cue): no rule blocks and exit 2 is an error, so nothing defers.
func (b *Bridge) preCompact(ctx context.Context, p *dsh.PreCompactPayload) (dsh.PreCompactDecision, error) {
	in := b.compactInput(ctx, b.event(dsh.PreCompactEventName), p.AgentID, p.CompactionID, p.Origin, p.Turn)
	in.CustomInstructions = p.UserInstructions
	rep, err := b.fire(ctx, in, string(p.Origin), p.Turn != nil, p.Agent)
	if err != nil {
		return nil, err
	}
	switch rep.Merged.Outcome {
	case dsh.HookOutcomeHalt:
		if p.Agent != nil && p.Turn != nil {
			p.Agent.Halt(rep.Merged.Reason)
		}
		return dsh.PreCompactDefer{Reason: rep.Merged.Reason}, nil
	case dsh.HookOutcomeBlock, dsh.HookOutcomeDeny:
		return dsh.PreCompactDefer{Reason: rep.Merged.Reason}, nil
	}
	var instructions []string
	for _, c := range rep.Merged.Contexts {
		if c = strings.TrimSpace(c); c != "" {
			instructions = append(instructions, c)
		}
	}
	return dsh.PreCompactProceed{Instructions: instructions}, nil
}

// postCompact maps PostCompact: the summary goes in; contexts (Claude Code
// hookSpecificOutput.additionalContext) are appended after the checkpoint; a halt (Codex
// continue:false) halts the open turn. The runtime drops contexts of a failed attempt.
//
// For a committed compaction it also fires the session start that the table's also
// column moves here (b.compact; Claude Code's SessionStart[compact], which then does not
// run at agent/session-start): before the post-compact event, as the entry's before
// column says, its contexts injected first; otherwise after it, its contexts appended
// after the event's.
func (b *Bridge) postCompact(ctx context.Context, p *dsh.PostCompactPayload) (dsh.PostCompactDecision, error) {
	var later []also
	if p.Outcome == dsh.CompactionOutcomeCommitted && len(b.compact) > 0 {
		b.mu.Lock()
		if b.early == nil {
			b.early = map[string]bool{}
		}
		b.early[p.CompactionID] = true
		b.mu.Unlock()
		for _, a := range b.compact {
			if a.Before == "" {
				later = append(later, a)
				continue
			}
			if err := b.sessionStartCompact(ctx, a.event, a.Subject, p.AgentID, p.CompactionID, p.Turn, p.Agent); err != nil {
				b.log.Warn("session-start hooks of a compaction, run before the post-compact hooks", "event", a.event, "compactionId", p.CompactionID, "err", err)
			}
		}
	}
	var msgs []dsh.UserMessage
	if ev := b.event(dsh.PostCompactEventName); ev != "" {
		in := b.compactInput(ctx, ev, p.AgentID, p.CompactionID, p.Origin, p.Turn)
		if p.Summary != nil {
			in.CompactSummary = *p.Summary
		}
		rep, err := b.fire(ctx, in, string(p.Origin), p.Turn != nil, p.Agent)
		if err != nil {
			return nil, err
		}
		if rep.Merged.Outcome == dsh.HookOutcomeHalt && p.Agent != nil && p.Turn != nil {
			p.Agent.Halt(rep.Merged.Reason)
		}
		if len(rep.Merged.Contexts) > 0 {
			msgs = append(msgs, b.message(b.contexts(in.Event, string(p.Origin), rep)))
		}
	}
	for _, a := range later {
		in := b.compactContext(ctx, a.event, a.Subject, p.AgentID, p.CompactionID, p.Turn)
		msg, err := b.sessionStartRun(ctx, in, p.Turn, p.Agent)
		if err != nil {
			b.log.Warn("session-start hooks of a compaction, run after the post-compact hooks", "event", a.event, "compactionId", p.CompactionID, "err", err)
		} else if msg != nil {
			msgs = append(msgs, *msg)
		}
	}
	if len(msgs) == 0 {
		return dsh.PostCompactAccept{}, nil
	}
	return dsh.PostCompactAppend{Contexts: msgs}, nil
}

// abortedCode is the error code of a call cancelled while its body ran (runtime/tools
// CodeAborted; not imported, to keep the bridges off the runtime).
const abortedCode = "ABORTED"

// approvalAnswer maps PermissionRequest: allow answers allowed-once, deny (or block)
// denies with the reason, halt (a deny with interrupt) denies and ends the turn; anything
// else leaves the request to the next listener and the approval seam.
func (b *Bridge) approvalAnswer(ctx context.Context, p *dsh.ApprovalAnswerPayload, next dsh.ApprovalAnswerNext) (dsh.ApprovalAnswerDecision, error) {
	ex := p.Exec
	s := b.session(ctx, agentID(ex))
	in := Input{Event: b.event(dsh.ApprovalAnswerEventName), Session: s, Turn: s.Turn, ToolName: ex.Name, ToolInput: toolInput(ex), ToolUseID: ex.CallID}
	rep, err := b.fire(ctx, in, ex.Name, ex.AgentID != nil && s.TurnOpen, s.Agent)
	if err != nil {
		return nil, err
	}
	reason := rep.Merged.Reason
	switch rep.Merged.Outcome {
	case dsh.HookOutcomeAllow:
		return dsh.ApprovalAnswerAllow{}, nil
	case dsh.HookOutcomeDeny, dsh.HookOutcomeBlock, dsh.HookOutcomeHalt:
		if b.d.Render.PermissionDeny != nil && !ex.Token.IsZero() {
			text := b.d.Render.PermissionDeny(ex.Name, reason)
			b.mu.Lock()
			b.denied[ex.Token] = text
			b.mu.Unlock()
		}
		d := dsh.ApprovalAnswerDeny{Message: &reason}
		if rep.Merged.Outcome == dsh.HookOutcomeHalt {
			yes := true
			d.Interrupt = &yes
		}
		return d, nil
	}
	return next.Call(ctx)
}

// notify fires an observing event (Notification) with the subject kind; its outcome is
// not acted on.
func (b *Bridge) notify(ctx context.Context, event, kind, tool string, s hookproto.Session, inTurn bool) {
	msg := ""
	if b.d.NotificationText != nil {
		msg = b.d.NotificationText(kind, tool)
	}
	in := Input{Event: event, Session: s, Turn: s.Turn, NotificationType: kind, Message: msg}
	rep, err := b.fire(ctx, in, kind, inTurn, s.Agent)
	if err != nil {
		b.log.Warn("notification hook", "event", event, "type", kind, "error", err)
		return
	}
	if rep.Merged.Outcome != dsh.HookOutcomePass || len(rep.Merged.Contexts) > 0 {
		b.log.Info("notification hooks only observe; their output is ignored", "event", event, "type", kind, "outcome", string(rep.Merged.Outcome))
	}
}

// approvalPrompt fires the approval/prompt event (Notification) with the table's subject
// (permission_prompt): an approval request goes to the approval seam.
func (b *Bridge) approvalPrompt(ctx context.Context, p *dsh.ApprovalPromptPayload) {
	ev := b.event(dsh.ApprovalPromptEventName)
	e, _ := b.d.Table.Lookup(ev)
	s := b.session(ctx, agentID(p.Exec))
	b.notify(ctx, ev, e.Subject, p.Exec.Name, s, p.Exec.AgentID != nil && s.TurnOpen)
}

// status fires event at agent/status, as its table row's also entry a says: when the
// agent's status is a's (Claude Code's Notification idle_prompt: an interactive agent
// went idle, waiting for input), with a's subject.
func (b *Bridge) status(event string, a hookmap.Also) dsh.StatusListener {
	return func(ctx context.Context, p *dsh.StatusPayload) {
		if a.Status != "" && string(p.Status) != a.Status {
			return
		}
		s := b.session(ctx, p.AgentID)
		s.TurnOpen = false
		b.notify(ctx, event, a.Subject, "", s, false)
	}
}

// takeFired returns (and forgets) the PreToolUse report of a call fired in the rewrite
// phase, or nil.
func (b *Bridge) takeFired(agent, call string) *hookproto.Report {
	k := callKey{agent, call}
	b.mu.Lock()
	defer b.mu.Unlock()
	rep := b.fired[k]
	delete(b.fired, k)
	return rep
}

// rewriteInput runs the call's PreToolUse hooks, once and in parallel, on the input the
// fold has so far (docs/design/REWRITE-COMPACTION.md#13-composing-several-rewriters), keeps their report for the pre-execute
// listener, and folds their rewrites (updatedInput) in configuration order, whatever
// order they finished in: a replacement replaces, a merge patches the value so far. The
// result is one replace of the effective value, or keep when nothing changed.
func (b *Bridge) rewriteInput(ctx context.Context, p *dsh.RewriteInputPayload) (dsh.RewriteDecision, error) {
	agent := ""
	if p.AgentID != nil {
		agent = *p.AgentID
	}
	s := b.session(ctx, agent)
	input := p.Input
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	in := Input{Event: b.event(dsh.PreToolEventName), Session: s, Turn: s.Turn, ToolName: p.Name, ToolInput: input, ToolUseID: p.CallID}
	rep, err := b.fire(ctx, in, p.Name, p.AgentID != nil && s.TurnOpen, s.Agent)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.fired[callKey{agent, p.CallID}] = rep
	b.mu.Unlock()
	cur := input
	changed := false
	var by []string
	for _, h := range rep.Hooks {
		rw := h.Verdict.Rewrite
		if len(rw) == 0 {
			continue
		}
		if b.d.MapRewrite != nil {
			rw = b.d.MapRewrite(p.Name, cur, rw)
		}
		next := rw
		if h.Verdict.RewriteMerge {
			if next, err = mergePatch(cur, rw); err != nil {
				b.log.Warn("tool hook rewrite ignored: not a merge patch", "event", in.Event, "handler", h.ID, "error", err)
				continue
			}
		}
		cur, changed = next, true
		by = append(by, h.ID)
	}
	if !changed {
		return dsh.RewriteKeep{}, nil
	}
	reason := in.Event + " hook updatedInput (" + strings.Join(by, ", ") + ")"
	d := dsh.RewriteReplace{Args: cur, Reason: &reason}
	if b.d.Render.RewriteSilent {
		d.Disclosure = dsh.RewriteDisclosureSilent
	}
	return d, nil
}

// mergePatch applies the JSON merge patch (RFC 7396) patch to target.
func mergePatch(target, patch json.RawMessage) (json.RawMessage, error) {
	var t, p any
	if err := decodeNumbers(patch, &p); err != nil {
		return nil, err
	}
	if len(target) > 0 {
		if err := decodeNumbers(target, &t); err != nil {
			t = nil
		}
	}
	return json.Marshal(jsonmerge.Apply(t, p))
}

// decodeNumbers decodes data keeping numbers as written (json.Number).
func decodeNumbers(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}
