package differential

import (
	"fmt"
	"maps"
	"slices"
)

// subagentCall is a foreground Agent call of a general-purpose child on task.
func subagentCall(task string) Call {
	return Call{Name: "Agent", Input: map[string]any{"description": "probe", "prompt": task,
		"subagent_type": "general-purpose", "run_in_background": false}}
}

// DefinitionMarker starts the body of every agent definition the cases write: the
// child's system prompt shows where it came from.
const DefinitionMarker = "DSH-AGENT-DEFINITION."

// probeAgent is a definition file (in .claude/agents, named for the agent) of name with tools (a comma
// list), whose body says where it is (which).
func probeAgent(name, tools, which string) string {
	return "---\nname: " + name + "\ndescription: The " + which + " " + name + " agent; use it to probe.\ntools: " + tools +
		"\n---\n\n" + DefinitionMarker + " You are the " + which + " " + name + " agent.\nAnswer briefly.\n"
}

// agentOf is a foreground Agent call of agent type typ on task.
func agentOf(typ, task string) Call {
	return Call{Name: "Agent", Input: map[string]any{"description": "probe", "prompt": task, "subagent_type": typ, "run_in_background": false}}
}

// hooked is a case of a definition "hooked" (in HOME's .claude/agents when home, else
// the workspace's; the project trusted when trust) whose frontmatter hooks are
// PreToolUse[Bash], Stop and PostToolUse, beside the settings' PreToolUse, SubagentStop
// and Stop; the parent and the child each run a command. The frontmatter Stop (Stop-2)
// runs as SubagentStop, beside the settings' SubagentStop-1: the engine starts them
// together.
func hooked(name string, home, trust bool) Case {
	file := ".claude/agents/hooked.md"
	src := "agent:" + file
	c := Case{Name: name, Engines: []string{"claude"}, TrustProject: trust,
		Hooks: []Hook{h("PreToolUse", "exit 0"), h("SubagentStop", "exit 0"), h("Stop", "exit 0"),
			{Event: "PreToolUse", Matcher: "Bash", Script: "exit 0", Source: src},
			{Event: "Stop", Script: "exit 0", Source: src},
			{Event: "PostToolUse", Script: "exit 0", Source: src}},
		Turns: []Turn{{Text: "delegating", Calls: []Call{agentOf("hooked", "CHILD-A: say hi")}},
			{Text: "parent running", Bash: []string{"echo parent"}}, {Text: "parent done"}},
		Children:   []Child{{Match: "CHILD-A", Turns: []Turn{{Text: "child running", Bash: []string{"echo child"}}, {Text: "child answer"}}}},
		Concurrent: []string{"SubagentStop-1", "Stop-2"}}
	files := map[string]string{file: "---\nname: hooked\ndescription: An agent with hooks.\nhooks: {{hooks}}\n---\n" +
		DefinitionMarker + " You are the hooked agent.\n"}
	if home {
		c.HomeFiles = files
	} else {
		c.Files = files
	}
	return c
}

// agentHook is a case of an agent hook at PreToolUse[Bash] whose verifier follows the
// script verifier (a child of the mock's: a conversation of its own): the parent runs one
// command.
func agentHook(name string, verifier ...Turn) Case {
	return Case{Name: name, Engines: []string{"claude"},
		Hooks: []Hook{{Event: "PreToolUse", Matcher: "Bash", Fields: map[string]any{"type": "agent", "prompt": "Verify the command is harmless: $ARGUMENTS"}},
			h("PostToolUse", "exit 0")},
		Turns:    []Turn{{Text: "running", Bash: []string{"touch ran_1; echo parent"}}, {Text: "after"}, {Text: "parent done"}},
		Children: []Child{{Match: "Verify the command is harmless", Turns: verifier}}}
}

// subagentCases are the cases of subagents: an agent tool call that runs a child agent,
// and the hooks that fire around and inside it. The mock scripts each child apart from
// its parent (Case.Children), matched by a phrase of its task.
// modelCase is a case whose definitions name models (name: model field), each called in
// a turn of its own under a parent running parent ("": ClaudeModel): which model each
// child's requests name (the aspect models).
func modelCase(name, parent string, models map[string]string) Case {
	c := Case{Name: name, Engines: []string{"claude"}, Model: parent, Files: map[string]string{}}
	names := slices.Sorted(maps.Keys(models))
	for i, n := range names {
		c.Files[".claude/agents/"+n+".md"] = "---\nname: " + n + "\ndescription: The " + n + " agent; use it.\nmodel: " + models[n] +
			"\n---\n\n" + DefinitionMarker + " You are the " + n + " agent.\n"
		task := fmt.Sprintf("CHILD-%c: answer", 'A'+i)
		c.Turns = append(c.Turns, Turn{Text: "delegating", Calls: []Call{agentOf(n, task)}})
		c.Children = append(c.Children, Child{Match: task[:7], Turns: []Turn{{Text: n + " answer"}}})
	}
	c.Turns = append(c.Turns, Turn{Text: "parent done"})
	return c
}

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
		// A definition's model: the engine's aliases (in any case, with "[1m]"), an alias
		// of the parent's family keeping the parent's model, the legacy Opus ids on the
		// current Opus, other ids as written, inherit and none the parent's. Three
		// children a case, before the engine's task-tools reminder.
		modelCase("subagent/model-alias", "", map[string]string{"ha": "haiku", "so": "sonnet", "op": "opus"}),
		modelCase("subagent/model-alias-names", "", map[string]string{"hy": "HAIKU", "opp": "opusplan", "in": "inherit"}),
		modelCase("subagent/model-alias-ids", "", map[string]string{"leg": "claude-opus-4-1", "raw": "nonsense-model"}),
		modelCase("subagent/model-alias-haiku", "claude-haiku-4-5", map[string]string{"ha": "haiku", "so": "Sonnet[1m]", "none": ""}),
		modelCase("subagent/model-alias-haiku-ids", "claude-haiku-4-5", map[string]string{"leg": "claude-opus-4-0", "raw": "claude-sonnet-4-0"}),
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
		// A project definition (.claude/agents/probe.md): the child's system prompt is its
		// body, its tools the frontmatter's.
		{Name: "subagent/definition", Engines: claude, Hooks: all,
			Files:    map[string]string{".claude/agents/probe.md": probeAgent("probe", "Bash, Read", "project")},
			Turns:    []Turn{{Text: "delegating", Calls: []Call{agentOf("probe", "CHILD-A: say hi")}}, {Text: "parent done"}},
			Children: []Child{child("CHILD-A", Turn{Text: "child running", Bash: []string{"echo child"}}, Turn{Text: "child answer"})}},
		// User definitions (~/.claude/agents): one the project's of the same name replaces,
		// one of its own; the unknown type's answer lists the types that loaded.
		{Name: "subagent/definition-user", Engines: claude, Hooks: all,
			HomeFiles: map[string]string{".claude/agents/probe.md": probeAgent("probe", "Bash", "user"),
				".claude/agents/uprobe.md": probeAgent("uprobe", "Read", "user-only")},
			Files: map[string]string{".claude/agents/probe.md": probeAgent("probe", "Read", "project")},
			Turns: []Turn{{Text: "delegating", Calls: []Call{agentOf("probe", "CHILD-A: say hi")}}, {Text: "again", Calls: []Call{agentOf("uprobe", "CHILD-B: say bye")}},
				{Text: "once more", Calls: []Call{agentOf("no-such-agent", "CHILD-C: x")}}, {Text: "parent done"}},
			Children: []Child{child("CHILD-A", Turn{Text: "child a answer"}), child("CHILD-B", Turn{Text: "child b answer"})}},
		// Malformed definitions beside a good one: bad YAML, no name, no description, a tools
		// list naming no tool; the unknown type's answer lists the types that loaded.
		{Name: "subagent/definition-malformed", Engines: claude, Hooks: all,
			Files: map[string]string{
				".claude/agents/good.md":     probeAgent("good", "Bash", "good"),
				".claude/agents/badyaml.md":  "---\nname: badyaml\ndescription: [unclosed\ntools: Bash\n---\n" + DefinitionMarker + " badyaml body.\n",
				".claude/agents/noname.md":   "---\ndescription: Has no name.\n---\n" + DefinitionMarker + " noname body.\n",
				".claude/agents/nodesc.md":   "---\nname: nodesc\n---\n" + DefinitionMarker + " nodesc body.\n",
				".claude/agents/badtools.md": probeAgent("badtools", "NoSuchTool", "badtools"),
				".claude/agents/notfront.md": DefinitionMarker + " a file with no frontmatter.\n",
				".claude/agents/mixtools.md": probeAgent("mixtools", "Bash, NoSuchTool", "mixtools"),
				".claude/agents/badhooks.md": "---\nname: badhooks\ndescription: Hooks of a wrong shape.\nhooks: 12\n---\n" + DefinitionMarker + " badhooks body.\n",
			},
			Turns: []Turn{{Text: "delegating", Calls: []Call{agentOf("badtools", "CHILD-A: say hi")}}, {Text: "again", Calls: []Call{agentOf("mixtools", "CHILD-B: say bye")}},
				{Text: "once more", Calls: []Call{agentOf("no-such-agent", "CHILD-C: x")}}, {Text: "parent done"}},
			Children: []Child{child("CHILD-A", Turn{Text: "child a answer"}), child("CHILD-B", Turn{Text: "child b answer"})}},
		// A definition's frontmatter hooks, in a trusted project: they run only inside its
		// child, and its Stop hook fires as SubagentStop.
		hooked("subagent/frontmatter-hooks", false, true),
		// The same in a project not trusted: claude -p loads the definition but runs none of
		// its frontmatter hooks.
		hooked("subagent/frontmatter-hooks-untrusted", false, false),
		// A user definition's frontmatter hooks (~/.claude/agents), the project not trusted:
		// they run.
		hooked("subagent/frontmatter-hooks-user", true, false),
		// A definition's disallowedTools: the child is offered every tool but those (and an
		// invalid maxTurns, which the engine ignores).
		{Name: "subagent/frontmatter-disallowed", Engines: claude, Hooks: all,
			Files: map[string]string{".claude/agents/lean.md": "---\nname: lean\ndescription: The lean agent; use it.\ndisallowedTools: Bash, Write\nmaxTurns: zero\n---\n\n" +
				DefinitionMarker + " You are the lean agent.\n"},
			Turns:    []Turn{{Text: "delegating", Calls: []Call{agentOf("lean", "CHILD-A: say hi")}}, {Text: "parent done"}},
			Children: []Child{child("CHILD-A", Turn{Text: "child answer"})}},
		// A definition's maxTurns: the child's second model turn never comes.
		{Name: "subagent/frontmatter-maxturns", Engines: claude, Hooks: all,
			Files: map[string]string{".claude/agents/short.md": "---\nname: short\ndescription: The short agent; use it.\nmaxTurns: 1\n---\n\n" +
				DefinitionMarker + " You are the short agent.\n"},
			Turns:    []Turn{{Text: "delegating", Calls: []Call{agentOf("short", "CHILD-A: say hi")}}, {Text: "parent done"}},
			Children: []Child{child("CHILD-A", Turn{Text: "child running", Bash: []string{"echo child"}}, Turn{Text: "child answer"})}},
		// A definition's background: true runs its child in the background though the call
		// asks for the foreground.
		{Name: "subagent/frontmatter-background", Engines: claude, Hooks: all,
			Files: map[string]string{".claude/agents/bg.md": "---\nname: bg\ndescription: The bg agent; use it.\nbackground: true\n---\n\n" +
				DefinitionMarker + " You are the bg agent.\n"},
			Turns:    []Turn{{Text: "delegating", Calls: []Call{agentOf("bg", "CHILD-A: say hi")}}, {Text: "parent waits"}, {Text: "parent done"}},
			Children: []Child{child("CHILD-A", Turn{Text: "child running", Bash: []string{"echo child"}}, Turn{Text: "child answer"})}},
		// The engine's own agent types, each called plainly.
		{Name: "subagent/builtin-types", Engines: claude, Hooks: all,
			Turns: []Turn{{Text: "delegating", Calls: []Call{agentOf("Explore", "CHILD-E: look")}}, {Text: "then", Calls: []Call{agentOf("Plan", "CHILD-P: plan")}},
				{Text: "then", Calls: []Call{agentOf("statusline-setup", "CHILD-S: status")}}, {Text: "then", Calls: []Call{agentOf("claude", "CHILD-C: catch")}}, {Text: "parent done"}},
			Children: []Child{child("CHILD-E", Turn{Text: "explored"}), child("CHILD-P", Turn{Text: "planned"}), child("CHILD-S", Turn{Text: "set up"}),
				child("CHILD-C", Turn{Text: "caught"})}},
		// An agent hook (a verifier subagent) at PreToolUse: the verifier calls
		// StructuredOutput with ok:true, which lets the command run.
		agentHook("subagent/agent-hook", Turn{Text: "verifying", Calls: []Call{{Name: "StructuredOutput", Input: map[string]any{"ok": true, "reason": "harmless"}}}}),
		// The verifier answers ok:false: the command is blocked with its reason.
		agentHook("subagent/agent-hook-deny", Turn{Text: "verifying", Calls: []Call{{Name: "StructuredOutput", Input: map[string]any{"ok": false, "reason": "not harmless"}}}}),
		// The verifier answers with text and never calls StructuredOutput, even when the
		// engine asks it again.
		agentHook("subagent/agent-hook-no-verdict", Turn{Text: "no verdict from me"}, Turn{Text: "still none"}),
		// The verifier calls Read and Bash before it answers: which of the session's hooks
		// fire for its calls, and whether the agent hook at PreToolUse[Bash] starts a
		// verifier of the verifier's Bash call.
		{Name: "subagent/agent-hook-tools", Engines: claude,
			Files: map[string]string{"notes.txt": "a note\n"},
			Hooks: []Hook{{Event: "PreToolUse", Matcher: "Bash", Fields: map[string]any{"type": "agent", "prompt": "Verify the command is harmless: $ARGUMENTS"}},
				h("PreToolUse", "exit 0"), h("PostToolUse", "exit 0"), h("PostToolUseFailure", "exit 0"), h("PermissionDenied", "exit 0"),
				h("SubagentStart", "exit 0"), h("SubagentStop", "exit 0"), h("Stop", "exit 0")},
			Turns: []Turn{{Text: "running", Bash: []string{"touch ran_1; echo parent"}}, {Text: "after"}, {Text: "parent done"}},
			Children: []Child{{Match: "Verify the command is harmless", Turns: []Turn{
				{Text: "checking", Bash: []string{"touch verifier_ran; echo verifier"}, Calls: []Call{{Name: "Read", Input: map[string]any{"file_path": "{{ws}}/notes.txt"}}}},
				{Text: "verifying", Calls: []Call{{Name: "StructuredOutput", Input: map[string]any{"ok": true, "reason": "harmless"}}}},
				{Text: "verifying again", Calls: []Call{{Name: "StructuredOutput", Input: map[string]any{"ok": true, "reason": "harmless too"}}}}}}}},
		// A PreToolUse deny that only the child's Bash call meets.
		{Name: "subagent/deny-inside", Engines: claude,
			Hooks:    append([]Hook{{Event: "PreToolUse", Matcher: "Bash", Script: "echo 'no shell in children' >&2; exit 2"}}, all[1:]...),
			Turns:    []Turn{{Text: "delegating", Calls: []Call{agent("probe", "CHILD-A: say hi", fg)}}, {Text: "parent done"}},
			Children: []Child{child("CHILD-A", Turn{Text: "child running", Bash: []string{"touch child_ran"}}, Turn{Text: "child answer"})}},
	}
}
