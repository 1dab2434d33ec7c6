package gemini

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/bridges/internal/hookbridge"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
	"github.com/dshkit/dsh/generated/wire/gemini"
	"github.com/dshkit/dsh/internal/blocktext"
)

// model maps the model-call events onto agent/request and agent/response, and keeps what
// AfterAgent's stdin needs (the turn's prompt and model texts) and AfterModel's (the
// request). It follows one agent's turns: the main agent of a run or session.
type model struct {
	mu    sync.Mutex
	turns map[string]*turnText        // by agent id
	last  map[string]dsh.ModelRequest // the last request sent, by agent id
	use   map[string]dsh.LLMCallConfig
	// children are the ids of the subagents (invoke_agent's children): their responses
	// are not the turn's (AfterAgent's prompt_response is the main agent's texts only, as
	// Gemini CLI 0.61.0 writes it: gemini/subagent-deny-inside).
	children map[string]bool
}

// turnText is one turn's prompt and model texts.
type turnText struct {
	turn   int
	prompt string
	texts  []string
}

// register registers a listener at the point its table row names (agent/request or
// agent/response) for each model-call event with hooks, in table order, and the
// observers AfterModel's and AfterAgent's stdin need.
func (m *model) register(b *hookbridge.Bridge, r *dsh.Registrar) []func() {
	m.last, m.use, m.children = map[string]dsh.ModelRequest{}, map[string]dsh.LLMCallConfig{}, map[string]bool{}
	var out []func()
	listeners := map[string]any{"BeforeModel": m.beforeModel(b), "BeforeToolSelection": m.beforeToolSelection(b), "AfterModel": m.afterModel(b)}
	for _, e := range b.Table().Events {
		fn, ok := listeners[e.Name]
		if !ok || !b.Has(e.Name) {
			continue
		}
		switch f := fn.(type) {
		case dsh.RequestListener:
			if e.Point == dsh.RequestEventName {
				out = append(out, r.OnRequest(f))
				if e.Name == "BeforeModel" {
					out = append(out, r.OnRequest(m.applyUse))
				}
				continue
			}
		case dsh.ResponseListener:
			if e.Point == dsh.ResponseEventName {
				out = append(out, r.OnResponse(f))
				continue
			}
		}
		b.Log().Warn("Gemini hook event not run: no listener at its extension point", "event", e.Name, "point", e.Point)
	}
	if b.Has("AfterModel") || b.Has("AfterAgent") {
		out = append(out, r.OnRequest(func(_ context.Context, p *dsh.RequestPayload) (dsh.RequestDecision, error) {
			m.mu.Lock()
			m.last[p.AgentID] = p.Request
			m.mu.Unlock()
			return dsh.RequestPass{}, nil
		}))
	}
	if b.Has("AfterAgent") {
		out = append(out, r.OnSubagentStart(func(_ context.Context, p *dsh.SubagentStartPayload) error {
			m.mu.Lock()
			m.children[p.AgentID] = true
			m.mu.Unlock()
			return nil
		}))
		out = append(out, r.OnResponse(func(_ context.Context, p *dsh.ResponsePayload) (dsh.ResponseDecision, error) {
			m.mu.Lock()
			defer m.mu.Unlock()
			if m.children[p.AgentID] {
				return dsh.ResponseAccept{}, nil
			}
			t := m.at(p.Turn)
			if s := blocktext.Text(p.Response.Content, ""); s != "" {
				t.texts = append(t.texts, s)
			}
			if req, ok := m.last[p.AgentID]; ok && t.prompt == "" {
				t.prompt = lastUserText(req.Messages)
			}
			return dsh.ResponseAccept{}, nil
		}))
	}
	return out
}

// at returns the texts of turn, starting afresh on a new turn (lock held).
func (m *model) at(turn int) *turnText {
	t := m.turns[""]
	if t == nil || t.turn != turn {
		t = &turnText{turn: turn}
		m.turns[""] = t
	}
	return t
}

// turn returns the prompt and the model texts (joined by newlines) of the session's turn.
func (m *model) turn(_ hookproto.Session, turn int) (string, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.at(turn)
	return t.prompt, strings.Join(t.texts, "\n")
}

// specific is the shallow merge of the hookSpecificOutput of every run that printed JSON,
// in configuration order, the last winning (as the engine merges them).
func specific(rep *hookproto.Report) map[string]any {
	out := map[string]any{}
	for _, h := range rep.Hooks {
		if obj := hookproto.Output(&hookmap.Gemini, h.Result); obj != nil {
			if hs, ok := obj["hookSpecificOutput"].(map[string]any); ok {
				maps.Copy(out, hs)
			}
		}
	}
	return out
}

func (m *model) fire(ctx context.Context, b *hookbridge.Bridge, event string, p *dsh.RequestPayload, resp *dsh.ModelResponse, agent dsh.Agent) (*hookproto.Report, error) {
	s := b.Session(ctx, p.AgentID)
	s.Turn, s.TurnOpen = p.Turn, true
	req := p.Request
	return b.Fire(ctx, hookbridge.Input{Event: event, Session: s, Turn: p.Turn, Request: &req, Response: resp}, "", true, agent)
}

// beforeModel maps BeforeModel: deny or block denies the request, or answers it with the
// hooks' llm_response; continue:false halts the turn; an llm_request changes this
// request's messages (a rewrite) and its model and settings (a use, applied by applyUse).
func (m *model) beforeModel(b *hookbridge.Bridge) dsh.RequestListener {
	return func(ctx context.Context, p *dsh.RequestPayload) (dsh.RequestDecision, error) {
		rep, err := m.fire(ctx, b, "BeforeModel", p, nil, p.Agent)
		if err != nil {
			return nil, err
		}
		out := specific(rep)
		switch rep.Merged.Outcome {
		case dsh.HookOutcomeHalt:
			if p.Agent != nil {
				p.Agent.Halt(rep.Merged.Reason)
			}
			return dsh.RequestDeny{Reason: rep.Merged.Reason}, nil
		case dsh.HookOutcomeBlock, dsh.HookOutcomeDeny:
			if t, ok := responseText(out["llm_response"]); ok {
				return dsh.RequestAnswer{Content: []dsh.ContentBlock{dsh.TextBlock{Text: t}}}, nil
			}
			return dsh.RequestDeny{Reason: rep.Merged.Reason}, nil
		}
		var lr struct {
			Model    *string             `json:"model"`
			Messages []gemini.LLMMessage `json:"messages"`
			Config   *gemini.LLMConfig   `json:"config"`
		}
		if raw, ok := out["llm_request"]; !ok || remarshal(raw, &lr) != nil {
			return dsh.RequestPass{}, nil
		}
		if lr.Model != nil || lr.Config != nil {
			cfg := p.Request.Config
			if lr.Model != nil && *lr.Model != "" {
				cfg.Model = *lr.Model
			}
			if c := lr.Config; c != nil {
				cfg.Temperature, cfg.MaxTokens = c.Temperature, c.MaxOutputTokens
			}
			m.mu.Lock()
			m.use[p.AgentID] = cfg
			m.mu.Unlock()
		}
		if lr.Messages == nil {
			return dsh.RequestPass{}, nil
		}
		reason := "BeforeModel hook llm_request"
		return dsh.RequestRewrite{Messages: Messages(p.Request.Messages, lr.Messages), Reason: &reason}, nil
	}
}

// applyUse applies the model and settings a BeforeModel hook set (after its rewrite).
func (m *model) applyUse(_ context.Context, p *dsh.RequestPayload) (dsh.RequestDecision, error) {
	m.mu.Lock()
	cfg, ok := m.use[p.AgentID]
	delete(m.use, p.AgentID)
	m.mu.Unlock()
	if !ok {
		return dsh.RequestPass{}, nil
	}
	return dsh.RequestUse{Config: cfg}, nil
}

// beforeToolSelection maps BeforeToolSelection onto a restriction of the request's tools:
// mode NONE from any hook offers none; otherwise the hooks' allowedFunctionNames are
// united; no names leave the tools as they are.
func (m *model) beforeToolSelection(b *hookbridge.Bridge) dsh.RequestListener {
	return func(ctx context.Context, p *dsh.RequestPayload) (dsh.RequestDecision, error) {
		rep, err := m.fire(ctx, b, "BeforeToolSelection", p, nil, p.Agent)
		if err != nil {
			return nil, err
		}
		none, names := false, map[string]bool{}
		for _, h := range rep.Hooks {
			var tc struct {
				HookSpecificOutput struct {
					ToolConfig gemini.ToolConfig `json:"toolConfig"`
				} `json:"hookSpecificOutput"`
			}
			if obj := hookproto.Output(&hookmap.Gemini, h.Result); obj == nil || remarshal(obj, &tc) != nil {
				continue
			}
			none = none || (tc.HookSpecificOutput.ToolConfig.Mode != nil && *tc.HookSpecificOutput.ToolConfig.Mode == "NONE")
			for _, n := range tc.HookSpecificOutput.ToolConfig.AllowedFunctionNames {
				names[n] = true
			}
		}
		reason := "BeforeToolSelection hook toolConfig"
		switch {
		case none:
			return dsh.RequestRestrict{Allow: []string{}, Reason: &reason}, nil
		case len(names) > 0:
			return dsh.RequestRestrict{Allow: slices.Sorted(maps.Keys(names)), Reason: &reason}, nil
		}
		return dsh.RequestPass{}, nil
	}
}

// afterModel maps AfterModel: deny or block blocks the response, continue:false also
// halts the turn, and an llm_response replaces its text and drops its tool calls (the
// engine's replacement keeps only text). dsh fires it once per complete response; the
// engine fires it per streamed chunk.
func (m *model) afterModel(b *hookbridge.Bridge) dsh.ResponseListener {
	return func(ctx context.Context, p *dsh.ResponsePayload) (dsh.ResponseDecision, error) {
		m.mu.Lock()
		req := m.last[p.AgentID]
		m.mu.Unlock()
		resp := p.Response
		rp := &dsh.RequestPayload{AgentID: p.AgentID, Turn: p.Turn, Request: req}
		rep, err := m.fire(ctx, b, "AfterModel", rp, &resp, p.Agent)
		if err != nil {
			return nil, err
		}
		switch rep.Merged.Outcome {
		case dsh.HookOutcomeHalt:
			if p.Agent != nil {
				p.Agent.Halt(rep.Merged.Reason)
			}
			return dsh.ResponseBlock{Reason: rep.Merged.Reason}, nil
		case dsh.HookOutcomeBlock, dsh.HookOutcomeDeny:
			return dsh.ResponseBlock{Reason: rep.Merged.Reason}, nil
		}
		if t, ok := responseText(specific(rep)["llm_response"]); ok {
			reason := "AfterModel hook llm_response"
			return dsh.ResponseReplace{Text: t, ToolCalls: dsh.ReplaceToolCallsDrop, Reason: &reason}, nil
		}
		return dsh.ResponseAccept{}, nil
	}
}

// LLMRequest is the engine's hook view of a request: its model, its text messages (role
// "model" for the assistant; messages without text left out) and its settings.
func LLMRequest(r *dsh.ModelRequest) gemini.LLMRequest {
	out := gemini.LLMRequest{Messages: []gemini.LLMMessage{}}
	if r == nil {
		return out
	}
	out.Model = r.Config.Model
	out.Config = gemini.LLMConfig{Temperature: r.Config.Temperature, MaxOutputTokens: r.Config.MaxTokens}
	for _, msg := range r.Messages {
		if t := blocktext.Text(msg.Content, ""); t != "" {
			out.Messages = append(out.Messages, gemini.LLMMessage{Role: role(msg.Role), Content: t})
		}
	}
	return out
}

// LLMResponse is the engine's hook view of a response: its text, one candidate and its
// usage (thoughts counted in candidatesTokenCount, as dsh's usage has them).
func LLMResponse(r *dsh.ModelResponse) gemini.LLMResponse {
	out := gemini.LLMResponse{Candidates: []gemini.LLMCandidate{}}
	if r == nil {
		return out
	}
	var parts []string
	for _, c := range r.Content {
		if t, ok := c.(dsh.TextBlock); ok {
			parts = append(parts, t.Text)
		}
	}
	t := strings.Join(parts, "")
	if t != "" {
		out.Text = &t
	}
	finish, index := "STOP", 0
	if r.Finish == dsh.FinishReasonMaxTokens {
		finish = "MAX_TOKENS"
	}
	out.Candidates = append(out.Candidates, gemini.LLMCandidate{
		Content:      gemini.LLMCandidateContent{Role: gemini.LLMCandidateContentRoleModel, Parts: append([]string{}, parts...)},
		FinishReason: &finish, Index: &index})
	if u := r.Usage; u != nil {
		out.UsageMetadata = &gemini.UsageMetadata{PromptTokenCount: u.InputTokens, CandidatesTokenCount: u.OutputTokens,
			TotalTokenCount: u.InputTokens + u.OutputTokens}
		if u.CacheReadTokens != nil && *u.CacheReadTokens > 0 {
			out.UsageMetadata.CachedContentTokenCount = u.CacheReadTokens
		}
	}
	return out
}

// Messages applies a hook's llm_request messages to a request's, as the engine does: the
// i-th hook message replaces the text of the i-th message that has text (its other blocks
// kept), messages without text stay, and extra hook messages are appended.
func Messages(orig []dsh.ModelMessage, hook []gemini.LLMMessage) []dsh.ModelMessage {
	out := make([]dsh.ModelMessage, 0, max(len(orig), len(hook)))
	i := 0
	for _, msg := range orig {
		if blocktext.Text(msg.Content, "") == "" || i >= len(hook) {
			out = append(out, msg)
			continue
		}
		blocks := []dsh.ContentBlock{dsh.TextBlock{Text: hook[i].Content}}
		for _, c := range msg.Content {
			if _, isText := c.(dsh.TextBlock); !isText {
				blocks = append(blocks, c)
			}
		}
		out = append(out, dsh.ModelMessage{Role: modelRole(hook[i].Role), Content: blocks, Source: msg.Source})
		i++
	}
	for ; i < len(hook); i++ {
		out = append(out, dsh.ModelMessage{Role: modelRole(hook[i].Role), Content: []dsh.ContentBlock{dsh.TextBlock{Text: hook[i].Content}}})
	}
	return out
}

func role(r dsh.ModelRole) string {
	if r == dsh.ModelRoleAssistant {
		return "model"
	}
	return "user"
}

func modelRole(r string) dsh.ModelRole {
	if r == "model" {
		return dsh.ModelRoleAssistant
	}
	return dsh.ModelRoleUser
}

func lastUserText(msgs []dsh.ModelMessage) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == dsh.ModelRoleUser && msgs[i].Source != nil && msgs[i].Source.Kind() == dsh.SourceUserKind {
			return blocktext.Text(msgs[i].Content, "")
		}
	}
	return ""
}

// responseText reads an llm_response's text: its text, else its first candidate's parts.
func responseText(v any) (string, bool) {
	var r struct {
		Text       *string `json:"text"`
		Candidates []struct {
			Content struct {
				Parts []string `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	if v == nil || remarshal(v, &r) != nil {
		return "", false
	}
	if r.Text != nil {
		return *r.Text, true
	}
	if len(r.Candidates) > 0 {
		return strings.Join(r.Candidates[0].Content.Parts, ""), true
	}
	return "", false
}

func remarshal(v, into any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, into)
}
