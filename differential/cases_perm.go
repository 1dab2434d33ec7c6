package differential

// permTurns are the calls the permission cases make, one per turn: a Read and an Edit of
// a file the case's Files wrote (the engine edits only a file read first), a Write and a
// shell command that writes (touch). (Five requests: a sixth would bring the engine's
// reminder of its task tools.)
var permTurns = []Turn{
	{Text: "reading", Calls: []Call{{Name: "Read", Input: map[string]any{"file_path": "{{ws}}/notes.txt"}}}},
	{Text: "editing", Calls: []Call{{Name: "Edit", Input: map[string]any{"file_path": "{{ws}}/notes.txt", "old_string": "alpha", "new_string": "gamma"}}}},
	{Text: "writing", Calls: []Call{{Name: "Write", Input: map[string]any{"file_path": "{{ws}}/w.txt", "content": "written\n"}}}},
	{Text: "shell", Bash: []string{"touch ran_1; echo out1"}},
	{Text: "finished"},
}

// permCase is a Claude Code case of permTurns under --permission-mode mode (none: the
// suite's --dangerously-skip-permissions) with the project settings' permissions block
// (none when empty); trust trusts the workspace on both sides (Case.TrustProject).
func permCase(name, mode, permissions string, trust bool) Case {
	c := Case{Name: "permissions/" + name, Engines: []string{"claude"}, Turns: permTurns, TrustProject: trust,
		Files: map[string]string{"notes.txt": "alpha\nbeta\n"},
		Hooks: []Hook{h("PostToolUse", "exit 0"), h("PermissionDenied", "exit 0")}}
	if mode != "" {
		c.Args = []string{"--permission-mode", mode}
	}
	if permissions != "" {
		c.Files[".claude/settings.json"] = `{"permissions":` + permissions + "}\n"
	}
	return c
}

// permissionCases are the cases of Claude Code's permission modes and rules, headless:
// what each mode lets run, what the model reads of a refusal, and how allow, ask and deny
// rules of the project's settings combine (deny, then ask, then allow), in a trusted
// workspace and in one that is not (whose allow rules both ignore).
func permissionCases() []Case {
	return []Case{
		permCase("mode-default", "default", "", false),
		permCase("mode-accept-edits", "acceptEdits", "", false),
		permCase("mode-plan", "plan", "", false),
		permCase("mode-bypass", "bypassPermissions", "", false),
		permCase("mode-dont-ask", "dontAsk", "", false),
		permCase("allow-rules", "default", `{"allow":["Bash(touch *)","Bash(echo *)","Write(w.txt)","Edit"]}`, true),
		permCase("allow-untrusted", "default", `{"allow":["Bash(touch *)","Write(w.txt)","Edit"]}`, false),
		permCase("deny-rules", "bypassPermissions", `{"deny":["Bash(touch *)","Write","Edit(./notes.txt)"]}`, false),
		permCase("ask-rules", "acceptEdits", `{"ask":["Edit","Bash(touch *)"]}`, false),
		permCase("deny-beats-allow", "default", `{"allow":["Bash","Write","Edit"],"deny":["Bash(touch *)","Edit(notes.txt)"]}`, true),
		permCase("ask-beats-allow", "default", `{"allow":["Bash","Write"],"ask":["Write"]}`, true),
		// A PermissionRequest hook answers what a rule or the mode asks for: its allow runs
		// the call (a deny rule's call never reaches it).
		func() Case {
			c := permCase("ask-answered", "default", `{"ask":["Bash(touch *)"],"deny":["Edit"]}`, false)
			c.Hooks = append(c.Hooks, h("PermissionRequest", js(`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`)))
			return c
		}(),
	}
}
