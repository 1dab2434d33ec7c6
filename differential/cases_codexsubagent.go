package differential

// codexSubagentCases are the cases of Codex's sub-agents (its multi_agent_v1 namespace):
// the parent's model spawns a child with spawn_agent and collects it with wait_agent; the
// mock scripts the child apart from its parent (Case.Children: Codex marks a child's
// requests with SubagentHeaders).
func codexSubagentCases() []Case {
	codex := []string{"codex"}
	spawn := func(msg string) Call { return Call{Name: "spawn_agent", Input: map[string]any{"message": msg}} }
	wait := Call{Name: "wait_agent", Input: map[string]any{"targets": []string{"{{agent}}"}, "timeout_ms": 30000}}
	closeAgent := Call{Name: "close_agent", Input: map[string]any{"target": "{{agent}}"}}
	all := []Hook{h("PreToolUse", "exit 0"), h("PostToolUse", "exit 0"), h("SubagentStart", "exit 0"),
		h("SubagentStop", "exit 0"), h("Stop", "exit 0")}
	child := func(match string, turns ...Turn) Child { return Child{Match: match, Turns: turns} }
	parent := []Turn{{Text: "delegating", Calls: []Call{spawn("CHILD-A: say hi")}}, {Text: "waiting", Calls: []Call{wait}}, {Text: "parent done"}}
	return []Case{
		// A child that runs a command and answers; the parent waits for it, then closes it.
		{Name: "codex/subagent-spawn", Engines: codex, Hooks: all,
			Turns: []Turn{{Text: "delegating", Calls: []Call{spawn("CHILD-A: say hi")}}, {Text: "waiting", Calls: []Call{wait}},
				{Text: "closing", Calls: []Call{closeAgent}}, {Text: "parent done"}},
			Children: []Child{child("CHILD-A", Turn{Text: "child running", Bash: []string{"touch child_ran; echo child"}}, Turn{Text: "child answer"})}},
		// SubagentStart adds a context (its matcher is the agent type) and SubagentStop
		// blocks once: the child continues with the reason.
		{Name: "codex/subagent-hooks", Engines: codex,
			Hooks: []Hook{
				{Event: "SubagentStart", Matcher: "default", Script: js(`{"hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":"CTX-FOR-CHILD"}}`)},
				{Event: "SubagentStart", Matcher: "explorer", Script: "exit 0"},
				{Event: "SubagentStop", Matcher: "default", Script: once("ss", "echo 'keep going, child' >&2; exit 2")},
				{Event: "SubagentStop", Matcher: "explorer", Script: "exit 0"},
				h("Stop", "exit 0")},
			Turns:    parent,
			Children: []Child{child("CHILD-A", Turn{Text: "child first answer"}, Turn{Text: "child second answer"})}},
		// An agent role of the user's config.toml ([agents.NAME] with a description and a
		// config_file of developer_instructions) and one of the project's .codex/agents:
		// what spawn_agent's schema offers, and what the child of a role is told.
		{Name: "codex/subagent-role", Engines: codex, Hooks: all,
			CodexConfig: "[agents.reviewer]\ndescription = \"Reviews code for ROLE-DESC-PROBE\"\nconfig_file = \"./agents/reviewer.toml\"\n",
			HomeFiles:   map[string]string{".codex/agents/reviewer.toml": "developer_instructions = \"ROLE-INSTRUCTIONS-PROBE\"\n"},
			Files: map[string]string{".codex/agents/writer.toml": "name = \"writer\"\ndescription = \"Writes PROJECT-ROLE-PROBE\"\n" +
				"developer_instructions = \"PROJECT-INSTRUCTIONS-PROBE\"\n"},
			Turns: []Turn{{Text: "delegating", Calls: []Call{{Name: "spawn_agent", Input: map[string]any{"message": "CHILD-A: review", "agent_type": "reviewer"}}}},
				{Text: "waiting", Calls: []Call{wait}}, {Text: "parent done"}},
			Children: []Child{child("CHILD-A", Turn{Text: "child answer"})}},
		// Standalone role files in $CODEX_HOME/agents: one well formed, one without
		// developer_instructions, one that is not TOML, one repeating the first's name.
		{Name: "codex/subagent-role-file", Engines: codex, Hooks: all,
			HomeFiles: map[string]string{
				".codex/agents/writer.toml": "name = \"writer\"\ndescription = \"Writes FILE-ROLE-PROBE\"\n" +
					"developer_instructions = \"FILE-INSTRUCTIONS-PROBE\"\n",
				".codex/agents/noinstr.toml": "name = \"noinstr\"\ndescription = \"Lacks NOINSTR-PROBE\"\n",
				".codex/agents/broken.toml":  "name = [\n",
				".codex/agents/writer2.toml": "name = \"writer\"\ndescription = \"Second DUP-PROBE\"\ndeveloper_instructions = \"DUP-INSTRUCTIONS\"\n",
			},
			Turns: []Turn{{Text: "delegating", Calls: []Call{{Name: "spawn_agent", Input: map[string]any{"message": "CHILD-A: write", "agent_type": "writer"}}}},
				{Text: "waiting", Calls: []Call{wait}}, {Text: "parent done"}},
			Children: []Child{child("CHILD-A", Turn{Text: "child answer"})}},
		// spawn_agent naming a role there is none of.
		{Name: "codex/subagent-role-unknown", Engines: codex, Hooks: all,
			Turns: []Turn{{Text: "delegating", Calls: []Call{{Name: "spawn_agent", Input: map[string]any{"message": "CHILD-A: review", "agent_type": "nosuch"}}}},
				{Text: "parent done"}},
			Children: []Child{child("CHILD-A", Turn{Text: "child answer"})}},
		// The built-in role explorer.
		{Name: "codex/subagent-role-explorer", Engines: codex, Hooks: all,
			Turns: []Turn{{Text: "delegating", Calls: []Call{{Name: "spawn_agent", Input: map[string]any{"message": "CHILD-A: explore", "agent_type": "explorer"}}}},
				{Text: "waiting", Calls: []Call{wait}}, {Text: "parent done"}},
			Children: []Child{child("CHILD-A", Turn{Text: "child answer"})}},
		// send_input to a finished child, then wait_agent again: what the child is told and
		// what the calls answer; then send_input and resume_agent of an id there is none of.
		{Name: "codex/subagent-send-input", Engines: codex, Hooks: all,
			Turns: []Turn{{Text: "delegating", Calls: []Call{spawn("CHILD-A: say hi")}}, {Text: "waiting", Calls: []Call{wait}},
				{Text: "sending", Calls: []Call{{Name: "send_input", Input: map[string]any{"target": "{{agent}}", "message": "CHILD-A-MORE: again"}}}},
				{Text: "waiting again", Calls: []Call{wait}},
				{Text: "unknown", Calls: []Call{{Name: "send_input", Input: map[string]any{"target": "01a24b6d-0000-7000-8000-000000000000", "message": "x"}},
					{Name: "resume_agent", Input: map[string]any{"id": "01a24b6d-0000-7000-8000-000000000000"}}}},
				{Text: "parent done"}},
			Children: []Child{child("CHILD-A", Turn{Text: "child first answer"}, Turn{Text: "child second answer"})}},
		// close_agent, then resume_agent of the closed child and send_input to it.
		{Name: "codex/subagent-resume", Engines: codex, Hooks: all,
			Turns: []Turn{{Text: "delegating", Calls: []Call{spawn("CHILD-A: say hi")}}, {Text: "waiting", Calls: []Call{wait}},
				{Text: "closing", Calls: []Call{closeAgent}},
				{Text: "resuming", Calls: []Call{{Name: "resume_agent", Input: map[string]any{"id": "{{agent}}"}}}},
				{Text: "sending", Calls: []Call{{Name: "send_input", Input: map[string]any{"target": "{{agent}}", "message": "CHILD-A-MORE: again"}}}},
				{Text: "waiting again", Calls: []Call{wait}},
				{Text: "parent done"}},
			Children: []Child{child("CHILD-A", Turn{Text: "child first answer"}, Turn{Text: "child second answer"})}},
		// resume_agent of a child that was never closed, then send_input to a closed child
		// that resume_agent did not reopen.
		{Name: "codex/subagent-continue-edges", Engines: codex, Hooks: all,
			Turns: []Turn{{Text: "delegating", Calls: []Call{spawn("CHILD-A: say hi")}}, {Text: "waiting", Calls: []Call{wait}},
				{Text: "resuming open", Calls: []Call{{Name: "resume_agent", Input: map[string]any{"id": "{{agent}}"}}}},
				{Text: "closing", Calls: []Call{closeAgent}},
				{Text: "sending closed", Calls: []Call{{Name: "send_input", Input: map[string]any{"target": "{{agent}}", "message": "CHILD-A-MORE: again"}}}},
				{Text: "parent done"}},
			Children: []Child{child("CHILD-A", Turn{Text: "child first answer"}, Turn{Text: "child second answer"})}},
		// send_input to a child whose turn is still running (its shell command sleeps).
		{Name: "codex/subagent-send-running", Engines: codex, Hooks: all,
			Turns: []Turn{{Text: "delegating", Calls: []Call{spawn("CHILD-A: say hi")}},
				{Text: "sending", Calls: []Call{{Name: "send_input", Input: map[string]any{"target": "{{agent}}", "message": "CHILD-A-MORE: again"}}}},
				{Text: "waiting", Calls: []Call{wait}}, {Text: "waiting again", Calls: []Call{wait}}, {Text: "parent done"}},
			Children: []Child{child("CHILD-A", Turn{Text: "child running", Bash: []string{"sleep 3; echo slept"}},
				Turn{Text: "child first answer"}, Turn{Text: "child second answer"})}},
		// send_input with interrupt to a child whose turn is still running.
		{Name: "codex/subagent-send-interrupt", Engines: codex, Hooks: all,
			Turns: []Turn{{Text: "delegating", Calls: []Call{spawn("CHILD-A: say hi")}},
				{Text: "sending", Calls: []Call{{Name: "send_input", Input: map[string]any{"target": "{{agent}}", "message": "CHILD-A-MORE: again", "interrupt": true}}}},
				{Text: "waiting", Calls: []Call{wait}}, {Text: "waiting again", Calls: []Call{wait}}, {Text: "parent done"}},
			Children: []Child{child("CHILD-A", Turn{Text: "child running", Bash: []string{"sleep 3; echo slept"}},
				Turn{Text: "child first answer"}, Turn{Text: "child second answer"})}},
		// A PreToolUse deny that the child's shell call meets.
		{Name: "codex/subagent-deny-inside", Engines: codex,
			Hooks:    append([]Hook{{Event: "PreToolUse", Matcher: "Bash", Script: "echo 'no shell in children' >&2; exit 2"}}, all[1:]...),
			Turns:    parent,
			Children: []Child{child("CHILD-A", Turn{Text: "child running", Bash: []string{"touch child_ran"}}, Turn{Text: "child answer"})}},
	}
}

// geminiSubagentCases are Gemini CLI 0.61.0's subagents: invoke_agent, offered by default
// in headless mode, runs the named agent (generalist: the parent's tools) on the prompt,
// and which hooks fire around it and inside it.
func geminiSubagentCases() []Case {
	gem := []string{"gemini"}
	hooks := []Hook{h("BeforeTool", "exit 0"), h("AfterTool", "exit 0"), h("BeforeAgent", "exit 0"), h("AfterAgent", "exit 0"),
		h("BeforeModel", "exit 0")}
	complete := Call{Name: "complete_task", Input: map[string]any{"result": map[string]any{"response": "child answer"}}}
	invoke := func(agent string) Turn {
		return Turn{Text: "delegating", Calls: []Call{{Name: "invoke_agent", Input: map[string]any{"agent_name": agent, "prompt": "CHILD-A: say hi"}}}}
	}
	return []Case{
		{Name: "gemini/subagent-invoke", Engines: gem, Hooks: hooks,
			Turns: []Turn{{Text: "delegating", Calls: []Call{{Name: "invoke_agent", Input: map[string]any{"agent_name": "generalist", "prompt": "CHILD-A: say hi"}}}},
				{Text: "parent done"}},
			Children: []Child{{Match: "CHILD-A", Turns: []Turn{{Text: "child running", Bash: []string{"touch child_ran; echo child"}},
				{Text: "child answering", Calls: []Call{complete}}}}}},
		// A child that answers with text, twice: the engine nudges it once, then ends it
		// without a result.
		{Name: "gemini/subagent-nudge", Engines: gem, Hooks: hooks,
			Turns:    []Turn{invoke("generalist"), {Text: "parent done"}},
			Children: []Child{{Match: "CHILD-A", Turns: []Turn{{Text: "child text only"}, {Text: "child still text"}}}}},
		// An agent name there is none of.
		{Name: "gemini/subagent-unknown", Engines: gem, Hooks: hooks,
			Turns:    []Turn{invoke("nosuch"), {Text: "parent done"}},
			Children: []Child{{Match: "CHILD-A", Turns: []Turn{{Text: "child answering", Calls: []Call{complete}}}}}},
		// A BeforeTool deny of the child's shell call.
		{Name: "gemini/subagent-deny-inside", Engines: gem,
			Hooks: append([]Hook{{Event: "BeforeTool", Matcher: "run_shell_command", Script: "echo 'no shell in children' >&2; exit 2"}}, hooks[1:]...),
			Turns: []Turn{invoke("generalist"), {Text: "parent done"}},
			Children: []Child{{Match: "CHILD-A", Turns: []Turn{{Text: "child running", Bash: []string{"touch child_ran"}},
				{Text: "child answering", Calls: []Call{complete}}}}}},
	}
}
