package hookbridge

import (
	"encoding/json"
	"strings"

	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/generated/dsh"
)

// Render is how a dialect writes its hooks' words for the model, so that a model trained
// on the real engine reads what it expects. dsh's canonical surface is
// unchanged: only the texts of the messages and results the bridge adds differ. A nil
// field keeps dsh's canonical rendering (the hook's text as it is).
type Render struct {
	// Contexts renders the contexts of one event's runs; subject is the tool name (tool
	// events) or the SessionStart source.
	Contexts func(event, subject string, rep *hookproto.Report) []string
	// Deny renders the tool result text of a call the PreToolUse hooks denied.
	Deny func(tool string, args json.RawMessage, rep *hookproto.Report) string
	// RewriteSilent makes the hooks' rewrites silent (no notice before the tool result),
	// as the engines do not tell the model.
	RewriteSilent bool
	// PermissionDeny renders the tool result text of a call a PermissionRequest hook
	// denied, from the merged reason.
	PermissionDeny func(tool, reason string) string
	// AskDenied renders the tool result text of a call a PreToolUse hook asked about when
	// no one could answer and the runtime denied it (headless: Claude Code sends the
	// reason alone).
	AskDenied func(reason string) string
	// PostBlock, if set, makes a PostToolUse block keep the tool's result and add the
	// returned text as a context after it (Claude Code), instead of replacing the result
	// with the reason.
	PostBlock func(tool string, rep *hookproto.Report) string
	// Stop renders the texts of the message a Stop block continues the turn with.
	Stop func(rep *hookproto.Report) []string
	// StopForm is the plugin form of that message ("" for a plain one). Codex uses
	// "relay": the engine sends the hook's prompt as user input, not as a context (see
	// provider.OpenAIChatConfig.PluginContextRole).
	StopForm dsh.PluginForm
	// StopContexts makes the contexts of Stop hooks that do not block continue the turn
	// too (Claude Code), under the same continuation cap.
	StopContexts bool
	// PromptContextsFirst puts the UserPromptSubmit contexts before the prompt (Claude
	// Code) instead of after it.
	PromptContextsFirst bool
	// PreHaltRunsTool makes continue:false at PreToolUse let the call run and end the
	// turn after it (Claude Code), instead of denying the call.
	PreHaltRunsTool bool
	// ResultContexts appends the rendered tool-event contexts to the result's text, after
	// a blank line (Gemini CLI), instead of following the result as a message.
	ResultContexts bool
}

// Blocker is one run that blocked or denied, as the renderers need it.
type Blocker struct {
	// Command is the hook's command as configured (before ${...} substitution).
	Command string
	// Exit2 says the run blocked by exiting 2 (its stderr is the reason).
	Exit2 bool
	// Stderr is the run's stderr, trimmed.
	Stderr string
	// Reason is the verdict's reason (after the event's fallback).
	Reason string
	// Source is the configuration file the hook came from.
	Source string
	// Position is the run's 0-based position among the event's runs.
	Position int
	// Plugin is the id of the plugin the hook comes from ("" for a settings file).
	Plugin string
	// Quoted is how the engine quotes the command in an exit-2 blocking error, when it
	// differs from Command (hookproto.Handler.Quoted).
	Quoted string
}

// Blockers returns the runs of rep that blocked or denied, in configuration order.
func Blockers(rep *hookproto.Report) []Blocker {
	var out []Blocker
	for i, h := range rep.Hooks {
		switch h.Verdict.Outcome {
		case dsh.HookOutcomeBlock, dsh.HookOutcomeDeny:
		default:
			continue
		}
		cmd := h.Handler.Configured
		if cmd == "" {
			cmd = h.Handler.Command
		}
		if h.Handler.Args != nil {
			cmd = strings.Join(append([]string{cmd}, h.Handler.Args...), " ")
		}
		stderr := strings.TrimSpace(string(h.Result.Stderr))
		// An exit-2 block whose reason came from JSON stdout (Exit2ReadsJSON) reads as a
		// JSON block.
		// An over-cap stderr's reason is its kept part and a truncation note.
		exit2 := h.Result.ExitCode != nil && *h.Result.ExitCode == 2 &&
			(h.Verdict.Reason == stderr || (h.Result.StderrLost && strings.HasPrefix(h.Verdict.Reason, stderr)) ||
				(stderr == "" && rep.Event != nil && h.Verdict.Reason == rep.Event.FallbackReason))
		if exit2 && h.Result.StderrLost {
			stderr = h.Verdict.Reason // with its truncation note
		}
		if h.Verdict.AsExit2 { // a failure that counts as exit 2 (onFailure "block")
			exit2, stderr = true, h.Verdict.Reason
		}
		out = append(out, Blocker{Command: cmd, Exit2: exit2,
			Stderr: stderr, Reason: h.Verdict.Reason, Source: h.Handler.Source, Position: i, Plugin: h.Handler.Plugin, Quoted: h.Handler.Quoted})
	}
	return out
}

// PlainStdout says whether a run's contexts came from plain (non-JSON) stdout.
func PlainStdout(h hookproto.HookRun) bool {
	s := strings.TrimSpace(string(h.Result.Stdout))
	if !strings.HasPrefix(s, "{") {
		return true
	}
	return !json.Valid([]byte(s))
}

// contexts renders the contexts of rep for event (the merged contexts as they are
// without a renderer).
func (b *Bridge) contexts(event, subject string, rep *hookproto.Report) []string {
	if b.d.Render.Contexts == nil || len(rep.Merged.Contexts) == 0 {
		return rep.Merged.Contexts
	}
	return b.d.Render.Contexts(event, subject, rep)
}
