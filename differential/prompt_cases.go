package differential

// promptCases are the cases of what reaches the model besides the prompt: slash commands
// (Claude Code's .claude/commands), instruction files (CLAUDE.md and its @imports; Codex's
// AGENTS.md; Gemini CLI's GEMINI.md) and the system-prompt flags, with UserPromptExpansion.
// The instruction cases observe the request; instructions/loaded (and the compact/*
// -instructions cases) the InstructionsLoaded hooks too.
func promptCases() []Case {
	const U, UPE = "UserPromptSubmit", "UserPromptExpansion"
	claude, codex, gemini := []string{"claude"}, []string{"codex"}, []string{"gemini"}
	trust := []string{"--trust"} // dsh reads the project's commands only when trusted
	greet := map[string]string{".claude/commands/greet.md": "---\ndescription: greets\nargument-hint: NAME\n---\nSay hello to $ARGUMENTS; first $0, second $1, third $2.\n"}
	return []Case{
		// The prompt "/greet alice bob" becomes the command's two text blocks; the
		// UserPromptSubmit hook sees the prompt as typed.
		{Name: "command/args", Engines: claude, Turns: textOnly, First: "/greet alice bob", Files: greet, DshArgs: trust,
			Hooks: []Hook{h(U, "exit 0"), h(UPE, "exit 0")}},
		// UserPromptExpansion: a block makes no model call; a context comes before the
		// command's text; the matcher tests the command's name.
		{Name: "command/expansion-block", Engines: claude, Turns: textOnly, First: "/greet alice", Files: greet, DshArgs: trust,
			Hooks: []Hook{h(UPE, js(`{"decision":"block","reason":"no greetings"}`)), h(U, "exit 0")}},
		{Name: "command/expansion-exit2", Engines: claude, Turns: textOnly, First: "/greet alice", Files: greet, DshArgs: trust,
			Hooks: []Hook{h(UPE, "echo 'not this one' >&2; exit 2")}},
		{Name: "command/expansion-context", Engines: claude, Turns: textOnly, First: "/greet alice", Files: greet, DshArgs: trust,
			Hooks: []Hook{h(UPE, js(`{"hookSpecificOutput":{"hookEventName":"UserPromptExpansion","additionalContext":"expansion context"}}`)),
				h(U, js(`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"submit context"}}`))}},
		{Name: "command/expansion-matcher", Engines: claude, Turns: textOnly, First: "/greet alice", Files: greet, DshArgs: trust,
			Hooks: []Hook{{Event: UPE, Matcher: "greet", Script: "exit 0"}, {Event: UPE, Matcher: "other", Script: "exit 0"}}},
		// A command without placeholders gets the arguments appended.
		{Name: "command/append-args", Engines: claude, Turns: textOnly, First: "/plain one two", DshArgs: trust,
			Files: map[string]string{".claude/commands/plain.md": "Do the plain thing.\n"}},
		// A user command in a subdirectory is /dir:name; without arguments, no arguments line.
		{Name: "command/namespaced-user", Engines: claude, Turns: textOnly, First: "/tools:hi",
			HomeFiles: map[string]string{".claude/commands/tools/hi.md": "Say hi.\n"}, Hooks: []Hook{h(U, "exit 0"), h(UPE, "exit 0")}},
		// A name no file has goes to the model as it is.
		{Name: "command/unknown", Engines: claude, Turns: textOnly, First: "/nosuch alice", DshArgs: trust, Files: greet,
			Hooks: []Hook{h(U, "exit 0"), h(UPE, "exit 0")}},
		// A piped stdin beside the prompt argument (echo data | claude -p "summarize"): each
		// engine joins the two into the first user message in its own way; the
		// UserPromptSubmit hook sees the joined prompt.
		{Name: "cli/stdin-and-prompt", Engines: claude, Turns: textOnly, Stdin: "piped line one\npiped line two\n", Hooks: []Hook{h(U, "exit 0")}},
		{Name: "cli/codex-stdin-and-prompt", Engines: codex, Turns: textOnly, Stdin: "piped line one\npiped line two", Hooks: []Hook{h(U, "exit 0")}},
		{Name: "gemini/cli/stdin-and-prompt", Engines: gemini, Turns: textOnly, Stdin: "piped line one\npiped line two\n", Hooks: []Hook{h("BeforeAgent", "exit 0")}},
		{Name: "instructions/claude-md-import", Engines: claude, Turns: textOnly, Probes: []string{"ALPHA", "BETA"},
			Files: map[string]string{"CLAUDE.md": "Project rule ALPHA.\n@notes.md\n", "notes.md": "Imported rule BETA.\n"}},
		// Every scope in the engine's order: the user's file, a parent directory's, the
		// workspace's CLAUDE.md with its import (whose import back is a cycle, read once,
		// and whose import outside the workspace is not read), .claude/CLAUDE.md and
		// CLAUDE.local.md.
		{Name: "instructions/all-scopes", Engines: claude, Turns: textOnly, Probes: []string{"ONE", "TWO", "LOCAL", "DOTCLAUDE", "PARENT", "OUTSIDE", "USER"},
			Files: map[string]string{"CLAUDE.md": "Rule ONE.\n@sub/two.md\n", "sub/two.md": "Rule TWO.\n@../CLAUDE.md\n@../../outside.md\n",
				"CLAUDE.local.md": "Rule LOCAL.\n", ".claude/CLAUDE.md": "Rule DOTCLAUDE.\n", "../CLAUDE.md": "Rule PARENT.\n", "../outside.md": "Rule OUTSIDE.\n"},
			HomeFiles: map[string]string{".claude/CLAUDE.md": "Rule USER.\n"}},
		// InstructionsLoaded: one run per file the engine loads, in its order, with why.
		{Name: "instructions/loaded", Engines: claude, Turns: textOnly, Concurrent: []string{"InstructionsLoaded-1"}, Probes: []string{"ONE", "TWO", "LOCAL", "DOTCLAUDE", "PARENT", "USER", "THREE"},
			Files: map[string]string{"CLAUDE.md": "Rule ONE.\n@sub/two.md\n", "sub/two.md": "Rule TWO.\n@three.md\n", "sub/three.md": "Rule THREE.\n",
				"CLAUDE.local.md": "Rule LOCAL.\n", ".claude/CLAUDE.md": "Rule DOTCLAUDE.\n", "../CLAUDE.md": "Rule PARENT.\n"},
			HomeFiles: map[string]string{".claude/CLAUDE.md": "Rule USER.\n"},
			Hooks:     []Hook{h("InstructionsLoaded", "exit 0"), h("SessionStart", "exit 0"), h(U, "exit 0")}},
		{Name: "instructions/agents-md", Engines: codex, Turns: textOnly, Probes: []string{"ALPHA"},
			Files: map[string]string{"AGENTS.md": "Project rule ALPHA.\n"}},
		{Name: "instructions/gemini-md", Engines: gemini, Turns: textOnly, Probes: []string{"ALPHA"},
			Files: map[string]string{"GEMINI.md": "Project rule ALPHA.\n"}},
		{Name: "system/append", Engines: claude, Turns: textOnly, Probes: []string{"GAMMA"},
			Args: []string{"--append-system-prompt", "Appended rule GAMMA."}},
		{Name: "system/replace", Engines: claude, Turns: textOnly, Probes: []string{"DELTA"},
			Args: []string{"--system-prompt", "Replaced prompt DELTA."}},
	}
}
