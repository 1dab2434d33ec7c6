package hookproto

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// The handler types besides command and http that a dialect's table may list
// (hookmap.Bridge.Handlers).
const (
	// MCPToolHandlerType calls a tool of a mounted MCP server and reads its text as a
	// command's stdout.
	MCPToolHandlerType = "mcp_tool"
	// PromptHandlerType asks the session's model whether the action may go ahead.
	PromptHandlerType = "prompt"
)

// Errors an mcp_tool or prompt hook's run ends with (Result.Err); test them with
// errors.Is. Each decides nothing, unless an mcp_tool handler's onFailure is "block".
var (
	// ErrMCPUnavailable: no MCP server of the handler's name is mounted (dsh run
	// --mcp-config mounts them), or no MCP client was given to the engine.
	ErrMCPUnavailable = errors.New("MCP server not connected")
	// ErrMCPTool: the tool answered with isError, or the call failed.
	ErrMCPTool = errors.New("MCP tool returned an error")
	// ErrPlaceholder: a ${path} of a "typed" input names a value the hook's input lacks.
	ErrPlaceholder = errors.New("hook input placeholder was not found")
	// ErrPromptModel: the prompt hook's model call failed, or no model was given.
	ErrPromptModel = errors.New("hook evaluator API error")
	// ErrPromptAnswer: the model's answer is not the JSON object {ok, reason} asked for.
	ErrPromptAnswer = errors.New("prompt hook answer is not valid")
)

// MCPCaller calls a tool of a mounted MCP server for mcp_tool hooks (dsh run gives the
// session's servers).
type MCPCaller interface {
	// CallHookTool calls tool of server with args and returns the text of the answer's
	// text blocks (others as "[type]"), joined with newlines, and whether the server
	// marked it isError. An error wrapping ErrMCPUnavailable says the server is not
	// mounted.
	CallHookTool(ctx context.Context, server, tool string, args map[string]any) (text string, isError bool, err error)
}

// MCPTool is where a mounted MCP tool comes from: its server's name and the server's own
// name of the tool, and how the server is reached (Command and Args for a stdio server,
// URL for an HTTP one); Gemini CLI's mcp_context.
type MCPTool struct {
	Server, Tool string
	Command      string
	Args         []string
	URL          string
}

// MCPTools is an MCPCaller that can also say which mounted MCP tool a tool name is (ok
// false: none).
type MCPTools interface {
	MCPTool(name string) (MCPTool, bool)
}

// PromptModel answers prompt hooks with one model call (dsh run gives the session's
// model).
type PromptModel interface {
	// EvaluateHook sends one request: System as the system prompt, Prompt as the only
	// user message, Schema (JSON Schema, may be empty) as the answer's format where the
	// provider has one, to Model ("" the session's). It returns the answer's text.
	EvaluateHook(ctx context.Context, r PromptEval) (string, error)
}

// PromptEval is one prompt hook's model request.
type PromptEval struct {
	// System is the system prompt (the table's SystemPrompt).
	System string
	// Prompt is the handler's prompt with $ARGUMENTS replaced by the hook's input.
	Prompt string
	// Model is the handler's model; "" means the session's.
	Model string
	// Schema is the JSON Schema of the answer (the table's AnswerSchema).
	Schema json.RawMessage
	// Conversation says the request judges the session's conversation: the model gets
	// the conversation as the session's last model request sent it, that request's
	// answer, then Prompt (the table's ConversationPrompt).
	Conversation bool
}

// MCPToolHandler is an mcp_tool handler's call (Handler.MCP).
type MCPToolHandler struct {
	// Server and Tool name the tool called.
	Server, Tool string
	// Input is the call's arguments, whose strings may hold ${path} placeholders.
	Input map[string]any
	// Placeholders is how they read the hook's input: "text" or "typed" (the table's).
	Placeholders string
}

// PromptHandler is a prompt handler's request (Handler.Prompt).
type PromptHandler struct {
	// Prompt is the configured prompt ($ARGUMENTS is the hook's input).
	Prompt string
	// Model is the configured model ("" the session's).
	Model string
	// ContinueOnBlock says an answer ok:false blocks without ending the turn.
	ContinueOnBlock bool
	// System and Schema are the table's system prompt and answer schema.
	System string
	Schema json.RawMessage
	// Condition, when set, makes the handler judge the session's conversation (the
	// table's ConversationPrompt at the handler's event): the user message after it is
	// Condition with "{prompt}" standing for Prompt. An ok:false answer then blocks
	// without ending the turn, and impossible:true passes.
	Condition string
}

// mcpToolHandler reads an mcp_tool handler's fields into h: server, tool (non-empty
// strings), input (an object), onFailure where the table allows it. Its Command is
// "server/tool", as the engine names the hook.
func (l *loader) mcpToolHandler(h *Handler, obj map[string]json.RawMessage) bool {
	path, ev := h.Path, h.Event
	ht, _ := l.handlerType(MCPToolHandlerType)
	m := &MCPToolHandler{Placeholders: ht.Placeholders}
	for _, f := range []struct {
		key string
		dst *string
	}{{"server", &m.Server}, {"tool", &m.Tool}} {
		v, ok := optString(obj[f.key])
		if !ok || v == "" {
			l.malformed(path+"."+f.key, ev, "handler", "an mcp_tool handler needs a non-empty "+f.key+" string", obj[f.key])
			return false
		}
		*f.dst = v
	}
	if raw := obj["input"]; kindOf(raw) != "null" {
		if kindOf(raw) != "object" {
			l.malformed(path+".input", ev, "handler", "input must be an object of the tool's arguments", raw)
			return false
		}
		_ = json.Unmarshal(raw, &m.Input)
	}
	if raw := obj["onFailure"]; ht.OnFailure && kindOf(raw) != "null" {
		var v string
		_ = json.Unmarshal(raw, &v)
		if v != "continue" { // as the engine: any other value reads as "block"
			h.Options.OnFailure = "block"
		}
	}
	h.MCP, h.Command = m, m.Server+"/"+m.Tool
	return true
}

// promptHandler reads a prompt handler's fields into h: prompt (a non-empty string),
// model, continueOnBlock. Its Command is the prompt, as the engine names the hook.
func (l *loader) promptHandler(h *Handler, obj map[string]json.RawMessage) bool {
	path, ev := h.Path, h.Event
	ht, _ := l.handlerType(PromptHandlerType)
	p := &PromptHandler{System: ht.SystemPrompt}
	if c := ht.Conversation; c != nil && slices.Contains(c.Events, ev) {
		p.System, p.Condition = c.SystemPrompt, c.Condition
	}
	if ht.AnswerSchema != "" {
		p.Schema = json.RawMessage(ht.AnswerSchema)
	}
	var ok bool
	if p.Prompt, p.Model, ok = l.promptAndModel(path, ev, obj, "a prompt"); !ok {
		return false
	}
	if raw := obj["continueOnBlock"]; kindOf(raw) != "null" {
		if kindOf(raw) != "boolean" {
			l.malformed(path+".continueOnBlock", ev, "handler", "continueOnBlock must be a boolean", raw)
			return false
		}
		_ = json.Unmarshal(raw, &p.ContinueOnBlock)
	}
	h.Prompt, h.Command = p, p.Prompt
	return true
}

// commandFields reads a command handler's per-engine fields: shell (Claude Code: "bash"
// runs under the dialect's shell; "powershell" is refused, as dsh runs no PowerShell),
// commandWindows (Codex: the command on Windows; read and not used elsewhere) and
// additionalContextLimit (Codex: a non-negative number).
func (l *loader) commandFields(h *Handler, obj map[string]json.RawMessage) bool {
	path, ev := h.Path, h.Event
	if raw := obj["shell"]; kindOf(raw) != "null" {
		var v string
		_ = json.Unmarshal(raw, &v)
		switch v {
		case "bash":
		case "powershell":
			l.diag(path+".shell", ev, "handler", fmt.Errorf("%w: shell \"powershell\": dsh runs command hooks under the dialect's POSIX shell, never PowerShell", ErrUnsupportedHandler))
			return false
		default:
			l.malformed(path+".shell", ev, "handler", `shell must be "bash" or "powershell"`, raw)
			return false
		}
	}
	if raw := obj["commandWindows"]; kindOf(raw) != "null" {
		if kindOf(raw) != "string" {
			l.malformed(path+".commandWindows", ev, "handler", "commandWindows must be a string", raw)
			return false
		}
		// The command Codex runs on Windows; dsh on another system runs command.
	}
	if raw := obj["additionalContextLimit"]; kindOf(raw) != "null" {
		var n float64
		if kindOf(raw) != "number" || json.Unmarshal(raw, &n) != nil || n < 0 || n != float64(int64(n)) {
			l.malformed(path+".additionalContextLimit", ev, "handler", "additionalContextLimit must be a non-negative integer", raw)
			return false
		}
		h.ContextLimit = int(n)
	}
	return true
}

// placeholder is a ${path} of an mcp_tool input: Claude Code's names
// ([A-Za-z_][A-Za-z0-9_.]*), Codex's anything but braces; both resolve dot paths.
var (
	textPlaceholder  = regexp.MustCompile(`\$\{([a-zA-Z_][a-zA-Z0-9_.]*)\}`)
	typedPlaceholder = regexp.MustCompile(`\$\{([^{}]+)\}`)
)

// Interpolate returns input with its strings' ${path} placeholders read from the hook's
// input JSON stdin, as the handler's Placeholders say: "text" replaces each by its value's
// text (a missing or null value by nothing, an object or array by its JSON); "typed" makes
// a string that is exactly one placeholder the value itself, writes others' values as
// text (a string as it is, anything else as JSON), and fails with ErrPlaceholder when a
// path is missing. Keys are never interpolated.
func (m *MCPToolHandler) Interpolate(stdin []byte) (map[string]any, error) {
	var event any
	if err := json.Unmarshal(stdin, &event); err != nil {
		return nil, fmt.Errorf("%w: the hook input is not JSON: %v", ErrPlaceholder, err)
	}
	out, err := interpolate(m.Input, event, m.Placeholders == "typed")
	if err != nil {
		return nil, err
	}
	args, _ := out.(map[string]any)
	if args == nil {
		args = map[string]any{}
	}
	return args, nil
}

func interpolate(v, event any, typed bool) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			r, err := interpolate(e, event, typed)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			r, err := interpolate(e, event, typed)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	case string:
		if !typed {
			return textPlaceholder.ReplaceAllStringFunc(x, func(ph string) string {
				val, ok := lookupPath(event, ph[2:len(ph)-1])
				if !ok || val == nil {
					return ""
				}
				return textOf(val)
			}), nil
		}
		locs := typedPlaceholder.FindAllStringSubmatchIndex(x, -1)
		if len(locs) == 0 {
			return x, nil
		}
		if len(locs) == 1 && locs[0][0] == 0 && locs[0][1] == len(x) {
			p := x[locs[0][2]:locs[0][3]]
			val, ok := lookupPath(event, p)
			if !ok {
				return nil, fmt.Errorf("%w: `${%s}`", ErrPlaceholder, p)
			}
			return val, nil
		}
		var b strings.Builder
		prev := 0
		for _, loc := range locs {
			p := x[loc[2]:loc[3]]
			val, ok := lookupPath(event, p)
			if !ok {
				return nil, fmt.Errorf("%w: `${%s}`", ErrPlaceholder, p)
			}
			b.WriteString(x[prev:loc[0]])
			b.WriteString(textOf(val))
			prev = loc[1]
		}
		b.WriteString(x[prev:])
		return b.String(), nil
	}
	return v, nil
}

// lookupPath follows the dot path p from v; false when a step is missing.
func lookupPath(v any, p string) (any, bool) {
	for _, k := range strings.Split(p, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// textOf is a placeholder value's text: a string as it is, anything else as compact JSON
// (a number as JSON writes it).
func textOf(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// PromptText is a prompt handler's user message: prompt with each $ARGUMENTS (not
// escaped as \$ARGUMENTS) replaced by the hook's input JSON, or, when the prompt has
// none, the input appended after a blank line and "ARGUMENTS: ", as Claude Code 2.1.328
// does (measured).
func PromptText(prompt string, stdin []byte) string {
	args := strings.TrimSuffix(string(stdin), "\n")
	const ph, esc, mark = "$ARGUMENTS", `\$ARGUMENTS`, "\x00escaped\x00"
	s := strings.ReplaceAll(prompt, esc, mark)
	if !strings.Contains(s, ph) {
		return strings.ReplaceAll(s, mark, ph) + "\n\nARGUMENTS: " + args
	}
	s = strings.ReplaceAll(s, ph, args)
	return strings.ReplaceAll(s, mark, ph)
}

// promptAnswer is the object a prompt hook's model answers with.
type promptAnswer struct {
	OK         *bool   `json:"ok"`
	Reason     *string `json:"reason"`
	Impossible bool    `json:"impossible"`
}

// Eval is the model request of p for a hook whose input is stdin.
func (p *PromptHandler) Eval(stdin []byte) PromptEval {
	prompt := p.Prompt
	if p.Condition != "" {
		prompt = strings.ReplaceAll(p.Condition, "{prompt}", p.Prompt)
	}
	return PromptEval{System: p.System, Prompt: PromptText(prompt, stdin), Model: p.Model, Schema: p.Schema, Conversation: p.Condition != ""}
}

// PromptOutput turns a prompt hook's model answer into the hook's output, as Claude Code
// reads it: ok true passes; ok false is a *BlockingError (exit 2 with the reason, which
// the engine shows as "[prompt]: reason") and, unless the handler sets continueOnBlock,
// ends the turn with the reason as its stop reason (continue false beside it, measured
// in Claude Code 2.1.328). A handler that judges the
// conversation (Condition) blocks without ending the turn, and passes on ok false with
// impossible true (the condition can never hold: the engine stops asking). An answer
// that is not that JSON object (prose, a missing ok or reason) is an ErrPromptAnswer.
func (p *PromptHandler) PromptOutput(answer string) ([]byte, error) {
	text := strings.TrimSpace(answer)
	if t, ok := strings.CutPrefix(text, "```json"); ok {
		text = strings.TrimSpace(strings.TrimSuffix(t, "```"))
	} else if t, ok := strings.CutPrefix(text, "```"); ok {
		text = strings.TrimSpace(strings.TrimSuffix(t, "```"))
	}
	var a promptAnswer
	if err := json.Unmarshal([]byte(text), &a); err != nil {
		return nil, fmt.Errorf("%w: JSON validation failed: %q", ErrPromptAnswer, cut(answer, 200))
	}
	if a.OK == nil || a.Reason == nil {
		return nil, fmt.Errorf("%w: schema validation failed: it needs a boolean ok and a string reason: %q", ErrPromptAnswer, cut(answer, 200))
	}
	if *a.OK || (a.Impossible && p.Condition != "") {
		return nil, nil
	}
	block := &BlockingError{Reason: *a.Reason}
	if !p.ContinueOnBlock && p.Condition == "" {
		block.Stdout, _ = json.Marshal(map[string]any{"continue": false, "stopReason": *a.Reason})
	}
	return nil, block
}

// BlockingError is what an in-process handler (Command.Invoke) returns to block as a
// command does by exiting 2: its run reads as exit 2 with Reason as the stderr and
// Stdout as the stdout (read where the table's Exit2ReadsJSON says so). Claude Code
// reports a prompt hook's ok:false so, "[<prompt>]: <reason>".
type BlockingError struct {
	// Reason stands for the stderr of exit 2.
	Reason string
	// Stdout is the run's stdout beside it (nil: none).
	Stdout []byte
}

// Error returns the reason.
func (e *BlockingError) Error() string { return "blocking error: " + e.Reason }

func cut(s string, n int) string {
	if c, ok := cutRunes(s, n); ok {
		return c + "…"
	}
	return s
}

// Type is h's handler type as a hooks file names it: "command", "http", "mcp_tool",
// "prompt" or "agent" (the key of its row in the table's Handlers, where it has one).
func (h Handler) Type() string {
	switch {
	case h.HTTP != nil:
		return HTTPHandlerType
	case h.MCP != nil:
		return MCPToolHandlerType
	case h.Prompt != nil:
		return PromptHandlerType
	case h.Agent != nil:
		return AgentHandlerType
	}
	return "command"
}

// runsModel says h asks a model (a prompt or agent handler): such a handler does not run
// for an agent hook's verifier's own calls (Fire.Verifier).
func (h Handler) runsModel() bool { return h.Prompt != nil || h.Agent != nil }

// promptAndModel reads the prompt (required, not empty) and the model of a handler that
// asks a model (what names it: "a prompt", "an agent"); a malformed one is reported and
// ok is false.
func (l *loader) promptAndModel(path, ev string, obj map[string]json.RawMessage, what string) (prompt, model string, ok bool) {
	if prompt, ok = optString(obj["prompt"]); !ok || prompt == "" {
		l.malformed(path+".prompt", ev, "handler", what+" handler needs a non-empty prompt string", obj["prompt"])
		return "", "", false
	}
	if model, ok = optString(obj["model"]); !ok {
		l.malformed(path+".model", ev, "handler", "model must be a string", obj["model"])
		return "", "", false
	}
	return prompt, model, true
}
