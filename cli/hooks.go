package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/dshkit/dsh/bridges/dialect"
	"github.com/dshkit/dsh/bridges/dialects"
	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/agentrec"
	"github.com/dshkit/dsh/internal/clix"
	"github.com/dshkit/dsh/runner"
)

// maxHookInput bounds the hook input dsh hooks run reads (a file or stdin).
const maxHookInput = 64 << 20

func init() {
	commands["hooks"] = command{
		summary: "fire one hook event at a Claude Code, Codex or Gemini CLI hooks configuration",
		run:     runHooks,
	}
}

const hooksUsage = `usage: dsh hooks run [--dialect claude-code|codex|gemini] (--config FILE | --plugin-dir DIR)... [--project-dir DIR] [--trust] [--canonical] [--event EVENT] --input FILE|-

Reads one hook input JSON (the stdin a hook would get), runs every hook of FILE that
matches it exactly as the bridge runs them inside a dsh run session (in parallel, merged
in configuration order), and prints one JSON object: the extension point's decision, the
contexts and notices, and every hook's outcome in configuration order. As dsh run, it
decides as the dialect's real engine does; --canonical decides by dsh's canonical
mapping instead, as dsh run --canonical (docs/decisions/0004-bridges.md). The dialect
is claude-code unless --dialect names another, as in dsh run; the event is --event, or
else the input's hook_event_name. At a tool's result the decision also says what the
model would read: "content" when the hooks replaced the result's text, and "model", the
texts that follow the result as the dialect renders them (Claude Code shows a PostToolUse
block's feedback after the result it keeps).

The event fires where its row of the dialect's table (spec/bridges) says: at the row's
extension point, or at the further point of its also column whose subject the input
carries (Claude Code's Notification idle_prompt at agent/status); the point's payload is
built from the input. Only that event's hooks run. A model-call event (Gemini CLI's
BeforeModel, BeforeToolSelection: agent/request; AfterModel: agent/response) prints the
request fold's outcome (pass, send with the changed request and the tools a restriction
left, answer, deny, halt) or the response fold's (accept, replace, block, halt); a
compaction event prints proceed (with the summary instructions), defer or replace, or
accept or append.

FILE fails closed: if it cannot be read or parsed, or names an event, a group or a
handler the bridge would skip, the command fails naming it (exit 1) and runs nothing.

--project-dir DIR is CLAUDE_PROJECT_DIR and also loads DIR's project hook files
(.claude/settings.json and .claude/settings.local.json, or .codex/hooks.json), which
load only with --trust. FILE itself is named explicitly and loads as given.
--plugin-dir DIR (repeatable) loads a Claude Code plugin's hooks as claude --plugin-dir
does (.claude-plugin/plugin.json and hooks/hooks.json; CLAUDE_PLUGIN_ROOT set and
substituted); a malformed plugin is a diagnostic and the others still load.
Hooks run in the input's cwd when it is a directory, else in the current directory.

Exit status: 0 when the hooks ran; 1 when the configuration or the input cannot be used
(one line on stderr) or the hooks could not run; 2 for a usage error.
`

const hooksTopUsage = `usage: dsh hooks run [flags]

Subcommands:
  run   fire one hook event at a Claude Code, Codex or Gemini CLI hooks configuration

Run dsh hooks run --help for its flags.
`

func runHooks(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	top := clix.New("dsh hooks", hooksTopUsage, stdout, stderr)
	switch {
	case len(args) == 0:
		return top.UsageError("want the subcommand run")
	case clix.IsHelp(args[0]):
		fmt.Fprint(stdout, top.Help())
		return clix.ExitOK
	case args[0] != "run":
		return top.UsageError("unknown subcommand %q (want run)", args[0])
	}
	c := clix.New("dsh hooks run", hooksUsage, stdout, stderr)
	out, warnings, err := hooksRun(ctx, c, args[1:], stdin)
	for _, w := range warnings {
		fmt.Fprintln(stderr, "dsh hooks run: warning: "+w)
	}
	if err != nil {
		return c.Exit(oneLineError{err})
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(stderr, "dsh hooks: "+err.Error())
		return 1
	}
	return 0
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// oneLineError prints its error on one line (a failure is one line on stderr).
type oneLineError struct{ err error }

func (e oneLineError) Error() string { return oneLine(e.err.Error()) }
func (e oneLineError) Unwrap() error { return e.err }

// hooksOutput is what dsh hooks run prints.
type hooksOutput struct {
	Event       string       `json:"event"`
	Point       string       `json:"point"`
	Decision    decisionJSON `json:"decision"`
	Contexts    []string     `json:"contexts"`
	Notices     []string     `json:"notices"`
	Hooks       []hookJSON   `json:"hooks"`
	Diagnostics []string     `json:"diagnostics,omitempty"`
}

type decisionJSON struct {
	Kind   string  `json:"kind"`
	Reason *string `json:"reason,omitempty"`
	// UpdatedInput is the effective tool input after the hooks' updatedInput (PreToolUse),
	// when they rewrote it.
	UpdatedInput json.RawMessage `json:"updatedInput,omitempty"`
	// Text is the text of a model-call decision: an agent/request answer, an
	// agent/response replacement.
	Text *string `json:"text,omitempty"`
	// Request is the request agent/request sends ("send") when its listeners changed it.
	Request json.RawMessage `json:"request,omitempty"`
	// Allow are the tools an agent/request restriction leaves offered ([] for none).
	Allow *[]string `json:"allow,omitempty"`
	// Instructions are the summary instructions a compaction proceeds with.
	Instructions []string `json:"instructions,omitempty"`
	// Content is the tool result's model-facing text when the hooks replaced it
	// (tools/post-execute).
	Content *string `json:"content,omitempty"`
	// Model are the texts the model reads after the tool result, as the dialect renders
	// them (tools/post-execute: the hooks' contexts and, in engine mode, a block's
	// feedback, which Claude Code shows after the result it keeps).
	Model []string `json:"model,omitempty"`
	// Tail is the call a tools/post-execute tail decision runs in place of the call:
	// {name, arguments}.
	Tail json.RawMessage `json:"tail,omitempty"`
}

type hookJSON struct {
	Command       string   `json:"command"`
	ExitCode      *int     `json:"exitCode,omitempty"`
	DurationMS    int64    `json:"durationMs"`
	Outcome       string   `json:"outcome"`
	StderrSummary string   `json:"stderrSummary,omitempty"`
	Async         bool     `json:"async,omitempty"`
	Contexts      []string `json:"contexts,omitempty"`
	Diagnostics   []string `json:"diagnostics,omitempty"`
}

func hooksRun(ctx context.Context, c *clix.Command, args []string, stdin io.Reader) (*hooksOutput, []string, error) {
	fs := c.Flags
	dialectName := fs.String("dialect", dialects.Default(), strings.Join(dialectNames(), " or "))
	config := fs.String("config", "", "the hooks configuration file")
	projectDir := fs.String("project-dir", "", "the project directory (CLAUDE_PROJECT_DIR; its project hook files load with --trust)")
	trust := fs.Bool("trust", false, "trust the project: load its project-level hook files")
	event := fs.String("event", "", "the hook event, e.g. PreToolUse (default: the input's hook_event_name)")
	inputPath := fs.String("input", "", "the hook input JSON file, or - for stdin")
	var dirs pluginDirs
	fs.Var(&dirs, "plugin-dir", "a Claude Code plugin directory (repeatable)")
	canonical := fs.Bool("canonical", false, "decide by dsh's canonical mapping instead of the engine's behaviour")
	if code, ok := c.Parse(args, 0); !ok {
		return nil, nil, clix.Stop(code)
	}
	desc, ok := dialects.All().Lookup(*dialectName)
	if !ok {
		return nil, nil, clix.Usagef("unknown --dialect %q (want %s)", *dialectName, strings.Join(dialectNames(), " or "))
	}
	table := desc.Table
	if *config == "" && len(dirs) == 0 {
		return nil, nil, clix.Usagef("--config or --plugin-dir is required")
	}
	var files []string
	if *config != "" {
		files = []string{*config}
	}
	plugins, pluginProblems := runner.LoadPluginDirs(dirs)
	if *inputPath == "" {
		return nil, nil, clix.Usagef("--input is required (a file, or - for stdin)")
	}
	var raw []byte
	var err error
	if *inputPath == "-" {
		raw, err = hookproto.ReadAtMost(stdin, maxHookInput)
	} else {
		var f *os.File
		if f, err = os.Open(*inputPath); err == nil {
			raw, err = hookproto.ReadAtMost(f, maxHookInput)
			f.Close()
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read the input: %v", err)
	}
	if *event == "" {
		var named struct {
			HookEventName string `json:"hook_event_name"`
		}
		if json.Unmarshal(raw, &named) != nil || named.HookEventName == "" {
			return nil, nil, clix.Usagef("--event is required when the input names no hook_event_name")
		}
		*event = named.HookEventName
	}
	ev, ok := table.Lookup(*event)
	if err := hookproto.NotFired(table, *event); !ok && err != nil {
		return nil, nil, err
	}
	if !ok {
		var names []string
		for _, e := range table.Events {
			names = append(names, e.Name)
		}
		return nil, nil, clix.Usagef("event %q is not supported by the %s bridge (supported: %s)", *event, table.Dialect, strings.Join(names, ", "))
	}
	if err := checkNamedHooks(table.Dialect, *config); err != nil {
		return nil, nil, err
	}
	in, err := desc.ReadInput(ev.Name, raw)
	if err != nil {
		return nil, nil, err
	}
	if in.HookEventName != "" && in.HookEventName != ev.Name {
		return nil, nil, fmt.Errorf("the input's hook_event_name %q does not match --event %s", in.HookEventName, ev.Name)
	}
	at, err := firing(ev, raw)
	if err != nil {
		return nil, nil, err
	}

	cwd, err := os.Getwd()
	if err != nil {
		return nil, nil, err
	}
	if in.CWD != "" {
		if st, err := os.Stat(in.CWD); err == nil && st.IsDir() {
			cwd = in.CWD
		}
	}
	turn := 1
	if n, err := strconv.Atoi(in.TurnID); err == nil && n > 0 {
		turn = n
	}
	agent := &agentrec.Agent{AgentID: "dsh-hooks"}
	sess := hookproto.Session{
		SessionID: in.SessionID, CWD: cwd, Model: in.Model, PermissionMode: in.PermissionMode,
		Turn: turn, TurnOpen: true, LastAssistantMessage: in.LastAssistantMessage, Agent: agent,
	}
	if in.TranscriptPath != nil {
		sess.TranscriptPath = *in.TranscriptPath
	}
	if sess.SessionID == "" {
		sess.SessionID = "dsh-hooks"
	}

	var (
		mu      sync.Mutex
		reports []*hookproto.Report
		asyncs  []hookproto.HookRun
	)
	observe := func(r *hookproto.Report) {
		mu.Lock()
		reports = append(reports, r)
		mu.Unlock()
	}
	observeAsync := func(r hookproto.HookRun) {
		mu.Lock()
		asyncs = append(asyncs, r)
		mu.Unlock()
	}
	quiet := slog.New(slog.DiscardHandler)
	sessionFn := func(context.Context, string) hookproto.Session { return sess }
	br, err := desc.New(dialect.Config{
		Files: files, Plugins: plugins, Workspace: cwd, ProjectDir: *projectDir, DiscoverProject: *projectDir != "",
		TrustProject: *trust, Session: sessionFn, Logger: quiet, Canonical: *canonical,
		Interactive: true, // the table's interactive points (Notification idle_prompt) fire too
		Events:      []string{ev.Name}, Observe: observe, ObserveAsync: observeAsync,
	})
	if err != nil {
		return nil, nil, err
	}
	defer br.Close(context.WithoutCancel(ctx))

	var warnings, diagnostics []string
	diagnostics = append(diagnostics, pluginProblems...)
	warnings = append(warnings, pluginProblems...)
	for _, d := range br.Diagnostics() {
		diagnostics = append(diagnostics, d.Error())
		warnings = append(warnings, d.Error())
	}

	reg := dsh.NewRegistry(dsh.WithLogger(quiet))
	br.Register(reg.Plugin(table.Plugin))
	decision, err := fireEvent(ctx, reg, ev, at, in, turn, agent)
	if err != nil {
		return nil, warnings, err
	}
	if err := br.Wait(ctx); err != nil {
		return nil, warnings, err
	}

	out := &hooksOutput{
		Event: ev.Name, Point: at.point, Decision: decision, Contexts: []string{}, Notices: []string{},
		Hooks: []hookJSON{}, Diagnostics: diagnostics,
	}
	for _, rep := range reports {
		out.Contexts = append(out.Contexts, rep.Merged.Contexts...)
		out.Notices = append(out.Notices, rep.Merged.Notices...)
		for _, h := range rep.Hooks {
			out.Hooks = append(out.Hooks, hookEntry(h, false))
		}
	}
	for _, h := range asyncs {
		out.Hooks = append(out.Hooks, hookEntry(h, true))
		out.Notices = append(out.Notices, h.Verdict.Notices...)
	}
	return out, warnings, nil
}

func hookEntry(h hookproto.HookRun, async bool) hookJSON {
	e := hookJSON{
		Command: h.Handler.Command, ExitCode: h.Result.ExitCode, DurationMS: h.Result.Duration.Milliseconds(),
		Outcome: string(h.Verdict.Outcome), StderrSummary: h.StderrSummary, Async: async,
		Diagnostics: h.Verdict.Diagnostics,
	}
	if async {
		e.Contexts = h.Verdict.Contexts
	}
	return e
}
