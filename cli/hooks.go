package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dshkit/dsh/bridges/dialect"
	"github.com/dshkit/dsh/bridges/dialects"
	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/agentrec"
	"github.com/dshkit/dsh/internal/clix"
	"github.com/dshkit/dsh/runtime/tools"
)

func init() {
	commands["hooks"] = command{
		summary: "fire one hook event at a Claude Code, Codex or Gemini CLI hooks configuration",
		run:     runHooks,
	}
}

const hooksUsage = `usage: dsh hooks run --dialect claude-code|codex|gemini (--config FILE | --plugin-dir DIR)... [--project-dir DIR] [--trust] [--canonical] --event EVENT --input FILE|-

Reads one hook input JSON (the stdin a hook would get), runs every hook of FILE that
matches it exactly as the bridge runs them inside a dsh run session (in parallel, merged
in configuration order), and prints one JSON object: the extension point's decision, the
contexts and notices, and every hook's outcome in configuration order. As dsh run, it
decides as the dialect's real engine does; --canonical decides by dsh's canonical
mapping instead, as dsh run --canonical (docs/decisions.md).

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

// hookInput is the union of the stdin fields the bridges read; unknown fields are
// ignored (a real engine's input carries more).
type hookInput struct {
	HookEventName        string          `json:"hook_event_name"`
	SessionID            string          `json:"session_id"`
	TranscriptPath       *string         `json:"transcript_path"`
	CWD                  string          `json:"cwd"`
	Model                string          `json:"model"`
	PermissionMode       string          `json:"permission_mode"`
	TurnID               string          `json:"turn_id"`
	Source               string          `json:"source"`
	Prompt               *string         `json:"prompt"`
	ToolName             string          `json:"tool_name"`
	ToolInput            json.RawMessage `json:"tool_input"`
	ToolUseID            string          `json:"tool_use_id"`
	ToolResponse         json.RawMessage `json:"tool_response"`
	StopHookActive       bool            `json:"stop_hook_active"`
	LastAssistantMessage *string         `json:"last_assistant_message"`
	Error                string          `json:"error"`
	IsInterrupt          bool            `json:"is_interrupt"`
	NotificationType     string          `json:"notification_type"`
}

func hooksRun(ctx context.Context, c *clix.Command, args []string, stdin io.Reader) (*hooksOutput, []string, error) {
	fs := c.Flags
	dialectName := fs.String("dialect", "", strings.Join(dialectNames(), " or ")+" (required)")
	config := fs.String("config", "", "the hooks configuration file")
	projectDir := fs.String("project-dir", "", "the project directory (CLAUDE_PROJECT_DIR; its project hook files load with --trust)")
	trust := fs.Bool("trust", false, "trust the project: load its project-level hook files")
	event := fs.String("event", "", "the hook event, e.g. PreToolUse")
	inputPath := fs.String("input", "", "the hook input JSON file, or - for stdin")
	var dirs pluginDirs
	fs.Var(&dirs, "plugin-dir", "a Claude Code plugin directory (repeatable)")
	canonical := fs.Bool("canonical", false, "decide by dsh's canonical mapping instead of the engine's behaviour")
	if code, ok := c.Parse(args, 0); !ok {
		return nil, nil, clix.Stop(code)
	}
	if *dialectName == "" {
		return nil, nil, clix.Usagef("--dialect is required (%s)", strings.Join(dialectNames(), " or "))
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
	plugins, pluginProblems := loadPlugins(dirs)
	if *event == "" {
		return nil, nil, clix.Usagef("--event is required")
	}
	ev, ok := table.Lookup(*event)
	if !ok {
		var names []string
		for _, e := range table.Events {
			names = append(names, e.Name)
		}
		return nil, nil, clix.Usagef("event %q is not supported by the %s bridge (supported: %s)", *event, table.Dialect, strings.Join(names, ", "))
	}
	if *inputPath == "" {
		return nil, nil, clix.Usagef("--input is required (a file, or - for stdin)")
	}
	if err := checkNamedHooks(table.Dialect, *config); err != nil {
		return nil, nil, err
	}
	var raw []byte
	var err error
	if *inputPath == "-" {
		raw, err = io.ReadAll(stdin)
	} else {
		raw, err = os.ReadFile(*inputPath)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read the input: %v", err)
	}
	var in hookInput
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, nil, fmt.Errorf("the input is not a hook input JSON object: %v", err)
	}
	if in.HookEventName != "" && in.HookEventName != ev.Name {
		return nil, nil, fmt.Errorf("the input's hook_event_name %q does not match --event %s", in.HookEventName, ev.Name)
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
		Interactive: true, // --event Notification idle_prompt fires it
		Observe:     observe, ObserveAsync: observeAsync,
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
	decision, err := fireEvent(ctx, reg, payloadEvent(ev), in, agent)
	if err != nil {
		return nil, warnings, err
	}
	if err := br.Wait(ctx); err != nil {
		return nil, warnings, err
	}

	out := &hooksOutput{
		Event: ev.Name, Point: ev.Point, Decision: decision, Contexts: []string{}, Notices: []string{},
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

// fireEvent builds the canonical payload of the input, runs the event's point through
// the registry with a terminal that yields the point's default, and describes the
// resulting decision.
func fireEvent(ctx context.Context, reg *dsh.Registry, event string, in hookInput, agent *agentrec.Agent) (decisionJSON, error) {
	const agentID = "dsh-hooks"
	aid := agentID
	str := func(s string) *string { return &s }
	switch event {
	case "SessionStart":
		src := dsh.SessionStartSource(in.Source)
		if in.Source == "" {
			src = dsh.SessionStartSourceStartup
		}
		if !src.Valid() {
			return decisionJSON{}, fmt.Errorf("invalid SessionStart source %q", in.Source)
		}
		err := reg.NotifySessionStart(ctx, &dsh.SessionStartPayload{Agent: agent, AgentID: agentID, Source: src})
		return decisionJSON{Kind: "none"}, err
	case "UserPromptSubmit":
		if in.Prompt == nil {
			return decisionJSON{}, fmt.Errorf("the UserPromptSubmit input has no prompt")
		}
		p := &dsh.PreStepPayload{Agent: agent, AgentID: agentID, Turn: 1, Step: 1, Messages: []dsh.UserMessage{{
			ID: "dsh-hooks-prompt", Role: dsh.UserMessageRoleUser, Source: dsh.SourceUser{},
			Content: []dsh.ContentBlock{dsh.TextBlock{Text: *in.Prompt}},
		}}}
		if n, err := strconv.Atoi(in.TurnID); err == nil && n > 0 {
			p.Turn = n
		}
		d, err := reg.RunPreStep(ctx, p, func(context.Context) (dsh.PreStepDecision, error) {
			return dsh.PreStepEnter{Messages: slices.Clone(p.Messages)}, nil
		})
		if err != nil {
			return decisionJSON{}, err
		}
		return dsh.SwitchPreStepDecision(d,
			func(dsh.PreStepEnter) decisionJSON { return decisionJSON{Kind: "enter"} },
			func(r dsh.PreStepReject) decisionJSON { return decisionJSON{Kind: "reject", Reason: r.Reason} },
			func(h dsh.PreStepHalt) decisionJSON { return decisionJSON{Kind: "halt", Reason: str(h.Reason)} },
		), nil
	case "PermissionRequest", "PostToolUseFailure":
		_, _, ex, err := toolExecution(event, in, &aid)
		if err != nil {
			return decisionJSON{}, err
		}
		if event == "PermissionRequest" {
			d, err := reg.RunApprovalAnswer(ctx, &dsh.ApprovalAnswerPayload{Exec: ex}, nil)
			if err != nil {
				return decisionJSON{}, err
			}
			return dsh.SwitchApprovalAnswerDecision(d,
				func(dsh.ApprovalAnswerPass) decisionJSON { return decisionJSON{Kind: "pass"} },
				func(dsh.ApprovalAnswerAllow) decisionJSON { return decisionJSON{Kind: "allow"} },
				func(x dsh.ApprovalAnswerDeny) decisionJSON {
					if x.Interrupt != nil && *x.Interrupt {
						return decisionJSON{Kind: "halt", Reason: x.Message}
					}
					return decisionJSON{Kind: "deny", Reason: x.Message}
				},
			), nil
		}
		// The call ran (through the execute wrappers) and failed with the input's error.
		failure := dsh.ToolFailure{Error: dsh.ToolError{Message: in.Error}, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "Error: " + in.Error}}}
		if in.IsInterrupt {
			failure.Error.Info = &dsh.ToolErrorInfo{Name: tools.NameAbort, Code: tools.CodeAborted}
		}
		if _, err := reg.RunExecute(ctx, &dsh.ExecutePayload{Exec: ex}, func(context.Context) dsh.ToolExecutionResult { return failure }); err != nil {
			return decisionJSON{}, err
		}
		d, err := reg.RunPostTool(ctx, &dsh.PostToolPayload{Exec: ex, Result: failure}, nil)
		if err != nil {
			return decisionJSON{}, err
		}
		return dsh.SwitchPostToolDecision(d,
			func(dsh.PostToolAccept) decisionJSON { return decisionJSON{Kind: "accept"} },
			func(dsh.PostToolBlock) decisionJSON { return decisionJSON{Kind: "block"} },
			func(x dsh.PostToolHalt) decisionJSON { return decisionJSON{Kind: "halt", Reason: str(x.Reason)} },
		), nil
	case "Notification":
		switch in.NotificationType {
		case "permission_prompt":
			ex := dsh.ToolExecution{CallID: "dsh-hooks-call", Name: in.ToolName, Arguments: json.RawMessage("{}"), AgentID: &aid,
				RootCallID: "dsh-hooks-call", Token: dsh.NewToken()}
			err := reg.EmitApprovalPrompt(ctx, &dsh.ApprovalPromptPayload{Exec: ex})
			return decisionJSON{Kind: "none"}, err
		case "idle_prompt":
			err := reg.EmitStatus(ctx, &dsh.StatusPayload{Agent: agent, AgentID: agentID, Status: dsh.AgentStatusIdle})
			return decisionJSON{Kind: "none"}, err
		}
		return decisionJSON{}, fmt.Errorf("the Notification input's notification_type %q: dsh sends permission_prompt and idle_prompt", in.NotificationType)
	case "PreToolUse", "PostToolUse":
		callID, args, ex, err := toolExecution(event, in, &aid)
		if err != nil {
			return decisionJSON{}, err
		}
		if event == "PreToolUse" {
			// The rewrite phase first, where the hooks run and their updatedInput counts;
			// pre-execute then replays their decision.
			var updated json.RawMessage
			rp := &dsh.RewriteInputPayload{CallID: callID, Name: in.ToolName, Input: args, ModelInput: args, AgentID: &aid}
			err := reg.RunRewriteInput(ctx, rp, 0, func(_ context.Context, _ string, d dsh.RewriteDecision) (*dsh.RewriteInputPayload, error) {
				switch x := d.(type) {
				case dsh.RewriteReplace:
					updated = x.Args
				}
				return nil, nil
			})
			if err != nil {
				return decisionJSON{}, err
			}
			if updated != nil {
				ex.Arguments = updated
			}
			d, err := reg.RunPreTool(ctx, &dsh.PreToolPayload{Exec: ex}, nil)
			if err != nil {
				return decisionJSON{}, err
			}
			out := dsh.SwitchPreToolDecision(d,
				func(dsh.PreToolAllow) decisionJSON { return decisionJSON{Kind: "allow"} },
				func(x dsh.PreToolDeny) decisionJSON { return decisionJSON{Kind: "deny", Reason: str(x.Reason)} },
				func(x dsh.PreToolAsk) decisionJSON { return decisionJSON{Kind: "ask", Reason: x.Reason} },
				func(x dsh.PreToolHalt) decisionJSON { return decisionJSON{Kind: "halt", Reason: str(x.Reason)} },
			)
			out.UpdatedInput = updated
			return out, nil
		}
		resp := in.ToolResponse
		if len(resp) == 0 {
			resp = json.RawMessage("null")
		}
		var text string
		if json.Unmarshal(resp, &text) != nil {
			text = string(resp)
		}
		result := dsh.ToolSuccess{Value: resp, Content: []dsh.ContentBlock{dsh.TextBlock{Text: text}}}
		d, err := reg.RunPostTool(ctx, &dsh.PostToolPayload{Exec: ex, Result: result}, nil)
		if err != nil {
			return decisionJSON{}, err
		}
		return dsh.SwitchPostToolDecision(d,
			func(dsh.PostToolAccept) decisionJSON { return decisionJSON{Kind: "accept"} },
			func(x dsh.PostToolBlock) decisionJSON {
				var parts []string
				for _, c := range x.Feedback {
					if t, ok := c.(dsh.TextBlock); ok {
						parts = append(parts, t.Text)
					}
				}
				return decisionJSON{Kind: "block", Reason: str(strings.Join(parts, "\n"))}
			},
			func(x dsh.PostToolHalt) decisionJSON { return decisionJSON{Kind: "halt", Reason: str(x.Reason)} },
		), nil
	case "Stop":
		p := &dsh.TurnStoppingPayload{Agent: agent, AgentID: agentID, Turn: 1, StopHookActive: in.StopHookActive}
		if in.StopHookActive {
			p.Continuations = 1
		}
		if n, err := strconv.Atoi(in.TurnID); err == nil && n > 0 {
			p.Turn = n
		}
		if err := reg.NotifyTurnStopping(ctx, p); err != nil {
			return decisionJSON{}, err
		}
		halted, steered := agent.Halted(), agent.Steered()
		switch {
		case len(halted) > 0:
			return decisionJSON{Kind: "halt", Reason: &halted[0]}, nil
		case len(steered) > 0:
			var parts []string
			for _, m := range steered {
				for _, c := range m.Content {
					if t, ok := c.(dsh.TextBlock); ok {
						parts = append(parts, t.Text)
					}
				}
			}
			return decisionJSON{Kind: "continue", Reason: str(strings.Join(parts, "\n\n"))}, nil
		}
		return decisionJSON{Kind: "stop"}, nil
	}
	return decisionJSON{}, fmt.Errorf("event %q is not supported", event)
}

// toolExecution is the call a tool event's input names, as dsh hooks run fires it: its
// id (a fixed one when the input has none), its arguments ({} when none) and the
// execution the tool points see.
func toolExecution(event string, in hookInput, aid *string) (callID string, args json.RawMessage, ex dsh.ToolExecution, err error) {
	if in.ToolName == "" {
		return "", nil, ex, fmt.Errorf("the %s input has no tool_name", event)
	}
	callID = in.ToolUseID
	if callID == "" {
		callID = "dsh-hooks-call"
	}
	args = in.ToolInput
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	ex = dsh.ToolExecution{CallID: callID, Name: in.ToolName, Arguments: args, AgentID: aid,
		RootCallID: callID, Token: dsh.NewToken()}
	return callID, args, ex, nil
}
