package differential

// eventCases are the cases of the events that fire around the turn rather than at one
// tool call: Codex's PreModelRequest, Interrupt and SessionEnd (an interrupt is SIGINT to
// the run, Case.Interrupt), Claude Code's PostToolBatch and PermissionDenied.
func eventCases() []Case {
	codex := []string{"codex"}
	sysMsg := js(`{"systemMessage":"noted"}`)
	return []Case{
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
		// A run no one interrupts fires no Interrupt.
		{Name: "codex/no-interrupt", Engines: codex, Turns: oneCall, Hooks: []Hook{
			h("Interrupt", "exit 0"), h("Stop", "exit 0")}},
	}
}
