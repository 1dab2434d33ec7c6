package builtin

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRecordCodexToolset rewrites spec/toolsets/codex.json from a Codex request the
// differential suite kept (DSH_RECORD_CODEX_REQUEST=<keep>/all_exit0/codex/engine/req-0.json):
// every tool of the request's tools array in its order, with the name, description and
// parameters the engine sent, keeping the impl, absent and touches of the file's rows. A
// tool the file has no row for is recorded absent ("not yet implemented"), to be decided. A
// namespace entry (multi_agent_v1) is a row per function, with its namespace; an MCP
// server's namespace (the file's mcp.namespace) is the server's, not a row. The rows the
// engine offers only with MCP servers (with_mcp) stay when the request has none.
// Without the variable it does nothing.
func TestRecordCodexToolset(t *testing.T) {
	req := os.Getenv("DSH_RECORD_CODEX_REQUEST")
	if req == "" {
		t.Skip("DSH_RECORD_CODEX_REQUEST names no kept Codex request")
	}
	data, err := os.ReadFile(req)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Model string            `json:"model"`
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		t.Fatalf("%s: %v", req, err)
	}
	file := filepath.Join("..", "..", "..", "spec", "toolsets", "codex.json")
	old := Toolset{Dialect: "codex", Style: StyleCodex}
	if prev, err := os.ReadFile(file); err == nil {
		if err := json.Unmarshal(prev, &old); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	rows := map[string]ToolRow{}
	for _, r := range old.Tools {
		rows[r.Name] = r
	}
	ts := Toolset{Dialect: "codex", Style: StyleCodex, Engine: "@openai/codex 0.169.0", Model: body.Model, Models: old.Models, Unknown: old.Unknown, MCP: old.MCP}
	mcpPrefix := "\x00"
	if old.MCP != nil && old.MCP.Namespace != "" {
		mcpPrefix, _, _ = strings.Cut(old.MCP.Namespace, "{server}")
	}
	withMCP := bytes.Contains(data, []byte(`"name":"`+mcpPrefix))
	// The rows of the tools offered only to other models (recorded from their requests)
	// stay, after the row they followed.
	var others [][2]string // {row name, the name of the row before it}
	for i, r := range old.Tools {
		if r.Only != nil && !slices.Contains(r.Only, body.Model) || r.WithMCP && !withMCP {
			prev := ""
			if i > 0 {
				prev = old.Tools[i-1].Name
			}
			others = append(others, [2]string{r.Name, prev})
		}
	}
	var add func(i int, raw json.RawMessage, namespace string)
	add = func(i int, raw json.RawMessage, namespace string) {
		var tool struct {
			Type        string            `json:"type"`
			Name        string            `json:"name"`
			Description string            `json:"description"`
			Parameters  json.RawMessage   `json:"parameters"`
			Tools       []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(raw, &tool); err != nil {
			t.Fatalf("%s: tools[%d]: %v", req, i, err)
		}
		if tool.Type == "namespace" && strings.HasPrefix(tool.Name, mcpPrefix) {
			return // an MCP server's tools
		}
		if tool.Type == "namespace" {
			// A namespace entry: a row per function, the namespace's description beside.
			if ts.Namespaces == nil {
				ts.Namespaces = map[string]string{}
			}
			ts.Namespaces[tool.Name] = tool.Description
			for _, fn := range tool.Tools {
				add(i, fn, tool.Name)
			}
			return
		}
		name := tool.Name
		if name == "" {
			name = tool.Type // web_search: a hosted tool, named by its type
		}
		r, ok := rows[name]
		if !ok {
			r = ToolRow{Absent: "not yet implemented"}
		}
		r.Name, r.Description, r.InputSchema, r.Namespace = name, tool.Description, nil, namespace
		if tool.Type == "custom" {
			var c struct {
				Format json.RawMessage `json:"format"`
			}
			_ = json.Unmarshal(raw, &c)
			r.Type, r.Format = "custom", c.Format
		}
		if tool.Type == "function" {
			var buf bytes.Buffer
			if err := json.Compact(&buf, tool.Parameters); err != nil {
				t.Fatal(err)
			}
			r.InputSchema = buf.Bytes()
		}
		ts.Tools = append(ts.Tools, r)
	}
	for i, raw := range body.Tools {
		add(i, raw, "")
	}
	for _, o := range others {
		at := len(ts.Tools)
		if j := slices.IndexFunc(ts.Tools, func(r ToolRow) bool { return r.Name == o[1] }); j >= 0 {
			at = j + 1
		}
		ts.Tools = slices.Insert(ts.Tools, at, rows[o[0]])
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(ts); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
