package builtin

import (
	"encoding/json"
	"slices"
	"strings"
)

// MCPShape is how an engine offers an MCP server's tools: the properties it adds to
// each one's input schema and how each text block of a result reads for its model.
type MCPShape struct {
	// Properties are property schemas the engine adds to every object input schema,
	// after the server's own (a JSON object).
	Properties json.RawMessage `json:"properties,omitempty"`
	// Text is a text block of a result as the model reads it, {text} being the server's
	// text after Escape ("": the text as it is).
	Text string `json:"text,omitempty"`
	// Escape replaces, in the server's text, each key by its value first.
	Escape map[string]string `json:"escape,omitempty"`
	// Namespace, when set, is the namespace the engine offers a server's tools in,
	// {server} standing for the server's name (Codex's "mcp__{server}"), the model
	// calling a tool by its own name there; NamespaceDescription is the namespace's
	// description, {namespace} standing for its name.
	Namespace            string `json:"namespace,omitempty"`
	NamespaceDescription string `json:"namespace_description,omitempty"`
	// Header, when set, is a text block the engine puts before a result's content (and
	// before the text of a result the server marked isError), {seconds} standing for the
	// call's wall time in seconds.
	Header string `json:"header,omitempty"`
}

// Wrap is text as the model reads it (Text, after Escape).
func (m *MCPShape) Wrap(text string) string {
	if m.Text == "" {
		return text
	}
	keys := make([]string, 0, len(m.Escape))
	for k := range m.Escape {
		keys = append(keys, k)
	}
	// Longer keys first, so that one that holds another wins where both match.
	slices.SortFunc(keys, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	pairs := make([]string, 0, 2*len(keys))
	for _, k := range keys {
		pairs = append(pairs, k, m.Escape[k])
	}
	if len(pairs) > 0 {
		text = strings.NewReplacer(pairs...).Replace(text)
	}
	return strings.ReplaceAll(m.Text, "{text}", text)
}

// MCPShapeOf returns the MCP shape of a style's toolset (nil: none, or no toolset).
func MCPShapeOf(style Style) (*MCPShape, error) {
	all, err := Toolsets()
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(all, func(ts Toolset) bool { return ts.Style == style })
	if i < 0 || all[i].MCP == nil {
		return nil, nil
	}
	m := all[i].MCP
	return m, nil
}
