package differential

// geminiPolicyCases are Gemini CLI's policy engine: TOML rules in ~/.gemini/policies, what
// a deny, an allow and an ask_user rule do to the tools offered and to a call, how they
// rank with each other and with the settings' tools.exclude, a malformed policy file; and
// the tools list with an MCP server.
func geminiPolicyCases() []Case {
	const BT, AT = "BeforeTool", "AfterTool"
	gem := []string{"gemini"}
	hooks := []Hook{h(BT, "exit 0"), h(AT, "exit 0")}
	policy := func(body string) map[string]string {
		return map[string]string{".gemini/policies/rules.toml": body}
	}
	return []Case{
		// A deny rule by tool name: glob and list_directory are not offered (the mock
		// calls only tools offered); a deny rule with a pattern leaves read_file offered,
		// denies the calls it matches and its denyMessage follows the engine's words.
		{Name: "gemini/policy/deny-tool", Engines: gem, Hooks: hooks,
			Files: map[string]string{"a.txt": "alpha\n", "secret.txt": "hidden\n"},
			HomeFiles: policy("[[rule]]\ntoolName = \"glob\"\ndecision = \"deny\"\npriority = 100\n\n" +
				"[[rule]]\ntoolName = [\"list_directory\", \"grep_search\"]\ndecision = \"deny\"\npriority = 100\ndenyMessage = \"No looking around.\"\n\n" +
				"[[rule]]\ntoolName = \"read_file\"\nargsPattern = '\"file_path\":\"[^\"]*secret'\ndecision = \"deny\"\npriority = 100\ndenyMessage = \"No secrets.\"\n"),
			Turns: []Turn{
				{Text: "reading", Calls: []Call{{Name: "read_file", Input: map[string]any{"file_path": "secret.txt"}}}},
				{Text: "reading", Calls: []Call{{Name: "read_file", Input: map[string]any{"file_path": "a.txt"}}}},
				{Text: "running", Bash: []string{"touch ran_1"}},
				{Text: "finished"}}},
		// A deny rule by command prefix: the shell is still offered; a command starting
		// with the prefix is denied, alone or as a part of a compound command.
		{Name: "gemini/policy/deny-prefix", Engines: gem, Hooks: hooks,
			HomeFiles: policy("[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"rm\"\ndecision = \"deny\"\npriority = 100\n"),
			Turns: []Turn{
				{Text: "running", Bash: []string{"touch ran_1 && rm -f ran_1"}},
				{Text: "running", Bash: []string{"rm -f nothing"}},
				{Text: "running", Bash: []string{"touch ran_2"}},
				{Text: "finished"}}},
		// An allow rule beating a lower-priority deny: the shell is denied but for
		// commands starting with echo (each part of a compound command counts). A user
		// rule of priority 500 (4.5) allowing glob does not bring back what tools.exclude
		// (4.4) takes out: the engine leaves an excluded tool out of its registry.
		{Name: "gemini/policy/allow-over-deny", Engines: gem, Hooks: hooks,
			Settings: map[string]any{"tools": map[string]any{"exclude": []any{"glob"}}},
			HomeFiles: policy("[[rule]]\ntoolName = \"run_shell_command\"\ndecision = \"deny\"\npriority = 100\n\n" +
				"[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"echo\"\ndecision = \"allow\"\npriority = 200\n\n" +
				"[[rule]]\ntoolName = \"glob\"\ndecision = \"allow\"\npriority = 500\n"),
			Turns: []Turn{
				{Text: "running", Bash: []string{"echo hi"}},
				{Text: "running", Bash: []string{"touch ran_1"}},
				{Text: "running", Bash: []string{"echo a && touch ran_2"}},
				{Text: "finished"}}},
		// ask_user headless (gemini -p): no one can answer.
		{Name: "gemini/policy/ask-user", Engines: gem, Hooks: hooks,
			HomeFiles: policy("[[rule]]\ntoolName = \"list_directory\"\ndecision = \"ask_user\"\npriority = 100\n\n" +
				"[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"touch\"\ndecision = \"ask_user\"\npriority = 100\n"),
			Turns: []Turn{
				{Text: "listing", Calls: []Call{{Name: "list_directory", Input: map[string]any{"dir_path": "."}}}},
				{Text: "running", Bash: []string{"touch ran_1"}},
				{Text: "running", Bash: []string{"echo hi"}},
				{Text: "finished"}}},
		// A malformed policy file beside a good one.
		{Name: "gemini/policy/malformed", Engines: gem, Hooks: hooks,
			DshRefuses: "bad.toml: rule #1: priority: <nil> is not an integer from 0 to 999",
			HomeFiles: map[string]string{
				".gemini/policies/bad.toml":  "[[rule]]\ntoolName = \"glob\"\ndecision = \"deny\"\n",
				".gemini/policies/good.toml": "[[rule]]\ntoolName = \"list_directory\"\ndecision = \"deny\"\npriority = 100\n"},
			Turns: []Turn{
				{Text: "globbing", Calls: []Call{{Name: "glob", Input: map[string]any{"pattern": "*"}}}},
				{Text: "finished"}}},
		// Calls of tools the request does not offer (the mock makes them all the same):
		// another engine's shell tool and a made-up name. What the model reads, and whether
		// any hook runs for them.
		{Name: "gemini/tools/unknown", Engines: gem, Hooks: hooks, Turns: []Turn{
			{Text: "codex shell", Calls: []Call{{Name: "exec_command", Input: map[string]any{"cmd": "touch ran_x"}, Unoffered: true}}},
			{Text: "made up", Calls: []Call{{Name: "no_such_tool", Input: map[string]any{"x": 1}, Unoffered: true}}},
			{Text: "finished"}}},
		// The tools list with an MCP server: the name the model calls its tool by.
		{Name: "gemini/tools/mcp", Engines: gem, Hooks: hooks, MCPServer: true,
			Turns: []Turn{
				{Text: "calling", Calls: []Call{{Name: "mcp_hk_hook", Input: map[string]any{"name": "model-call", "answer": "done"}}}},
				{Text: "finished"}}},
	}
}
