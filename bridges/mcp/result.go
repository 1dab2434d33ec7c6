package mcp

// A tool call on a server, and its result: the canonical value, its text, its content
// blocks for the model, and the cap on what is kept of it.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
)

// Value is the canonical value of a successful MCP tool call: the server's content
// blocks as MCP sent them and its structured result, when it gave one.
type Value struct {
	Content           []json.RawMessage `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent,omitempty"`
}

func (srv *server) call(ctx context.Context, tool string, args json.RawMessage) (any, error) {
	if srv.err != nil || srv.sess == nil {
		return nil, tools.NewError(CodeUnavailable, fmt.Sprintf("MCP server %q is not running", srv.cfg.Name))
	}
	ctx, cancel := context.WithTimeout(ctx, srv.o.CallTimeout)
	defer cancel()
	var a any = map[string]any{}
	if len(args) > 0 && string(args) != "null" {
		a = args
	}
	res, err := srv.sess.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: a})
	if err != nil {
		switch {
		case srv.capped.Load() != 0:
			return nil, tools.NewError(CodeResultTooLarge, fmt.Sprintf("MCP server %q: %s: the server sent a message over %d bytes (mcp.Options.MaxMessageBytes): the rest was not read and the server's connection was closed", srv.cfg.Name, tool, srv.capped.Load()))
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return nil, tools.NewError(CodeTimeout, fmt.Sprintf("MCP server %q: %s timed out after %s", srv.cfg.Name, tool, srv.o.CallTimeout))
		case ctx.Err() != nil:
			return nil, ctx.Err()
		}
		return nil, tools.NewError(CodeServerError, fmt.Sprintf("MCP server %q: %s: %v", srv.cfg.Name, tool, err))
	}
	var v Value
	for _, c := range res.Content {
		b, err := json.Marshal(c)
		if err != nil {
			return nil, tools.NewError(CodeServerError, fmt.Sprintf("MCP server %q: %s: unencodable content: %v", srv.cfg.Name, tool, err))
		}
		v.Content = append(v.Content, b)
	}
	if v.Content == nil {
		v.Content = []json.RawMessage{}
	}
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return nil, tools.NewError(CodeServerError, fmt.Sprintf("MCP server %q: %s: unencodable structured content: %v", srv.cfg.Name, tool, err))
		}
		v.StructuredContent = b
	}
	v = capValue(v, srv.o.MaxResultBytes)
	if res.IsError {
		msg := textOf(v)
		if msg == "" {
			msg = "the tool failed"
		}
		return nil, tools.NewError(CodeToolError, msg)
	}
	return v, nil
}

// textOf joins the text blocks of v.
func textOf(v Value) string {
	blocks, _ := contentBlocks(v)
	var parts []string
	for _, b := range blocks {
		if t, ok := b.(dsh.TextBlock); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// render maps a Value to the content the model sees.
func render(_, value json.RawMessage) ([]dsh.ContentBlock, error) {
	var v Value
	if err := json.Unmarshal(value, &v); err != nil {
		return nil, err
	}
	return contentBlocks(v)
}

// wireContent is the union of the MCP content block shapes.
type wireContent struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Data     string `json:"data"`
	MIMEType string `json:"mimeType"`
	URI      string `json:"uri"`
	Name     string `json:"name"`
	Resource *struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType"`
		Text     string `json:"text"`
		Blob     string `json:"blob"`
	} `json:"resource"`
}

// contentBlocks maps MCP content to dsh content: text as text, images as images, and
// everything else as a text description (audio, links, embedded resources); a result
// with no content but a structured value shows that value's JSON.
func contentBlocks(v Value) ([]dsh.ContentBlock, error) {
	var out []dsh.ContentBlock
	for _, raw := range v.Content {
		var c wireContent
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, err
		}
		switch c.Type {
		case "text":
			out = append(out, dsh.TextBlock{Text: c.Text})
		case "image":
			if _, err := base64.StdEncoding.DecodeString(c.Data); err == nil && c.MIMEType != "" {
				out = append(out, dsh.ImageBlock{MediaType: c.MIMEType, Data: c.Data})
			} else {
				out = append(out, dsh.TextBlock{Text: "[image " + c.MIMEType + ", not decodable]"})
			}
		case "audio":
			out = append(out, dsh.TextBlock{Text: fmt.Sprintf("[audio %s, %d base64 characters]", c.MIMEType, len(c.Data))})
		case "resource_link":
			out = append(out, dsh.TextBlock{Text: fmt.Sprintf("[resource_link name=%s uri=%s]", c.Name, c.URI)})
		case "resource":
			switch {
			case c.Resource == nil:
				out = append(out, dsh.TextBlock{Text: "[resource]"})
			case c.Resource.Blob != "":
				out = append(out, dsh.TextBlock{Text: fmt.Sprintf("[resource %s %s, binary]", c.Resource.URI, c.Resource.MIMEType)})
			default:
				out = append(out, dsh.TextBlock{Text: fmt.Sprintf("[resource %s]\n%s", c.Resource.URI, c.Resource.Text)})
			}
		default:
			out = append(out, dsh.TextBlock{Text: string(raw)})
		}
	}
	if len(out) == 0 && len(v.StructuredContent) > 0 {
		out = append(out, dsh.TextBlock{Text: string(v.StructuredContent)})
	}
	if len(out) == 0 {
		out = append(out, dsh.TextBlock{Text: "(no output)"})
	}
	return out, nil
}

// capValue caps a result at max bytes of JSON (max < 0: no cap), keeping blocks in order:
// a text block past the budget is cut (on a character boundary), any other block past it
// is left out, the structured value is left out when it does not fit in what remains,
// and a last text block says what was cut and how large the result was.
func capValue(v Value, max int) Value {
	if max < 0 {
		return v
	}
	total := len(v.StructuredContent)
	for _, c := range v.Content {
		total += len(c)
	}
	if total <= max {
		return v
	}
	budget := max
	var kept []json.RawMessage
	var omitted []string
	for _, raw := range v.Content {
		if len(raw) <= budget {
			kept = append(kept, raw)
			budget -= len(raw)
			continue
		}
		var c wireContent
		if json.Unmarshal(raw, &c) == nil && c.Type == "text" && budget > 64 {
			text := c.Text
			for len(text) > 0 {
				b, _ := json.Marshal(map[string]string{"type": "text", "text": text})
				if len(b) <= budget {
					kept = append(kept, b)
					budget -= len(b)
					break
				}
				cut := len(text) - (len(b) - budget) // drop at least the excess
				cut = max0(min(cut, len(text)-1))
				for cut > 0 && !utf8.RuneStart(text[cut]) {
					cut--
				}
				text = text[:cut]
			}
			omitted = append(omitted, "text cut")
			budget = 0
			continue
		}
		kind := c.Type
		if kind == "" {
			kind = "content"
		}
		omitted = append(omitted, fmt.Sprintf("a %s block of %d bytes left out", kind, len(raw)))
		budget = 0
	}
	if len(v.StructuredContent) > budget {
		omitted = append(omitted, fmt.Sprintf("the structured result of %d bytes left out", len(v.StructuredContent)))
		v.StructuredContent = nil
	}
	note := fmt.Sprintf("[truncated: the MCP result was %d bytes, over the %d-byte cap (%s)]", total, max, strings.Join(omitted, "; "))
	b, _ := json.Marshal(map[string]string{"type": "text", "text": note})
	v.Content = append(kept, b)
	return v
}

func max0(n int) int {
	if n < 0 {
		return 0
	}
	return n
}
