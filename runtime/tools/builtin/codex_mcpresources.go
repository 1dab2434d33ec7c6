package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dshkit/dsh/runtime/tools"
)

// MCPResources is what Codex's resource tools (list_mcp_resources,
// list_mcp_resource_templates, read_mcp_resource) read: the session's MCP servers
// (bridges/mcp's Set). The entries are the servers' JSON objects as they sent them.
type MCPResources interface {
	// ResourceServers are the names of the servers that started, in configuration order.
	ResourceServers() []string
	// ListResources lists one page of a server's resources (cursor "": the first), and
	// the next page's cursor ("": none); a server without resources lists none.
	ListResources(ctx context.Context, server, cursor string) (resources []json.RawMessage, next string, err error)
	// ListResourceTemplates does the same for its resource templates.
	ListResourceTemplates(ctx context.Context, server, cursor string) (templates []json.RawMessage, next string, err error)
	// ReadResource reads a resource: its contents and the result's other fields.
	ReadResource(ctx context.Context, server, uri string) (contents []json.RawMessage, err error)
}

// RPCError is an error a server answered a request with, as the JSON-RPC error carries
// it (an MCPResources error may implement it).
type RPCError interface {
	RPC() (code int64, message string, data json.RawMessage)
}

// Codex 0.169.0's resource tools' words (measured: codex/mcp-resources*; codex-rs
// core/src/tools/handlers/mcp_resource).
const (
	codexNoCursor      = "cursor can only be used when a server is specified"
	codexUnknownServer = "unknown MCP server '%s'"
)

// The key order Codex (rmcp) writes a resource and a resource template in, after the
// "server" it adds; keys it does not know follow in the server's order.
var (
	codexResourceKeys = []string{"uri", "name", "title", "description", "mimeType", "size", "annotations", "icons", "_meta"}
	codexTemplateKeys = []string{"uriTemplate", "name", "title", "description", "mimeType", "annotations", "icons", "_meta"}
	codexContentKeys  = []string{"uri", "mimeType", "text", "blob", "_meta"}
)

// codexReadFields are the fields Codex writes in a read result between the uri and the
// contents (its rmcp's ReadResourceResult defaults, measured).
const codexReadFields = `"ttlMs":0,"cacheScope":"public"`

// codexResourceList is list_mcp_resources (templates false) or list_mcp_resource_templates.
func codexResourceList(templates bool) func(Options) tools.Definition {
	return func(o Options) tools.Definition {
		if o.MCPResources == nil {
			return tools.Definition{}
		}
		key, keys, method := "resources", codexResourceKeys, "resources/list"
		list := o.MCPResources.ListResources
		if templates {
			key, keys, method = "resourceTemplates", codexTemplateKeys, "resources/templates/list"
			list = o.MCPResources.ListResourceTemplates
		}
		type input struct {
			Server *string `json:"server"`
			Cursor *string `json:"cursor"`
		}
		return tools.Definition{
			IsConcurrencySafe: func(json.RawMessage) bool { return true },
			FinalizeContent:   plainFailure,
			Run: runWith(func(ctx context.Context, in input) (string, error) {
				server, cursor := trimmed(in.Server), trimmed(in.Cursor)
				var b bytes.Buffer
				b.WriteByte('{')
				if server == "" {
					if cursor != "" {
						return "", tools.NewError(CodeBadInput, codexNoCursor)
					}
					// Every server's, in name order, all pages.
					names := slices.Sorted(slices.Values(o.MCPResources.ResourceServers()))
					var all [][]byte
					for _, name := range names {
						next := ""
						for range 100 {
							items, n, err := list(ctx, name, next)
							if err != nil {
								break // Codex leaves a failing server out of the whole list
							}
							for _, it := range items {
								all = append(all, codexEntry(name, it, keys))
							}
							if next = n; next == "" {
								break
							}
						}
					}
					writeList(&b, key, all)
				} else {
					if !slices.Contains(o.MCPResources.ResourceServers(), server) {
						return "", tools.NewError(CodeBadInput, fmt.Sprintf(codexUnknownServer, server))
					}
					items, next, err := list(ctx, server, cursor)
					if err != nil {
						return "", tools.NewError(CodeBadInput, codexFailed(method, server, "", err))
					}
					var all [][]byte
					for _, it := range items {
						all = append(all, codexEntry(server, it, keys))
					}
					s, _ := json.Marshal(server)
					b.WriteString(`"server":`)
					b.Write(s)
					b.WriteByte(',')
					writeList(&b, key, all)
					if next != "" {
						n, _ := json.Marshal(next)
						b.WriteString(`,"nextCursor":`)
						b.Write(n)
					}
				}
				b.WriteByte('}')
				return b.String(), nil
			}),
		}
	}
}

// codexReadResource is read_mcp_resource.
func codexReadResource(o Options) tools.Definition {
	if o.MCPResources == nil {
		return tools.Definition{}
	}
	type input struct {
		Server string `json:"server"`
		URI    string `json:"uri"`
	}
	return tools.Definition{
		IsConcurrencySafe: func(json.RawMessage) bool { return true },
		FinalizeContent:   plainFailure,
		Run: runWith(func(ctx context.Context, in input) (string, error) {
			server, uri := strings.TrimSpace(in.Server), strings.TrimSpace(in.URI)
			if !slices.Contains(o.MCPResources.ResourceServers(), server) {
				return "", tools.NewError(CodeBadInput, fmt.Sprintf(codexUnknownServer, server))
			}
			contents, err := o.MCPResources.ReadResource(ctx, server, uri)
			if err != nil {
				return "", tools.NewError(CodeBadInput, codexFailed("resources/read", server, uri, err))
			}
			var all [][]byte
			for _, c := range contents {
				all = append(all, codexOrdered(c, codexContentKeys, nil))
			}
			s, _ := json.Marshal(server)
			u, _ := json.Marshal(uri)
			var b bytes.Buffer
			fmt.Fprintf(&b, `{"server":%s,"uri":%s,%s,`, s, u, codexReadFields)
			writeList(&b, "contents", all)
			b.WriteByte('}')
			return b.String(), nil
		}),
	}
}

// codexFailed is Codex's words for a server's failed request: "<method> failed:
// <method> failed for `<server>` (<uri>): <error>", a JSON-RPC error as rmcp writes it
// ("Mcp error: <code>: <message>(<data>)").
func codexFailed(method, server, uri string, err error) string {
	what := err.Error()
	var rpc RPCError
	if errors.As(err, &rpc) {
		code, msg, data := rpc.RPC()
		what = fmt.Sprintf("Mcp error: %d: %s", code, msg)
		if len(data) > 0 && string(data) != "null" {
			var c bytes.Buffer
			if json.Compact(&c, data) == nil {
				what += "(" + c.String() + ")"
			}
		}
	}
	at := ""
	if uri != "" {
		at = " (" + uri + ")"
	}
	return fmt.Sprintf("%s failed: %s failed for `%s`%s: %s", method, method, server, at, what)
}

// trimmed is *s without surrounding spaces ("" when nil).
func trimmed(s *string) string {
	if s == nil {
		return ""
	}
	return strings.TrimSpace(*s)
}

// codexEntry is a server's entry with "server" first and its keys in Codex's order.
func codexEntry(server string, entry json.RawMessage, keys []string) []byte {
	s, _ := json.Marshal(server)
	return codexOrdered(entry, keys, s)
}

// codexOrdered writes the JSON object raw compactly with keys first in order, then its
// other keys in its own order; server, when set, is a "server" key before them all.
func codexOrdered(raw json.RawMessage, keys []string, server []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(raw))
	type kv struct {
		k string
		v json.RawMessage
	}
	var fields []kv
	if t, err := dec.Token(); err == nil && t == json.Delim('{') {
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				break
			}
			var v json.RawMessage
			if dec.Decode(&v) != nil {
				break
			}
			fields = append(fields, kv{kt.(string), v})
		}
	}
	slices.SortStableFunc(fields, func(a, b kv) int {
		ia, ib := slices.Index(keys, a.k), slices.Index(keys, b.k)
		if ia < 0 {
			ia = len(keys)
		}
		if ib < 0 {
			ib = len(keys)
		}
		return ia - ib
	})
	var b bytes.Buffer
	b.WriteByte('{')
	if server != nil {
		b.WriteString(`"server":`)
		b.Write(server)
	}
	for i, f := range fields {
		if i > 0 || server != nil {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.k)
		b.Write(k)
		b.WriteByte(':')
		var c bytes.Buffer
		if json.Compact(&c, f.v) == nil {
			b.Write(c.Bytes())
		} else {
			b.Write(f.v)
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// writeList writes "key":[items...].
func writeList(b *bytes.Buffer, key string, items [][]byte) {
	b.WriteString(`"` + key + `":[`)
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it)
	}
	b.WriteByte(']')
}
