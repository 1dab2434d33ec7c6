package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/bridges/mcp"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

// hookMCP calls the session's mounted MCP servers for mcp_tool hooks.
type hookMCP struct{ set *mcp.Set }

// CallHookTool calls tool of server; a server that is not mounted is an
// hookproto.ErrMCPUnavailable error.
func (h hookMCP) CallHookTool(ctx context.Context, server, tool string, args map[string]any) (string, bool, error) {
	text, isErr, err := h.set.CallText(ctx, server, tool, args)
	if errors.Is(err, mcp.ErrNotMounted) {
		return "", false, fmt.Errorf("%w: MCP server '%s' is not mounted (dsh run --mcp-config mounts a session's servers)", hookproto.ErrMCPUnavailable, server)
	}
	return text, isErr, err
}

// MCPTool says which mounted MCP tool name is (hookproto.MCPTools).
func (h hookMCP) MCPTool(name string) (hookproto.MCPTool, bool) {
	cfg, tool, ok := h.set.Origin(name)
	if !ok {
		return hookproto.MCPTool{}, false
	}
	return hookproto.MCPTool{Server: cfg.Name, Tool: tool, Command: cfg.Command, Args: cfg.Args, URL: cfg.URL}, true
}

// hookModel answers prompt hooks with one call of the session's model.
type hookModel struct {
	model llm.Model
	cfg   dsh.LLMCallConfig
	// last is the session's last exchange, which a request that judges the
	// conversation sends before its prompt (nil: none).
	last *exchange
}

// exchange is the last main model request of a session whose stream finished, and its
// answer.
type exchange struct {
	mu       sync.Mutex
	messages []llm.Message
	answer   []dsh.ContentBlock
}

// conversation is the last request's messages followed by its answer, or nil when no
// request has finished yet.
func (e *exchange) conversation() []llm.Message {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.messages == nil {
		return nil
	}
	return append(slices.Clone(e.messages), llm.Message{Role: llm.RoleAssistant, Content: e.answer})
}

// recordingModel is the session's model as the loop calls it: every request whose stream
// finishes becomes the session's last exchange. A request is frozen once built (the loop
// builds a new one for every call), so its messages are kept, not copied.
type recordingModel struct {
	llm.Model
	last *exchange
}

// Stream streams req from the model, folding the answer to record it when it finishes.
func (m recordingModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[dsh.AssistantChunk, error] {
	inner := m.Model.Stream(ctx, req)
	messages := slices.Clone(req.Messages)
	return func(yield func(dsh.AssistantChunk, error) bool) {
		var a llm.Assembler
		folding := true
		for c, err := range inner {
			if folding && (err != nil || a.Add(c) != nil) {
				folding = false
			}
			if !yield(c, err) {
				return
			}
		}
		if folding && a.Finished() {
			m.last.mu.Lock()
			m.last.messages, m.last.answer = messages, a.Response().Content
			m.last.mu.Unlock()
		}
	}
}

// EvaluateHook sends r as one request (no tools) and returns the answer's text: the
// prompt alone, or, when r judges the conversation, after the session's last exchange (the
// last request's messages and its answer). The answer's schema goes as Anthropic's
// structured output format (output_config), as Claude Code sends it; other providers get
// the system prompt alone, which asks for it.
func (h hookModel) EvaluateHook(ctx context.Context, r hookproto.PromptEval) (string, error) {
	if h.model == nil {
		return "", errors.New("the session has no model")
	}
	cfg := h.cfg
	cfg.Extra = maps.Clone(cfg.Extra)
	if r.Model != "" {
		cfg.Model = r.Model
	}
	if cfg.Provider == "anthropic" && len(r.Schema) > 0 {
		if cfg.Extra == nil {
			cfg.Extra = map[string]json.RawMessage{}
		}
		format, _ := json.Marshal(map[string]any{"format": map[string]any{"type": "json_schema", "schema": r.Schema}})
		cfg.Extra["output_config"] = format
	}
	var msgs []llm.Message
	if r.Conversation {
		msgs = h.last.conversation()
	}
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: r.Prompt}}})
	req := llm.Request{Config: cfg, System: r.System, Messages: msgs}
	var text strings.Builder
	for chunk, err := range h.model.Stream(ctx, req) {
		if err != nil {
			return "", err
		}
		switch c := chunk.(type) {
		case dsh.ChunkTextDelta:
			text.WriteString(c.Text)
		case *dsh.ChunkTextDelta:
			text.WriteString(c.Text)
		case dsh.ChunkFinish:
			if c.Error != nil {
				return "", errors.New(c.Error.Message)
			}
		case *dsh.ChunkFinish:
			if c.Error != nil {
				return "", errors.New(c.Error.Message)
			}
		default:
			// Reasoning and tool calls are no part of the answer (the request offers no
			// tools); the text is.
		}
	}
	return text.String(), nil
}
