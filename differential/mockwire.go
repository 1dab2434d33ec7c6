package differential

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The mock's answers on each wire: a scripted turn as the Messages API's, the Responses
// API's, Chat Completions' and Gemini's response (streamed where the wire streams), with
// the tool calls each engine's model would make.

// sse writes one server-sent event: its event name, if any, and v as its data.
func sse(w io.Writer, event string, v any) {
	data, _ := json.Marshal(v)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", data)
}

// callID is the id of the i-th tool call of the n-th response.
func callID(prefix string, n, i int) string { return fmt.Sprintf("%s%03d_%d", prefix, n, i) }

func (m *Mock) anthropic(w http.ResponseWriter, req map[string]any, t Turn, n int, stream bool) {
	model, _ := req["model"].(string)
	var content []map[string]any
	if t.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": t.Text})
	}
	for i, c := range t.Bash {
		content = append(content, map[string]any{"type": "tool_use", "id": callID("toolu_", n, i), "name": "Bash",
			"input": map[string]any{"command": c, "description": "run"}})
	}
	for i, c := range t.Calls {
		content = append(content, map[string]any{"type": "tool_use", "id": callID("toolu_", n, len(t.Bash)+i), "name": c.Name, "input": c.Input})
	}
	stop := "end_turn"
	if len(t.Bash)+len(t.Calls) > 0 {
		stop = "tool_use"
	}
	usage := map[string]any{"input_tokens": t.inputTokens(), "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	msgID := fmt.Sprintf("msg_%03d", n)
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	var b bytes.Buffer
	sse(&b, "message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": msgID, "type": "message",
		"role": "assistant", "model": model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	for i, c := range content {
		switch c["type"] {
		case "text":
			sse(&b, "content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			sse(&b, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": c["text"]}})
		case "tool_use":
			sse(&b, "content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": c["id"], "name": c["name"], "input": map[string]any{}}})
			in, _ := json.Marshal(c["input"])
			sse(&b, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}})
		}
		sse(&b, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	sse(&b, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
	sse(&b, "message_stop", map[string]any{"type": "message_stop"})
	_, _ = w.Write(b.Bytes())
}

// codexShell renders a command as the shell tool the Codex request offers.
func codexShell(req map[string]any, cmd string) (string, string) {
	tools, _ := req["tools"].([]any)
	names := map[string]bool{}
	for _, t := range tools {
		if tm, ok := t.(map[string]any); ok {
			if s, ok := tm["name"].(string); ok {
				names[s] = true
			}
		}
	}
	switch {
	case names["Bash"]: // dsh run --model openai:…
		a, _ := json.Marshal(map[string]any{"command": cmd, "description": "run"})
		return "Bash", string(a)
	case names["shell_command"]:
		a, _ := json.Marshal(map[string]any{"command": cmd})
		return "shell_command", string(a)
	case names["exec_command"]:
		a, _ := json.Marshal(map[string]any{"cmd": cmd})
		return "exec_command", string(a)
	default:
		a, _ := json.Marshal(map[string]any{"command": []string{"bash", "-lc", cmd}})
		return "shell", string(a)
	}
}

// responsesToolType is the type of the tool named name that a Responses request offers
// ("function", "custom"), "" when it offers none of that name.
func responsesToolType(req map[string]any, name string) string {
	tools, _ := req["tools"].([]any)
	for _, t := range tools {
		if tm, ok := t.(map[string]any); ok && tm["name"] == name {
			typ, _ := tm["type"].(string)
			return typ
		}
	}
	return ""
}

// responsesNamespace is the name of the namespace tool of a Responses request that holds
// the function name ("" when none does).
func responsesNamespace(req map[string]any, name string) string {
	tools, _ := req["tools"].([]any)
	for _, t := range tools {
		tm, _ := t.(map[string]any)
		if tm["type"] != "namespace" {
			continue
		}
		fns, _ := tm["tools"].([]any)
		for _, f := range fns {
			if fm, _ := f.(map[string]any); fm["name"] == name {
				ns, _ := tm["name"].(string)
				return ns
			}
		}
	}
	return ""
}

// agentRE finds the agent a Codex spawn_agent output names.
var agentRE = regexp.MustCompile(`"agent_id":"([^"]+)"`)

// lastAgentID is the agent id the last spawn_agent output of a Responses request names
// ("" when none does).
func lastAgentID(req map[string]any) string {
	items, _ := req["input"].([]any)
	id := ""
	for _, it := range items {
		m, _ := it.(map[string]any)
		if out, _ := m["output"].(string); m["type"] == "function_call_output" {
			if sm := agentRE.FindStringSubmatch(out); sm != nil {
				id = sm[1]
			}
		}
	}
	return id
}

// withAgent is v with "{{agent}}" (a string, or an element of a list) replaced by agent.
func withAgent(v any, agent string) any {
	switch x := v.(type) {
	case string:
		if x == "{{agent}}" {
			return agent
		}
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = withAgent(s, agent)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = withAgent(s, agent)
		}
		return out
	}
	return v
}

// sessionRE finds the session a Codex exec output names.
var sessionRE = regexp.MustCompile(`Process running with session ID (\d+)`)

// lastSessionID is the session id the last tool output of a Responses request names
// ("Process running with session ID N"), 0 when none does.
func lastSessionID(req map[string]any) int {
	items, _ := req["input"].([]any)
	id := 0
	for _, it := range items {
		m, _ := it.(map[string]any)
		if m["type"] != "function_call_output" && m["type"] != "custom_tool_call_output" {
			continue
		}
		out, _ := m["output"].(string)
		if sm := sessionRE.FindStringSubmatch(out); sm != nil {
			id, _ = strconv.Atoi(sm[1])
		}
	}
	return id
}

func (m *Mock) responses(w http.ResponseWriter, req map[string]any, t Turn, n int) {
	w.Header().Set("Content-Type", "text/event-stream")
	var b bytes.Buffer
	respID := fmt.Sprintf("resp_%03d", n)
	sse(&b, "response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": respID}})
	if t.Text != "" {
		item := map[string]any{"type": "message", "role": "assistant", "id": fmt.Sprintf("msg_%03d", n),
			"content": []any{map[string]any{"type": "output_text", "text": t.Text}}}
		sse(&b, "response.output_item.done", map[string]any{"type": "response.output_item.done", "item": item})
	}
	for i, c := range t.Bash {
		name, args := codexShell(req, c)
		if t.Escalate && name == "exec_command" {
			a, _ := json.Marshal(map[string]any{"cmd": c, "sandbox_permissions": "require_escalated", "justification": "run"})
			args = string(a)
		}
		item := map[string]any{"type": "function_call", "id": callID("fc_", n, i), "call_id": callID("call_", n, i), "name": name, "arguments": args}
		sse(&b, "response.output_item.done", map[string]any{"type": "response.output_item.done", "item": item})
	}
	session := lastSessionID(req)
	agent := lastAgentID(req)
	for j, c := range t.Calls {
		// A raw call in Codex's own shape (exec_command, write_stdin, ...), as scripted; an
		// input "{{session}}" is the session id the last exec output named.
		i := len(t.Bash) + j
		in := map[string]any{}
		for k, v := range c.Input {
			if v == "{{session}}" {
				v = session
			}
			v = withAgent(v, agent)
			in[k] = v
		}
		args, _ := json.Marshal(in)
		item := map[string]any{"type": "function_call", "id": callID("fc_", n, i), "call_id": callID("call_", n, i), "name": c.Name, "arguments": string(args)}
		if ns := responsesNamespace(req, c.Name); ns != "" {
			// A function of a namespace the request offers (Codex's multi_agent_v1): the
			// call names its namespace.
			item["namespace"] = ns
		}
		if responsesToolType(req, c.Name) == "custom" {
			// A freeform tool (Codex's apply_patch for the models of its catalog): the
			// call's text is its input "input".
			text, _ := in["input"].(string)
			item = map[string]any{"type": "custom_tool_call", "id": callID("ctc_", n, i), "call_id": callID("call_", n, i), "name": c.Name, "input": text}
		}
		sse(&b, "response.output_item.done", map[string]any{"type": "response.output_item.done", "item": item})
	}
	sse(&b, "response.completed", map[string]any{"type": "response.completed", "response": map[string]any{"id": respID,
		"usage": map[string]any{"input_tokens": t.inputTokens(), "input_tokens_details": nil, "output_tokens": 5, "output_tokens_details": nil, "total_tokens": t.inputTokens() + 5}}})
	_, _ = w.Write(b.Bytes())
}

func (m *Mock) chat(w http.ResponseWriter, t Turn, n int) {
	w.Header().Set("Content-Type", "text/event-stream")
	var b bytes.Buffer
	id := fmt.Sprintf("chatcmpl_%03d", n)
	if t.Text != "" {
		sse(&b, "", map[string]any{"id": id, "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": t.Text}}}})
	}
	for i, c := range t.Bash {
		args, _ := json.Marshal(map[string]any{"command": c, "description": "run"})
		sse(&b, "", map[string]any{"id": id, "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"tool_calls": []any{
			map[string]any{"index": i, "id": callID("call_", n, i), "type": "function", "function": map[string]any{"name": "Bash", "arguments": string(args)}}}}}}})
	}
	for j, c := range t.Calls {
		i := len(t.Bash) + j
		args, _ := json.Marshal(c.Input)
		sse(&b, "", map[string]any{"id": id, "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"tool_calls": []any{
			map[string]any{"index": i, "id": callID("call_", n, i), "type": "function", "function": map[string]any{"name": c.Name, "arguments": string(args)}}}}}}})
	}
	finish := "stop"
	if len(t.Bash)+len(t.Calls) > 0 {
		finish = "tool_calls"
	}
	sse(&b, "", map[string]any{"id": id, "choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish}}})
	sse(&b, "", map[string]any{"id": id, "choices": []any{}, "usage": map[string]any{"prompt_tokens": t.inputTokens(), "completion_tokens": 5, "total_tokens": t.inputTokens() + 5}})
	fmt.Fprint(&b, "data: [DONE]\n\n")
	_, _ = w.Write(b.Bytes())
}

// geminiTools are the function names a Gemini request offers.
func geminiTools(req map[string]any) map[string]bool {
	names := map[string]bool{}
	tools, _ := req["tools"].([]any)
	for _, t := range tools {
		tm, _ := t.(map[string]any)
		decls, _ := tm["functionDeclarations"].([]any)
		for _, d := range decls {
			if dm, ok := d.(map[string]any); ok {
				if s, ok := dm["name"].(string); ok {
					names[s] = true
				}
			}
		}
	}
	return names
}

// geminiShell renders a command as the shell tool the Gemini request offers: Gemini
// CLI's run_shell_command, else dsh's Bash (a dsh run in another dialect's style).
func geminiShell(req map[string]any, cmd string) map[string]any {
	if names := geminiTools(req); !names["run_shell_command"] && names["Bash"] {
		return map[string]any{"name": "Bash", "args": map[string]any{"command": cmd, "description": "run"}}
	}
	return map[string]any{"name": "run_shell_command", "args": map[string]any{"command": cmd, "description": "run"}}
}

// gemini answers a generateContent request: one response, streamed as a single SSE
// event for streamGenerateContent, else as JSON. The function calls carry no id (the
// Gemini API gives none).
func (m *Mock) gemini(w http.ResponseWriter, r *http.Request, req map[string]any, t Turn) {
	var parts []any
	if t.Text != "" {
		parts = append(parts, map[string]any{"text": t.Text})
	}
	var calls []map[string]any
	for _, c := range t.Bash {
		calls = append(calls, geminiShell(req, c))
	}
	unoffered := map[string]bool{}
	for _, c := range t.Calls {
		calls = append(calls, map[string]any{"name": c.Name, "args": c.Input})
		unoffered[c.Name] = unoffered[c.Name] || c.Unoffered
	}
	// As a model would, the mock calls only the functions the request offers and its
	// toolConfig allows: none under mode NONE, only allowedFunctionNames when they are
	// given (Gemini CLI keeps the tools and sets the toolConfig; a client may as well
	// leave the others out).
	offered := geminiTools(req)
	fc, _ := req["toolConfig"].(map[string]any)
	fcc, _ := fc["functionCallingConfig"].(map[string]any)
	mode, _ := fcc["mode"].(string)
	allowed, _ := fcc["allowedFunctionNames"].([]any)
	for _, c := range calls {
		name, _ := c["name"].(string)
		if !offered[name] && !unoffered[name] || mode == "NONE" || (len(allowed) > 0 && !slices.Contains(allowed, any(name))) {
			continue
		}
		parts = append(parts, map[string]any{"functionCall": c})
	}
	resp := map[string]any{
		"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": t.inputTokens(), "candidatesTokenCount": 5,
			"totalTokenCount": t.inputTokens() + 5},
		"modelVersion": "gemini-2.5-pro",
	}
	if !strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	var b bytes.Buffer
	sse(&b, "", resp)
	_, _ = w.Write(b.Bytes())
}
