// Package codex is the Codex CLI hook bridge: it runs the shell hooks of Codex hooks.json
// files (user, project and plugin) on dsh's interception surface. It follows the real
// Codex engine (docs/design/HOOK-PROTOCOLS.md#bridge-decision-2-codex-follows-the-real-codex-engine): hooks run as `$SHELL -c`,
// exit 2 blocks only with non-empty stderr, outputs are decoded strictly against the
// published schemas, and invalid combinations (ask, allow without updatedInput, a deny
// without a reason, unknown fields) make the hook failed while the call proceeds. The
// protocol mapping is the generated table hookmap.Codex (spec/bridges/codex.cue).
//
// The mapped events and their extension points are those of the Claude Code bridge
// (see bridges/claudecode), without SessionEnd, PostToolUseFailure and Notification, which
// Codex lacks; the table decides what each output means. PermissionRequest follows the
// engine (its deny needs no message; interrupt and updatedInput make the hook failed).
// PreCompact and PostCompact only observe a compaction (a block does not defer it;
// continue:false halts the turn, as Codex 0.169.0). As in the Claude Code bridge, the
// bridge follows the real engine by default (Config.Canonical asks for dsh's canonical
// mapping); the built-in tools in builtin.StyleCodex write Bash's output as Codex does.
package codex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dshkit/dsh/bridges/dialect"
	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/bridges/internal/hookbridge"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
	"github.com/dshkit/dsh/generated/wire/codex"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// The events of the codex table (spec/bridges) that the encoder builds an input for.
const (
	evSessionStart      = "SessionStart"
	evUserPromptSubmit  = "UserPromptSubmit"
	evPreToolUse        = "PreToolUse"
	evPostToolUse       = "PostToolUse"
	evPermissionRequest = "PermissionRequest"
	evStop              = "Stop"
	evPreCompact        = "PreCompact"
	evPostCompact       = "PostCompact"
	evPreModelRequest   = "PreModelRequest"
	evInterrupt         = "Interrupt"
	evSessionEnd        = "SessionEnd"
	evSubagentStart     = "SubagentStart"
	evSubagentStop      = "SubagentStop"
)

// Plugin is the plugin name stamped on every message the bridge adds.
var Plugin = hookmap.Codex.Plugin

// ProjectFiles are the project-level hook files, relative to the project directory, that
// Config.DiscoverProject loads (when the project is trusted).
var ProjectFiles = dialect.ProjectFiles(settings)

// settings are the engine's settings files that hold hooks, in its load order.
var settings = []dialect.SettingsFile{
	{Source: "user", Scope: dialect.ScopeUser, Dir: ".codex", DirEnv: "CODEX_HOME", File: "hooks.json"},
	{Source: "project", Scope: dialect.ScopeProject, Dir: ".codex", File: "hooks.json"},
}

// Descriptor describes the Codex dialect to dsh's commands (bridges/dialect): the hooks
// files ($CODEX_HOME/hooks.json, default ~/.codex/hooks.json, then the project's
// .codex/hooks.json), the rollout transcript, the built-in tools in builtin.StyleCodex,
// no cap on Stop continuations (as the engine), and the openai provider with hook
// contexts as developer messages.
func Descriptor() *dialect.Descriptor {
	return &dialect.Descriptor{
		Name: hookmap.Codex.Dialect, Table: &hookmap.Codex,
		Settings:         settings,
		TranscriptSuffix: ".rollout.jsonl",
		NewTranscript: func(path, sessionID, workspace string) (dialect.Transcript, error) {
			return NewRollout(path, sessionID, workspace)
		},
		ToolStyle:       "codex",
		Rules:           &Rules,
		AgentRoles:      UserAgentRoles,
		ContinuationCap: math.MaxInt,
		ModelProvider:   "openai",
		// Measured in 0.169.0 (cli/codex-stdin-and-prompt): the prompt, a blank line, then
		// stdin in <stdin> tags, a newline added when it has none.
		StdinPrompt:       dialect.StdinPrompt{Separator: "\n\n", Open: "<stdin>\n", Close: "</stdin>"},
		DeveloperContexts: true,
		New: func(c dialect.Config) (dialect.Bridge, error) {
			b, err := New(c)
			if err != nil {
				return nil, err // not a nil *Bridge in the interface
			}
			return b, nil
		},
	}
}

// ShellTools are the tools whose tool_input Codex reduces to {command}
// (docs/design/HOOK-PROTOCOLS.md#23-stdin-fields).
var ShellTools = []string{"Bash", "shell", "local_shell", "shell_command", "exec_command", "container.exec", "unified_exec"}

// DefaultModel is the model sent when neither the session nor Config names one.
const DefaultModel = "unknown"

// Config configures a Codex bridge. It uses Files (hooks.json files; explicitly named
// files load as given, dsh bridge decision 10), Plugins (PLUGIN_ROOT, CLAUDE_PLUGIN_ROOT and
// the data variables exported to their hooks and substituted as ${...}), Workspace,
// ProjectDir (which decides which files are project-level; Codex exports no project
// variable), DiscoverProject, TrustProject, Session, Recorder, Logger, StderrSummaryMax,
// Getenv (for $SHELL), BaseEnv, Model (default DefaultModel) and Canonical; New ignores
// the other fields.
//
// Canonical makes the bridge write its hooks' words for the model in dsh's canonical form.
// Without it (the default) they read as the real engine writes them (differential/testdata/differences.md
// lists where they still differ): a denial reads "Command blocked by PreToolUse
// hook: <reason>. Command: <command>" and a Stop block continues the turn with
// <hook_prompt hook_run_id="...">reason</hook_prompt>. dsh run sets it with --canonical;
// the conformance scenarios set it too. The built-in tools word Bash's output as Codex's
// shell with builtin.StyleCodex.
type Config = dialect.Config

// Option adjusts a bridge (see WithMessageIDs, WithObserver, WithKillGrace).
type Option = hookbridge.Option

// WithMessageIDs sets the generator of the ids of the messages the bridge adds.
func WithMessageIDs(fn func() string) Option { return hookbridge.WithMessageIDs(fn) }

// WithObserver registers fn to receive the report of every event that ran hooks.
func WithObserver(fn func(*hookproto.Report)) Option { return hookbridge.WithObserver(fn) }

// WithAsyncObserver registers fn to receive every async hook run when it finishes.
func WithAsyncObserver(fn func(hookproto.HookRun)) Option { return hookbridge.WithAsyncObserver(fn) }

// WithKillGrace tunes the runner: TERM to KILL on timeout, and the wait for output
// after a hook exits (0 keeps the defaults).
func WithKillGrace(kill, pipe time.Duration) Option { return hookbridge.WithKillGrace(kill, pipe) }

// Bridge is a loaded Codex bridge: a dsh plugin.
type Bridge struct {
	*hookbridge.Bridge
}

// New loads the configured hook files and returns the bridge; see claudecode.New.
func New(cfg Config, opts ...Option) (*Bridge, error) {
	b, err := hookbridge.New(behavior(cfg), cfg, opts...)
	if err != nil {
		return nil, err
	}
	return &Bridge{b}, nil
}

// behavior is how the bridge behaves for cfg (table, encoder with cfg.Model, project
// files, and the engine's rendering unless cfg.Canonical).
func behavior(cfg Config) hookbridge.Behavior {
	model, asEngine := cfg.Model, !cfg.Canonical
	var render hookbridge.Render
	if asEngine {
		render = hookbridge.Render{Deny: renderDeny, PermissionDeny: renderPermissionDeny, Stop: renderStop, StopForm: dsh.PluginFormRelay,
			RewriteSilent: true}
	}
	if model == "" {
		model = DefaultModel
	}
	return hookbridge.Behavior{
		Name: hookproto.Codex, Table: &hookmap.Codex, ProjectFiles: ProjectFiles, Rules: &Rules,
		Encode:    func(in hookbridge.Input) ([]byte, error) { return encode(in, model) },
		TrustHint: "pass --trust (Config.TrustProject) to load the project's hooks",
		Render:    render,
		// An updatedInput goes back onto the call's own arguments, as the real engine does.
		MapRewrite: MapRewrite,
		ToolName:   HookToolName,
		MatcherAliases: func(tool string) []string {
			if tool == applyPatch {
				return applyPatchAliases
			}
			return nil
		},
	}
}

// HookToolName is the tool_name Codex gives a tool's hooks, the name their matchers test:
// "Bash" for exec_command and for write_stdin (which fires hooks only when it sees the
// command of an exec_command end: see encode), the tool's own name for every other tool.
// Measured on 0.169.0 (differential all/exit0, codex/write-stdin-*).
func HookToolName(tool string) string {
	if tool == writeStdin || tool == execCommand {
		return "Bash"
	}
	if n := hookNames()[tool]; n != "" {
		return n
	}
	return tool
}

// agentFunctions are the names, and the hooks' names, of the codex toolset's agent
// functions (multi_agent_v1).
var agentFunctions = sync.OnceValue(func() map[string]bool {
	rows, _ := builtin.AgentRows(builtin.StyleCodex)
	out := map[string]bool{}
	for _, r := range rows {
		out[r.Name] = true
		if r.HookName != "" {
			out[r.HookName] = true
		}
	}
	return out
})

// hookNames are the tool_names the codex toolset's rows give their tools' hooks
// (spec/toolsets/codex.json's hook_name: the multi_agent_v1 functions run their namespace
// and name together, all but spawn_agent; measured in 0.169.0: codex/subagent-spawn).
var hookNames = sync.OnceValue(func() map[string]string { return builtin.HookNames(builtin.StyleCodex) })

// execCommand is Codex's shell tool (unified exec).
const execCommand = "exec_command"

// applyPatch is Codex's freeform patch tool: its hooks see it by its own name with the
// patch as {command}, and only once the patch parses (a patch that does not parse fails
// before PreToolUse; measured on 0.169.0, codex/apply-patch-bad).
const applyPatch = "apply_patch"

// applyPatchAliases are the names apply_patch's matchers also match it by (measured on
// 0.169.0: codex/apply-patch-matchers; its hooks still see "apply_patch").
var applyPatchAliases = []string{"Edit", "Write"}

// writeStdin is Codex's tool that continues a command exec_command left running.
const writeStdin = "write_stdin"

// execChunk is what the encoder reads of an exec_command or write_stdin value (the
// built-in tools' execResult): whether the command ended, and for write_stdin the
// exec_command call it continues.
type execChunk struct {
	ExitCode  *int   `json:"exitCode"`
	SessionID int64  `json:"sessionId"`
	Command   string `json:"command"`
	CallID    string `json:"callId"`
}

// continuedExec reads the chunk of a tool's value; running says the command is still
// running after the call (exec_command left it in a session, or write_stdin did not see it
// end), so Codex fires no PostToolUse for it yet.
func continuedExec(value json.RawMessage) (c execChunk, running bool) {
	if json.Unmarshal(value, &c) != nil {
		return execChunk{}, false
	}
	return c, c.ExitCode == nil && c.SessionID != 0
}

// MapRewrite maps a PreToolUse updatedInput back onto the tool's arguments, as the real
// engine does: for the ShellTools the hook saw {command}, so its command replaces the
// call's (a string command, exec_command's cmd, or an argv as ["bash", "-lc", command]),
// the other arguments kept; any other tool takes the object as given.
func MapRewrite(tool string, args, updated json.RawMessage) json.RawMessage {
	if tool == applyPatch {
		// The hook saw the patch as {command}; it goes back as the call's text.
		var u struct {
			Command *string `json:"command"`
		}
		if json.Unmarshal(updated, &u) != nil || u.Command == nil {
			return updated
		}
		data, _ := json.Marshal(map[string]string{"input": *u.Command})
		return data
	}
	if !slices.Contains(ShellTools, tool) {
		return updated
	}
	var u struct {
		Command *string `json:"command"`
	}
	if json.Unmarshal(updated, &u) != nil || u.Command == nil {
		return updated // not {command}: as given (the schema check decides)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil || obj == nil {
		obj = map[string]json.RawMessage{}
	}
	key := "command"
	if _, ok := obj["command"]; !ok {
		if _, ok := obj["cmd"]; ok {
			key = "cmd"
		}
	}
	var argv []string
	cmd, _ := json.Marshal(*u.Command)
	if json.Unmarshal(obj[key], &argv) == nil {
		cmd, _ = json.Marshal([]string{"bash", "-lc", *u.Command})
	}
	obj[key] = cmd
	data, err := json.Marshal(obj)
	if err != nil {
		return updated
	}
	return data
}

// renderDeny is the real engine's tool output for a denied call: "Command blocked by
// PreToolUse hook: <reason>. Command: <command>" for its shell and patch tools, "Tool call
// blocked by PreToolUse hook: <reason>. Tool: <tool_name>" for the others (measured in
// 0.169.0: codex/mcp-call-deny), the first denying hook's reason.
func renderDeny(tool string, args json.RawMessage, rep *hookproto.Report) string {
	reason := rep.Merged.Reason
	if bs := hookbridge.Blockers(rep); len(bs) > 0 {
		reason = bs[0].Reason
	}
	if !slices.Contains(ShellTools, tool) && tool != applyPatch {
		name := tool
		if n, ok := hookNames()[tool]; ok {
			name = n
		}
		return "Tool call blocked by PreToolUse hook: " + reason + ". Tool: " + name
	}
	var in struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal(ToolInput(tool, args), &in)
	return "Command blocked by PreToolUse hook: " + reason + ". Command: " + in.Command
}

// renderPermissionDeny is the real engine's tool output for a call a PermissionRequest
// hook denied: its shell tool's failure, `exec_command failed: CreateProcess { message:
// "Rejected(\"<reason>\")" }` (Rust's debug quoting, which strconv.Quote matches for
// printable text); another tool's failure names that tool.
func renderPermissionDeny(tool, reason string) string {
	name := tool
	if slices.Contains(ShellTools, tool) {
		name = "exec_command"
	}
	return name + " failed: CreateProcess { message: " + strconv.Quote("Rejected("+strconv.Quote(reason)+")") + " }"
}

// renderStop is the real engine's continuation after a Stop or SubagentStop block: one
// <hook_prompt hook_run_id="<event>:<n>:<source>">reason</hook_prompt> per blocking hook,
// <event> being "stop" or "subagent-stop" (measured in 0.169.0: codex/subagent-hooks).
func renderStop(rep *hookproto.Report) []string {
	event := "stop"
	if rep.Event != nil && rep.Event.Name == evSubagentStop {
		event = "subagent-stop"
	}
	var out []string
	for _, b := range hookbridge.Blockers(rep) {
		out = append(out, fmt.Sprintf("<hook_prompt hook_run_id=%q>%s</hook_prompt>", fmt.Sprintf("%s:%d:%s", event, b.Position, b.Source), b.Reason))
	}
	if len(out) == 0 {
		out = []string{rep.Merged.Reason}
	}
	return out
}

// encode builds the stdin of one event as the generated wire input type (no trailing
// newline): model and permission_mode always, turn_id (Session.TurnID, else the turn
// number; on PreToolUse too, as the real engine sends it although the published schema
// does not list it), transcript_path null when unknown, {command} as the tool_input of
// shell-like tools and their output text as the tool_response.
func encode(in hookbridge.Input, defaultModel string) ([]byte, error) {
	s := in.Session
	mode := codex.PermissionMode(s.PermissionMode)
	if !mode.Valid() {
		mode = codex.PermissionModeDefault
	}
	model := s.Model
	if model == "" {
		model = defaultModel
	}
	var transcript *string
	if s.TranscriptPath != "" {
		t := s.TranscriptPath
		transcript = &t
	}
	turn := strconv.Itoa(in.Turn)
	if s.TurnID != "" {
		turn = s.TurnID
	}
	// Inside a sub-agent the tool events name the child (measured in 0.169.0:
	// codex/subagent-spawn).
	var agentID, agentType *string
	if l := s.Lineage; l != nil {
		id, typ := s.AgentID, l.AgentType
		agentID, agentType = &id, &typ
	}
	var v interface {
		MarshalJSON() ([]byte, error)
		Validate() error
	}
	switch in.Event {
	case evSessionStart:
		v = codex.SessionStartInput{
			HookEventName: codex.SessionStartInputHookEventNameSessionStart, SessionID: s.SessionID,
			Source: codex.SessionStartInputSource(in.Source), TranscriptPath: transcript, CWD: s.CWD,
			Model: model, PermissionMode: mode,
		}
	case evUserPromptSubmit:
		v = codex.UserPromptSubmitInput{
			HookEventName: codex.UserPromptSubmitInputHookEventNameUserPromptSubmit, SessionID: s.SessionID,
			TranscriptPath: transcript, CWD: s.CWD, Model: model, PermissionMode: mode, TurnID: turn,
			Prompt: in.Prompt,
		}
	case evPreToolUse:
		if in.ToolName == writeStdin {
			return nil, hookbridge.ErrNotFired // measured: Codex fires no hook for write_stdin
		}
		if in.ToolName == applyPatch && !builtin.CodexPatchParses(patchText(in.ToolInput)) {
			return nil, hookbridge.ErrNotFired
		}
		v = codex.PreToolUseInput{
			HookEventName: codex.PreToolUseInputHookEventNamePreToolUse, SessionID: s.SessionID,
			TranscriptPath: transcript, CWD: s.CWD, Model: model, PermissionMode: mode,
			ToolName: HookToolName(in.ToolName), ToolInput: ToolInput(in.ToolName, in.ToolInput), ToolUseID: in.ToolUseID,
			TurnID: &turn, AgentID: agentID, AgentType: agentType,
		}
	case evPostToolUse:
		// A command exec_command left running reaches PostToolUse when a write_stdin sees it
		// end, as that exec_command call's, with the last chunk's output (measured:
		// codex/write-stdin-poll); neither call fires it while the command runs.
		toolInput, useID := ToolInput(in.ToolName, in.ToolInput), in.ToolUseID
		if slices.Contains(ShellTools, in.ToolName) || in.ToolName == writeStdin {
			c, running := continuedExec(in.ToolResponse)
			if running {
				return nil, hookbridge.ErrNotFired
			}
			if in.ToolName == writeStdin {
				if c.CallID == "" {
					return nil, hookbridge.ErrNotFired // a failed write_stdin
				}
				toolInput, _ = json.Marshal(struct {
					Command string `json:"command"`
				}{c.Command})
				useID = c.CallID
			}
		}
		resp := ToolResponse(HookToolName(in.ToolName), in.ToolResponse)
		v = codex.PostToolUseInput{
			HookEventName: codex.PostToolUseInputHookEventNamePostToolUse, SessionID: s.SessionID,
			TranscriptPath: transcript, CWD: s.CWD, Model: model, PermissionMode: mode, TurnID: turn,
			ToolName: HookToolName(in.ToolName), ToolInput: toolInput, ToolUseID: useID,
			ToolResponse: resp, AgentID: agentID, AgentType: agentType,
		}
	case evPermissionRequest:
		if in.ToolName == writeStdin {
			return nil, hookbridge.ErrNotFired
		}
		v = codex.PermissionRequestInput{
			HookEventName: codex.PermissionRequestInputHookEventNamePermissionRequest, SessionID: s.SessionID,
			TranscriptPath: transcript, CWD: s.CWD, Model: model, PermissionMode: mode, TurnID: turn,
			ToolName: HookToolName(in.ToolName), ToolInput: permissionToolInput(in.ToolName, in.ToolInput),
			AgentID: agentID, AgentType: agentType,
		}
	case evStop:
		v = codex.StopInput{
			HookEventName: codex.StopInputHookEventNameStop, SessionID: s.SessionID,
			TranscriptPath: transcript, CWD: s.CWD, Model: model, PermissionMode: mode, TurnID: turn,
			StopHookActive: in.StopHookActive, LastAssistantMessage: s.LastAssistantMessage,
		}
	case evSubagentStart, evSubagentStop:
		if s.Lineage == nil {
			return nil, fmt.Errorf("codex: %s without the child's lineage", in.Event)
		}
		if s.TurnID == "" && in.Turn == 0 {
			turn = strconv.Itoa(s.Turn) // SubagentStart comes before the child's first turn
		}
		if in.Event == evSubagentStart {
			// The child's rollout is the transcript here (measured: codex/subagent-spawn).
			v = codex.SubagentStartInput{
				HookEventName: codex.SubagentStartInputHookEventNameSubagentStart, SessionID: s.SessionID, TurnID: turn,
				TranscriptPath: childTranscript(transcript, s.SessionID, s.AgentID), CWD: s.CWD, Model: model, PermissionMode: mode,
				AgentID: s.AgentID, AgentType: s.Lineage.AgentType,
			}
			break
		}
		v = codex.SubagentStopInput{
			HookEventName: codex.SubagentStopInputHookEventNameSubagentStop, SessionID: s.SessionID, TurnID: turn,
			TranscriptPath: transcript, AgentTranscriptPath: childTranscript(transcript, s.SessionID, s.AgentID),
			CWD: s.CWD, Model: model, PermissionMode: mode, StopHookActive: in.StopHookActive,
			AgentID: s.AgentID, AgentType: s.Lineage.AgentType, LastAssistantMessage: in.Answer,
		}
	case evPreCompact:
		v = codex.PreCompactInput{
			HookEventName: codex.PreCompactInputHookEventNamePreCompact, SessionID: s.SessionID, TurnID: turn,
			TranscriptPath: transcript, CWD: s.CWD, Model: model, Trigger: codex.PreCompactInputTrigger(in.Trigger),
		}
	case evPostCompact:
		v = codex.PostCompactInput{
			HookEventName: codex.PostCompactInputHookEventNamePostCompact, SessionID: s.SessionID, TurnID: turn,
			TranscriptPath: transcript, CWD: s.CWD, Model: model, Trigger: codex.PostCompactInputTrigger(in.Trigger),
		}
	case evPreModelRequest:
		m := model
		if in.Request != nil && in.Request.Config.Model != "" {
			m = in.Request.Config.Model
		}
		v = codex.PreModelRequestInput{
			HookEventName: codex.PreModelRequestInputHookEventNamePreModelRequest, SessionID: s.SessionID, TurnID: turn,
			CWD: s.CWD, TranscriptPath: transcript, Model: m,
		}
	case evInterrupt:
		v = codex.InterruptInput{
			HookEventName: codex.InterruptInputHookEventNameInterrupt, SessionID: s.SessionID, TurnID: turn,
			TranscriptPath: transcript, CWD: s.CWD, Model: model, PermissionMode: mode,
		}
	case evSessionEnd:
		v = codex.SessionEndInput{
			HookEventName: codex.SessionEndInputHookEventNameSessionEnd, SessionID: s.SessionID,
			TranscriptPath: transcript, CWD: s.CWD, Reason: codex.SessionEndInputReasonOther,
		}
	default:
		return nil, fmt.Errorf("codex: unmapped event %q", in.Event)
	}
	if err := v.Validate(); err != nil {
		return nil, err
	}
	return v.MarshalJSON()
}

// childTranscript is a child's rollout beside its parent's: the parent's file name with
// the session id replaced by the child's agent id, as Codex names a thread's rollout
// (rollout-<time>-<thread id>.jsonl); nil when the parent has none.
func childTranscript(parent *string, sessionID, agentID string) *string {
	if parent == nil {
		return nil
	}
	dir, name := filepath.Split(*parent)
	if sessionID != "" && strings.Contains(name, sessionID) {
		name = strings.Replace(name, sessionID, agentID, 1)
	} else {
		name = "rollout-" + agentID + ".jsonl"
	}
	p := filepath.Join(dir, name)
	return &p
}

// ToolResponse is the tool_response Codex sends: for the ShellTools a plain string, the
// command's output (dsh's {stdout, stderr} joined); any other value as it is (null when
// absent).
func ToolResponse(tool string, value json.RawMessage) json.RawMessage {
	if len(value) == 0 {
		return json.RawMessage("null")
	}
	if agentFunctions()[tool] {
		// The agent functions' output is their text (measured in 0.169.0: a JSON string
		// holding the compact JSON the model read; codex/subagent-spawn).
		var b bytes.Buffer
		if json.Compact(&b, value) == nil {
			data, _ := json.Marshal(b.String())
			return data
		}
	}
	for _, t := range ShellTools {
		if t != tool {
			continue
		}
		var r struct {
			Stdout *string `json:"stdout"`
			Stderr string  `json:"stderr"`
		}
		if json.Unmarshal(value, &r) == nil && r.Stdout != nil {
			data, _ := json.Marshal(*r.Stdout + r.Stderr)
			return data
		}
	}
	return value
}

// permissionToolInput is the tool_input of PermissionRequest: as ToolInput, plus for the
// ShellTools the call's stated reason as description (the engine sends the escalation's
// justification; dsh's Bash takes a description), when there is one.
func permissionToolInput(tool string, args json.RawMessage) json.RawMessage {
	in := ToolInput(tool, args)
	if !slices.Contains(ShellTools, tool) {
		return in
	}
	var a struct {
		Description   *string `json:"description"`
		Justification *string `json:"justification"`
	}
	_ = json.Unmarshal(args, &a)
	why := a.Justification
	if why == nil {
		why = a.Description
	}
	if why == nil {
		return in
	}
	var cmd struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal(in, &cmd)
	data, _ := json.Marshal(struct {
		Command     string `json:"command"`
		Description string `json:"description"`
	}{cmd.Command, *why})
	return data
}

// ToolInput is the tool_input Codex sends: {command} for the ShellTools (a string
// command as is, an argv array joined by spaces, anything else ""), the arguments as
// they are for every other tool ({} when absent).
func ToolInput(tool string, args json.RawMessage) json.RawMessage {
	if tool == applyPatch {
		// The freeform patch (the call's text, dsh's argument "input") as {command}
		// (measured: codex/apply-patch).
		var in struct {
			Input string `json:"input"`
		}
		_ = json.Unmarshal(args, &in)
		data, _ := json.Marshal(struct {
			Command string `json:"command"`
		}{in.Input})
		return data
	}
	shell := false
	for _, t := range ShellTools {
		if t == tool {
			shell = true
		}
	}
	if !shell {
		if len(args) == 0 {
			return json.RawMessage("{}")
		}
		return args
	}
	var obj map[string]json.RawMessage
	_ = json.Unmarshal(args, &obj)
	raw, ok := obj["command"]
	if !ok {
		raw = obj["cmd"]
	}
	cmd := ""
	var str string
	var argv []string
	if json.Unmarshal(raw, &str) == nil {
		cmd = str
	} else if json.Unmarshal(raw, &argv) == nil {
		cmd = strings.Join(argv, " ")
	}
	data, _ := json.Marshal(struct {
		Command string `json:"command"`
	}{cmd})
	return data
}

// patchText is an apply_patch call's patch (its argument "input").
func patchText(args json.RawMessage) string {
	var in struct {
		Input string `json:"input"`
	}
	_ = json.Unmarshal(args, &in)
	return in.Input
}
