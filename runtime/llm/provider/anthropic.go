package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/internal/variant"
	"github.com/dshkit/dsh/runtime/llm"
)

// Environment variables the anthropic provider reads (Claude Code's).
const (
	// EnvAnthropicAPIKey names the API key variable (sent as x-api-key).
	EnvAnthropicAPIKey = "ANTHROPIC_API_KEY"
	// EnvAnthropicAuthToken names the bearer token variable, used when there is no key.
	EnvAnthropicAuthToken = "ANTHROPIC_AUTH_TOKEN"
	// EnvAnthropicBaseURL names the base URL variable.
	EnvAnthropicBaseURL = "ANTHROPIC_BASE_URL"
)

// AnthropicConfig configures an [Anthropic] model.
type AnthropicConfig struct {
	// BaseURL is the API root ("/v1/messages" is appended); empty means the SDK's default.
	BaseURL string
	// APIKey is sent as x-api-key; AuthToken, used when APIKey is empty, as a bearer
	// token.
	APIKey, AuthToken string
	// Model is the model used when a request's Config.Model is empty.
	Model string
	// SystemContextModels are the models (path.Match patterns on the request's model) for
	// which the plugins' contexts that read as <system-reminder> texts (the claude-code
	// dialect's) go as messages of role "system", as Claude Code sends them for those
	// models; see [Anthropic].
	SystemContextModels []string
	// HTTPClient sends the requests; nil means a new client.
	HTTPClient *http.Client
	// Timeout bounds one call; zero means [DefaultCallTimeout].
	Timeout time.Duration
	// Limits cap a response (its body, one event, one tool call's arguments); zero
	// fields mean the defaults.
	Limits Limits
	// Logger receives debug records and warnings; nil discards them.
	Logger *slog.Logger
}

// Anthropic is a [llm.Model] on the Messages API (the anthropic provider), sent with the
// official Anthropic Go SDK, its own retries off. It is safe for concurrent use.
//
// Mapping of a [llm.Request], as Claude Code sends it: the system prompt is one system text
// block with cache_control; consecutive messages of one side are one message (a step's
// tool results and the contexts after them are one user message: tool_result blocks,
// then the contexts as text blocks, which under the claude-code dialect already read as
// Claude Code's <system-reminder> texts); the last content block of the last message
// gets cache_control. An assistant message replays its text, its signed reasoning as
// thinking blocks with their signatures (redacted reasoning as redacted_thinking;
// unsigned reasoning is dropped, as the API rejects it) and its tool calls as tool_use
// (arguments that are not a JSON object as {}). MaxTokens is max_tokens (default 32000,
// 8192 for claude-3 models), Temperature is temperature, and the other keys of
// Config.Extra (e.g. "thinking") are added to the body. For a model that matches
// AnthropicConfig.SystemContextModels, the <system-reminder> texts of plugin messages
// leave their user message: their bare texts, joined by a blank line, are one "system"
// message right after it (Claude Code's channel for its default model).
//
// Mapping of the stream: text_delta and thinking_delta are text and reasoning deltas;
// a thinking block's signature_delta ends it as a signed reasoning delta; a tool_use
// block is yielded whole at its content_block_stop; message_stop is the finish.
// stop_reason end_turn, stop_sequence, refusal and pause_turn are stop (tool-calls when
// calls arrived), tool_use tool-calls, max_tokens and model_context_window_exceeded
// max-tokens. Usage: inputTokens is input_tokens plus the cache reads and writes
// (cache_read_input_tokens, cache_creation_input_tokens), which are reported beside it.
type Anthropic struct {
	client  anthropic.Client
	model   string
	system  []string
	log     *slog.Logger
	limits  Limits
	timeout time.Duration
	keyVars []string
}

func anthropicProvider() Provider {
	return Provider{
		Name: "anthropic",
		// Picked when its key alone is set; the model of ANTHROPIC_MODEL as Claude Code
		// reads it (2.1.328: the model is --model, else ANTHROPIC_MODEL, else settings).
		Keys: []string{EnvAnthropicAPIKey, EnvAnthropicAuthToken}, ModelEnv: "ANTHROPIC_MODEL", DefaultModel: "claude-sonnet-4-5",
		Summary: "the Anthropic Messages API: ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), ANTHROPIC_BASE_URL",
		Env:     []string{EnvAnthropicAPIKey, EnvAnthropicAuthToken, EnvAnthropicBaseURL},
		Check: func(o Options) error {
			return requireEnv("anthropic", o, EnvAnthropicAPIKey, EnvAnthropicAuthToken)
		},
		New: func(o Options) (llm.Model, error) {
			return NewAnthropic(AnthropicConfig{BaseURL: o.getenv(EnvAnthropicBaseURL), APIKey: o.getenv(EnvAnthropicAPIKey),
				AuthToken: o.getenv(EnvAnthropicAuthToken), Model: o.Model, SystemContextModels: o.SystemContextModels, HTTPClient: o.httpClient(), Timeout: o.Timeout, Limits: o.Limits, Logger: o.logger()})
		},
	}
}

// NewAnthropic validates cfg and returns the model.
func NewAnthropic(cfg AnthropicConfig) (*Anthropic, error) {
	if err := checkBaseURL(cfg.BaseURL, EnvAnthropicBaseURL); err != nil {
		return nil, err
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	// Every option explicit: the SDK reads no environment behind dsh's back.
	opts := []option.RequestOption{option.WithoutEnvironmentDefaults(), option.WithMaxRetries(0), option.WithHTTPClient(capturingClient(client))}
	keyVars := []string{EnvAnthropicAPIKey}
	switch {
	case cfg.APIKey != "":
		// The SDK sends the key as a bearer token; the x-api-key header beside it is how
		// Claude Code sends it, and what proxies in front of the API look for.
		opts = append(opts, option.WithAPIKey(cfg.APIKey), option.WithHeader("x-api-key", cfg.APIKey))
	case cfg.AuthToken != "":
		opts = append(opts, option.WithAuthToken(cfg.AuthToken))
		keyVars = []string{EnvAnthropicAuthToken}
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	log, timeout := adapterDefaults(cfg.Logger, cfg.Timeout)
	return &Anthropic{client: anthropic.NewClient(opts...), model: cfg.Model, system: cfg.SystemContextModels, log: log, timeout: timeout, limits: cfg.Limits.withDefaults(), keyVars: keyVars}, nil
}

// anthropicOwnKeys are the body keys the adapter sets itself.
var anthropicOwnKeys = []string{"model", "messages", "system", "max_tokens", "temperature", "tools", "stream"}

// Stream sends req and streams the response; each iteration is one HTTP request.
func (m *Anthropic) Stream(ctx context.Context, req llm.Request) iter.Seq2[dsh.AssistantChunk, error] {
	frozen := req.Clone()
	return func(yield func(dsh.AssistantChunk, error) bool) {
		params, err := m.params(frozen)
		if !mayStart(ctx, err, yield) {
			return
		}
		c := newCall(ctx, "anthropic", m.timeout, m.limits, yield, m.keyVars...)
		defer c.cancel()
		m.log.DebugContext(ctx, "llm: anthropic request", "model", params.Model, "messages", len(params.Messages), "tools", len(params.Tools))
		opts := extraAnthropic(frozen.Config.Extra)
		if t := frozen.Config.Temperature; t != nil {
			opts = append(opts, option.WithJSONSet("temperature", *t))
		}
		stream := m.client.Messages.NewStreaming(c.ctx, params, opts...)
		defer stream.Close()
		st := anthropicState{blocks: map[int64]*anthropicBlock{}}
		for stream.Next() {
			if !st.apply(c, stream.Current()) {
				return
			}
			if st.stopped {
				c.finish(st.reason())
				return
			}
		}
		err = stream.Err()
		var aerr *anthropic.Error
		if got, status, _, _, _ := c.facts.snapshot(); errors.As(err, &aerr) && got && status/100 == 2 {
			// An error event inside the stream.
			c.fail(eventFailure([]byte(aerr.RawJSON())))
			return
		}
		c.end(err, isDecodeError(err))
	}
}

// extraAnthropic sets the keys of Config.Extra the adapter does not set itself.
func extraAnthropic(extra map[string]json.RawMessage) []option.RequestOption {
	var opts []option.RequestOption
	for _, k := range sortedKeys(extra) {
		if !containsString(anthropicOwnKeys, k) {
			opts = append(opts, option.WithJSONSet(k, extra[k]))
		}
	}
	return opts
}

// params builds the SDK request of req.
func (m *Anthropic) params(req llm.Request) (anthropic.MessageNewParams, error) {
	if err := checkExtra(req.Config.Extra); err != nil {
		return anthropic.MessageNewParams{}, err
	}
	model := req.Config.Model
	if model == "" {
		model = m.model
	}
	if model == "" {
		return anthropic.MessageNewParams{}, errors.New("llm: anthropic: no model (request config and adapter config are both empty)")
	}
	p := anthropic.MessageNewParams{Model: anthropic.Model(model), MaxTokens: defaultMaxTokens(model)}
	if req.Config.MaxTokens != nil {
		p.MaxTokens = int64(*req.Config.MaxTokens)
	}
	if system := systemOf(req); system != "" {
		p.System = []anthropic.TextBlockParam{{Text: system, CacheControl: anthropic.NewCacheControlEphemeralParam()}}
	}
	for _, t := range req.Tools {
		schema, err := schemaMap(t)
		if err != nil {
			return p, err
		}
		in := anthropic.ToolInputSchemaParam{Properties: schema["properties"]}
		if req, ok := schema["required"].([]any); ok {
			for _, r := range req {
				if s, ok := r.(string); ok {
					in.Required = append(in.Required, s)
				}
			}
		}
		extra := map[string]any{}
		for k, v := range schema {
			if k != "properties" && k != "required" && k != "type" {
				extra[k] = v
			}
		}
		if len(extra) > 0 {
			in.ExtraFields = extra
		}
		tp := anthropic.ToolParam{Name: t.Name, InputSchema: in}
		if t.Description != "" {
			tp.Description = anthropic.String(t.Description)
		}
		if t.DeferLoading {
			tp.DeferLoading = anthropic.Bool(true)
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: &tp})
	}
	// Consecutive messages of one side are one message; the last content block carries
	// the cache breakpoint, as Claude Code sends it.
	type turn struct {
		user   bool
		blocks []anthropic.ContentBlockParamUnion
		system []string
	}
	systemChannel := matchesAny(m.system, model)
	var turns []turn
	for i, msg := range req.Messages {
		var user bool
		var blocks []anthropic.ContentBlockParamUnion
		var system []string
		switch msg.Role {
		case llm.RoleUser:
			content := msg.Content
			if _, plugin := msg.Source.(dsh.SourcePlugin); plugin && systemChannel {
				content, system = splitSystem(content)
			}
			user, blocks = true, m.userBlocks(content)
		case llm.RoleAssistant:
			blocks = m.assistantBlocks(msg.Content)
		default:
			return p, fmt.Errorf("llm: anthropic: messages[%d]: unknown role %q", i, msg.Role)
		}
		if len(blocks) == 0 && len(system) == 0 {
			continue
		}
		if n := len(turns); n > 0 && turns[n-1].user == user {
			turns[n-1].blocks = append(turns[n-1].blocks, blocks...)
			turns[n-1].system = append(turns[n-1].system, system...)
			continue
		}
		turns = append(turns, turn{user: user, blocks: blocks, system: system})
	}
	var last *anthropic.TextBlockParam
	for _, t := range turns {
		switch {
		case t.user && len(t.blocks) > 0:
			p.Messages = append(p.Messages, anthropic.NewUserMessage(t.blocks...))
		case !t.user:
			p.Messages = append(p.Messages, anthropic.NewAssistantMessage(t.blocks...))
		}
		if len(t.system) > 0 {
			sys := &anthropic.SystemMessageParam{Content: []anthropic.TextBlockParam{{Text: strings.Join(t.system, "\n\n")}}}
			p.Messages = append(p.Messages, anthropic.MessageParam{OfSystem: sys})
			last = &sys.Content[0]
		} else {
			last = nil
		}
	}
	if last != nil {
		last.CacheControl = anthropic.NewCacheControlEphemeralParam()
	} else if n := len(turns); n > 0 {
		content := turns[n-1].blocks
		for j := len(content) - 1; j >= 0; j-- {
			if cc := content[j].GetCacheControl(); cc != nil {
				*cc = anthropic.NewCacheControlEphemeralParam()
				break
			}
		}
	}
	return p, nil
}

// matchesAny says whether model matches one of the path.Match patterns.
func matchesAny(patterns []string, model string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, model); ok {
			return true
		}
	}
	return false
}

const (
	reminderOpen  = "<system-reminder>\n"
	reminderClose = "\n</system-reminder>"
)

// splitSystem takes out of a plugin message's content its text blocks made of
// <system-reminder> texts (one, or several joined by newlines): the rest of the content
// and the reminders' bare texts.
func splitSystem(content []dsh.ContentBlock) ([]dsh.ContentBlock, []string) {
	var rest []dsh.ContentBlock
	var system []string
	for _, b := range content {
		t, ok := b.(dsh.TextBlock)
		if !ok {
			rest = append(rest, b)
			continue
		}
		if texts, ok := reminders(t.Text); ok {
			system = append(system, texts...)
			continue
		}
		rest = append(rest, b)
	}
	return rest, system
}

// reminders splits s into the bare texts of the <system-reminder> texts it is made of
// (joined by single newlines); ok is false when s is anything else.
func reminders(s string) ([]string, bool) {
	var out []string
	for s != "" {
		if !strings.HasPrefix(s, reminderOpen) {
			return nil, false
		}
		end := strings.Index(s, reminderClose)
		if end < 0 {
			return nil, false
		}
		out = append(out, s[len(reminderOpen):end])
		s = strings.TrimPrefix(s[end+len(reminderClose):], "\n")
	}
	return out, len(out) > 0
}

// defaultMaxTokens is max_tokens when the config has none: Claude Code's 32000, or the
// 8192 the claude-3 models allow.
func defaultMaxTokens(model string) int64 {
	if strings.HasPrefix(model, "claude-3") {
		return 8192
	}
	return 32000
}

// userBlocks maps user content: text, images and tool results.
func (m *Anthropic) userBlocks(content []dsh.ContentBlock) []anthropic.ContentBlockParamUnion {
	var out []anthropic.ContentBlockParamUnion
	for _, b := range content {
		if b == nil {
			continue
		}
		dsh.SwitchContentBlock(b,
			func(t dsh.TextBlock) struct{} {
				if t.Text != "" {
					out = append(out, anthropic.NewTextBlock(t.Text))
				}
				return struct{}{}
			},
			func(r dsh.ReasoningBlock) struct{} {
				m.log.Warn("llm: anthropic: reasoning block in a user message dropped")
				return struct{}{}
			},
			func(img dsh.ImageBlock) struct{} {
				out = append(out, anthropic.NewImageBlockBase64(img.MediaType, img.Data))
				return struct{}{}
			},
			func(dsh.ToolCallBlock) struct{} {
				m.log.Warn("llm: anthropic: tool-call block in a user message dropped")
				return struct{}{}
			},
			func(tr dsh.ToolResultBlock) struct{} {
				res := anthropic.ToolResultBlockParam{ToolUseID: tr.ToolCallID}
				if tr.IsError {
					res.IsError = anthropic.Bool(true)
				}
				for _, inner := range tr.Content {
					switch v := variant.Value(inner).(type) {
					case dsh.ImageBlock:
						res.Content = append(res.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: anthropic.NewImageBlockBase64(v.MediaType, v.Data).OfImage})
					case dsh.TextBlock:
						if v.ToolReference != nil {
							res.Content = append(res.Content, anthropic.ToolResultBlockParamContentUnion{OfToolReference: &anthropic.ToolReferenceBlockParam{ToolName: *v.ToolReference}})
						} else if v.Text != "" {
							res.Content = append(res.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: v.Text}})
						}
					default:
						if text := blocksText([]dsh.ContentBlock{inner}, m.log); text != "" {
							res.Content = append(res.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: text}})
						}
					}
				}
				out = append(out, anthropic.ContentBlockParamUnion{OfToolResult: &res})
				return struct{}{}
			},
		)
	}
	return out
}

// assistantBlocks maps a replayed assistant message.
func (m *Anthropic) assistantBlocks(content []dsh.ContentBlock) []anthropic.ContentBlockParamUnion {
	var out []anthropic.ContentBlockParamUnion
	for _, b := range content {
		if b == nil {
			continue
		}
		dsh.SwitchContentBlock(b,
			func(t dsh.TextBlock) struct{} {
				if t.Text != "" {
					out = append(out, anthropic.NewTextBlock(t.Text))
				}
				return struct{}{}
			},
			func(r dsh.ReasoningBlock) struct{} {
				switch {
				case r.Signature == nil:
					// The API takes back only signed thinking.
				case r.Redacted != nil && *r.Redacted:
					out = append(out, anthropic.NewRedactedThinkingBlock(*r.Signature))
				default:
					out = append(out, anthropic.NewThinkingBlock(*r.Signature, r.Text))
				}
				return struct{}{}
			},
			func(dsh.ImageBlock) struct{} {
				m.log.Warn("llm: anthropic: image in an assistant message dropped")
				return struct{}{}
			},
			func(tc dsh.ToolCallBlock) struct{} {
				out = append(out, anthropic.NewToolUseBlock(tc.ID, objectArgs(tc.Arguments), tc.Name))
				return struct{}{}
			},
			func(dsh.ToolResultBlock) struct{} {
				m.log.Warn("llm: anthropic: tool-result block in an assistant message dropped")
				return struct{}{}
			},
		)
	}
	return out
}

// objectArgs is a call's arguments as a JSON object for a wire that wants one: the raw
// string when it is an object, else {}.
func objectArgs(args string) json.RawMessage {
	trimmed := strings.TrimSpace(args)
	if strings.HasPrefix(trimmed, "{") && json.Valid([]byte(trimmed)) {
		return json.RawMessage(trimmed)
	}
	return json.RawMessage("{}")
}

// anthropicBlock is one content block of the stream in progress.
type anthropicBlock struct {
	kind      string // text, thinking, redacted_thinking, tool_use, or another type
	id, name  string
	args      strings.Builder
	signature string
	data      string
}

// pending is what the block holds until it ends and is yielded.
func (b *anthropicBlock) pending() int { return b.args.Len() + len(b.signature) + len(b.data) }

// anthropicState is the fold of one Messages stream.
type anthropicState struct {
	blocks map[int64]*anthropicBlock
	// pending is what the open blocks hold (anthropicBlock.pending), counted against the
	// content cap before it is yielded.
	pending    int
	stopReason string
	calls      int
	stopped    bool // message_stop arrived
	input      int64
	cacheRead  int64
	cacheWrite int64
}

func (st *anthropicState) reason() dsh.FinishReason {
	switch st.stopReason {
	case "max_tokens", "model_context_window_exceeded":
		return dsh.FinishReasonMaxTokens
	}
	if st.calls > 0 {
		return dsh.FinishReasonToolCalls
	}
	return dsh.FinishReasonStop
}

// usage sets the call's usage from the counts so far.
func (st *anthropicState) usage(c *call, output int64) {
	u := &dsh.Usage{InputTokens: int(st.input + st.cacheRead + st.cacheWrite), OutputTokens: int(output),
		CacheReadTokens: intPtr(st.cacheRead), CacheWriteTokens: intPtr(st.cacheWrite)}
	c.usage = u
}

// apply folds one event; it reports whether the stream goes on.
func (st *anthropicState) apply(c *call, ev anthropic.MessageStreamEventUnion) bool {
	switch ev.Type {
	case "message_start":
		u := ev.Message.Usage
		st.input, st.cacheRead, st.cacheWrite = u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens
		st.usage(c, u.OutputTokens)
	case "content_block_start":
		cb := ev.ContentBlock
		if !c.block() {
			return false
		}
		if old := st.blocks[ev.Index]; old != nil {
			st.pending -= old.pending()
		}
		b := &anthropicBlock{kind: cb.Type, id: cb.ID, name: cb.Name, signature: cb.Signature, data: cb.Data}
		st.blocks[ev.Index] = b
		if st.pending += b.pending(); c.contentOver(st.pending) {
			return false
		}
		if cb.Type == "text" && cb.Text != "" {
			return c.emit(dsh.ChunkTextDelta{Text: cb.Text})
		}
		if cb.Type == "thinking" && cb.Thinking != "" {
			return c.emit(dsh.ChunkReasoningDelta{Text: cb.Thinking})
		}
	case "content_block_delta":
		b := st.blocks[ev.Index]
		d := ev.Delta
		switch d.Type {
		case "text_delta":
			if d.Text != "" {
				return c.emit(dsh.ChunkTextDelta{Text: d.Text})
			}
		case "thinking_delta":
			if d.Thinking != "" {
				return c.emit(dsh.ChunkReasoningDelta{Text: d.Thinking})
			}
		case "signature_delta":
			if b != nil {
				b.signature += d.Signature
				if st.pending += len(d.Signature); c.contentOver(st.pending) {
					return false
				}
			}
		case "input_json_delta":
			if b != nil {
				b.args.WriteString(d.PartialJSON)
				if c.argumentsOver(b.args.Len()) {
					return false
				}
				if st.pending += len(d.PartialJSON); c.contentOver(st.pending) {
					return false
				}
			}
		}
	case "content_block_stop":
		b := st.blocks[ev.Index]
		if b == nil {
			return true
		}
		delete(st.blocks, ev.Index)
		st.pending -= b.pending() // counted again as it is yielded
		switch b.kind {
		case "tool_use":
			args := b.args.String()
			if args == "" {
				args = "{}"
			}
			st.calls++
			return c.emit(dsh.ChunkToolCall{ID: b.id, Name: b.name, Arguments: args})
		case "thinking":
			if b.signature != "" {
				sig := b.signature
				return c.emit(dsh.ChunkReasoningDelta{Signature: &sig})
			}
		case "redacted_thinking":
			data, redacted := b.data, true
			return c.emit(dsh.ChunkReasoningDelta{Signature: &data, Redacted: &redacted})
		}
	case "message_delta":
		if ev.Delta.StopReason != "" {
			st.stopReason = string(ev.Delta.StopReason)
		}
		u := ev.Usage
		if u.JSON.InputTokens.Valid() && u.InputTokens > 0 {
			st.input = u.InputTokens
		}
		if u.JSON.CacheReadInputTokens.Valid() && u.CacheReadInputTokens > 0 {
			st.cacheRead = u.CacheReadInputTokens
		}
		if u.JSON.CacheCreationInputTokens.Valid() && u.CacheCreationInputTokens > 0 {
			st.cacheWrite = u.CacheCreationInputTokens
		}
		st.usage(c, u.OutputTokens)
	case "message_stop":
		st.stopped = true
	}
	return true
}
