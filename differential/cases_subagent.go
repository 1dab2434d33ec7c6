package differential

// subagentCall is a foreground Agent call of a general-purpose child on task.
func subagentCall(task string) Call {
	return Call{Name: "Agent", Input: map[string]any{"description": "probe", "prompt": task,
		"subagent_type": "general-purpose", "run_in_background": false}}
}

// subagentCases are the cases of subagents: an agent tool call that runs a child agent,
// and the hooks that fire around and inside it. The mock scripts each child apart from
// its parent (Case.Children), matched by a phrase of its task.
func subagentCases() []Case {
	claude := []string{"claude"}
	agent := func(desc, task string, extra map[string]any) Call {
		in := map[string]any{"description": desc, "prompt": task, "subagent_type": "general-purpose"}
		for k, v := range extra {
			in[k] = v
		}
		return Call{Name: "Agent", Input: in}
	}
	fg := map[string]any{"run_in_background": false}
	child := func(match string, turns ...Turn) Child { return Child{Match: match, Turns: turns} }
	all := []Hook{h("PreToolUse", "exit 0"), h("PostToolUse", "exit 0"), h("SubagentStart", "exit 0"),
		h("SubagentStop", "exit 0"), h("Stop", "exit 0")}
	return []Case{
		// A foreground call: the parent waits for the child, whose answer is the result.
		{Name: "subagent/foreground", Engines: claude, Hooks: all,
			Turns:    []Turn{{Text: "delegating", Calls: []Call{agent("probe", "CHILD-A: say hi", fg)}}, {Text: "parent done"}},
			Children: []Child{child("CHILD-A", Turn{Text: "child running", Bash: []string{"echo child"}}, Turn{Text: "child answer"})}},
		// A call that runs in the background, as a general-purpose call does under claude -p.
		{Name: "subagent/background", Engines: claude, Hooks: all,
			Turns:    []Turn{{Text: "delegating", Calls: []Call{agent("probe", "CHILD-A: say hi", nil)}}, {Text: "parent waits"}, {Text: "parent done"}},
			Children: []Child{child("CHILD-A", Turn{Text: "child running", Bash: []string{"echo child"}}, Turn{Text: "child answer"})}},
		// SubagentStart adds a context to the child's first request.
		{Name: "subagent/start-context", Engines: claude,
			Hooks:    append([]Hook{h("SubagentStart", js(`{"hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":"CTX-FOR-CHILD"}}`))}, all[:2]...),
			Turns:    []Turn{{Text: "delegating", Calls: []Call{agent("probe", "CHILD-A: say hi", fg)}}, {Text: "parent done"}},
			Children: []Child{child("CHILD-A", Turn{Text: "child answer"})}},
		// SubagentStop blocks once: the child continues with the reason, then stops.
		{Name: "subagent/stop-block", Engines: claude,
			Hooks:    append([]Hook{h("SubagentStop", once("ss", "echo 'keep going, child' >&2; exit 2"))}, all[:2]...),
			Turns:    []Turn{{Text: "delegating", Calls: []Call{agent("probe", "CHILD-A: say hi", fg)}}, {Text: "parent done"}},
			Children: []Child{child("CHILD-A", Turn{Text: "child first answer"}, Turn{Text: "child second answer"})}},
		// The session's own events around a child: UserPromptSubmit and SessionStart fire
		// for the parent's prompt only, SessionEnd once.
		{Name: "subagent/session-events", Engines: claude,
			Hooks: []Hook{h("UserPromptSubmit", "exit 0"), h("SessionStart", "exit 0"), h("SessionEnd", "exit 0"), h("Stop", "exit 0"),
				h("SubagentStart", "exit 0"), h("SubagentStop", "exit 0")},
			Turns:    []Turn{{Text: "delegating", Calls: []Call{agent("probe", "CHILD-A: say hi", fg)}}, {Text: "parent done"}},
			Children: []Child{child("CHILD-A", Turn{Text: "child answer"})}},
		// A SubagentStart matcher on the agent type: only the matching group runs.
		{Name: "subagent/matcher", Engines: claude,
			Hooks: []Hook{{Event: "SubagentStart", Matcher: "general-purpose", Script: "exit 0"}, {Event: "SubagentStart", Matcher: "Explore", Script: "exit 0"},
				{Event: "SubagentStop", Matcher: "general-purpose", Script: "exit 0"}, {Event: "SubagentStop", Matcher: "Plan", Script: "exit 0"}},
			Turns:    []Turn{{Text: "delegating", Calls: []Call{agent("probe", "CHILD-A: say hi", fg)}}, {Text: "parent done"}},
			Children: []Child{child("CHILD-A", Turn{Text: "child answer"})}},
		// Two children in one step run at once; each follows its own script.
		{Name: "subagent/two", Engines: claude, Hooks: all,
			Turns:    []Turn{{Text: "delegating", Calls: []Call{agent("first", "CHILD-A: say hi", fg), agent("second", "CHILD-B: say bye", fg)}}, {Text: "parent done"}},
			Children: []Child{child("CHILD-A", Turn{Text: "child a answer"}), child("CHILD-B", Turn{Text: "child b answer"})}},
		// An agent type no definition has.
		{Name: "subagent/unknown-type", Engines: claude, Hooks: all,
			Turns: []Turn{{Text: "delegating", Calls: []Call{{Name: "Agent", Input: map[string]any{"description": "probe", "prompt": "CHILD-A: x",
				"subagent_type": "no-such-agent", "run_in_background": false}}}}, {Text: "parent done"}}},
		// A PreToolUse deny that only the child's Bash call meets.
		{Name: "subagent/deny-inside", Engines: claude,
			Hooks:    append([]Hook{{Event: "PreToolUse", Matcher: "Bash", Script: "echo 'no shell in children' >&2; exit 2"}}, all[1:]...),
			Turns:    []Turn{{Text: "delegating", Calls: []Call{agent("probe", "CHILD-A: say hi", fg)}}, {Text: "parent done"}},
			Children: []Child{child("CHILD-A", Turn{Text: "child running", Bash: []string{"touch child_ran"}}, Turn{Text: "child answer"})}},
	}
}
