package builtin

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dshkit/dsh/runtime/tools"
)

// Refusals are the refusals an engine makes of a tool's call before any hook runs (a
// toolset row's refuse): each is checked, in this order, when the call is created
// (tools.Definition.Precheck), and its words are the call's failure, which the model
// reads as they are. Codex 0.169.0 parses a function's arguments, and checks the MCP
// server a resource tool names, before its PreToolUse hooks (codex/mcp-resources-refused).
type Refusals struct {
	// MissingField words a call lacking a property the row's input schema requires,
	// {field} standing for the first one missing in the schema's order (Codex's serde:
	// "failed to parse function arguments: missing field `{field}`").
	MissingField string `json:"missing_field,omitempty"`
	// UnknownServer words a call whose ServerKey names no MCP server of the session,
	// {server} standing for it (Codex's "unknown MCP server '{server}'"); a call without
	// it is not refused.
	UnknownServer string `json:"unknown_server,omitempty"`
	// ServerKey is the input key naming the MCP server (UnknownServer's).
	ServerKey string `json:"server_key,omitempty"`
}

// required checks r against the row's input schema and returns the properties the
// schema requires (MissingField's).
func (r *Refusals) required(schema json.RawMessage) ([]string, error) {
	var s struct {
		Required []string `json:"required"`
	}
	switch {
	case r.MissingField == "" && r.UnknownServer == "":
		return nil, errors.New("no refusal: give missing_field or unknown_server")
	case (r.UnknownServer == "") != (r.ServerKey == ""):
		return nil, errors.New("unknown_server and server_key go together")
	case r.MissingField == "":
		return nil, nil
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("missing_field: the input schema: %w", err)
	}
	if len(s.Required) == 0 {
		return nil, errors.New("missing_field: the input schema requires no property")
	}
	return s.Required, nil
}

// check is the Precheck of r over a tool of input schema schema; servers lists the
// session's MCP servers (UnknownServer's).
func (r *Refusals) check(schema json.RawMessage, servers MCPResources) (func(json.RawMessage) error, error) {
	required, err := r.required(schema)
	if err != nil {
		return nil, err
	}
	if r.UnknownServer != "" && servers == nil {
		return nil, nil // no MCP server: the tool is not offered (its row's with_mcp)
	}
	return func(args json.RawMessage) error {
		var in map[string]json.RawMessage
		if err := json.Unmarshal(args, &in); err != nil {
			return nil // not an object: the input schema's validation words it
		}
		for _, k := range required {
			if _, ok := in[k]; !ok {
				return tools.NewError(CodeBadInput, strings.ReplaceAll(r.MissingField, "{field}", k))
			}
		}
		if r.UnknownServer != "" {
			var name string
			if raw, ok := in[r.ServerKey]; ok && json.Unmarshal(raw, &name) == nil && strings.TrimSpace(name) != "" &&
				!slices.Contains(servers.ResourceServers(), strings.TrimSpace(name)) {
				return tools.NewError(CodeBadInput, strings.ReplaceAll(r.UnknownServer, "{server}", strings.TrimSpace(name)))
			}
		}
		return nil
	}, nil
}
