package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

// Environment variables the OpenAI providers read.
const (
	// EnvOpenAIBaseURL names the base URL variable, e.g. http://127.0.0.1:11434/v1.
	EnvOpenAIBaseURL = "OPENAI_BASE_URL"
	// EnvOpenAIModel names the model of the bare --model openai.
	EnvOpenAIModel = "OPENAI_MODEL"
	// EnvOpenAIAPIKey names the API key variable.
	EnvOpenAIAPIKey = "OPENAI_API_KEY"
)

// ErrInvalidConfig is wrapped by every configuration error of the providers' constructors.
var ErrInvalidConfig = errors.New("llm: invalid provider config")

// OpenAIChatConfig configures an [OpenAIChat] model.
type OpenAIChatConfig struct {
	// BaseURL is the API root the SDK appends "/chat/completions" to, e.g.
	// "http://127.0.0.1:11434/v1"; empty means the SDK's default endpoint.
	BaseURL string
	// Model is the model used when a request's Config.Model is empty.
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer <APIKey>".
	APIKey string
	// HTTPClient sends the requests; nil means a new client with no timeout (the call's
	// context and Timeout bound it).
	HTTPClient *http.Client
	// Timeout bounds one call; zero means [DefaultCallTimeout].
	Timeout time.Duration
	// Limits cap a response (its body, one event, one tool call's arguments); zero
	// fields mean the defaults.
	Limits Limits
	// Logger receives debug records and warnings about content the wire format cannot
	// carry; nil discards them.
	Logger *slog.Logger
	// PluginContextRole, when set (e.g. "system" or "developer"), is the role of user
	// messages a plugin added as plain contexts (Message.Source a SourcePlugin without a
	// form) that hold no tool result, one message per block; empty keeps "user".
	PluginContextRole string
	// ReplayReasoning sends the reasoning of replayed assistant messages back as
	// "reasoning_content" (some servers require it in tool loops, others reject it); by
	// default it is dropped.
	ReplayReasoning bool
}

// OpenAIChatConfigFromEnv returns a config with BaseURL, Model and APIKey read from
// OPENAI_BASE_URL, OPENAI_MODEL and OPENAI_API_KEY through getenv (nil: the process
// environment). It does not validate them; [NewOpenAIChat] does.
func OpenAIChatConfigFromEnv(getenv func(string) string) OpenAIChatConfig {
	o := Options{Getenv: getenv}
	return OpenAIChatConfig{BaseURL: o.getenv(EnvOpenAIBaseURL), Model: o.getenv(EnvOpenAIModel), APIKey: o.getenv(EnvOpenAIAPIKey)}
}

// OpenAIChat is a [llm.Model] on the chat-completions API (the openai-chat provider), for
// OpenAI-compatible servers (ollama, vLLM, llama.cpp), sent with the official OpenAI Go
// SDK, its own retries off. It is safe for concurrent use.
//
// Mapping of a [llm.Request]: the system prompt (Request.System, else Config.System) is a
// "system" message; a user message whose blocks are all text is one "user" message with
// the texts joined by newlines, and one with images uses content parts (images as data
// URLs); each tool-result block becomes a "tool" message with its tool_call_id and its
// text (images in tool results are replaced by a placeholder, and isError has no wire
// form); an assistant message carries its text, its tool calls as "tool_calls" (an empty
// argument string is sent as "{}") and, with ReplayReasoning, its reasoning. Config.Model
// (else the adapter's Model) is "model", MaxTokens is "max_tokens", Temperature is
// "temperature", and the keys of Config.Extra the adapter does not set itself are added
// to the body. Tools are {"type": "function", "function": {name, description,
// parameters}}.
//
// Mapping of the response: "content" deltas are text deltas; "reasoning_content" (or a
// string "reasoning") deltas are reasoning deltas; tool-call deltas are accumulated by
// index and yielded, complete and in index order, when the finish_reason arrives; the
// finish follows at "[DONE]" (or at the end of the body after a finish_reason), with the
// usage of the usage chunk (prompt_tokens_details.cached_tokens as cache reads).
// finish_reason stop→stop (tool-calls if tool calls arrived), tool_calls→tool-calls,
// length→max-tokens, content_filter→stop; tool calls are dropped on length and
// content_filter. Failures are normalized as the package documentation says.
type OpenAIChat struct {
	client          openai.Client
	model           string
	log             *slog.Logger
	replayReasoning bool
	contextRole     string
	limits          Limits
	timeout         time.Duration
	now             func() time.Time
}

// NewOpenAIChat validates cfg and returns the model. A malformed BaseURL is an error
// wrapping [ErrInvalidConfig].
func NewOpenAIChat(cfg OpenAIChatConfig) (*OpenAIChat, error) {
	if err := checkBaseURL(cfg.BaseURL, EnvOpenAIBaseURL); err != nil {
		return nil, err
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	log, timeout := adapterDefaults(cfg.Logger, cfg.Timeout)
	return &OpenAIChat{
		client:          openai.NewClient(openAIOptions(cfg.BaseURL, cfg.APIKey, client)...),
		model:           cfg.Model,
		log:             log,
		replayReasoning: cfg.ReplayReasoning,
		contextRole:     cfg.PluginContextRole,
		timeout:         timeout,
		limits:          cfg.Limits.withDefaults(),
		now:             time.Now,
	}, nil
}

// openAIOptions are the SDK options of both OpenAI providers: no environment read behind
// dsh's back (every option is explicit), the SDK's retries off (dsh's
// agent/request-error policy retries), and the capturing transport.
func openAIOptions(baseURL, apiKey string, client *http.Client) []option.RequestOption {
	opts := []option.RequestOption{
		option.WithMaxRetries(0),
		option.WithHTTPClient(capturingClient(client)),
		option.WithAPIKey(apiKey),
	}
	if baseURL != "" {
		opts = append(opts, option.WithBaseURL(baseURL))
	}
	return opts
}

// checkBaseURL checks an optional base URL: empty, or an absolute http or https URL.
func checkBaseURL(base, env string) error {
	if strings.TrimSpace(base) == "" {
		return nil
	}
	u, err := url.Parse(base)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInvalidConfig, env, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: %s %q is not an absolute http or https URL", ErrInvalidConfig, env, base)
	}
	return nil
}

func openAIChatProvider() Provider {
	return Provider{
		Name:    "openai-chat",
		Summary: "chat completions, for OpenAI-compatible servers (ollama, vLLM, llama.cpp): OPENAI_BASE_URL, OPENAI_API_KEY (not needed with OPENAI_BASE_URL)",
		Env:     []string{EnvOpenAIAPIKey, EnvOpenAIBaseURL},
		Check: func(o Options) error {
			if o.getenv(EnvOpenAIBaseURL) != "" {
				return nil // a local server may need no key
			}
			return requireEnv("openai-chat", o, EnvOpenAIAPIKey)
		},
		New: func(o Options) (llm.Model, error) {
			cfg := OpenAIChatConfigFromEnv(o.getenv)
			cfg.Model, cfg.HTTPClient, cfg.Logger, cfg.Timeout, cfg.Limits = o.Model, o.httpClient(), o.logger(), o.Timeout, o.Limits
			if o.DeveloperContexts {
				// Codex sends hook contexts as developer messages; the chat wire's nearest
				// is a system message.
				cfg.PluginContextRole = "system"
			}
			return NewOpenAIChat(cfg)
		},
	}
}

// Stream sends req and streams the response. Each iteration of the returned sequence is
// one HTTP request, built from req as it was when Stream was called.
func (m *OpenAIChat) Stream(ctx context.Context, req llm.Request) iter.Seq2[dsh.AssistantChunk, error] {
	frozen := req.Clone()
	return func(yield func(dsh.AssistantChunk, error) bool) {
		params, opts, err := m.params(frozen)
		if !mayStart(ctx, err, yield) {
			return
		}
		c := newCall(ctx, "openai-chat", m.timeout, m.limits, yield, EnvOpenAIAPIKey)
		defer c.cancel()
		c.now = m.now
		m.log.DebugContext(ctx, "llm: openai-chat request", "model", params.Model, "messages", len(frozen.Messages), "tools", len(frozen.Tools))
		var raw *http.Response
		opts = append(opts, option.WithJSONSet("stream", true))
		err = m.client.Post(c.ctx, "chat/completions", params, &raw, opts...)
		dec := watchSSE(raw)
		stream := ssestream.NewStream[openai.ChatCompletionChunk](dec, err)
		defer stream.Close()
		st := chatState{tools: map[int]*toolAcc{}, lastIndex: -1}
		for stream.Next() {
			if !m.apply(c, &st, stream.Current()) {
				return
			}
		}
		err = stream.Err()
		var se *ssestream.StreamError
		switch {
		case dec.errData != nil:
			c.fail(eventFailure(dec.errData))
		case err == nil && (st.sawFinish || dec.sawDone()):
			// "[DONE]", or the end of the body after the finish_reason (only a late
			// usage chunk may be missing).
			m.finish(c, &st)
		case errors.As(err, &se):
			c.fail(eventFailure(se.Event.Data))
		default:
			c.end(err, isDecodeError(err))
		}
	}
}

// params builds the SDK request of req.
func (m *OpenAIChat) params(req llm.Request) (openai.ChatCompletionNewParams, []option.RequestOption, error) {
	model := req.Config.Model
	if model == "" {
		model = m.model
	}
	if model == "" {
		return openai.ChatCompletionNewParams{}, nil, errors.New("llm: openai-chat: no model (request config and adapter config are both empty)")
	}
	msgs, err := m.wireMessages(req)
	if err != nil {
		return openai.ChatCompletionNewParams{}, nil, err
	}
	p := openai.ChatCompletionNewParams{Model: shared.ChatModel(model), Messages: msgs}
	p.StreamOptions.IncludeUsage = openai.Bool(true)
	if req.Config.MaxTokens != nil {
		p.MaxTokens = openai.Int(int64(*req.Config.MaxTokens))
	}
	if req.Config.Temperature != nil {
		p.Temperature = openai.Float(*req.Config.Temperature)
	}
	for _, t := range req.Tools {
		params, err := schemaMap(t)
		if err != nil {
			return p, nil, err
		}
		fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: params}
		if t.Description != "" {
			fn.Description = openai.String(t.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	if err := checkExtra(req.Config.Extra); err != nil {
		return p, nil, err
	}
	return p, extraOptions(req.Config.Extra, chatOwnKeys), nil
}

// chatOwnKeys are the body keys the chat adapter sets itself; Config.Extra cannot
// override them.
var chatOwnKeys = []string{"model", "messages", "stream", "stream_options", "max_tokens", "temperature", "tools"}

// extraOptions sets the keys of extra that are not own keys on the request body, in a
// stable order.
func extraOptions(extra map[string]json.RawMessage, own []string) []option.RequestOption {
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if !slices.Contains(own, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	opts := make([]option.RequestOption, 0, len(keys)+1)
	opts = append(opts, option.WithHeader("Accept", "text/event-stream"))
	for _, k := range keys {
		if name, ok := strings.CutPrefix(k, HeaderExtraPrefix); ok {
			var v string
			_ = json.Unmarshal(extra[k], &v) // checkExtra: a JSON string
			opts = append(opts, option.WithHeader(name, v))
			continue
		}
		opts = append(opts, option.WithJSONSet(k, extra[k]))
	}
	return opts
}

// HeaderExtraPrefix begins a key of Config.Extra that the OpenAI adapters send as an HTTP
// header instead of a body key: "header:NAME" with a JSON string value is the header NAME
// (Codex marks a sub-agent's requests with x-openai-subagent).
const HeaderExtraPrefix = "header:"

// checkExtra checks that every value of Config.Extra is JSON.
func checkExtra(extra map[string]json.RawMessage) error {
	for k, v := range extra {
		if !json.Valid(v) {
			return fmt.Errorf("llm: config extra %q: not JSON", k)
		}
		var s string
		if strings.HasPrefix(k, HeaderExtraPrefix) && json.Unmarshal(v, &s) != nil {
			return fmt.Errorf("llm: config extra %q: a header's value must be a JSON string", k)
		}
	}
	return nil
}

// schemaMap decodes a tool's input schema; nil means an object with no properties.
func schemaMap(t llm.ToolSpec) (map[string]any, error) {
	if len(strings.TrimSpace(string(t.InputSchema))) == 0 {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	var m map[string]any
	if err := json.Unmarshal(t.InputSchema, &m); err != nil {
		return nil, fmt.Errorf("llm: tool %q: input schema: %w", t.Name, err)
	}
	if names, ok := m[llm.UnofferedKey].([]any); ok {
		// Properties the tool takes but the model is not told of (llm.UnofferedKey).
		delete(m, llm.UnofferedKey)
		if props, ok := m["properties"].(map[string]any); ok {
			for _, n := range names {
				if s, ok := n.(string); ok {
					delete(props, s)
				}
			}
		}
	}
	return m, nil
}

// wireMessages maps the system prompt and the messages of req.
func (m *OpenAIChat) wireMessages(req llm.Request) ([]openai.ChatCompletionMessageParamUnion, error) {
	var out []openai.ChatCompletionMessageParamUnion
	if system := systemOf(req); system != "" {
		out = append(out, openai.SystemMessage(system))
	}
	for i, msg := range req.Messages {
		if slices.ContainsFunc(msg.Content, func(b dsh.ContentBlock) bool { return b == nil }) {
			return nil, fmt.Errorf("llm: openai-chat: messages[%d]: nil content block", i)
		}
		switch msg.Role {
		case llm.RoleUser:
			if m.contextRole != "" && pluginContext(msg) {
				for _, b := range msg.Content {
					out = append(out, m.contextMessage(b))
				}
				continue
			}
			out = m.appendUser(out, msg.Content)
		case llm.RoleAssistant:
			out = append(out, m.assistantMessage(msg.Content))
		default:
			return nil, fmt.Errorf("llm: openai-chat: messages[%d]: unknown role %q", i, msg.Role)
		}
	}
	return out, nil
}

// systemOf is the request's system prompt: Request.System, else Config.System.
func systemOf(req llm.Request) string {
	if req.System == "" && req.Config.System != nil {
		return *req.Config.System
	}
	return req.System
}

// contextMessage is one plugin context in the configured role.
func (m *OpenAIChat) contextMessage(b dsh.ContentBlock) openai.ChatCompletionMessageParamUnion {
	text := blocksText([]dsh.ContentBlock{b}, m.log)
	switch m.contextRole {
	case "developer":
		return openai.DeveloperMessage(text)
	case "system":
		return openai.SystemMessage(text)
	}
	return openai.UserMessage(text)
}

// pluginContext says whether msg is a plain plugin context: plugin-sourced, no form, no
// tool result. msg is a message of a request's clone, whose sources and blocks are value
// forms ([llm.Request.Clone]).
func pluginContext(msg llm.Message) bool {
	p, ok := msg.Source.(dsh.SourcePlugin)
	if !ok || p.Form != "" {
		return false
	}
	for _, b := range msg.Content {
		if _, ok := b.(dsh.ToolResultBlock); ok {
			return false
		}
	}
	return len(msg.Content) > 0
}

// appendUser maps a user message: runs of non-tool-result blocks become user messages,
// each tool-result block a tool message, in block order.
func (m *OpenAIChat) appendUser(out []openai.ChatCompletionMessageParamUnion, blocks []dsh.ContentBlock) []openai.ChatCompletionMessageParamUnion {
	var run []dsh.ContentBlock
	flush := func() {
		if len(run) > 0 {
			out = append(out, m.userMessage(run))
			run = nil
		}
	}
	for _, b := range blocks {
		if tr, ok := b.(dsh.ToolResultBlock); ok {
			flush()
			out = append(out, openai.ToolMessage(toolResultText(tr, m.log), tr.ToolCallID))
			continue
		}
		run = append(run, b)
	}
	flush()
	if len(blocks) == 0 {
		out = append(out, openai.UserMessage(""))
	}
	return out
}

// userMessage maps user blocks (no tool results): a string when they are all text, else
// content parts.
func (m *OpenAIChat) userMessage(blocks []dsh.ContentBlock) openai.ChatCompletionMessageParamUnion {
	var texts []string
	var parts []openai.ChatCompletionContentPartUnionParam
	hasImage := false
	for _, b := range blocks {
		dsh.SwitchContentBlock(b,
			func(t dsh.TextBlock) struct{} {
				texts = append(texts, t.Text)
				parts = append(parts, openai.TextContentPart(t.Text))
				return struct{}{}
			},
			func(dsh.ReasoningBlock) struct{} {
				m.log.Warn("llm: openai-chat: reasoning block in a user message dropped")
				return struct{}{}
			},
			func(img dsh.ImageBlock) struct{} {
				hasImage = true
				parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "data:" + img.MediaType + ";base64," + img.Data}))
				return struct{}{}
			},
			func(dsh.ToolCallBlock) struct{} {
				m.log.Warn("llm: openai-chat: tool-call block in a user message dropped")
				return struct{}{}
			},
			func(dsh.ToolResultBlock) struct{} { return struct{}{} },
		)
	}
	if hasImage {
		return openai.UserMessage(parts)
	}
	return openai.UserMessage(strings.Join(texts, "\n"))
}

// blocksText renders blocks as text (images as a placeholder).
func blocksText(blocks []dsh.ContentBlock, log *slog.Logger) string {
	var texts []string
	for _, b := range blocks {
		if b == nil {
			continue
		}
		dsh.SwitchContentBlock(b,
			func(t dsh.TextBlock) struct{} { texts = append(texts, t.Text); return struct{}{} },
			func(r dsh.ReasoningBlock) struct{} { texts = append(texts, r.Text); return struct{}{} },
			func(img dsh.ImageBlock) struct{} {
				log.Warn("llm: image replaced by a placeholder where the wire takes text only")
				texts = append(texts, "[image omitted: "+img.MediaType+"]")
				return struct{}{}
			},
			func(tc dsh.ToolCallBlock) struct{} { return struct{}{} },
			func(inner dsh.ToolResultBlock) struct{} {
				texts = append(texts, toolResultText(inner, log))
				return struct{}{}
			},
		)
	}
	return strings.Join(texts, "\n")
}

// toolResultText renders a tool result's content as text.
func toolResultText(tr dsh.ToolResultBlock, log *slog.Logger) string {
	return blocksText(tr.Content, log)
}

// assistantMessage maps a replayed assistant message.
func (m *OpenAIChat) assistantMessage(blocks []dsh.ContentBlock) openai.ChatCompletionMessageParamUnion {
	var text, reasoning strings.Builder
	var a openai.ChatCompletionAssistantMessageParam
	for _, b := range blocks {
		dsh.SwitchContentBlock(b,
			func(t dsh.TextBlock) struct{} { text.WriteString(t.Text); return struct{}{} },
			func(r dsh.ReasoningBlock) struct{} { reasoning.WriteString(r.Text); return struct{}{} },
			func(dsh.ImageBlock) struct{} {
				m.log.Warn("llm: openai-chat: image in an assistant message dropped")
				return struct{}{}
			},
			func(tc dsh.ToolCallBlock) struct{} {
				args := tc.Arguments
				if args == "" {
					args = "{}"
				}
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{ID: tc.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: args}}})
				return struct{}{}
			},
			func(dsh.ToolResultBlock) struct{} {
				m.log.Warn("llm: openai-chat: tool-result block in an assistant message dropped")
				return struct{}{}
			},
		)
	}
	if text.Len() > 0 || len(a.ToolCalls) == 0 {
		a.Content.OfString = openai.String(text.String())
	}
	if m.replayReasoning && reasoning.Len() > 0 {
		a.SetExtraFields(map[string]any{"reasoning_content": reasoning.String()})
	}
	return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
}

// toolAcc accumulates one tool call's deltas.
type toolAcc struct {
	id, name string
	args     strings.Builder
}

// chatState is the fold of one chat-completions stream.
type chatState struct {
	tools map[int]*toolAcc
	// pending is the arguments the accumulated calls hold, counted against the content
	// cap before they are yielded.
	pending      int
	lastIndex    int
	finishRaw    string
	sawFinish    bool
	emittedCalls int
	events       int
}

// apply folds one chunk; it reports whether the stream goes on.
func (m *OpenAIChat) apply(c *call, st *chatState, chunk openai.ChatCompletionChunk) bool {
	st.events++
	if chunk.JSON.Usage.Valid() {
		u := chunk.Usage
		c.usage = &dsh.Usage{InputTokens: int(u.PromptTokens), OutputTokens: int(u.CompletionTokens), CacheReadTokens: intPtr(u.PromptTokensDetails.CachedTokens)}
	}
	for _, ch := range chunk.Choices {
		if ch.Index != 0 {
			continue // only the first choice is the response
		}
		if !m.applyDelta(c, st, ch) {
			return false
		}
	}
	return true
}

// applyDelta folds one choice delta, yielding its text and reasoning and, at its
// finish_reason, the complete tool calls. It reports whether the stream goes on.
func (m *OpenAIChat) applyDelta(c *call, st *chatState, ch openai.ChatCompletionChunkChoice) bool {
	d := ch.Delta
	if reasoning := deltaReasoning(d); reasoning != "" && !c.emit(dsh.ChunkReasoningDelta{Text: reasoning}) {
		return false
	}
	if d.Content != "" && !c.emit(dsh.ChunkTextDelta{Text: d.Content}) {
		return false
	}
	for _, td := range d.ToolCalls {
		idx := st.lastIndex
		switch {
		case td.JSON.Index.Valid():
			idx = int(td.Index)
		case td.ID != "" || idx < 0:
			// No index (some servers): a new id opens the next slot.
			idx = st.lastIndex + 1
		}
		st.lastIndex = idx
		acc := st.tools[idx]
		if acc == nil {
			if !c.block() {
				return false
			}
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
		if c.argumentsOver(acc.args.Len()) {
			return false
		}
		if st.pending += len(td.Function.Arguments); c.contentOver(st.pending) {
			return false
		}
	}
	if ch.FinishReason == "" || st.sawFinish {
		return true
	}
	st.sawFinish = true
	st.finishRaw = ch.FinishReason
	switch st.finishRaw {
	case "length", "content_filter":
		if len(st.tools) > 0 {
			m.log.Debug("llm: openai-chat: truncated tool calls dropped", "finishReason", st.finishRaw, "count", len(st.tools))
		}
		return true
	}
	return m.emitToolCalls(c, st)
}

// deltaReasoning is a delta's reasoning text: "reasoning_content", else a string
// "reasoning" (servers differ; neither is in the SDK's types).
func deltaReasoning(d openai.ChatCompletionChunkChoiceDelta) string {
	for _, k := range []string{"reasoning_content", "reasoning"} {
		f, ok := d.JSON.ExtraFields[k]
		if !ok {
			continue
		}
		raw := f.Raw()
		if len(raw) == 0 || raw[0] != '"' {
			continue
		}
		var s string
		if json.Unmarshal([]byte(raw), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// emitToolCalls yields the accumulated tool calls in index order.
func (m *OpenAIChat) emitToolCalls(c *call, st *chatState) bool {
	indices := make([]int, 0, len(st.tools))
	for i := range st.tools {
		indices = append(indices, i)
	}
	slices.Sort(indices)
	st.pending = 0 // counted again as each call is yielded
	for _, i := range indices {
		acc := st.tools[i]
		id := acc.id
		if id == "" {
			id = "call_" + strconv.Itoa(i)
		}
		if !c.emit(dsh.ChunkToolCall{ID: id, Name: acc.name, Arguments: acc.args.String()}) {
			return false
		}
		st.emittedCalls++
	}
	clear(st.tools)
	return true
}

// finish yields the finish of a stream that ended normally.
func (m *OpenAIChat) finish(c *call, st *chatState) {
	if !st.sawFinish && len(st.tools) > 0 {
		// "[DONE]" without a finish_reason: the server ended the response, so the calls
		// it sent are complete.
		if !m.emitToolCalls(c, st) {
			return
		}
	}
	var reason dsh.FinishReason
	switch st.finishRaw {
	case "length":
		reason = dsh.FinishReasonMaxTokens
	case "content_filter":
		reason = dsh.FinishReasonStop
	default:
		if st.finishRaw != "stop" && st.finishRaw != "tool_calls" && st.finishRaw != "function_call" && st.finishRaw != "" {
			m.log.Warn("llm: openai-chat: unknown finish_reason mapped to stop", "finishReason", st.finishRaw)
		}
		reason = dsh.FinishReasonStop
		if st.emittedCalls > 0 {
			reason = dsh.FinishReasonToolCalls
		}
	}
	c.finish(reason)
}

// eventFailure is the failure an error event's data describes.
func eventFailure(data []byte) dsh.LLMFailure {
	msg, code := parseAPIErrorBody(data)
	if msg == "" {
		msg = truncate(strings.TrimSpace(string(data)), 512)
	}
	if msg == "" {
		msg = "provider error in the response stream"
	}
	if code == "" {
		code = llm.CodeUnknown
	}
	return dsh.LLMFailure{Message: msg, Code: normalizeCode(code, msg)}
}
