package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"

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

// hookModel answers prompt hooks with one call of the session's model.
type hookModel struct {
	model llm.Model
	cfg   dsh.LLMCallConfig
}

// EvaluateHook sends r as one request (no tools) and returns the answer's text. The
// answer's schema goes as Anthropic's structured output format (output_config), as
// Claude Code sends it; other providers get the system prompt alone, which asks for it.
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
	req := llm.Request{Config: cfg, System: r.System, Messages: []llm.Message{{Role: llm.RoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: r.Prompt}}}}}
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
