package differential

// codexToolCases are the cases of Codex's own tools, scripted as the raw calls the engine
// offers the model (exec_command, write_stdin): a command still running after its yield
// time and polled with write_stdin, and a write_stdin to a session that has finished.
func codexToolCases() []Case {
	codex := []string{"codex"}
	exec := func(in map[string]any) Call { return Call{Name: "exec_command", Input: in} }
	stdin := func(in map[string]any) Call { return Call{Name: "write_stdin", Input: in} }
	hooks := []Hook{h("PreToolUse", "exit 0"), h("PostToolUse", "exit 0")}
	return []Case{
		// A command that outlives its yield time answers with a session; an empty
		// write_stdin then polls it until it exits.
		{Name: "codex/write-stdin-poll", Engines: codex, Hooks: hooks, Turns: []Turn{
			{Text: "starting", Calls: []Call{exec(map[string]any{"cmd": "echo first; sleep 2; echo second", "yield_time_ms": 500})}},
			{Text: "polling", Calls: []Call{stdin(map[string]any{"session_id": "{{session}}", "chars": "", "yield_time_ms": 10000})}},
			{Text: "finished"}}},
		// A write_stdin to a session whose command has exited, and to one never started.
		{Name: "codex/write-stdin-finished", Engines: codex, Hooks: hooks, Turns: []Turn{
			{Text: "starting", Calls: []Call{exec(map[string]any{"cmd": "echo done"})}},
			{Text: "writing", Calls: []Call{stdin(map[string]any{"session_id": 1000, "chars": "x\n"})}},
			{Text: "writing again", Calls: []Call{stdin(map[string]any{"session_id": 4242, "chars": ""})}},
			{Text: "finished"}}},
		// Writing to a command that runs without a tty (its stdin is closed), then to one
		// with a tty.
		{Name: "codex/write-stdin-pipe", Engines: codex, Hooks: hooks, Turns: []Turn{
			{Text: "starting", Calls: []Call{exec(map[string]any{"cmd": "sleep 2; echo slept", "yield_time_ms": 300})}},
			{Text: "writing", Calls: []Call{stdin(map[string]any{"session_id": "{{session}}", "chars": "abc\n", "yield_time_ms": 3000})}},
			{Text: "finished"}}},
		{Name: "codex/write-stdin-tty", Engines: codex, Hooks: hooks, Turns: []Turn{
			{Text: "starting", Calls: []Call{exec(map[string]any{"cmd": "read x; echo got $x", "tty": true, "yield_time_ms": 500})}},
			{Text: "writing", Calls: []Call{stdin(map[string]any{"session_id": "{{session}}", "chars": "abc\n", "yield_time_ms": 2000})}},
			{Text: "finished"}}},
		// Output over the call's max_output_tokens, and over the default budget.
		{Name: "codex/exec-truncate", Engines: codex, Hooks: hooks, Turns: []Turn{
			{Text: "small budget", Calls: []Call{exec(map[string]any{"cmd": "seq 1 400", "max_output_tokens": 50})}},
			{Text: "default budget", Calls: []Call{exec(map[string]any{"cmd": "seq 1 20000"})}},
			{Text: "finished"}}},
		// Which matchers fire for an exec_command call: Codex's name for the hooks is
		// "Bash"; the others are names a matcher might try.
		{Name: "codex/exec-matchers", Engines: codex, Turns: oneCall, Hooks: []Hook{
			{Event: "PreToolUse", Matcher: "^Bash$", Script: "exit 0"},
			{Event: "PreToolUse", Matcher: "^exec_command$", Script: "exit 0"},
			{Event: "PreToolUse", Matcher: "^shell$", Script: "exit 0"},
			{Event: "PreToolUse", Matcher: "^unified_exec$", Script: "exit 0"},
			{Event: "PreToolUse", Matcher: "^local_shell$", Script: "exit 0"},
			{Event: "PreToolUse", Matcher: "^shell_command$", Script: "exit 0"},
			{Event: "PostToolUse", Matcher: "exec_command|shell", Script: "exit 0"}}},
		// The shell tools of other models, called although the request does not offer them:
		// what Codex answers and what its hooks see.
		{Name: "codex/legacy-shell", Engines: codex, Hooks: hooks, Turns: []Turn{
			{Text: "shell", Calls: []Call{{Name: "shell", Input: map[string]any{"command": []string{"bash", "-lc", "echo legacy"}}}}},
			{Text: "shell_command", Calls: []Call{{Name: "shell_command", Input: map[string]any{"command": "echo sc"}}}},
			{Text: "finished"}}},
	}
}
