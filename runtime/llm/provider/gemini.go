package provider

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"time"

	"google.golang.org/genai"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

// Environment variables the gemini provider reads (Gemini CLI's).
const (
	// EnvGeminiAPIKey names the API key variable.
	EnvGeminiAPIKey = "GEMINI_API_KEY"
	// EnvGeminiBaseURL names the base URL variable.
	EnvGeminiBaseURL = "GOOGLE_GEMINI_BASE_URL"
)

// GeminiConfig configures a [Gemini] model.
type GeminiConfig struct {
	// BaseURL is the API root; empty means the SDK's default.
	BaseURL string
	// APIKey is the Gemini API key.
	APIKey string
	// Model is the model used when a request's Config.Model is empty.
	Model string
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

// Gemini is a [llm.Model] on the Gemini API (the gemini provider), streamed with
// streamGenerateContent through the official Go SDK (google.golang.org/genai), its own
// retries off. It is safe for concurrent use.
//
// Mapping of a [llm.Request]: the system prompt is the system instruction; user text and
// images are "user" parts; a tool result is a functionResponse part ({"output": text}, or
// {"error": text} for a failed call) named after its call; an assistant message is a
// "model" content: its signed reasoning as thought parts with their thoughtSignature, its
// text, and its tool calls as functionCall parts carrying their thought signatures back
// (arguments that are not a JSON object as {}). Tools are function declarations with
// parametersJsonSchema. MaxTokens is maxOutputTokens, Temperature temperature; the keys of
// Config.Extra are added to the body.
//
// Mapping of the stream: text parts are text deltas, thought parts reasoning deltas (a
// thought signature ends the block as a signed delta); a functionCall part is a tool call
// (an id is made when the API gives none), with its signature. The stream has no terminal
// event: a candidate's finishReason completes it (STOP: stop or tool-calls; MAX_TOKENS:
// max-tokens; any other reason an error finish of that code), and a body that ends before
// one is an interrupted stream. Usage: promptTokenCount plus toolUsePromptTokenCount
// (cachedContentTokenCount as cache reads), candidatesTokenCount plus
// thoughtsTokenCount.
type Gemini struct {
	client  *genai.Client
	model   string
	log     *slog.Logger
	limits  Limits
	timeout time.Duration
}

func geminiProvider() Provider {
	return Provider{
		Name: "gemini",
		// Picked when its key alone is set; Gemini CLI 0.61.0's DEFAULT_GEMINI_MODEL.
		Keys: []string{EnvGeminiAPIKey}, DefaultModel: "gemini-2.5-pro",
		Summary: "the Gemini API: GEMINI_API_KEY, GOOGLE_GEMINI_BASE_URL",
		Env:     []string{EnvGeminiAPIKey, EnvGeminiBaseURL},
		Check: func(o Options) error {
			return requireEnv("gemini", o, EnvGeminiAPIKey)
		},
		New: func(o Options) (llm.Model, error) {
			return NewGemini(GeminiConfig{BaseURL: o.getenv(EnvGeminiBaseURL), APIKey: o.getenv(EnvGeminiAPIKey), Model: o.Model,
				HTTPClient: o.httpClient(), Timeout: o.Timeout, Limits: o.Limits, Logger: o.logger()})
		},
	}
}

// NewGemini validates cfg and returns the model.
func NewGemini(cfg GeminiConfig) (*Gemini, error) {
	if err := checkBaseURL(cfg.BaseURL, EnvGeminiBaseURL); err != nil {
		return nil, err
	}
	if cfg.APIKey == "" {
		return nil, &MissingEnvError{Provider: "gemini", Vars: []string{EnvGeminiAPIKey}}
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	cc := &genai.ClientConfig{APIKey: cfg.APIKey, Backend: genai.BackendGeminiAPI, HTTPClient: capturingClient(client)}
	if cfg.BaseURL != "" {
		cc.HTTPOptions.BaseURL = cfg.BaseURL
	}
	c, err := genai.NewClient(context.Background(), cc)
	if err != nil {
		return nil, fmt.Errorf("%w: gemini: %v", ErrInvalidConfig, err)
	}
	log, timeout := adapterDefaults(cfg.Logger, cfg.Timeout)
	return &Gemini{client: c, model: cfg.Model, log: log, timeout: timeout, limits: cfg.Limits.withDefaults()}, nil
}

// Stream sends req and streams the response; each iteration is one HTTP request.
func (m *Gemini) Stream(ctx context.Context, req llm.Request) iter.Seq2[dsh.AssistantChunk, error] {
	frozen := req.Clone()
	return func(yield func(dsh.AssistantChunk, error) bool) {
		model, contents, config, err := m.params(frozen)
		if !mayStart(ctx, err, yield) {
			return
		}
		c := newCall(ctx, "gemini", m.timeout, m.limits, yield, EnvGeminiAPIKey)
		defer c.cancel()
		m.log.DebugContext(ctx, "llm: gemini request", "model", model, "contents", len(contents), "tools", len(frozen.Tools))
		st := geminiState{}
		for resp, err := range m.client.Models.GenerateContentStream(c.ctx, model, contents, config) {
			if err != nil {
				var apiErr genai.APIError
				if got, status, _, _, _ := c.facts.snapshot(); errors.As(err, &apiErr) && got && status/100 == 2 {
					msg := apiErr.Message
					if msg == "" {
						msg = "provider error in the response stream"
					}
					code := apiErr.Status
					if code == "" {
						code = llm.CodeUnknown
					}
					c.fail(dsh.LLMFailure{Message: msg, Code: normalizeCode(code, msg)})
					return
				}
				c.end(err, isDecodeError(err))
				return
			}
			if !st.apply(c, resp) || c.done {
				return
			}
		}
		if st.finishReason == "" {
			c.end(nil, false)
			return
		}
		switch st.finishReason {
		case genai.FinishReasonStop:
			reason := dsh.FinishReasonStop
			if st.calls > 0 {
				reason = dsh.FinishReasonToolCalls
			}
			c.finish(reason)
		case genai.FinishReasonMaxTokens:
			c.finish(dsh.FinishReasonMaxTokens)
		default:
			c.fail(dsh.LLMFailure{Message: "gemini: the response ended with finishReason " + string(st.finishReason), Code: string(st.finishReason)})
		}
	}
}

// params builds the SDK request of req.
func (m *Gemini) params(req llm.Request) (string, []*genai.Content, *genai.GenerateContentConfig, error) {
	model := req.Config.Model
	if model == "" {
		model = m.model
	}
	if model == "" {
		return "", nil, nil, errors.New("llm: gemini: no model (request config and adapter config are both empty)")
	}
	if err := checkExtra(req.Config.Extra); err != nil {
		return "", nil, nil, err
	}
	config := &genai.GenerateContentConfig{}
	if system := systemOf(req); system != "" {
		config.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: system}}}
	}
	if req.Config.MaxTokens != nil {
		config.MaxOutputTokens = int32(*req.Config.MaxTokens)
	}
	if req.Config.Temperature != nil {
		t := float32(*req.Config.Temperature)
		config.Temperature = &t
	}
	if len(req.Tools) > 0 {
		var decls []*genai.FunctionDeclaration
		for _, t := range req.Tools {
			schema, err := schemaMap(t)
			if err != nil {
				return "", nil, nil, err
			}
			decls = append(decls, &genai.FunctionDeclaration{Name: t.Name, Description: t.Description, ParametersJsonSchema: schema})
		}
		config.Tools = []*genai.Tool{{FunctionDeclarations: decls}}
	}
	if len(req.Config.Extra) > 0 {
		extra := map[string]any{}
		for k, v := range req.Config.Extra {
			var x any
			_ = json.Unmarshal(v, &x)
			extra[k] = x
		}
		config.HTTPOptions = &genai.HTTPOptions{ExtraBody: extra}
	}
	names := map[string]string{} // call id → tool name, for the function responses
	var contents []*genai.Content
	add := func(role string, parts []*genai.Part) {
		if len(parts) == 0 {
			return
		}
		if n := len(contents); n > 0 && contents[n-1].Role == role {
			contents[n-1].Parts = append(contents[n-1].Parts, parts...)
			return
		}
		contents = append(contents, &genai.Content{Role: role, Parts: parts})
	}
	for i, msg := range req.Messages {
		var parts []*genai.Part
		switch msg.Role {
		case llm.RoleAssistant:
			for _, b := range msg.Content {
				//dshvet:partial an assistant message sends its text, reasoning and tool calls; other blocks have no Gemini part there
				switch v := b.(type) {
				case dsh.TextBlock:
					if v.Text != "" {
						parts = append(parts, &genai.Part{Text: v.Text})
					}
				case dsh.ReasoningBlock:
					if v.Signature == nil {
						continue
					}
					sig, err := base64.StdEncoding.DecodeString(*v.Signature)
					if err != nil {
						continue
					}
					parts = append(parts, &genai.Part{Text: v.Text, Thought: true, ThoughtSignature: sig})
				case dsh.ToolCallBlock:
					names[v.ID] = v.Name
					var args map[string]any
					_ = json.Unmarshal(objectArgs(v.Arguments), &args)
					p := &genai.Part{FunctionCall: &genai.FunctionCall{ID: v.ID, Name: v.Name, Args: args}}
					if v.Signature != nil {
						if sig, err := base64.StdEncoding.DecodeString(*v.Signature); err == nil {
							p.ThoughtSignature = sig
						}
					}
					parts = append(parts, p)
				}
			}
			add("model", parts)
		case llm.RoleUser:
			for _, b := range msg.Content {
				switch v := b.(type) {
				case dsh.TextBlock:
					parts = append(parts, &genai.Part{Text: v.Text})
				case dsh.ImageBlock:
					data, err := base64.StdEncoding.DecodeString(v.Data)
					if err != nil {
						return "", nil, nil, fmt.Errorf("llm: gemini: messages[%d]: image: %w", i, err)
					}
					parts = append(parts, &genai.Part{InlineData: &genai.Blob{MIMEType: v.MediaType, Data: data}})
				default:
					if tr, ok := b.(dsh.ToolResultBlock); ok {
						key := "output"
						if tr.IsError {
							key = "error"
						}
						parts = append(parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: tr.ToolCallID, Name: names[tr.ToolCallID],
							Response: map[string]any{key: toolResultText(tr, m.log)}}})
					}
				}
			}
			add("user", parts)
		default:
			return "", nil, nil, fmt.Errorf("llm: gemini: messages[%d]: unknown role %q", i, msg.Role)
		}
	}
	return model, contents, config, nil
}

// geminiState is the fold of one Gemini stream.
type geminiState struct {
	finishReason genai.FinishReason
	calls        int
}

// apply folds one streamed response; it reports whether the stream goes on.
func (st *geminiState) apply(c *call, resp *genai.GenerateContentResponse) bool {
	if u := resp.UsageMetadata; u != nil {
		c.usage = &dsh.Usage{InputTokens: int(u.PromptTokenCount + u.ToolUsePromptTokenCount), OutputTokens: int(u.CandidatesTokenCount + u.ThoughtsTokenCount),
			CacheReadTokens: intPtr(int64(u.CachedContentTokenCount))}
	}
	if len(resp.Candidates) == 0 {
		return true
	}
	cand := resp.Candidates[0]
	if cand.Content != nil {
		for _, p := range cand.Content.Parts {
			if p == nil {
				continue
			}
			var sig *string
			if len(p.ThoughtSignature) > 0 {
				s := base64.StdEncoding.EncodeToString(p.ThoughtSignature)
				sig = &s
			}
			switch {
			case p.FunctionCall != nil:
				fc := p.FunctionCall
				id := fc.ID
				if id == "" {
					id = "call_" + rand.Text()[:12]
				}
				args, err := json.Marshal(fc.Args)
				if err != nil || fc.Args == nil {
					args = []byte("{}")
				}
				st.calls++
				if !c.block() || !c.emit(dsh.ChunkToolCall{ID: id, Name: fc.Name, Arguments: string(args), Signature: sig}) {
					return false
				}
			case p.Thought:
				// A signature ends a reasoning block: one more block.
				if sig != nil && !c.block() {
					return false
				}
				if (p.Text != "" || sig != nil) && !c.emit(dsh.ChunkReasoningDelta{Text: p.Text, Signature: sig}) {
					return false
				}
			case p.Text != "":
				if !c.emit(dsh.ChunkTextDelta{Text: p.Text}) {
					return false
				}
			}
		}
	}
	if cand.FinishReason != "" {
		st.finishReason = cand.FinishReason
	}
	return true
}
