package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

// OpenAIResponsesConfig configures an [OpenAIResponses] model.
type OpenAIResponsesConfig struct {
	// BaseURL is the API root ("/responses" is appended); empty means the SDK's default.
	BaseURL string
	// APIKey is sent as a bearer token.
	APIKey string
	// Model is the model used when a request's Config.Model is empty.
	Model string
	// PromptCacheKey is sent as prompt_cache_key (Codex sends the session's id).
	PromptCacheKey string
	// Codex places the plugins' contexts as Codex does: developer messages, and those
	// that follow a step's tool results before the function_call_output items.
	Codex bool
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

// OpenAIResponses is a [llm.Model] on the OpenAI Responses API (the openai provider), sent
// with the official OpenAI Go SDK, its own retries off. It is safe for concurrent use.
//
// Mapping of a [llm.Request], as Codex sends it: store false, include
// ["reasoning.encrypted_content"], reasoning {"summary": "auto"} (for models that
// reason: not gpt-4*/gpt-3*), tool_choice "auto", parallel_tool_calls true, and
// prompt_cache_key. The system prompt is instructions; user
// text is a user message of input_text parts; an assistant message replays its signed
// reasoning as reasoning items (summary and encrypted_content), its text as an assistant
// message of output_text and its tool calls as function_call items; a tool result is a
// function_call_output with the result's text (a freeform tool's call and output are
// custom_tool_call and custom_tool_call_output: see [llm.FreeformKey]). With Codex set, a plugin's context is a
// developer message, and the contexts that follow a step's tool results go before its
// function_call_output items, where Codex places them. Tools are function tools with
// strict false. MaxTokens is max_output_tokens; the other keys of Config.Extra are added
// to the body.
//
// Mapping of the stream: response.output_text.delta and
// response.reasoning_summary_text.delta are text and reasoning deltas (an item done
// without deltas yields its whole text); a reasoning item's encrypted_content ends it as
// a signed reasoning delta; a function_call item is yielded at response.output_item.done;
// response.completed is the finish (tool-calls when calls arrived), response.incomplete
// for max_output_tokens max-tokens, response.failed and error events an error finish.
// Usage: input_tokens (cached_tokens as cache reads), output_tokens.
type OpenAIResponses struct {
	client   openai.Client
	model    string
	cacheKey string
	codex    bool
	log      *slog.Logger
	limits   Limits
	timeout  time.Duration
}

func openAIResponsesProvider() Provider {
	return Provider{
		Name: "openai",
		// Picked when its key alone is set.
		Keys: []string{EnvOpenAIAPIKey}, DefaultModel: "gpt-5",
		Summary: "the OpenAI Responses API: OPENAI_API_KEY, OPENAI_BASE_URL",
		Env:     []string{EnvOpenAIAPIKey, EnvOpenAIBaseURL},
		Check: func(o Options) error {
			return requireEnv("openai", o, EnvOpenAIAPIKey)
		},
		New: func(o Options) (llm.Model, error) {
			return NewOpenAIResponses(OpenAIResponsesConfig{BaseURL: o.getenv(EnvOpenAIBaseURL), APIKey: o.getenv(EnvOpenAIAPIKey), Model: o.Model,
				PromptCacheKey: o.SessionID, Codex: o.DeveloperContexts, HTTPClient: o.httpClient(), Timeout: o.Timeout, Limits: o.Limits, Logger: o.logger()})
		},
	}
}

// NewOpenAIResponses validates cfg and returns the model.
func NewOpenAIResponses(cfg OpenAIResponsesConfig) (*OpenAIResponses, error) {
	if err := checkBaseURL(cfg.BaseURL, EnvOpenAIBaseURL); err != nil {
		return nil, err
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	log, timeout := adapterDefaults(cfg.Logger, cfg.Timeout)
	return &OpenAIResponses{client: openai.NewClient(openAIOptions(cfg.BaseURL, cfg.APIKey, client)...), model: cfg.Model,
		cacheKey: cfg.PromptCacheKey, codex: cfg.Codex, log: log, timeout: timeout, limits: cfg.Limits.withDefaults()}, nil
}

// responsesOwnKeys are the body keys the adapter sets itself.
var responsesOwnKeys = []string{"model", "input", "instructions", "tools", "stream", "store", "include", "prompt_cache_key", "max_output_tokens", "temperature", "tool_choice", "parallel_tool_calls"}

// Stream sends req and streams the response; each iteration is one HTTP request.
func (m *OpenAIResponses) Stream(ctx context.Context, req llm.Request) iter.Seq2[dsh.AssistantChunk, error] {
	frozen := req.Clone()
	return func(yield func(dsh.AssistantChunk, error) bool) {
		params, err := m.params(frozen)
		if !mayStart(ctx, err, yield) {
			return
		}
		c := newCall(ctx, "openai", m.timeout, m.limits, yield, EnvOpenAIAPIKey)
		defer c.cancel()
		m.log.DebugContext(ctx, "llm: openai responses request", "model", params.Model, "messages", len(frozen.Messages), "tools", len(frozen.Tools))
		opts := append(extraOptions(frozen.Config.Extra, responsesOwnKeys), option.WithJSONSet("stream", true))
		var raw *http.Response
		err = m.client.Post(c.ctx, "responses", params, &raw, opts...)
		dec := watchSSE(raw)
		stream := ssestream.NewStream[responses.ResponseStreamEventUnion](dec, err)
		defer stream.Close()
		st := responsesState{streamed: map[string]bool{}, names: namespacedNames(req)}
		for stream.Next() {
			if !st.apply(c, stream.Current()) || c.done {
				return
			}
		}
		err = stream.Err()
		var se *ssestream.StreamError
		switch {
		case dec.errData != nil:
			c.fail(eventFailure(dec.errData))
		case errors.As(err, &se):
			c.fail(eventFailure(se.Event.Data))
		default:
			c.end(err, isDecodeError(err))
		}
	}
}

// reasons says whether model takes the reasoning options (not the gpt-4 and gpt-3
// families).
func reasons(model string) bool {
	return !strings.HasPrefix(model, "gpt-4") && !strings.HasPrefix(model, "gpt-3")
}

// params builds the SDK request of req.
func (m *OpenAIResponses) params(req llm.Request) (responses.ResponseNewParams, error) {
	if err := checkExtra(req.Config.Extra); err != nil {
		return responses.ResponseNewParams{}, err
	}
	model := req.Config.Model
	if model == "" {
		model = m.model
	}
	if model == "" {
		return responses.ResponseNewParams{}, errors.New("llm: openai: no model (request config and adapter config are both empty)")
	}
	p := responses.ResponseNewParams{
		Model:             shared.ResponsesModel(model),
		Store:             openai.Bool(false),
		ParallelToolCalls: openai.Bool(true),
		ToolChoice:        responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: param.NewOpt(responses.ToolChoiceOptionsAuto)},
	}
	if reasons(model) {
		p.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
		p.Reasoning = shared.ReasoningParam{Summary: shared.ReasoningSummaryAuto}
	}
	if m.cacheKey != "" {
		p.PromptCacheKey = openai.String(m.cacheKey)
	}
	if req.Config.MaxTokens != nil {
		p.MaxOutputTokens = openai.Int(int64(*req.Config.MaxTokens))
	}
	if req.Config.Temperature != nil {
		p.Temperature = openai.Float(*req.Config.Temperature)
	}
	// A namespace's functions are one entry, where its first function is (llm.NamespaceKey).
	namespaces := map[string]map[string]any{}
	for _, t := range req.Tools {
		schema, err := schemaMap(t)
		if err != nil {
			return p, err
		}
		if ns, rest, ok := llm.NamespaceOf(schema); ok {
			fn := map[string]any{"type": "function", "name": ns.FunctionOf(t.Name), "description": t.Description, "strict": false, "parameters": rest}
			entry, seen := namespaces[ns.Name]
			if !seen {
				entry = map[string]any{"type": "namespace", "name": ns.Name, "description": ns.Description, "tools": []any{}}
				namespaces[ns.Name] = entry
				p.Tools = append(p.Tools, param.Override[responses.ToolUnionParam](entry))
			}
			entry["tools"] = append(entry["tools"].([]any), fn)
			continue
		}
		if format, ok := schema[llm.FreeformKey]; ok {
			// A freeform (custom) tool: the model writes its input as text in format.
			custom := map[string]any{"type": "custom", "name": t.Name, "format": format}
			if t.Description != "" {
				custom["description"] = t.Description
			}
			p.Tools = append(p.Tools, param.Override[responses.ToolUnionParam](custom))
			continue
		}
		fn := responses.FunctionToolParam{Name: t.Name, Parameters: schema, Strict: openai.Bool(false)}
		if t.Description != "" {
			fn.Description = openai.String(t.Description)
		}
		p.Tools = append(p.Tools, responses.ToolUnionParam{OfFunction: &fn})
	}
	if system := systemOf(req); system != "" {
		p.Instructions = openai.String(system)
	}
	items, err := m.input(req)
	if err != nil {
		return p, err
	}
	p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: items}
	return p, nil
}

// namespacedTools are the namespaces of req's namespaced tools, by tool name.
func namespacedTools(req llm.Request) map[string]llm.Namespace {
	out := map[string]llm.Namespace{}
	for _, t := range req.Tools {
		if m, err := schemaMap(t); err == nil {
			if ns, _, ok := llm.NamespaceOf(m); ok {
				out[t.Name] = ns
			}
		}
	}
	return out
}

// namespacedNames are the tool names of req's namespaced tools whose function has
// another name (llm.Namespace.Function), by namespace and function name: what a model's
// call of such a function names.
func namespacedNames(req llm.Request) map[[2]string]string {
	out := map[[2]string]string{}
	for name, ns := range namespacedTools(req) {
		if ns.Function != "" {
			out[[2]string{ns.Name, ns.Function}] = name
		}
	}
	return out
}

// freeformTools are the names of req's freeform tools.
func freeformTools(req llm.Request) map[string]bool {
	out := map[string]bool{}
	for _, t := range req.Tools {
		if m, err := schemaMap(t); err == nil && m[llm.FreeformKey] != nil {
			out[t.Name] = true
		}
	}
	return out
}

// freeformInput is the text of a freeform call's arguments ({"input": text}).
func freeformInput(args string) string {
	var in struct {
		Input string `json:"input"`
	}
	_ = json.Unmarshal([]byte(args), &in)
	return in.Input
}

// item is an input item as Codex writes it.
func item(v map[string]any) responses.ResponseInputItemUnionParam {
	return param.Override[responses.ResponseInputItemUnionParam](v)
}

func textMessage(role, partType, text string) responses.ResponseInputItemUnionParam {
	return item(map[string]any{"type": "message", "role": role, "content": []any{map[string]any{"type": partType, "text": text}}})
}

// input maps the system prompt and the messages to input items.
func (m *OpenAIResponses) input(req llm.Request) (responses.ResponseInputParam, error) {
	var out responses.ResponseInputParam
	// outputsAt is where the current run of function_call_output items began (-1: none):
	// under Codex, the contexts that follow go before it.
	outputsAt := -1
	freeform, customCalls, namespaced := freeformTools(req), map[string]bool{}, namespacedTools(req)
	for i, msg := range req.Messages {
		switch msg.Role {
		case llm.RoleAssistant:
			outputsAt = -1
			out = append(out, m.assistantItems(msg.Content, freeform, customCalls, namespaced)...)
		case llm.RoleUser:
			if pluginContext(msg) {
				var ctxItems []responses.ResponseInputItemUnionParam
				role := "user"
				if m.codex {
					role = "developer"
				}
				for _, b := range msg.Content {
					ctxItems = append(ctxItems, textMessage(role, "input_text", blocksText([]dsh.ContentBlock{b}, m.log)))
				}
				if m.codex && outputsAt >= 0 {
					out = append(out[:outputsAt], append(ctxItems, out[outputsAt:]...)...)
					outputsAt += len(ctxItems)
					continue
				}
				out = append(out, ctxItems...)
				outputsAt = -1
				continue
			}
			var parts []any
			flush := func() {
				if len(parts) > 0 {
					out = append(out, item(map[string]any{"type": "message", "role": "user", "content": parts}))
					parts = nil
					outputsAt = -1
				}
			}
			for _, b := range msg.Content {
				if b == nil {
					return nil, fmt.Errorf("llm: openai: messages[%d]: nil content block", i)
				}
				if tr, ok := b.(dsh.ToolResultBlock); ok {
					flush()
					if outputsAt < 0 {
						outputsAt = len(out)
					}
					kind := "function_call_output"
					if customCalls[tr.ToolCallID] {
						kind = "custom_tool_call_output"
					}
					out = append(out, item(map[string]any{"type": kind, "call_id": tr.ToolCallID, "output": m.toolOutput(tr)}))
					continue
				}
				switch v := b.(type) {
				case dsh.TextBlock:
					parts = append(parts, map[string]any{"type": "input_text", "text": v.Text})
				case dsh.ImageBlock:
					parts = append(parts, map[string]any{"type": "input_image", "image_url": "data:" + v.MediaType + ";base64," + v.Data})
				default:
					m.log.Warn("llm: openai: block dropped from a user message", "kind", b.Kind())
				}
			}
			flush()
		default:
			return nil, fmt.Errorf("llm: openai: messages[%d]: unknown role %q", i, msg.Role)
		}
	}
	return out, nil
}

// toolOutput is a tool result's output: its text, or under Codex, for a result of several
// blocks, its blocks as content items (input_text, input_image), as Codex sends an MCP
// tool's result (a "Wall time: … seconds\nOutput:" text, then the server's content;
// measured in 0.169.0: codex/mcp-call).
func (m *OpenAIResponses) toolOutput(tr dsh.ToolResultBlock) any {
	if !m.codex || len(tr.Content) < 2 {
		return toolResultText(tr, m.log)
	}
	parts := make([]any, 0, len(tr.Content))
	for _, b := range tr.Content {
		switch v := b.(type) {
		case dsh.ImageBlock:
			parts = append(parts, map[string]any{"type": "input_image", "image_url": "data:" + v.MediaType + ";base64," + v.Data})
		default:
			parts = append(parts, map[string]any{"type": "input_text", "text": blocksText([]dsh.ContentBlock{b}, m.log)})
		}
	}
	return parts
}

// assistantItems maps a replayed assistant message: signed reasoning, text, calls.
// A call of a freeform tool is a custom_tool_call, its id noted in customCalls; a call of a
// namespaced tool names its namespace.
func (m *OpenAIResponses) assistantItems(content []dsh.ContentBlock, freeform, customCalls map[string]bool, namespaced map[string]llm.Namespace) []responses.ResponseInputItemUnionParam {
	var out []responses.ResponseInputItemUnionParam
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			out = append(out, textMessage("assistant", "output_text", text.String()))
			text.Reset()
		}
	}
	for _, b := range content {
		switch v := b.(type) {
		case dsh.TextBlock:
			text.WriteString(v.Text)
		case dsh.ReasoningBlock:
			if v.Signature == nil {
				continue // nothing the API can take back
			}
			flush()
			summary := []any{}
			if v.Text != "" {
				summary = append(summary, map[string]any{"type": "summary_text", "text": v.Text})
			}
			out = append(out, item(map[string]any{"type": "reasoning", "summary": summary, "encrypted_content": *v.Signature}))
		case dsh.ToolCallBlock:
			flush()
			args := v.Arguments
			if args == "" {
				args = "{}"
			}
			if freeform[v.Name] {
				customCalls[v.ID] = true
				out = append(out, item(map[string]any{"type": "custom_tool_call", "name": v.Name, "input": freeformInput(args), "call_id": v.ID}))
				continue
			}
			fc := map[string]any{"type": "function_call", "name": v.Name, "arguments": args, "call_id": v.ID}
			if ns, ok := namespaced[v.Name]; ok {
				fc["name"], fc["namespace"] = ns.FunctionOf(v.Name), ns.Name
			}
			out = append(out, item(fc))
		default:
			if b != nil {
				m.log.Warn("llm: openai: block dropped from an assistant message", "kind", b.Kind())
			}
		}
	}
	flush()
	return out
}

// responsesState is the fold of one Responses stream.
type responsesState struct {
	// streamed marks the items whose text or summary came as deltas.
	streamed map[string]bool
	calls    int
	// names are the tools a namespaced call names by another name (namespacedNames).
	names map[[2]string]string
}

// stream marks item as streamed; a new one counts against the block cap. It reports
// whether the stream goes on.
func (st *responsesState) stream(c *call, item string) bool {
	if st.streamed[item] {
		return true
	}
	st.streamed[item] = true
	return c.block()
}

// apply folds one event; it reports whether the stream goes on.
func (st *responsesState) apply(c *call, ev responses.ResponseStreamEventUnion) bool {
	switch ev.Type {
	case "response.output_text.delta":
		if !st.stream(c, ev.ItemID) {
			return false
		}
		if ev.Delta != "" {
			return c.emit(dsh.ChunkTextDelta{Text: ev.Delta})
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if !st.stream(c, ev.ItemID) {
			return false
		}
		if ev.Delta != "" {
			return c.emit(dsh.ChunkReasoningDelta{Text: ev.Delta})
		}
	case "response.output_item.done":
		it := ev.Item
		streamed := st.streamed[it.ID] // counted as a block at its first delta
		if !streamed && !c.block() {
			return false
		}
		switch it.Type {
		case "message":
			if streamed {
				return true
			}
			var text strings.Builder
			for _, part := range it.AsMessage().Content {
				text.WriteString(part.Text)
			}
			if text.Len() > 0 {
				return c.emit(dsh.ChunkTextDelta{Text: text.String()})
			}
		case "function_call":
			fc := it.AsFunctionCall()
			st.calls++
			name := fc.Name
			if n, ok := st.names[[2]string{fc.Namespace, fc.Name}]; ok {
				name = n
			}
			return c.emit(dsh.ChunkToolCall{ID: fc.CallID, Name: name, Arguments: fc.Arguments})
		case "custom_tool_call":
			// A freeform tool's call: its text is the argument "input" (llm.FreeformKey).
			cc := it.AsCustomToolCall()
			st.calls++
			args, _ := json.Marshal(map[string]string{"input": cc.Input})
			return c.emit(dsh.ChunkToolCall{ID: cc.CallID, Name: cc.Name, Arguments: string(args)})
		case "reasoning":
			r := it.AsReasoning()
			var summary strings.Builder
			if !streamed {
				for _, s := range r.Summary {
					summary.WriteString(s.Text)
				}
			}
			chunk := dsh.ChunkReasoningDelta{Text: summary.String()}
			if r.EncryptedContent != "" {
				sig := r.EncryptedContent
				chunk.Signature = &sig
			}
			if chunk.Text != "" || chunk.Signature != nil {
				return c.emit(chunk)
			}
		}
	case "response.completed", "response.incomplete":
		r := ev.Response
		if r.JSON.Usage.Valid() {
			u := r.Usage
			c.usage = &dsh.Usage{InputTokens: int(u.InputTokens), OutputTokens: int(u.OutputTokens), CacheReadTokens: intPtr(u.InputTokensDetails.CachedTokens)}
		}
		reason := dsh.FinishReasonStop
		switch {
		case ev.Type == "response.incomplete" && r.IncompleteDetails.Reason == "max_output_tokens":
			reason = dsh.FinishReasonMaxTokens
		case st.calls > 0:
			reason = dsh.FinishReasonToolCalls
		}
		c.finish(reason)
		return false
	case "response.failed":
		e := ev.Response.Error
		msg, code := e.Message, string(e.Code)
		if msg == "" {
			msg = "the response failed"
		}
		if code == "" {
			code = llm.CodeUnknown
		}
		c.fail(dsh.LLMFailure{Message: msg, Code: normalizeCode(code, msg)})
		return false
	case "error":
		msg, code := ev.Message, ev.Code
		if code == "" {
			code = llm.CodeUnknown
		}
		c.fail(dsh.LLMFailure{Message: msg, Code: normalizeCode(code, msg)})
		return false
	}
	return true
}
