// Package claudecode is the Claude Code hook bridge: it runs the shell hooks of Claude
// Code settings files (settings.json, settings.local.json, plugin hooks/hooks.json) on
// dsh's interception surface. It follows the classic Claude Code contract (JSON on
// stdout only on exit 0, exit 2 blocks with stderr as the reason) and the current
// matcher rule; the protocol mapping is the generated table hookmap.ClaudeCode
// (spec/bridges/claudecode.cue). See docs/design/HOOK-PROTOCOLS.md, "dsh bridge decisions".
//
// Mapped events: SessionStart (agent/session-start: contexts are injected before the
// first request; cannot block), UserPromptSubmit (agent/pre-step: block rejects the
// prompt, continue:false halts, contexts join the step), PreToolUse (run once per call in
// tools/rewrite-input, where updatedInput rewrites the arguments, folded in configuration
// order; then tools/pre-execute: deny, ask through the approval seam, halt; allow never
// pre-approves; contexts follow the tool result), PermissionRequest (approval/answer: allow or deny a call that needs
// approval before anyone is asked; deny with interrupt ends the turn), PostToolUse
// (tools/post-execute, successful results only: block turns the result into feedback,
// halt, contexts), PostToolUseFailure (tools/post-execute, calls that ran and failed:
// contexts), Notification (observe-only: approval/prompt as permission_prompt, and with
// Config.Interactive agent/status idle as idle_prompt), Stop (agent/turn-stopping: block
// steers the reason into another step, halt ends the turn), PreCompact
// (compaction/pre-compact: block or exit 2 defers, plain stdout adds summarizer
// instructions), PostCompact (compaction/post-compact: additionalContext follows the
// checkpoint), SessionEnd (agent/session-end: cleanup only, reason "other" when the agent
// is closed; nothing it prints counts).
//
// By default the bridge does what the real engine does where it differs from that
// canonical mapping, in the engine's words (docs/decisions/0004-bridges.md);
// Config.Canonical asks for the canonical mapping. Pair it with the built-in tools in
// builtin.StyleClaudeCode for Claude Code's tool results.
package claudecode

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dshkit/dsh/bridges/claudecode/agents"
	"github.com/dshkit/dsh/bridges/dialect"
	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/bridges/internal/hookbridge"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
	"github.com/dshkit/dsh/generated/wire/claudecode"
	"github.com/dshkit/dsh/runtime/subagent"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// The events of the claude-code table (spec/bridges) that the encoder builds an input for.
const (
	evSessionStart       = "SessionStart"
	evInstructionsLoaded = "InstructionsLoaded"
	evUserPromptSubmit   = "UserPromptSubmit"
	evPromptExpansion    = "UserPromptExpansion"
	evPreToolUse         = "PreToolUse"
	evPostToolUse        = "PostToolUse"
	evPostToolUseFailure = "PostToolUseFailure"
	evPostToolBatch      = "PostToolBatch"
	evSetup              = "Setup"
	evPermissionRequest  = "PermissionRequest"
	evNotification       = "Notification"
	evStop               = "Stop"
	evSessionEnd         = "SessionEnd"
	evStopFailure        = "StopFailure"
	evPreCompact         = "PreCompact"
	evPostCompact        = "PostCompact"
	evSubagentStart      = "SubagentStart"
	evSubagentStop       = "SubagentStop"
)

// Plugin is the plugin name stamped on every message the bridge adds.
var Plugin = hookmap.ClaudeCode.Plugin

// ProjectFiles are the project-level settings files, relative to the project directory,
// that Config.DiscoverProject loads (when the project is trusted).
var ProjectFiles = dialect.ProjectFiles(settings)

// settings are the engine's settings files that hold hooks, in its load order.
var settings = []dialect.SettingsFile{
	{Source: "user", Scope: dialect.ScopeUser, Dir: ".claude", File: "settings.json"},
	{Source: "project", Scope: dialect.ScopeProject, Dir: ".claude", File: "settings.json"},
	{Source: "local", Scope: dialect.ScopeProject, Dir: ".claude", File: "settings.local.json"},
}

// Descriptor describes the Claude Code dialect to dsh's commands (bridges/dialect): the
// settings hierarchy (~/.claude/settings.json, then the project's .claude/settings.json
// and .claude/settings.local.json), the JSONL transcript, the built-in tools in
// builtin.StyleClaudeCode, at most 8 Stop continuations per turn (the engine's cap,
// measured by the differential suite), the anthropic provider, CLAUDE_ENV_FILE and
// RevalidateAfterRewrite.
func Descriptor() *dialect.Descriptor {
	return &dialect.Descriptor{
		Name: hookmap.ClaudeCode.Dialect, Table: &hookmap.ClaudeCode,
		Settings:         settings,
		TranscriptSuffix: ".transcript.jsonl",
		NewTranscript: func(path, sessionID, workspace string) (dialect.Transcript, error) {
			return NewTranscript(path, sessionID, workspace)
		},
		SubagentTranscript: SubagentTranscript,
		NewSubagentTranscript: func(path, sessionID, agentID, workspace string) (dialect.Transcript, error) {
			return NewSubagentTranscript(path, sessionID, agentID, workspace)
		},
		ToolStyle:       "claude-code",
		Rules:           &Rules,
		ContinuationCap: 8,
		// Measured in 2.1.328: CLAUDE_CODE_STOP_HOOK_BLOCK_CAP ?? 8, and a cap of 0 or
		// less caps nothing.
		ContinuationCapEnv: "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP",
		ModelProvider:      "anthropic",
		// Measured in 2.1.328: trust is `Se() || ra()`, Se() being !isInteractive(), so
		// claude -p runs the project's hooks with no trust record (settings/hierarchy).
		HeadlessTrust: true,
		// Measured in 2.1.328 (subagent/definition*): ~/.claude/agents and .claude/agents.
		AgentDir:   agents.Dir,
		StreamJSON: "claude-code",
		// Measured in 2.1.328 (cli/stdin-and-prompt): [prompt, stdin].filter(Boolean).join("\n").
		StdinPrompt:         dialect.StdinPrompt{Separator: "\n"},
		SystemContextModels: hookmap.ClaudeCode.SystemContextModels,
		EnvFile:             true,
		Revalidate:          true,
		New: func(c dialect.Config) (dialect.Bridge, error) {
			b, err := New(c)
			if err != nil {
				return nil, err // not a nil *Bridge in the interface
			}
			return b, nil
		},
	}
}

// Config configures a Claude Code bridge. It uses Files (settings.json shape, or a
// wrapper-less plugin hooks file; explicitly named files load as given, dsh bridge decision
// 10), Plugins (CLAUDE_PLUGIN_ROOT and CLAUDE_PLUGIN_DATA exported to their hooks and
// substituted as ${...}), Workspace, ProjectDir (CLAUDE_PROJECT_DIR, exported to every hook
// and substituted as ${CLAUDE_PROJECT_DIR}; default Workspace), DiscoverProject,
// TrustProject, Session, Recorder, Logger, BaseEnv, StderrSummaryMax, EnvFile (exported to
// SessionStart hooks as CLAUDE_ENV_FILE: the file whose `export NAME=value` lines the
// session's Bash commands source, see builtin.Options.EnvFile), Canonical, Interactive and
// RevalidateAfterRewrite; New ignores the other fields.
//
// Canonical makes the bridge write its hooks' words for the model in dsh's canonical form
// and follow dsh's canonical mapping where the real engine differs from it. Without it
// (the default) the bridge does what Claude Code does (differential/testdata/differences.md
// lists where it still differs): contexts and denials in the engine's wording, a PostToolUse
// block that keeps the result and adds the reason after it, Stop contexts that continue
// the turn, continue:false at PreToolUse that lets the call run and then ends the turn,
// SessionStart[compact] hooks that run before PostCompact's (the also entry marked engine
// in the table's SessionStart row).
// dsh run sets it with --canonical; the conformance scenarios, which pin the canonical
// mapping, set it too. The built-in tools word their results as Claude Code's with
// builtin.StyleClaudeCode.
//
// Interactive says the host waits for the user's input between turns (dsh acp): an agent
// going idle then fires Notification idle_prompt. A headless run (dsh run, as claude -p)
// never waits, and fires none.
//
// RevalidateAfterRewrite runs a call's PreToolUse hooks a second time, at
// tools/pre-execute, on the effective input when their updatedInput changed it
// (docs/design/REWRITE-COMPACTION.md#1920-revalidateafterrewrite): the stricter outcome of
// the two passes decides (a second-pass deny denies), and a second-pass updatedInput is
// ignored with a warning, recorded as the hook/result's diagnostic. Off by default, as in
// Claude Code, which runs each hook once per call.
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

// Bridge is a loaded Claude Code bridge: a dsh plugin. Register it on a registrar;
// Close it to stop its async hooks.
type Bridge struct {
	*hookbridge.Bridge
}

// New loads the configured hook files and returns the bridge. Loading never fails
// whole (dsh bridge decision 9): problems are Diagnostics, logged, and every valid group
// loads. The error reports an unusable Config (no Workspace).
func New(cfg Config, opts ...Option) (*Bridge, error) {
	b, err := hookbridge.New(behavior(cfg), cfg, opts...)
	if err != nil {
		return nil, err
	}
	return &Bridge{b}, nil
}

// behavior is how the bridge behaves for cfg (table, encoder, project files, and the
// engine's rendering unless cfg.Canonical).
func behavior(cfg Config) hookbridge.Behavior {
	asEngine, envFile := !cfg.Canonical, cfg.EnvFile
	var render hookbridge.Render
	if asEngine {
		render = hookbridge.Render{Contexts: renderContexts, Deny: renderDeny, PostBlock: renderPostBlock,
			AskDenied:      func(reason string) string { return reason },
			PermissionDeny: func(_, reason string) string { return reason },
			Stop:           renderStop, StopContexts: true, PreHaltRunsTool: true, PromptContextsFirst: true,
			RewriteSilent: true}
	}
	return hookbridge.Behavior{
		Name: hookproto.ClaudeCode, Table: &hookmap.ClaudeCode, Encode: encode, Rules: &Rules,
		ProjectFiles: ProjectFiles, SubstituteProjectDir: true,
		ProjectEnv: func(dir string) []string { return []string{"CLAUDE_PROJECT_DIR=" + dir} },
		SessionEnv: func(event string, s hookproto.Session) []string {
			env := sessionEnv(event, s)
			if envFile != "" && (event == evSessionStart || event == evSetup) {
				env = append(env, "CLAUDE_ENV_FILE="+envFile)
			}
			return env
		},
		Durations:        true,
		UpdatedOutput:    updatedOutput,
		Render:           render,
		EndReason:        endReason,
		NotificationText: notificationText,
		OriginalInput:    true,
		Revalidate:       true,
		TrustHint:        "pass --trust (Config.TrustProject) to load the project's hooks",
	}
}

// encode builds the stdin of one event as the generated wire input type (the bridge adds
// the trailing newline Claude Code sends: the table's stdinNewline).
func encode(in hookbridge.Input) ([]byte, error) {
	s := in.Session
	mode := claudecode.PermissionMode(s.PermissionMode)
	if !mode.Valid() {
		mode = ""
	}
	// The real engine sends prompt_id and permission_mode on every event but
	// SessionStart, and no model (differential suite).
	eff := effort(in.Event, s.Model)
	var prompt *string
	if s.PromptID != "" {
		p := s.PromptID
		prompt = &p
	}
	// Inside a subagent every event names the child (measured in 2.1.328); an agent
	// hook's verifier's calls name its agent id and no type (subagent/agent-hook-tools).
	var agentID, agentType *string
	if s.AgentID != "" {
		id := s.AgentID
		agentID = &id
	}
	if l := s.Lineage; l != nil {
		typ := l.AgentType
		agentType = &typ
	}
	var v interface {
		MarshalJSON() ([]byte, error)
		Validate() error
	}
	switch in.Event {
	case evSessionStart:
		x := claudecode.SessionStartInput{
			HookEventName: claudecode.SessionStartInputHookEventNameSessionStart, SessionID: s.SessionID, Effort: eff,
			Source: claudecode.SessionStartInputSource(in.Source), TranscriptPath: s.TranscriptPath, CWD: s.CWD,
		}
		if in.Source == string(dsh.SessionStartSourceCompact) {
			// After a compaction the engine also sends the model and the prompt's id.
			x.PromptID = prompt
			if s.Model != "" {
				m := s.Model
				x.Model = &m
			}
		}
		if r := in.Resumed; r != nil && in.Source == string(dsh.SessionStartSourceResume) {
			secs, tokens := r.SecondsSinceLastResponse, r.ContextTokens
			expired := !r.Measured || secs >= PromptCacheTTL
			usd := CacheWriteUSD(s.Model, tokens)
			x.SecondsSinceLastResponse, x.ContextTokens = &secs, &tokens
			x.PromptCacheLikelyExpired, x.EstimatedCacheWriteUsd = &expired, &usd
		}
		v = x
	case evSessionEnd:
		v = claudecode.SessionEndInput{
			HookEventName: claudecode.SessionEndInputHookEventNameSessionEnd, SessionID: s.SessionID, Effort: eff,
			Reason: claudecode.SessionEndInputReason(endReason(in.Reason)), TranscriptPath: s.TranscriptPath, CWD: s.CWD,
			PromptID: prompt,
		}
	case evPreCompact:
		v = claudecode.PreCompactInput{
			HookEventName: claudecode.PreCompactInputHookEventNamePreCompact, SessionID: s.SessionID, Effort: eff,
			Trigger: claudecode.PreCompactInputTrigger(in.Trigger), CustomInstructions: in.CustomInstructions,
			TranscriptPath: s.TranscriptPath, CWD: s.CWD, PromptID: prompt,
		}
	case evPostCompact:
		v = claudecode.PostCompactInput{
			HookEventName: claudecode.PostCompactInputHookEventNamePostCompact, SessionID: s.SessionID, Effort: eff,
			Trigger: claudecode.PostCompactInputTrigger(in.Trigger), CompactSummary: in.CompactSummary,
			TranscriptPath: s.TranscriptPath, CWD: s.CWD, PromptID: prompt,
		}
	case evUserPromptSubmit:
		v = claudecode.UserPromptSubmitInput{
			HookEventName: claudecode.UserPromptSubmitInputHookEventNameUserPromptSubmit, SessionID: s.SessionID, Effort: eff,
			Prompt: in.Prompt, TranscriptPath: s.TranscriptPath, CWD: s.CWD, PermissionMode: mode, PromptID: prompt,
		}
	case evPromptExpansion:
		x := claudecode.UserPromptExpansionInput{
			HookEventName: claudecode.UserPromptExpansionInputHookEventNameUserPromptExpansion, SessionID: s.SessionID, Effort: eff,
			ExpansionType: claudecode.UserPromptExpansionInputExpansionType(in.ExpansionType), CommandName: in.CommandName,
			CommandArgs: in.CommandArgs, Prompt: in.Prompt, TranscriptPath: s.TranscriptPath, CWD: s.CWD,
			PermissionMode: mode, PromptID: prompt,
		}
		if in.CommandSource != "" {
			src := in.CommandSource
			x.CommandSource = &src
		}
		v = x
	case evPreToolUse:
		v = claudecode.PreToolUseInput{
			AgentID: agentID, AgentType: agentType,
			HookEventName: claudecode.PreToolUseInputHookEventNamePreToolUse, SessionID: s.SessionID, Effort: eff,
			ToolName: in.ToolName, ToolInput: ToolInput(in.ToolName, in.ToolInput), ToolUseID: in.ToolUseID,
			TranscriptPath: s.TranscriptPath, CWD: s.CWD, PermissionMode: mode, PromptID: prompt,
		}
	case evPostToolUse:
		v = claudecode.PostToolUseInput{
			AgentID: agentID, AgentType: agentType,
			HookEventName: claudecode.PostToolUseInputHookEventNamePostToolUse, SessionID: s.SessionID, Effort: eff,
			ToolName: in.ToolName, ToolInput: ToolInput(in.ToolName, in.ToolInput), ToolUseID: in.ToolUseID,
			ToolResponse: ToolResponse(in.ToolName, in.ToolResponse), TranscriptPath: s.TranscriptPath, CWD: s.CWD,
			PermissionMode: mode, PromptID: prompt, DshOriginalToolInput: in.OriginalInput,
		}
		if in.DurationMS >= 0 {
			d := in.DurationMS
			x := v.(claudecode.PostToolUseInput)
			x.DurationMS = &d
			v = x
		}
	case evPermissionRequest:
		v = claudecode.PermissionRequestInput{
			AgentID: agentID, AgentType: agentType,
			HookEventName: claudecode.PermissionRequestInputHookEventNamePermissionRequest, SessionID: s.SessionID, Effort: eff,
			ToolName: in.ToolName, ToolInput: ToolInput(in.ToolName, in.ToolInput),
			TranscriptPath: s.TranscriptPath, CWD: s.CWD, PermissionMode: mode, PromptID: prompt,
		}
	case evPostToolUseFailure:
		x := claudecode.PostToolUseFailureInput{
			AgentID: agentID, AgentType: agentType,
			HookEventName: claudecode.PostToolUseFailureInputHookEventNamePostToolUseFailure, SessionID: s.SessionID, Effort: eff,
			ToolName: in.ToolName, ToolInput: ToolInput(in.ToolName, in.ToolInput), ToolUseID: in.ToolUseID,
			Error: in.Error, IsInterrupt: &in.IsInterrupt,
			TranscriptPath: s.TranscriptPath, CWD: s.CWD, PermissionMode: mode, PromptID: prompt,
		}
		if in.DurationMS >= 0 {
			d := in.DurationMS
			x.DurationMS = &d
		}
		v = x
	case evNotification:
		v = claudecode.NotificationInput{
			AgentID: agentID, AgentType: agentType,
			HookEventName: claudecode.NotificationInputHookEventNameNotification, SessionID: s.SessionID, Effort: eff,
			Message: in.Message, NotificationType: in.NotificationType,
			TranscriptPath: s.TranscriptPath, CWD: s.CWD, PermissionMode: mode, PromptID: prompt,
		}
	case evStop:
		v = claudecode.StopInput{
			HookEventName: claudecode.StopInputHookEventNameStop, SessionID: s.SessionID, Effort: eff,
			StopHookActive: in.StopHookActive, LastAssistantMessage: s.LastAssistantMessage,
			TranscriptPath: s.TranscriptPath, CWD: s.CWD, PermissionMode: mode, PromptID: prompt,
			BackgroundTasks: backgroundTasks(in.BackgroundTasks), SessionCrons: []json.RawMessage{},
		}
	case evSubagentStart:
		// The engine sends no permission_mode here.
		v = claudecode.SubagentStartInput{
			HookEventName: claudecode.SubagentStartInputHookEventNameSubagentStart, SessionID: s.SessionID, Effort: eff,
			AgentID: agentID, AgentType: agentType, TranscriptPath: s.TranscriptPath, CWD: s.CWD, PromptID: prompt,
		}
	case evSubagentStop:
		v = claudecode.SubagentStopInput{
			HookEventName: claudecode.SubagentStopInputHookEventNameSubagentStop, SessionID: s.SessionID, Effort: eff,
			AgentID: agentID, AgentType: agentType, StopHookActive: in.StopHookActive, LastAssistantMessage: in.Answer,
			AgentTranscriptPath: SubagentTranscript(s.TranscriptPath, s.AgentID),
			TranscriptPath:      s.TranscriptPath, CWD: s.CWD, PermissionMode: mode, PromptID: prompt,
			BackgroundTasks: backgroundTasks(in.BackgroundTasks), SessionCrons: []json.RawMessage{},
		}
	case evSetup:
		v = claudecode.SetupInput{
			HookEventName: claudecode.SetupInputHookEventNameSetup, SessionID: s.SessionID, Effort: eff,
			Trigger: claudecode.SetupInputTrigger(in.Trigger), TranscriptPath: s.TranscriptPath, CWD: s.CWD,
		}
	case evInstructionsLoaded:
		f := in.Instruction
		if f == nil {
			return nil, fmt.Errorf("claude-code: %s without its file", in.Event)
		}
		scope := string(f.Scope)
		if scope != "" {
			scope = strings.ToUpper(scope[:1]) + scope[1:] // user → User, as memory_type
		}
		x := claudecode.InstructionsLoadedInput{
			HookEventName: claudecode.InstructionsLoadedInputHookEventNameInstructionsLoaded, SessionID: s.SessionID, Effort: eff,
			FilePath: f.Path, MemoryType: claudecode.InstructionsLoadedInputMemoryType(scope),
			LoadReason: claudecode.InstructionsLoadedInputLoadReason(f.Reason), ParentFilePath: f.Parent,
			TranscriptPath: s.TranscriptPath, CWD: s.CWD,
		}
		if s.TurnOpen {
			// Loaded again after an automatic compaction: the engine sends the prompt's id.
			x.PromptID = prompt
		}
		v = x
	case evPostToolBatch:
		calls := make([]claudecode.BatchToolCall, len(in.Batch))
		for i, c := range in.Batch {
			t := c.ToolText
			if c.ToolName == "Bash" {
				t = strings.TrimRight(t, "\n") // as ToolResponse's stdout: the engine trims its output
			}
			text, _ := json.Marshal(t)
			calls[i] = claudecode.BatchToolCall{ToolName: c.ToolName, ToolInput: ToolInput(c.ToolName, c.ToolInput),
				ToolUseID: c.ToolUseID, ToolResponse: text}
		}
		v = claudecode.PostToolBatchInput{
			AgentID: agentID, AgentType: agentType,
			HookEventName: claudecode.PostToolBatchInputHookEventNamePostToolBatch, SessionID: s.SessionID, Effort: eff, ToolCalls: calls,
			TranscriptPath: s.TranscriptPath, CWD: s.CWD, PermissionMode: mode, PromptID: prompt,
		}
	case evStopFailure:
		if in.Failure == nil {
			return nil, fmt.Errorf("claude-code: %s without the turn's failure", in.Event)
		}
		msg := failureMessage(*in.Failure)
		v = claudecode.StopFailureInput{
			HookEventName: claudecode.StopFailureInputHookEventNameStopFailure, SessionID: s.SessionID, Effort: eff,
			Error: claudecode.StopFailureInputError(failureKind(*in.Failure)), LastAssistantMessage: &msg,
			TranscriptPath: s.TranscriptPath, CWD: s.CWD, PromptID: prompt,
		}
	default:
		return nil, fmt.Errorf("claude-code: unmapped event %q", in.Event)
	}
	if err := v.Validate(); err != nil {
		return nil, err
	}
	return v.MarshalJSON()
}

// backgroundTasks are tasks as background_tasks lists them ([] when none).
func backgroundTasks(tasks []dsh.BackgroundTask) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(tasks))
	for _, t := range tasks {
		agentType := t.AgentType
		raw, err := claudecode.BackgroundTask{ID: t.ID, Type: t.Kind, Status: string(t.Status),
			Description: t.Description, AgentType: &agentType}.MarshalJSON()
		if err == nil { // strings only: it does not fail
			out = append(out, raw)
		}
	}
	return out
}

// SubagentTranscript is where Claude Code keeps the transcript of the subagent agentID of
// the session whose transcript is at transcript: <session>/subagents/agent-<id>.jsonl,
// beside it ("" without a session transcript).
func SubagentTranscript(transcript, agentID string) string {
	if transcript == "" {
		return ""
	}
	return filepath.Join(strings.TrimSuffix(transcript, filepath.Ext(transcript)), "subagents", "agent-"+agentID+".jsonl")
}

// failureKinds are Claude Code's kinds of error (StopFailure's error, what its matchers
// test) for a failure's provider code, then for its HTTP status. An error the engine does
// not classify is "unknown": measured for a 400 invalid_request_error (Claude Code 2.1.328),
// which the engine calls unknown, not invalid_request.
var failureKinds = struct {
	code   map[string]string
	status map[int]string
}{
	code: map[string]string{
		// A failure already in the engine's words (dsh hooks run reads them) keeps them.
		"rate_limit": "rate_limit", "overloaded": "overloaded", "authentication_failed": "authentication_failed",
		"billing_error": "billing_error", "invalid_request": "invalid_request", "model_not_found": "model_not_found",
		"server_error": "server_error", "max_output_tokens": "max_output_tokens",
		"rate_limit_error":     "rate_limit",
		"overloaded_error":     "overloaded",
		"authentication_error": "authentication_failed",
		"permission_error":     "authentication_failed",
		"not_found_error":      "model_not_found",
		"api_error":            "server_error",
	},
	status: map[int]string{429: "rate_limit", 529: "overloaded", 401: "authentication_failed",
		402: "billing_error", 404: "model_not_found", 500: "server_error", 502: "server_error",
		503: "server_error", 504: "server_error"},
}

// failureKind is Claude Code's kind of the error f (StopFailure's error).
func failureKind(f dsh.LLMFailure) string {
	if k, ok := failureKinds.code[strings.ToLower(f.Code)]; ok {
		return k
	}
	if f.Status != nil {
		if k, ok := failureKinds.status[*f.Status]; ok {
			return k
		}
	}
	return "unknown"
}

// failureMessage is the error as Claude Code shows it, and sends as StopFailure's
// last_assistant_message: "API Error: 400 bad request" (measured).
func failureMessage(f dsh.LLMFailure) string {
	if strings.HasPrefix(f.Message, "API Error: ") {
		return f.Message
	}
	if f.Status != nil {
		return fmt.Sprintf("API Error: %d %s", *f.Status, f.Message)
	}
	return "API Error: " + f.Message
}

// updatedOutput is the content the model reads after the PostToolUse hooks of rep
// replaced a successful call's output (hookSpecificOutput.updatedToolOutput, or
// updatedMCPToolOutput for an MCP tool when updatedToolOutput is absent), as Claude Code
// 2.1.328 applies it: only a value the tool's output shape fits counts (Bash: an object
// whose stdout is a string, read as stdout then stderr; an MCP tool: a string or text
// content blocks); the last fitting one in configuration order wins.
func updatedOutput(tool string, rep *hookproto.Report) ([]dsh.ContentBlock, bool) {
	var out []dsh.ContentBlock
	found := false
	for _, h := range rep.Hooks {
		if h.Verdict.Outcome == dsh.HookOutcomeFailed {
			continue
		}
		spec, _ := hookproto.Output(&hookmap.ClaudeCode, h.Result)["hookSpecificOutput"].(map[string]any)
		if spec == nil || spec["hookEventName"] != evPostToolUse {
			continue
		}
		v, ok := spec["updatedToolOutput"]
		if !ok && strings.HasPrefix(tool, "mcp__") {
			v, ok = spec["updatedMCPToolOutput"]
		}
		if !ok {
			continue
		}
		if c, fits := outputContent(tool, v); fits {
			out, found = c, true
		}
	}
	return out, found
}

// outputContent is the content the model reads for an output value of tool in the
// engine's shape, and whether the value fits that shape.
func outputContent(tool string, v any) ([]dsh.ContentBlock, bool) {
	if tool == "Bash" {
		m, _ := v.(map[string]any)
		stdout, ok := m["stdout"].(string)
		if !ok {
			return nil, false
		}
		text := strings.TrimRight(stdout, "\n")
		if stderr, _ := m["stderr"].(string); strings.TrimSpace(stderr) != "" {
			text = strings.TrimLeft(text+"\n"+strings.TrimRight(stderr, "\n"), "\n")
		}
		return []dsh.ContentBlock{dsh.TextBlock{Text: text}}, true
	}
	if !strings.HasPrefix(tool, "mcp__") {
		return nil, false
	}
	switch x := v.(type) {
	case string:
		return []dsh.ContentBlock{dsh.TextBlock{Text: x}}, true
	case []any:
		var out []dsh.ContentBlock
		for _, e := range x {
			b, _ := e.(map[string]any)
			t, ok := b["text"].(string)
			if !ok || b["type"] != "text" {
				return nil, false
			}
			out = append(out, dsh.TextBlock{Text: t})
		}
		return out, len(out) > 0
	}
	return nil, false
}

// endReason is Claude Code's SessionEnd reason for a canonical one: an agent closed by its
// host ("close") ends as claude -p's session does when its prompt is done, "other"; a
// cleared conversation is "clear".
func endReason(reason string) string {
	if reason == string(dsh.SessionEndReasonClear) {
		return "clear"
	}
	return "other"
}

// ToolInput is the tool_input Claude Code sends for a call's arguments: as the model gave
// them ({} when absent), except for the engine's own tools, whose input it parses with
// the tool's schema before any hook sees it: the schema's key order and defaults (Edit's
// replace_all false), as the table's toolInputs have them, and for the other tools of its
// toolset, their recorded schemas (toolInputs).
func ToolInput(tool string, args json.RawMessage) json.RawMessage {
	return hookbridge.EngineToolInput(toolInputs(), tool, args)
}

// toolInputs are the tool_input shapes of Claude Code's own tools: those of its toolset
// (spec/toolsets/claude-code.json, whose hook_input is "schema": each schema's
// properties in order, their defaults), and over them the table's toolInputs. The
// toolsets are embedded and checked by their tests; should they not load, the table's
// alone.
var toolInputs = sync.OnceValue(func() map[string]hookmap.ToolInput {
	out := map[string]hookmap.ToolInput{}
	inputs, _ := builtin.HookInputs(builtin.StyleClaudeCode)
	for tool, hi := range inputs {
		out[tool] = hookmap.ToolInput{Keys: hi.Keys, Defaults: hi.Defaults}
	}
	maps.Copy(out, hookmap.ClaudeCode.ToolInputs)
	return out
})

// agentTool is the agent tool's name and its hookResponse templates, from the claude-code
// toolset's row (none when the row has no template, or the toolsets do not load: their
// tests check them).
type agentTool struct {
	name      string
	templates subagent.Templates
}

var agentResponse = sync.OnceValue(func() agentTool {
	row, ok, err := builtin.AgentRow(builtin.StyleClaudeCode)
	if err != nil || !ok || row.Agent.HookResponse == nil {
		return agentTool{}
	}
	r := row.Agent.HookResponse
	t := subagent.Templates{Completed: r.Completed, Async: r.Async, ToolsUsedNote: r.ToolsUsedNote}
	if tl := row.Agent.TurnLimit; tl != nil {
		t.TurnLimitNote = tl.Note
	}
	return agentTool{name: row.Name, templates: t}
})

func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

// notificationText is the message of a Notification, in Claude Code's words.
func notificationText(kind, tool string) string {
	if kind == "permission_prompt" {
		return "Claude needs your permission to use " + tool
	}
	return "Claude is waiting for your input"
}

// ToolResponse is the tool_response Claude Code sends for a tool's result value: for
// Bash, the engine's own shape ({stdout (trailing newlines trimmed), stderr, interrupted,
// isImage, noOutputExpected}) built from dsh's {stdout, stderr, exitCode}; for the agent
// tool, its toolset row's hookResponse template rendered from the child's figures
// (subagent.Value.Wire); any other value as it is (null when absent).
func ToolResponse(tool string, value json.RawMessage) json.RawMessage {
	if a := agentResponse(); a.name != "" && tool == a.name {
		if v, err := subagent.DecodeValue(value); err == nil {
			if out, err := v.Wire(a.templates); err == nil && out != nil {
				return out
			}
		}
	}
	if tool == "Bash" {
		var r struct {
			Stdout *string `json:"stdout"`
			Stderr string  `json:"stderr"`
		}
		if json.Unmarshal(value, &r) == nil && r.Stdout != nil {
			data, err := json.Marshal(struct {
				Stdout           string `json:"stdout"`
				Stderr           string `json:"stderr"`
				Interrupted      bool   `json:"interrupted"`
				IsImage          bool   `json:"isImage"`
				NoOutputExpected bool   `json:"noOutputExpected"`
			}{Stdout: strings.TrimRight(*r.Stdout, "\n"), Stderr: strings.TrimRight(r.Stderr, "\n")})
			if err == nil {
				return data
			}
		}
	}
	return orNull(value)
}

// reminder wraps a text as Claude Code wraps the hook texts it shows the model.
func reminder(s string) string { return "<system-reminder>\n" + s + "\n</system-reminder>" }

// renderContexts writes contexts as the real engine does: per run, plain stdout as
// "<label> hook success: <text>" (label: the event, ":<source>" for SessionStart and
// ":<tool>" for tool events) and additionalContext as "<event> hook additional
// context: <text>" (":<tool>" for tool events), each in a system reminder; a handler
// type's PlainAnswer replaces the plain text.
func renderContexts(event, subject string, rep *hookproto.Report) []string {
	tool := event == evPreToolUse || event == evPostToolUse || event == evPostToolUseFailure
	var out []string
	for _, h := range rep.Hooks {
		plain := hookbridge.PlainStdout(h)
		for _, c := range h.Verdict.Contexts {
			if c == "" {
				continue
			}
			c = hookproto.CapContext(c, hookproto.DefaultContextMax)
			label := event
			if tool || (plain && event == evSessionStart && subject != "") {
				label += ":" + subject
			}
			if plain {
				if pa := hookmap.ClaudeCode.Handlers[h.Handler.Type()].PlainAnswer; pa != "" {
					c = strings.ReplaceAll(pa, "{hook}", label) // (an mcp_tool's answer)
				}
				out = append(out, reminder(label+" hook success: "+c))
			} else {
				out = append(out, reminder(label+" hook additional context: "+c))
			}
		}
	}
	return out
}

// blockText is the engine's words for one blocking run: "[<command>]: <stderr>" for exit
// 2 ("No stderr output" when it is empty), else the reason ("Blocked by hook").
func blockText(b hookbridge.Blocker) string {
	if b.Exit2 {
		s := b.Stderr
		if s == "" {
			s = "No stderr output"
		}
		return "[" + b.Command + "]: " + s
	}
	if b.Reason == "" {
		return "Blocked by hook"
	}
	return b.Reason
}

// renderDeny is the tool result of a denied call: "PreToolUse:<tool> hook error: <text>".
// When several hooks deny, the real engine shows the one that finished last (it varies
// from run to run); dsh shows the first in configuration order (differential/testdata/differences.md).
func renderDeny(tool string, _ json.RawMessage, rep *hookproto.Report) string {
	bs := hookbridge.Blockers(rep)
	text := "Blocked by hook"
	if len(bs) > 0 {
		b := bs[0]
		if b.Exit2 && b.Quoted != "" {
			b.Command = b.Quoted
		}
		text = blockText(b)
		if b.Exit2 && b.Plugin != "" {
			// As the engine says where a plugin's blocking hook comes from (measured at
			// PreToolUse; its other events' texts are not).
			text += "\n\nThis hook comes from the " + b.Plugin + " plugin."
		}
	}
	return "PreToolUse:" + tool + " hook error: " + text
}

// renderPostBlock is the feedback after a result a PostToolUse hook blocked:
// "PostToolUse:<tool> hook blocking error from command: \"<command>\": <text>".
func renderPostBlock(tool string, rep *hookproto.Report) string {
	var parts []string
	for _, b := range hookbridge.Blockers(rep) {
		parts = append(parts, reminder("PostToolUse:"+tool+" hook blocking error from command: \""+b.Command+"\": "+blockText(b)))
	}
	return strings.Join(parts, "\n")
}

// renderStop is the message a Stop block continues the turn with: for a JSON block a
// reminder "Stop hook blocking error from command: \"<command>\": <reason>" and the
// text "Stop hook feedback:\n<reason>"; for exit 2 only the feedback, with
// "[<command>]: <stderr>".
func renderStop(rep *hookproto.Report) []string {
	var out []string
	for _, b := range hookbridge.Blockers(rep) {
		if !b.Exit2 {
			out = append(out, reminder("Stop hook blocking error from command: \""+b.Command+"\": "+blockText(b)))
		}
		out = append(out, "Stop hook feedback:\n"+blockText(b))
	}
	return out
}
