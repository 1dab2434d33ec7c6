package differential

// eventCases are the cases of the events that fire around the turn rather than at one
// tool call: Codex's PreModelRequest, Interrupt and SessionEnd (an interrupt is SIGINT to
// the run, Case.Interrupt), Claude Code's PostToolBatch and PermissionDenied.
func eventCases() []Case {
	codex := []string{"codex"}
	sysMsg := js(`{"systemMessage":"noted"}`)
	claude := []string{"claude"}
	return []Case{
		// PostToolBatch fires once after the batch's PostToolUse hooks, with every call and
		// the text of its result; its matcher is ignored (one naming no tool of the batch
		// runs too).
		{Name: "batch/observe", Engines: claude, Turns: twoCalls, Hooks: []Hook{
			h("PostToolBatch", "exit 0"), h("PostToolUse", "exit 0"),
			{Event: "PostToolBatch", Matcher: "Read", Script: "exit 0"}}},
		// Its additionalContext reaches the next request after the results.
		{Name: "batch/context", Engines: claude, Turns: twoCalls, Hooks: []Hook{
			h("PostToolBatch", js(`{"hookSpecificOutput":{"hookEventName":"PostToolBatch","additionalContext":"batch context"}}`))}},
		// A block, exit 2 and continue:false each end the turn before the next request.
		{Name: "batch/block", Engines: claude, Turns: twoCalls, Hooks: []Hook{
			h("PostToolBatch", js(`{"decision":"block","reason":"batch blocked"}`)), h("Stop", "exit 0")}},
		{Name: "batch/exit2", Engines: claude, Turns: twoCalls, Hooks: []Hook{
			h("PostToolBatch", "echo batch says no >&2; exit 2"), h("Stop", "exit 0")}},
		{Name: "batch/halt", Engines: claude, Turns: twoCalls, Hooks: []Hook{
			h("PostToolBatch", js(`{"continue":false,"stopReason":"batch halted"}`))}},
		// A one-call batch fires it too; plain stdout is not a context.
		{Name: "batch/one-call", Engines: claude, Turns: oneCall, Hooks: []Hook{h("PostToolBatch", "echo plain words")}},
		// PermissionDenied fires only for the auto mode classifier's denials: a headless
		// ask that no one answers does not fire it, in the engine or in dsh.
		{Name: "perm/denied-never", Engines: claude, AskPermission: true, Turns: oneCall, Hooks: []Hook{
			h("PermissionDenied", "exit 0"), h("PermissionRequest", "exit 0")}},

		// PreModelRequest fires before each model request and only observes; SessionEnd
		// fires once when the run is done, reason "other".
		{Name: "codex/pre-model-request", Engines: codex, Turns: oneCall, Hooks: []Hook{
			h("PreModelRequest", "exit 0"), h("SessionEnd", "exit 0"), h("Stop", "exit 0")}},
		// Neither a halt nor exit 2 of a PreModelRequest hook changes the request.
		{Name: "codex/pre-model-request-halt", Engines: codex, Turns: oneCall, Hooks: []Hook{
			h("PreModelRequest", js(`{"continue":false,"stopReason":"no model for you"}`))}},
		{Name: "codex/pre-model-request-exit2", Engines: codex, Turns: oneCall, Hooks: []Hook{
			h("PreModelRequest", "echo nope >&2; exit 2"), h("SessionEnd", sysMsg)}},
		// SIGINT while a PreToolUse hook runs: Interrupt fires for the turn, then
		// SessionEnd; Stop does not.
		{Name: "codex/interrupt", Engines: codex, Turns: oneCall, Interrupt: true, Hooks: []Hook{
			h("PreToolUse", "touch {{state}}/interrupt; sleep 3"), h("Interrupt", sysMsg), h("SessionEnd", "exit 0"), h("Stop", "exit 0")}},
		// additionalContextLimit (a command handler's field): a context longer than the
		// limit is spilled to a file, and the model reads what the engine puts in its place.
		{Name: "codex/context-limit", Engines: codex, Turns: oneCall, Hooks: []Hook{
			{Event: "SessionStart", Script: longContext("SessionStart", "session", 400, false), Fields: map[string]any{"additionalContextLimit": 100}},
			{Event: "UserPromptSubmit", Script: longContext("UserPromptSubmit", "prompt", 400, true), Fields: map[string]any{"additionalContextLimit": 60}},
			{Event: "PostToolUse", Script: longContext("PostToolUse", "post", 400, false), Fields: map[string]any{"additionalContextLimit": 20}}}},
		// Contexts within the limit (the second one within it only with the footer left
		// out), and a limit of 0.
		{Name: "codex/context-limit-within", Engines: codex, Turns: oneCall, Hooks: []Hook{
			{Event: "SessionStart", Script: longContext("SessionStart", "session", 100, false), Fields: map[string]any{"additionalContextLimit": 80}},
			{Event: "UserPromptSubmit", Script: js(`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"short"}}`), Fields: map[string]any{"additionalContextLimit": 5}},
			{Event: "PostToolUse", Script: longContext("PostToolUse", "zero", 400, false), Fields: map[string]any{"additionalContextLimit": 0}},
			{Event: "Stop", Script: "exit 0", Fields: map[string]any{"additionalContextLimit": 3}}}},
		// A run no one interrupts fires no Interrupt.
		{Name: "codex/no-interrupt", Engines: codex, Turns: oneCall, Hooks: []Hook{
			h("Interrupt", "exit 0"), h("Stop", "exit 0")}},
	}
}

// setupCases are the cases of Claude Code's Setup hooks: --init-only runs Setup (trigger
// init), then SessionStart, and no turn; --init runs a turn after them, Setup's context
// in its first request.
func setupCases() []Case {
	claude := []string{"claude"}
	return []Case{
		{Name: "setup/init-only", Engines: claude, Args: []string{"--init-only"}, Turns: oneCall, Hooks: []Hook{
			h("Setup", "exit 0"), h("SessionStart", "exit 0"), h("Stop", "exit 0")}},
		{Name: "setup/init-context", Engines: claude, Args: []string{"--init"}, Turns: oneCall, Hooks: []Hook{
			{Event: "Setup", Matcher: "init", Script: js(`{"hookSpecificOutput":{"hookEventName":"Setup","additionalContext":"setup context"}}`)},
			{Event: "Setup", Matcher: "maintenance", Script: "echo never >&2; exit 2"}, h("SessionStart", "exit 0")}},
		{Name: "setup/maintenance", Engines: claude, Args: []string{"--maintenance"}, Turns: oneCall, Hooks: []Hook{
			h("Setup", "exit 0"), h("SessionStart", "exit 0")}},
	}
}

// longContext is a hook script printing event's additionalContext: word, then the numbers 1
// to n, separated by spaces, or one a line.
func longContext(event, word string, n int, lines bool) string {
	join := "paste -sd ' ' -"
	if lines {
		join = `paste -sd '|' - | sed 's/|/\\n/g'`
	}
	return `printf '{"hookSpecificOutput":{"hookEventName":"` + event + `","additionalContext":"%s"}}\n' "$( (echo ` + word + `; seq 1 ` + itoa(n) + `) | ` + join + `)"`
}
