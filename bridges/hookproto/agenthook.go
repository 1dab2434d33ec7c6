package hookproto

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dshkit/dsh/generated/hookmap"
)

// AgentHandlerType runs a verifier agent over the session's tools, whose call of its
// answer tool decides.
const AgentHandlerType = "agent"

// Errors an agent hook's run ends with (Result.Err); test them with errors.Is. An agent
// handler blocks on each (its onFailure is "block" unless it says "continue"), where the
// table's onFailure is not ignored at the event.
var (
	// ErrAgentVerifier: the verifier could not run (no verifier was given to the engine,
	// its model failed, or it could not be built).
	ErrAgentVerifier = errors.New("agent hook verifier failed")
	// ErrAgentNoVerdict: the verifier ended, or reached its turn bound, without calling its
	// answer tool with a valid answer.
	ErrAgentNoVerdict = errors.New("agent hook verifier gave no verdict")
)

// AgentVerifier runs agent hooks' verifiers (dsh run gives one over the session's tools
// and model).
type AgentVerifier interface {
	// VerifyHook runs one verifier agent as r says and returns the input of its first
	// call of r.AnswerTool (an error wrapping ErrAgentNoVerdict when it made none).
	VerifyHook(ctx context.Context, r AgentEval) (json.RawMessage, error)
}

// AgentEval is one agent hook's verifier.
type AgentEval struct {
	// System is its system prompt; Prompt its task (the handler's prompt with $ARGUMENTS
	// replaced by the hook's input); Model the handler's model ("" the session's).
	System, Prompt, Model string
	// AnswerTool, AnswerDescription and AnswerSchema are the tool it answers with (offered
	// beside the session's tools): its name, description and input schema.
	AnswerTool, AnswerDescription string
	AnswerSchema                  json.RawMessage
	// Without are the session's tools it is not offered.
	Without []string
	// MaxTurns bounds its model requests (0: no bound).
	MaxTurns int
	// Enforce continues a verifier whose turn ended without an answer, EnforceTimes
	// times at most.
	Enforce      string
	EnforceTimes int
	// AgentID is its agent id, which the hooks fired for its own calls see ("": none).
	// Those hooks run no prompt or agent handler (Session.Verifier).
	AgentID string
}

// AgentHandler is an agent handler's verifier (Handler.Agent).
type AgentHandler struct {
	// Prompt is the configured prompt ($ARGUMENTS is the hook's input).
	Prompt string
	// Model is the configured model ("" the session's).
	Model string
	// Event is the hook's event, which the system prompt names.
	Event string
	// System, Schema and Verifier are the table's (hookmap.HandlerType).
	System   string
	Schema   json.RawMessage
	Verifier hookmap.AgentVerifier
}

// agentHandler reads an agent handler's fields into h: prompt (a non-empty string) and
// model. Its Command is the prompt, as the engine names the hook. It fails closed: its
// onFailure is "block" unless the handler says "continue".
func (l *loader) agentHandler(h *Handler, obj map[string]json.RawMessage) bool {
	path, ev := h.Path, h.Event
	ht, _ := l.handlerType(AgentHandlerType)
	if ht.Verifier == nil {
		l.diag(path, ev, "handler", fmt.Errorf("%w %q: the %s table says nothing of its verifier", ErrUnsupportedHandler, AgentHandlerType, l.opts.Dialect))
		return false
	}
	a := &AgentHandler{Event: ev, System: ht.SystemPrompt, Verifier: *ht.Verifier}
	if ht.AnswerSchema != "" {
		a.Schema = json.RawMessage(ht.AnswerSchema)
	}
	var ok bool
	if a.Prompt, a.Model, ok = l.promptAndModel(path, ev, obj, "an agent"); !ok {
		return false
	}
	h.Agent, h.Command = a, a.Prompt
	h.Options.OnFailure = "block"
	return true
}

// Eval is the verifier of a for a hook whose input is stdin: the system prompt names
// the event and the session's transcript (the input's transcript_path).
func (a *AgentHandler) Eval(stdin []byte) AgentEval {
	v := a.Verifier
	intro := v.Intro
	if slices.Contains(v.StopEvents, a.Event) && v.StopIntro != "" {
		intro = v.StopIntro
	}
	var in struct {
		TranscriptPath string `json:"transcript_path"`
	}
	_ = json.Unmarshal(stdin, &in) // an input without it names no transcript
	transcript := v.NoTranscript
	if in.TranscriptPath != "" {
		transcript = strings.ReplaceAll(v.Transcript, "{path}", in.TranscriptPath)
	}
	system := strings.NewReplacer("{intro}", strings.ReplaceAll(intro, "{event}", a.Event), "{transcript}", transcript).Replace(a.System)
	return AgentEval{System: system, Prompt: PromptText(a.Prompt, stdin), Model: a.Model,
		AnswerTool: v.AnswerTool, AnswerDescription: v.AnswerDescription, AnswerSchema: a.Schema,
		Without: v.WithoutTools, MaxTurns: v.MaxTurns, Enforce: v.Enforce, EnforceTimes: v.EnforceTimes,
		AgentID: strings.ReplaceAll(v.AgentID, "{uuid}", NewUUID())}
}

// Verdict turns the verifier's answer (its answer tool's input) into the hook's output,
// as Claude Code 2.1.328 reads it: ok true passes; ok false blocks (a JSON decision
// "block") with the table's NotMet as the reason, which the model reads as it is
// ("PreToolUse:Bash hook error: Agent hook condition was not met: REASON", measured:
// subagent/agent-hook-deny; the turn goes on). An answer without a boolean ok is an
// ErrAgentNoVerdict.
func (a *AgentHandler) Verdict(answer json.RawMessage) ([]byte, error) {
	var v struct {
		OK     *bool   `json:"ok"`
		Reason *string `json:"reason"`
	}
	if err := json.Unmarshal(answer, &v); err != nil || v.OK == nil {
		return nil, fmt.Errorf("%w: its %s call %s has no boolean ok", ErrAgentNoVerdict, a.Verifier.AnswerTool, cut(string(answer), 200))
	}
	if *v.OK {
		return nil, nil
	}
	reason := ""
	if v.Reason != nil {
		reason = *v.Reason
	}
	// A JSON block, not an exit 2: the engine shows the reason alone, without the
	// "[prompt]: " an exit 2 gets.
	return json.Marshal(map[string]string{"decision": "block", "reason": strings.ReplaceAll(a.Verifier.NotMet, "{reason}", reason)})
}

// agentCall is an agent hook's verifier through Engine.Agents; its answer becomes the
// hook's output (AgentHandler.Verdict). A verifier that cannot run or gives no verdict
// is an error, which the handler's onFailure "block" turns into a block.
func (e *Engine) agentCall(a *AgentHandler, stdin []byte) func(context.Context) ([]byte, error) {
	return func(ctx context.Context) ([]byte, error) {
		if e.Agents == nil {
			return nil, fmt.Errorf("%w: no verifier to run agent hooks", ErrAgentVerifier)
		}
		answer, err := e.Agents.VerifyHook(ctx, a.Eval(stdin))
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, ErrAgentNoVerdict):
			return nil, err
		case err != nil:
			return nil, fmt.Errorf("%w: %w", ErrAgentVerifier, err)
		}
		return a.Verdict(answer)
	}
}
