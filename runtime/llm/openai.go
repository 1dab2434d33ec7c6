package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dshkit/dsh/generated/dsh"
)

// Environment variables [OpenAIConfigFromEnv] reads.
const (
	// EnvOpenAIBaseURL names the base URL variable, e.g. https://api.example.com/v1.
	EnvOpenAIBaseURL = "OPENAI_BASE_URL"
	// EnvOpenAIModel names the default model variable.
	EnvOpenAIModel = "OPENAI_MODEL"
	// EnvOpenAIAPIKey names the API key variable.
	EnvOpenAIAPIKey = "OPENAI_API_KEY"
)

// ErrInvalidConfig is wrapped by every error [NewOpenAI] returns.
var ErrInvalidConfig = errors.New("llm: invalid OpenAI config")

// OpenAIConfig configures an [OpenAI] adapter. There is no default host: BaseURL is
// required.
type OpenAIConfig struct {
	// BaseURL is the API root the adapter appends "/chat/completions" to, e.g.
	// "https://api.example.com/v1". It must be an absolute http or https URL.
	BaseURL string
	// Model is the model used when a request's Config.Model is empty.
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer <APIKey>".
	APIKey string
	// HTTPClient sends the requests; nil means a new client with no timeout (the call's
	// context bounds it).
	HTTPClient *http.Client
	// Logger receives debug records of requests and finishes and warnings about content
	// the wire format cannot carry; nil discards them.
	Logger *slog.Logger
	// PluginContextRole, when set (e.g. "system" or "developer"), is the role of user
	// messages a plugin added as plain contexts (Message.Source a SourcePlugin without a
	// form) that hold no tool result, one message per block, so that hook contexts read as
	// the engine's do (Codex sends each as a developer message); empty keeps "user".
	PluginContextRole string
	// ReplayReasoning sends the reasoning of replayed assistant messages back as
	// "reasoning_content" (some providers require it in tool loops, others reject it);
	// by default it is dropped.
	ReplayReasoning bool
}

// OpenAIConfigFromEnv returns a config with BaseURL, Model and APIKey read from
// OPENAI_BASE_URL, OPENAI_MODEL and OPENAI_API_KEY. It does not validate them;
// [NewOpenAI] does.
func OpenAIConfigFromEnv() OpenAIConfig {
	return OpenAIConfig{
		BaseURL: os.Getenv(EnvOpenAIBaseURL),
		Model:   os.Getenv(EnvOpenAIModel),
		APIKey:  os.Getenv(EnvOpenAIAPIKey),
	}
}

// OpenAI is a [Model] that streams from an OpenAI-compatible chat-completions endpoint
// (POST {BaseURL}/chat/completions with "stream": true). It is safe for concurrent use.
//
// Mapping of a [Request]: the system prompt (Request.System, else Config.System) is a
// "system" message; a user message whose blocks are all text is one "user" message with
// the texts joined by newlines, and one with images uses content parts (images as data
// URLs); each tool-result block becomes a "tool" message with its tool_call_id and its
// text (images in tool results are replaced by a placeholder, and isError has no wire
// form); an assistant message carries its text, its tool calls as "tool_calls" (an empty
// argument string is sent as "{}") and, with ReplayReasoning, its reasoning. Config.Model
// (else the adapter's Model) is "model", MaxTokens is "max_tokens", Temperature is
// "temperature", and the keys of Config.Extra are copied into the body first, so the
// adapter's own keys win over them. Tools are {"type": "function", "function": {name,
// description, parameters}}.
//
// Mapping of the response: "content" deltas are text deltas; "reasoning_content" (or a
// string "reasoning") deltas are reasoning deltas; tool-call deltas are accumulated by
// index and yielded, complete and in index order, when the finish_reason arrives; the
// finish follows at "[DONE]" (or at the end of the body after a finish_reason), with the
// usage of the usage chunk. finish_reason stop→stop (tool-calls if tool calls arrived),
// tool_calls→tool-calls, length→max-tokens, content_filter→stop; tool calls are dropped on
// length and content_filter. An HTTP error status is an error finish with the status, the
// provider's message and code from the JSON body (else the body text and "HTTP_<status>"),
// x-request-id as requestId, and retry-after-ms or retry-after (seconds or an HTTP date)
// as providerRetryAfterMs. An error object inside the stream is an error finish; a body
// that ends or breaks before a finish_reason is an error finish with
// [CodeStreamInterrupted], and tool calls in progress are not yielded. A request that
// could not be sent at all ends the stream with the transport's Go error.
type OpenAI struct {
	endpoint        string
	model           string
	apiKey          string
	client          *http.Client
	log             *slog.Logger
	replayReasoning bool
	contextRole     string
	now             func() time.Time
}

// NewOpenAI validates cfg and returns the adapter. A missing or malformed BaseURL is an
// error wrapping [ErrInvalidConfig].
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	if strings.TrimSpace(cfg.BaseURL) == "" {
		return nil, fmt.Errorf("%w: missing base URL (set %s)", ErrInvalidConfig, EnvOpenAIBaseURL)
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("%w: base URL: %v", ErrInvalidConfig, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: base URL %q is not an absolute http or https URL", ErrInvalidConfig, cfg.BaseURL)
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &OpenAI{
		endpoint:        strings.TrimRight(cfg.BaseURL, "/") + "/chat/completions",
		model:           cfg.Model,
		apiKey:          cfg.APIKey,
		client:          client,
		log:             log,
		replayReasoning: cfg.ReplayReasoning,
		contextRole:     cfg.PluginContextRole,
		now:             time.Now,
	}, nil
}

// Stream sends req and streams the response. Each iteration of the returned sequence is
// one HTTP request, built from req as it was when Stream was called.
func (m *OpenAI) Stream(ctx context.Context, req Request) iter.Seq2[dsh.AssistantChunk, error] {
	frozen := req.Clone()
	return func(yield func(dsh.AssistantChunk, error) bool) {
		body, model, err := m.requestBody(frozen)
		if err != nil {
			yield(nil, &FailureError{Failure: dsh.LLMFailure{Message: err.Error(), Code: CodeInvalidRequest}, Err: err})
			return
		}
		if ctx.Err() != nil {
			yield(abortedFinish(ctx, nil), nil)
			return
		}
		hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, m.endpoint, bytes.NewReader(body))
		if err != nil {
			yield(nil, &FailureError{Failure: dsh.LLMFailure{Message: err.Error(), Code: CodeInvalidRequest}, Err: err})
			return
		}
		hreq.Header.Set("Content-Type", "application/json")
		hreq.Header.Set("Accept", "text/event-stream")
		if m.apiKey != "" {
			hreq.Header.Set("Authorization", "Bearer "+m.apiKey)
		}
		m.log.DebugContext(ctx, "llm: openai request", "url", m.endpoint, "model", model,
			"messages", len(frozen.Messages), "tools", len(frozen.Tools))
		resp, err := m.client.Do(hreq)
		if err != nil {
			if ctx.Err() != nil {
				yield(abortedFinish(ctx, nil), nil)
				return
			}
			yield(nil, err)
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			f := m.httpFailure(resp)
			m.log.DebugContext(ctx, "llm: openai error status", "status", resp.StatusCode, "code", f.Code)
			yield(errorFinish(f, nil), nil)
			return
		}
		if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" {
			// A JSON body where an event stream was asked for: an error object, or a
			// server that ignored "stream".
			f := m.jsonBodyFailure(resp)
			yield(errorFinish(f, nil), nil)
			return
		}
		m.readStream(ctx, resp, yield)
	}
}

// requestBody builds the chat-completions request body; it returns the model too.
func (m *OpenAI) requestBody(req Request) ([]byte, string, error) {
	model := req.Config.Model
	if model == "" {
		model = m.model
	}
	if model == "" {
		return nil, "", errors.New("llm: openai: no model (request config and adapter config are both empty)")
	}
	msgs, err := m.wireMessages(req)
	if err != nil {
		return nil, "", err
	}
	body := make(map[string]any, len(req.Config.Extra)+8)
	for k, v := range req.Config.Extra {
		body[k] = v
	}
	body["model"] = model
	body["messages"] = msgs
	body["stream"] = true
	body["stream_options"] = map[string]bool{"include_usage": true}
	if req.Config.MaxTokens != nil {
		body["max_tokens"] = *req.Config.MaxTokens
	}
	if req.Config.Temperature != nil {
		body["temperature"] = *req.Config.Temperature
	}
	if len(req.Tools) > 0 {
		tools := make([]wireTool, len(req.Tools))
		for i, t := range req.Tools {
			params := t.InputSchema
			if len(bytes.TrimSpace(params)) == 0 {
				params = json.RawMessage(`{"type":"object","properties":{}}`)
			}
			tools[i] = wireTool{Type: "function", Function: wireFunction{Name: t.Name, Description: t.Description, Parameters: params}}
		}
		body["tools"] = tools
	}
	data, err := json.Marshal(body)
	if err != nil {
		return nil, "", fmt.Errorf("llm: openai: encode request: %w", err)
	}
	return data, model, nil
}

// Wire types of the request.
type (
	wireMessage struct {
		Role             string         `json:"role"`
		Content          any            `json:"content"`
		ReasoningContent string         `json:"reasoning_content,omitempty"`
		ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
		ToolCallID       string         `json:"tool_call_id,omitempty"`
	}
	wirePart struct {
		Type     string        `json:"type"`
		Text     string        `json:"text,omitempty"`
		ImageURL *wireImageURL `json:"image_url,omitempty"`
	}
	wireImageURL struct {
		URL string `json:"url"`
	}
	wireToolCall struct {
		ID       string           `json:"id"`
		Type     string           `json:"type"`
		Function wireCallFunction `json:"function"`
	}
	wireCallFunction struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	wireTool struct {
		Type     string       `json:"type"`
		Function wireFunction `json:"function"`
	}
	wireFunction struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	}
)

// wireMessages maps the system prompt and the messages of req.
func (m *OpenAI) wireMessages(req Request) ([]wireMessage, error) {
	var out []wireMessage
	system := req.System
	if system == "" && req.Config.System != nil {
		system = *req.Config.System
	}
	if system != "" {
		out = append(out, wireMessage{Role: "system", Content: system})
	}
	for i, msg := range req.Messages {
		if slices.ContainsFunc(msg.Content, func(b dsh.ContentBlock) bool { return b == nil }) {
			return nil, fmt.Errorf("llm: openai: messages[%d]: nil content block", i)
		}
		switch msg.Role {
		case RoleUser:
			if m.contextRole != "" && pluginContext(msg) {
				// One message per context, as Codex sends them.
				for _, b := range msg.Content {
					out = append(out, wireMessage{Role: m.contextRole, Content: m.userContent([]dsh.ContentBlock{b})})
				}
				continue
			}
			out = m.appendUser(out, msg.Content)
		case RoleAssistant:
			out = append(out, m.assistantMessage(msg.Content))
		default:
			return nil, fmt.Errorf("llm: openai: messages[%d]: unknown role %q", i, msg.Role)
		}
	}
	return out, nil
}

// pluginContext says whether msg is a plain plugin context: plugin-sourced, no form, no
// tool result.
func pluginContext(msg Message) bool {
	var p dsh.SourcePlugin
	switch s := msg.Source.(type) {
	case dsh.SourcePlugin:
		p = s
	case *dsh.SourcePlugin:
		if s == nil {
			return false
		}
		p = *s
	default:
		return false
	}
	if p.Form != "" {
		return false
	}
	for _, b := range msg.Content {
		if _, ok := asToolResult(b); ok {
			return false
		}
	}
	return len(msg.Content) > 0
}

// appendUser maps a user message: runs of non-tool-result blocks become user messages,
// each tool-result block a tool message, in block order.
func (m *OpenAI) appendUser(out []wireMessage, blocks []dsh.ContentBlock) []wireMessage {
	var run []dsh.ContentBlock
	flush := func() {
		if len(run) > 0 {
			out = append(out, wireMessage{Role: "user", Content: m.userContent(run)})
			run = nil
		}
	}
	for _, b := range blocks {
		if tr, ok := asToolResult(b); ok {
			flush()
			out = append(out, wireMessage{Role: "tool", ToolCallID: tr.ToolCallID, Content: m.toolResultText(tr)})
			continue
		}
		run = append(run, b)
	}
	flush()
	if len(blocks) == 0 {
		out = append(out, wireMessage{Role: "user", Content: ""})
	}
	return out
}

func asToolResult(b dsh.ContentBlock) (dsh.ToolResultBlock, bool) {
	switch v := b.(type) {
	case dsh.ToolResultBlock:
		return v, true
	case *dsh.ToolResultBlock:
		return *v, true
	}
	return dsh.ToolResultBlock{}, false
}

// userContent maps user blocks (no tool results): a string when they are all text, else
// content parts.
func (m *OpenAI) userContent(blocks []dsh.ContentBlock) any {
	var texts []string
	var parts []wirePart
	hasImage := false
	for _, b := range blocks {
		dsh.SwitchContentBlock(b,
			func(t dsh.TextBlock) struct{} {
				texts = append(texts, t.Text)
				parts = append(parts, wirePart{Type: "text", Text: t.Text})
				return struct{}{}
			},
			func(dsh.ReasoningBlock) struct{} {
				m.log.Warn("llm: openai: reasoning block in a user message dropped")
				return struct{}{}
			},
			func(img dsh.ImageBlock) struct{} {
				hasImage = true
				parts = append(parts, wirePart{Type: "image_url", ImageURL: &wireImageURL{URL: "data:" + img.MediaType + ";base64," + img.Data}})
				return struct{}{}
			},
			func(dsh.ToolCallBlock) struct{} {
				m.log.Warn("llm: openai: tool-call block in a user message dropped")
				return struct{}{}
			},
			func(dsh.ToolResultBlock) struct{} { return struct{}{} },
		)
	}
	if hasImage {
		return parts
	}
	return strings.Join(texts, "\n")
}

// toolResultText renders a tool result's content as the text of a tool message.
func (m *OpenAI) toolResultText(tr dsh.ToolResultBlock) string {
	var texts []string
	for _, b := range tr.Content {
		if b == nil {
			continue
		}
		dsh.SwitchContentBlock(b,
			func(t dsh.TextBlock) struct{} { texts = append(texts, t.Text); return struct{}{} },
			func(r dsh.ReasoningBlock) struct{} { texts = append(texts, r.Text); return struct{}{} },
			func(img dsh.ImageBlock) struct{} {
				m.log.Warn("llm: openai: image in a tool result replaced by a placeholder", "toolCallId", tr.ToolCallID)
				texts = append(texts, "[image omitted: "+img.MediaType+"]")
				return struct{}{}
			},
			func(tc dsh.ToolCallBlock) struct{} { return struct{}{} },
			func(inner dsh.ToolResultBlock) struct{} {
				texts = append(texts, m.toolResultText(inner))
				return struct{}{}
			},
		)
	}
	return strings.Join(texts, "\n")
}

// assistantMessage maps a replayed assistant message.
func (m *OpenAI) assistantMessage(blocks []dsh.ContentBlock) wireMessage {
	var text, reasoning strings.Builder
	var calls []wireToolCall
	for _, b := range blocks {
		dsh.SwitchContentBlock(b,
			func(t dsh.TextBlock) struct{} { text.WriteString(t.Text); return struct{}{} },
			func(r dsh.ReasoningBlock) struct{} { reasoning.WriteString(r.Text); return struct{}{} },
			func(dsh.ImageBlock) struct{} {
				m.log.Warn("llm: openai: image in an assistant message dropped")
				return struct{}{}
			},
			func(tc dsh.ToolCallBlock) struct{} {
				args := tc.Arguments
				if args == "" {
					args = "{}"
				}
				calls = append(calls, wireToolCall{ID: tc.ID, Type: "function", Function: wireCallFunction{Name: tc.Name, Arguments: args}})
				return struct{}{}
			},
			func(dsh.ToolResultBlock) struct{} {
				m.log.Warn("llm: openai: tool-result block in an assistant message dropped")
				return struct{}{}
			},
		)
	}
	w := wireMessage{Role: "assistant", ToolCalls: calls}
	switch {
	case text.Len() > 0:
		w.Content = text.String()
	case len(calls) > 0:
		w.Content = nil // null content beside tool calls
	default:
		w.Content = ""
	}
	if m.replayReasoning {
		w.ReasoningContent = reasoning.String()
	}
	return w
}

// Wire types of the response.
type (
	wireChunk struct {
		Choices []wireChoice    `json:"choices"`
		Usage   *wireUsage      `json:"usage"`
		Error   json.RawMessage `json:"error"`
	}
	wireChoice struct {
		Index        int       `json:"index"`
		Delta        wireDelta `json:"delta"`
		FinishReason *string   `json:"finish_reason"`
	}
	wireDelta struct {
		Content          string              `json:"content"`
		ReasoningContent string              `json:"reasoning_content"`
		Reasoning        json.RawMessage     `json:"reasoning"`
		ToolCalls        []wireToolCallDelta `json:"tool_calls"`
	}
	wireToolCallDelta struct {
		Index    *int   `json:"index"`
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	wireUsage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	}
)

// toolAcc accumulates one tool call's deltas.
type toolAcc struct {
	id, name string
	args     strings.Builder
}

// streamState is the fold of one response stream.
type streamState struct {
	tools        map[int]*toolAcc
	lastIndex    int
	finishRaw    string
	sawFinish    bool
	usage        *dsh.Usage
	requestID    *string
	emittedCalls int
}

// readStream parses the event stream of resp and yields its chunks and finish.
func (m *OpenAI) readStream(ctx context.Context, resp *http.Response, yield func(dsh.AssistantChunk, error) bool) {
	st := &streamState{tools: map[int]*toolAcc{}, lastIndex: -1, requestID: headerRequestID(resp.Header)}
	sse := &sseReader{r: bufio.NewReaderSize(resp.Body, 64<<10)}
	emit := func(c dsh.AssistantChunk) bool {
		if ctx.Err() != nil {
			yield(abortedFinish(ctx, st.usage), nil)
			return false
		}
		return yield(c, nil)
	}
	for {
		event, data, err := sse.next()
		if err != nil {
			if ctx.Err() != nil {
				yield(abortedFinish(ctx, st.usage), nil)
				return
			}
			if st.sawFinish {
				// Ended after the finish_reason without "[DONE]": the content is
				// complete, only a late usage chunk may be missing.
				m.finish(ctx, st, yield)
				return
			}
			msg := "response stream ended before its finish"
			if !errors.Is(err, io.EOF) {
				msg = "response stream broke before its finish: " + err.Error()
			}
			m.log.DebugContext(ctx, "llm: openai stream interrupted", "err", err, "pendingToolCalls", len(st.tools))
			yield(errorFinish(dsh.LLMFailure{Message: msg, Code: CodeStreamInterrupted, RequestID: st.requestID}, st.usage), nil)
			return
		}
		if strings.TrimSpace(data) == "[DONE]" {
			m.finish(ctx, st, yield)
			return
		}
		if event == "error" {
			msg, code := parseAPIErrorBody([]byte(data))
			if msg == "" {
				msg = truncate(strings.TrimSpace(data), 512)
			}
			if code == "" {
				code = CodeUnknown
			}
			yield(errorFinish(dsh.LLMFailure{Message: msg, Code: code, RequestID: st.requestID}, st.usage), nil)
			return
		}
		var c wireChunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			yield(errorFinish(dsh.LLMFailure{
				Message:   fmt.Sprintf("undecodable stream event: %v", err),
				Code:      CodeBadResponse,
				RequestID: st.requestID,
			}, st.usage), nil)
			return
		}
		if len(c.Error) > 0 && string(c.Error) != "null" {
			msg, code := parseAPIError(c.Error)
			if msg == "" {
				msg = "provider error in the response stream"
			}
			if code == "" {
				code = CodeUnknown
			}
			yield(errorFinish(dsh.LLMFailure{Message: msg, Code: code, RequestID: st.requestID}, st.usage), nil)
			return
		}
		if c.Usage != nil {
			st.usage = &dsh.Usage{InputTokens: c.Usage.PromptTokens, OutputTokens: c.Usage.CompletionTokens}
		}
		for _, ch := range c.Choices {
			if ch.Index != 0 {
				continue // only the first choice is the response
			}
			if !m.applyDelta(ch, st, emit) {
				return
			}
		}
	}
}

// applyDelta folds one choice delta, yielding its text and reasoning and, at its
// finish_reason, the complete tool calls. It reports whether the stream goes on.
func (m *OpenAI) applyDelta(ch wireChoice, st *streamState, emit func(dsh.AssistantChunk) bool) bool {
	d := ch.Delta
	reasoning := d.ReasoningContent
	if reasoning == "" && len(d.Reasoning) > 0 && d.Reasoning[0] == '"' {
		_ = json.Unmarshal(d.Reasoning, &reasoning)
	}
	if reasoning != "" && !emit(dsh.ChunkReasoningDelta{Text: reasoning}) {
		return false
	}
	if d.Content != "" && !emit(dsh.ChunkTextDelta{Text: d.Content}) {
		return false
	}
	for _, td := range d.ToolCalls {
		idx := st.lastIndex
		switch {
		case td.Index != nil:
			idx = *td.Index
		case td.ID != "" || idx < 0:
			// No index (some servers): a new id opens the next slot.
			idx = st.lastIndex + 1
		}
		st.lastIndex = idx
		acc := st.tools[idx]
		if acc == nil {
			acc = &toolAcc{}
			st.tools[idx] = acc
		}
		if td.ID != "" {
			acc.id = td.ID
		}
		if acc.name == "" {
			acc.name = td.Function.Name
		}
		acc.args.WriteString(td.Function.Arguments)
	}
	if ch.FinishReason == nil || *ch.FinishReason == "" || st.sawFinish {
		return true
	}
	st.sawFinish = true
	st.finishRaw = *ch.FinishReason
	switch st.finishRaw {
	case "length", "content_filter":
		if len(st.tools) > 0 {
			m.log.Debug("llm: openai: truncated tool calls dropped", "finishReason", st.finishRaw, "count", len(st.tools))
		}
		return true
	}
	return m.emitToolCalls(st, emit)
}

// emitToolCalls yields the accumulated tool calls in index order.
func (m *OpenAI) emitToolCalls(st *streamState, emit func(dsh.AssistantChunk) bool) bool {
	indices := make([]int, 0, len(st.tools))
	for i := range st.tools {
		indices = append(indices, i)
	}
	slices.Sort(indices)
	for _, i := range indices {
		acc := st.tools[i]
		id := acc.id
		if id == "" {
			id = "call_" + strconv.Itoa(i)
		}
		if !emit(dsh.ChunkToolCall{ID: id, Name: acc.name, Arguments: acc.args.String()}) {
			return false
		}
		st.emittedCalls++
	}
	st.tools = map[int]*toolAcc{}
	return true
}

// finish yields the final finish of a stream that ended normally.
func (m *OpenAI) finish(ctx context.Context, st *streamState, yield func(dsh.AssistantChunk, error) bool) {
	emit := func(c dsh.AssistantChunk) bool {
		if ctx.Err() != nil {
			yield(abortedFinish(ctx, st.usage), nil)
			return false
		}
		return yield(c, nil)
	}
	if !st.sawFinish && len(st.tools) > 0 {
		// "[DONE]" without a finish_reason: the server ended the response, so the
		// calls it sent are complete.
		if !m.emitToolCalls(st, emit) {
			return
		}
	}
	var reason dsh.FinishReason
	switch st.finishRaw {
	case "length":
		reason = dsh.FinishReasonMaxTokens
	case "content_filter":
		reason = dsh.FinishReasonStop
	case "stop", "tool_calls", "function_call", "":
		reason = dsh.FinishReasonStop
		if st.emittedCalls > 0 {
			reason = dsh.FinishReasonToolCalls
		}
	default:
		m.log.WarnContext(ctx, "llm: openai: unknown finish_reason mapped to stop", "finishReason", st.finishRaw)
		reason = dsh.FinishReasonStop
		if st.emittedCalls > 0 {
			reason = dsh.FinishReasonToolCalls
		}
	}
	m.log.DebugContext(ctx, "llm: openai finish", "reason", reason, "finishReason", st.finishRaw, "toolCalls", st.emittedCalls)
	emit(dsh.ChunkFinish{Reason: reason, Usage: st.usage})
}

// sseReader reads server-sent events.
type sseReader struct {
	r *bufio.Reader
}

// next returns the next event's type and data (its data lines joined by newlines),
// skipping events without data. A final line without its newline is incomplete and
// dropped; complete data lines before the end of the body form a last event.
func (s *sseReader) next() (event, data string, err error) {
	var lines []string
	have := false
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			if have && errors.Is(err, io.EOF) {
				return event, strings.Join(lines, "\n"), nil
			}
			return "", "", err
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if line == "" {
			if have {
				return event, strings.Join(lines, "\n"), nil
			}
			event = ""
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue // comment, e.g. a keep-alive
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "data":
			lines = append(lines, value)
			have = true
		case "event":
			event = value
		}
	}
}

// httpFailure builds the failure of a non-2xx response.
func (m *OpenAI) httpFailure(resp *http.Response) dsh.LLMFailure {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	msg, code := parseAPIErrorBody(body)
	if msg == "" {
		msg = truncate(strings.TrimSpace(string(body)), 512)
	}
	if msg == "" {
		msg = resp.Status
	}
	if code == "" {
		code = "HTTP_" + strconv.Itoa(resp.StatusCode)
	}
	status := resp.StatusCode
	f := dsh.LLMFailure{Message: msg, Code: code, Status: &status, RequestID: headerRequestID(resp.Header)}
	if ms, ok := retryAfterMS(resp.Header, m.now()); ok {
		f.ProviderRetryAfterMS = &ms
	}
	return f
}

// jsonBodyFailure builds the failure of a 2xx JSON body where a stream was expected.
func (m *OpenAI) jsonBodyFailure(resp *http.Response) dsh.LLMFailure {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	msg, code := parseAPIErrorBody(body)
	if msg == "" {
		msg = "expected an event stream, got an application/json response"
		code = CodeBadResponse
	}
	if code == "" {
		code = CodeUnknown
	}
	return dsh.LLMFailure{Message: msg, Code: code, RequestID: headerRequestID(resp.Header)}
}

// parseAPIErrorBody reads the message and code of an error body: {"error": {...}},
// {"error": "text"} or a bare {"message", "code"} object.
func parseAPIErrorBody(body []byte) (msg, code string) {
	var top struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &top) != nil {
		return "", ""
	}
	if len(top.Error) > 0 && string(top.Error) != "null" {
		return parseAPIError(top.Error)
	}
	return parseAPIError(body)
}

// parseAPIError reads an error value: a string, or an object with message and code (a
// string or a number), falling back to type for the code.
func parseAPIError(raw json.RawMessage) (msg, code string) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, ""
	}
	var e struct {
		Message string          `json:"message"`
		Code    json.RawMessage `json:"code"`
		Type    string          `json:"type"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return "", ""
	}
	var cs string
	if json.Unmarshal(e.Code, &cs) == nil {
		code = cs
	} else if n := bytes.TrimSpace(e.Code); len(n) > 0 && string(n) != "null" {
		var num json.Number
		if json.Unmarshal(n, &num) == nil {
			code = num.String()
		}
	}
	if code == "" {
		code = e.Type
	}
	if code == "context_length_exceeded" {
		code = CodeContextWindowExceeded
	}
	return e.Message, code
}

// headerRequestID returns the provider's request id header, if any.
func headerRequestID(h http.Header) *string {
	for _, k := range []string{"X-Request-Id", "Request-Id"} {
		if v := strings.TrimSpace(h.Get(k)); v != "" {
			return &v
		}
	}
	return nil
}

// retryAfterMS reads retry-after-ms, else retry-after (delta seconds, possibly
// fractional, or an HTTP date relative to now), in milliseconds.
func retryAfterMS(h http.Header, now time.Time) (int, bool) {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 && f < math.MaxInt32 {
			return int(math.Ceil(f)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if f < 0 || f*1000 >= math.MaxInt32 {
			return 0, false
		}
		return int(math.Ceil(f * 1000)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		if d < 0 {
			d = 0
		}
		if d.Milliseconds() >= math.MaxInt32 {
			return 0, false
		}
		return int(d.Milliseconds()), true
	}
	return 0, false
}

// truncate cuts s to at most n bytes, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
