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
	}
}
