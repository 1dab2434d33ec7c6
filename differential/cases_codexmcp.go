package differential

// codexMCPCases are the cases of Codex's MCP tools: a server's tools offered in a
// namespace of their own (mcp__<server>) and called by their own name in it, and the
// resource tools Codex adds with any MCP server (list_mcp_resources,
// list_mcp_resource_templates, read_mcp_resource).
func codexMCPCases() []Case {
	codex := []string{"codex"}
	tap := []Hook{h("PreToolUse", "exit 0"), h("PostToolUse", "exit 0")}
	call := func(name string, in map[string]any) Call { return Call{Name: name, Input: in} }
	hk := map[string]any{"server": MCPServerName}
	return []Case{
		// The model calls the server's tool: what the hooks see and what the model reads;
		// a PreToolUse group matching mcp__hk__hook and one matching the bare name.
		{Name: "codex/mcp-call", Engines: codex, MCPServer: true,
			Hooks: append(tap, Hook{Event: "PreToolUse", Matcher: "mcp__hk__hook", Script: "exit 0"},
				Hook{Event: "PreToolUse", Matcher: "^hook$", Script: "exit 0"}),
			Turns: []Turn{{Text: "calling", Calls: []Call{call("hook", map[string]any{"name": "model-call", "answer": "mcp answer text"})}},
				{Text: "calling again", Calls: []Call{call("hook", map[string]any{"name": "model-error", "answer": "mcp failed", "error": true})}},
				{Text: "finished"}}},
		// A PreToolUse deny of the server's tool, by its hook name.
		{Name: "codex/mcp-call-deny", Engines: codex, MCPServer: true,
			Hooks: []Hook{{Event: "PreToolUse", Matcher: "mcp__hk__hook", Script: "echo 'no mcp' >&2; exit 2"}},
			Turns: []Turn{{Text: "calling", Calls: []Call{call("hook", map[string]any{"name": "model-call", "answer": "mcp answer text"})}},
				{Text: "finished"}}},
		// The resource tools over a server that has resources and a template.
		{Name: "codex/mcp-resources", Engines: codex, MCPResources: true, Hooks: tap,
			Turns: []Turn{
				{Text: "listing", Calls: []Call{call("list_mcp_resources", map[string]any{}), call("list_mcp_resources", hk),
					call("list_mcp_resource_templates", map[string]any{}), call("list_mcp_resource_templates", hk)}},
				{Text: "reading", Calls: []Call{call("read_mcp_resource", map[string]any{"server": MCPServerName, "uri": MCPResourceNote}),
					call("read_mcp_resource", map[string]any{"server": MCPServerName, "uri": MCPResourceOther})}},
				{Text: "finished"}}},
		// The resource tools' failures after PreToolUse: a URI the server does not have, a
		// cursor without a server (no PostToolUse follows either).
		{Name: "codex/mcp-resources-errors", Engines: codex, MCPResources: true, Hooks: tap,
			Turns: []Turn{
				{Text: "failing", Calls: []Call{call("read_mcp_resource", map[string]any{"server": MCPServerName, "uri": "hk://notes/zzz"}),
					call("list_mcp_resources", map[string]any{"cursor": "c1"})}},
				{Text: "finished"}}},
		// The failures before any hook: a server that is not configured, a missing
		// argument.
		{Name: "codex/mcp-resources-refused", Engines: codex, MCPResources: true, Hooks: tap,
			Turns: []Turn{
				{Text: "failing", Calls: []Call{call("read_mcp_resource", map[string]any{"server": "nope", "uri": MCPResourceNote}),
					call("list_mcp_resources", map[string]any{"server": "nope"}),
					call("read_mcp_resource", map[string]any{"server": MCPServerName})}},
				{Text: "finished"}}},
		// The resource tools over a server without resources.
		{Name: "codex/mcp-resources-none", Engines: codex, MCPServer: true, Hooks: tap,
			Turns: []Turn{
				{Text: "listing", Calls: []Call{call("list_mcp_resources", map[string]any{}), call("list_mcp_resources", hk),
					call("list_mcp_resource_templates", hk), call("read_mcp_resource", map[string]any{"server": MCPServerName, "uri": MCPResourceNote})}},
				{Text: "finished"}}},
	}
}
