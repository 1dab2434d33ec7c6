package differential

// OpusModel is Claude Code's default model, for which the engine sends hook contexts
// (and its environment block) as messages of role "system" rather than as
// <system-reminder> user text (Case.Model).
const OpusModel = "claude-opus-5-5"

// channelCases are the cases of the context channel per model: the same hooks as the
// session/, prompt/, pre/, post/ and stop/ cases of contexts and blocks, with Claude
// Code's default model, whose contexts travel as "system" messages.
func channelCases() []Case {
	claude := []string{"claude"}
	c := func(name string, turns []Turn, hooks ...Hook) Case {
		return Case{Name: "channel/" + name, Engines: claude, Model: OpusModel, Turns: turns, Hooks: hooks}
	}
	return []Case{
		c("session-context", oneCall, h("SessionStart", js(`{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"session context"}}`))),
		c("session-stdout", oneCall, h("SessionStart", "echo 'startup words'")),
		c("prompt-context", oneCall, h("UserPromptSubmit", js(`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"prompt context"}}`))),
		c("pre-context", oneCall, h("PreToolUse", js(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"pre context"}}`))),
		c("post-context", oneCall, h("PostToolUse", js(`{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"post context"}}`))),
		c("post-block", oneCall, h("PostToolUse", js(`{"decision":"block","reason":"post block reason"}`))),
		c("stop-block-once", textOnly, h("Stop", once("s", js(`{"decision":"block","reason":"not yet"}`)))),
		c("plain", oneCall, h("PreToolUse", "exit 0")),
		// The stdin of the other events (its effort field differs per event).
		c("events", append(append([]Turn{}, failing[0]), oneCall...), h("PostToolUse", "exit 0"), h("PostToolUseFailure", "exit 0"),
			h("PostToolBatch", "exit 0"), h("Stop", "exit 0"), h("SessionEnd", "exit 0")),
		// A turn that ends on a model error (StopFailure's stdin has effort too).
		{Name: "channel/failure", Engines: claude, Model: OpusModel, Turns: []Turn{oneCall[0], {Fail: true}}, EngineUntil: "StopFailure-1",
			Hooks: []Hook{h("StopFailure", failed+"exit 0"), h("PreToolUse", "exit 0"), awaitFailed}},
		// The withdrawal holds for the failing step only: the next run offers ToolSearch
		// again, without the withdrawal's message. (No StopFailure hook: in the second run
		// the engine may kill it before it ends, which the suite cannot wait for.)
		{Name: "channel/failure-next", Engines: claude, Model: OpusModel, Turns: []Turn{{Fail: true}}, Prompts: []string{"Next task."},
			Hooks: []Hook{h("UserPromptSubmit", "exit 0")}},
		{Name: "channel/permission", Engines: claude, Model: OpusModel, AskPermission: true, Turns: escalated,
			Hooks: []Hook{h("PermissionRequest", js(`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`)), h("Notification", "exit 0")}},
		{Name: "channel/expansion", Engines: claude, Model: OpusModel, Turns: textOnly, First: "/greet alice",
			Files: map[string]string{".claude/commands/greet.md": "---\ndescription: greets\n---\nSay hello to $ARGUMENTS.\n"}, DshArgs: []string{"--trust"},
			Hooks: []Hook{h("UserPromptExpansion", "exit 0")}},
	}
}
