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
		// An exec_command asking for unsandboxed execution when no approval is asked (codex
		// exec runs under approval policy never, whatever config.toml says): refused, after
		// PreToolUse; then a plain command runs.
		{Name: "codex/escalate-never", Engines: codex, Hooks: hooks, Turns: []Turn{
			{Text: "escalating", Bash: []string{"touch ran_esc; echo esc"}, Escalate: true},
			{Text: "plain", Bash: []string{"touch ran_1; echo out1"}},
			{Text: "finished"}}},
		// The shell tools of other models, called although the request does not offer them:
		// what Codex answers and what its hooks see.
		{Name: "codex/legacy-shell", Engines: codex, Hooks: hooks, Turns: []Turn{
			{Text: "shell", Calls: []Call{{Name: "shell", Input: map[string]any{"command": []string{"bash", "-lc", "echo legacy"}}}}},
			{Text: "shell_command", Calls: []Call{{Name: "shell_command", Input: map[string]any{"command": "echo sc"}}}},
			{Text: "finished"}}},
	}
}

// CodexCatalogModel is a model of Codex 0.169.0's built-in catalog (not one of its
// code-mode-only models): Codex offers it its freeform apply_patch and tool_search beside
// the unknown model's tools, less multi_agent_v1 (spec/toolsets/codex.json's rows with
// "only", and its models).
const CodexCatalogModel = "gpt-5.5"

// codexCatalogCases are the cases of the tools Codex offers the models of its catalog
// (CodexCatalogModel): apply_patch in Codex's patch grammar (a freeform tool: the call's
// text is the patch) with bad input, the hooks' matchers for it, and the tools that model
// is not offered.
func codexCatalogCases() []Case {
	codex := []string{"codex"}
	patch := func(body string) Call { return Call{Name: "apply_patch", Input: map[string]any{"input": body}} }
	exec := func(cmd string) Call { return Call{Name: "exec_command", Input: map[string]any{"cmd": cmd}} }
	hooks := []Hook{h("PreToolUse", "exit 0"), h("PostToolUse", "exit 0")}
	cat := func(c Case) Case { c.Engines, c.Model = codex, CodexCatalogModel; return c }
	return []Case{
		// Add, update (a chunk at the end of the file), delete, move, then the files as they
		// ended up.
		cat(Case{Name: "codex/apply-patch", Hooks: hooks, Turns: []Turn{
			{Text: "adding", Calls: []Call{patch("*** Begin Patch\n*** Add File: ran_a.txt\n+alpha\n+beta\n+gamma\n*** Add File: ran_gone.txt\n+bye\n*** End Patch")}},
			{Text: "updating", Calls: []Call{patch("*** Begin Patch\n*** Update File: ran_a.txt\n@@\n alpha\n-beta\n+BETA\n gamma\n+delta\n*** End of File\n*** Delete File: ran_gone.txt\n*** End Patch")}},
			{Text: "moving", Calls: []Call{patch("*** Begin Patch\n*** Update File: ran_a.txt\n*** Move to: ran_b.txt\n@@ alpha\n-BETA\n+beta2\n*** End Patch")}},
			{Text: "reading", Calls: []Call{exec("ls; cat ran_b.txt")}},
			{Text: "finished"}}}),
		// Patches that do not parse (no hook runs), that do not apply (a hunk or a context
		// that does not match, a file to update or delete that is missing or a directory, a
		// later hunk failing: nothing written), an empty one, and an Add of a file that
		// exists (replaced).
		cat(Case{Name: "codex/apply-patch-bad", Hooks: hooks, Files: map[string]string{"sub/keep.txt": "k\n"}, Turns: []Turn{
			{Text: "malformed", Calls: []Call{patch("*** Begin Patch\n*** Frobnicate File: x\n*** End Patch")}},
			{Text: "no end", Calls: []Call{patch("*** Begin Patch\n*** Add File: ran_x.txt\n+x\n")}},
			{Text: "add without plus", Calls: []Call{patch("*** Begin Patch\n*** Add File: ran_s.txt\none\n*** End Patch")}},
			{Text: "empty update", Calls: []Call{patch("*** Begin Patch\n*** Update File: ran_s.txt\n*** End Patch")}},
			{Text: "seed", Calls: []Call{patch("*** Begin Patch\n*** Add File: ran_s.txt\n+one\n+two\n*** End Patch")}},
			{Text: "no match", Calls: []Call{patch("*** Begin Patch\n*** Update File: ran_s.txt\n@@\n-three\n+four\n*** End Patch")}},
			{Text: "no context", Calls: []Call{patch("*** Begin Patch\n*** Update File: ran_s.txt\n@@ nothere\n-one\n+ONE\n*** End Patch")}},
			{Text: "missing", Calls: []Call{patch("*** Begin Patch\n*** Update File: ran_missing.txt\n@@\n-a\n+b\n*** End Patch")}},
			{Text: "delete missing", Calls: []Call{patch("*** Begin Patch\n*** Delete File: ran_missing.txt\n*** End Patch")}},
			{Text: "delete dir", Calls: []Call{patch("*** Begin Patch\n*** Delete File: sub\n*** End Patch")}},
			{Text: "partial", Calls: []Call{patch("*** Begin Patch\n*** Add File: ran_p.txt\n+p\n*** Update File: ran_s.txt\n@@\n-zzz\n+y\n*** End Patch")}},
			{Text: "empty", Calls: []Call{patch("*** Begin Patch\n*** End Patch")}},
			{Text: "add existing", Calls: []Call{patch("*** Begin Patch\n*** Add File: ran_s.txt\n+new\n*** End Patch")}},
			{Text: "reading", Calls: []Call{exec("ls; cat ran_s.txt")}},
			{Text: "finished"}}}),
		// Paths outside the workspace, relative and absolute: Codex writes there when its
		// sandbox lets it; dsh refuses.
		cat(Case{Name: "codex/apply-patch-escape", Hooks: hooks, Turns: []Turn{
			{Text: "escape", Calls: []Call{patch("*** Begin Patch\n*** Add File: ../ran_escaped.txt\n+out\n*** End Patch")}},
			{Text: "absolute", Calls: []Call{patch("*** Begin Patch\n*** Add File: {{ws}}/../ran_abs.txt\n+out\n*** End Patch")}},
			{Text: "reading", Calls: []Call{exec("ls .. | grep ran_ || echo none")}},
			{Text: "finished"}}}),
		// Which matchers fire for apply_patch.
		cat(Case{Name: "codex/apply-patch-matchers", Turns: []Turn{
			{Text: "patching", Calls: []Call{patch("*** Begin Patch\n*** Add File: ran_m.txt\n+m\n*** End Patch")}},
			{Text: "finished"}}, Hooks: []Hook{
			{Event: "PreToolUse", Matcher: "^apply_patch$", Script: "exit 0"},
			{Event: "PreToolUse", Matcher: "^Edit$", Script: "exit 0"},
			{Event: "PreToolUse", Matcher: "^Write$", Script: "exit 0"},
			{Event: "PreToolUse", Matcher: "^Bash$", Script: "exit 0"},
			{Event: "PostToolUse", Matcher: "apply_patch|Edit|Write", Script: "exit 0"}}}),
		// Tools that model is not offered (shell_command and update_plan, which its catalog
		// entry names, and the other engines' shell tools), called anyway.
		cat(Case{Name: "codex/catalog-foreign", Hooks: hooks, Turns: []Turn{
			{Text: "shell_command", Calls: []Call{{Name: "shell_command", Input: map[string]any{"command": "echo sc"}}}},
			{Text: "update_plan", Calls: []Call{{Name: "update_plan", Input: map[string]any{"plan": []any{map[string]any{"step": "one", "status": "completed"}}}}}},
			{Text: "claude", Calls: []Call{{Name: "Bash", Input: map[string]any{"command": "echo b"}}}},
			{Text: "gemini", Calls: []Call{{Name: "run_shell_command", Input: map[string]any{"command": "echo g"}}}},
			{Text: "finished"}}}),
	}
}
