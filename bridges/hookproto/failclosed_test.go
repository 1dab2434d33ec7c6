package hookproto

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
)

// A Gemini CLI deny guard whose matcher is a JavaScript lookahead fires, as the engine
// runs it (`new RegExp("^(?!read_file$)")`): before, RE2 rejected it and it was compared
// as the exact string, so the guard never ran and the command executed.
func TestGeminiLookaheadGuardFires(t *testing.T) {
	if _, err := os.Stat("/bin/bash"); err != nil {
		t.Skip("no bash")
	}
	c, diags := loadGemini(t, map[string]any{"hooks": map[string]any{"BeforeTool": []any{
		map[string]any{"matcher": "^(?!read_file$)", "hooks": []any{
			map[string]any{"type": "command", "command": `echo '{"decision":"deny","reason":"only read_file"}'`},
		}},
	}}})
	if len(diags) != 0 {
		t.Fatalf("diagnostics %v: a JavaScript lookahead is a valid Gemini CLI matcher", diags)
	}
	g := &hookmap.Gemini
	e := &Engine{Table: g, Config: c, Shell: g.Shell, Dir: t.TempDir()}
	fire := func(tool string) *Report {
		stdin := []byte(`{"session_id":"s","cwd":"/tmp","hook_event_name":"BeforeTool","tool_name":"` + tool + `","tool_input":{}}`)
		return e.Fire(context.Background(), Fire{Event: "BeforeTool", Subject: tool, Stdin: stdin})
	}
	if rep := fire("run_shell_command"); rep.Merged.Outcome != dsh.HookOutcomeDeny || rep.Merged.Reason != "only read_file" {
		t.Fatalf("run_shell_command: %s %q, want the lookahead guard's deny", rep.Merged.Outcome, rep.Merged.Reason)
	}
	if rep := fire("read_file"); rep.Matched() {
		t.Fatalf("read_file matched the negative lookahead: %+v", rep.Hooks)
	}
}

// A matcher whose test cannot be decided (catastrophic backtracking past MatchTimeout)
// does not skip its guard: the hook runs no process, and the call is blocked with a
// recorded reason, as exit 2 would block it; where nothing can block, it is an error.
func TestUndecidedMatcherFailsClosed(t *testing.T) {
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	e, rec, diags := engineFor(t, &hookmap.ClaudeCode, "PreToolUse",
		group("^(a+)+$", h("touch "+ran)))
	if len(diags) != 0 {
		t.Fatal(diags)
	}
	subject := strings.Repeat("a", 40) + "!"
	rep := e.Fire(context.Background(), Fire{Event: "PreToolUse", Subject: subject, Stdin: []byte(`{}`), InTurn: true, Turn: 1})
	if len(rep.Hooks) != 1 {
		t.Fatalf("hooks %+v, want the undecided group's hook reported", rep.Hooks)
	}
	v := rep.Hooks[0].Verdict
	if rep.Merged.Outcome != dsh.HookOutcomeDeny || !strings.Contains(rep.Merged.Reason, "matcher could not be decided") {
		t.Fatalf("merged %s %q, want a deny naming the undecided matcher", rep.Merged.Outcome, rep.Merged.Reason)
	}
	if len(v.Diagnostics) != 1 || !strings.Contains(v.Diagnostics[0], `"^(a+)+$"`) {
		t.Errorf("diagnostics %q, want the matcher named", v.Diagnostics)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the hook ran although its matcher was undecided")
	}
	var res *dsh.HookResult
	for _, r := range rec.all() {
		if hr, ok := r.(dsh.HookResult); ok {
			res = &hr
		}
	}
	if res == nil || res.Outcome != dsh.HookOutcomeDeny || res.Diagnostic == nil || !strings.Contains(*res.Diagnostic, "not run") {
		t.Fatalf("hook/result %+v, want the deny recorded with its diagnostic", res)
	}

	// At an event where exit 2 does not block (Gemini CLI's Notification), it is a
	// recorded error.
	ev, _ := hookmap.Gemini.Lookup("Notification")
	if ev.Exit2 != string(dsh.HookOutcomeError) {
		t.Fatalf("Notification's exit 2 is %q; pick another event that cannot block", ev.Exit2)
	}
	if v := FailClosed(&ev, ErrMatcherUndecided); v.Outcome != dsh.HookOutcomeError || v.Reason != "" || len(v.Diagnostics) != 1 {
		t.Errorf("FailClosed at Notification = %+v, want a recorded error", v)
	}
}

// A directory name holding shell metacharacters is never substituted into a command's
// text: Gemini CLI shell-quotes $GEMINI_PROJECT_DIR for a bare word, so inside double
// quotes `proj$(touch x)` runs `touch x` (measured against the engine's own quoting of
// 0.61.0). dsh refuses the hook, naming the variable; a guard blocks. The exported
// variable stays safe to use.
func TestGeminiProjectDirSubstitutionRefused(t *testing.T) {
	if _, err := os.Stat("/bin/bash"); err != nil {
		t.Skip("no bash")
	}
	root := t.TempDir()
	proj := filepath.Join(root, "proj$(touch pwned)")
	if err := os.Mkdir(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	cwd, _ := json.Marshal(proj)
	stdin := []byte(`{"session_id":"s","cwd":` + string(cwd) + `,"hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{}}`)
	fire := func(command string) *Report {
		c, diags := loadGemini(t, map[string]any{"hooks": map[string]any{"BeforeTool": []any{
			map[string]any{"hooks": []any{map[string]any{"type": "command", "command": command}}}}}})
		if len(diags) != 0 {
			t.Fatal(diags)
		}
		g := &hookmap.Gemini
		e := &Engine{Table: g, Config: c, Shell: g.Shell, Dir: root}
		return e.Fire(context.Background(), Fire{Event: "BeforeTool", Subject: "run_shell_command", Stdin: stdin, Dir: root})
	}
	rep := fire(`echo "$GEMINI_PROJECT_DIR/x" >/dev/null; echo '{"decision":"allow"}'`)
	if _, err := os.Stat(filepath.Join(root, "pwned")); err == nil {
		t.Fatal("the directory name ran as code")
	}
	if rep.Merged.Outcome != dsh.HookOutcomeDeny || !strings.Contains(rep.Merged.Reason, "GEMINI_PROJECT_DIR") {
		t.Fatalf("merged %s %q, want a deny naming GEMINI_PROJECT_DIR", rep.Merged.Outcome, rep.Merged.Reason)
	}
	var se *SubstitutionError
	if d := rep.Hooks[0].Verdict.Diagnostics; len(d) != 1 || !strings.Contains(d[0], ErrUnsafeSubstitution.Error()) {
		t.Errorf("diagnostics %q", d)
	}
	if err := unsafeSubstitution(`"$GEMINI_PROJECT_DIR"`, [][3]string{{"GEMINI_PROJECT_DIR", "$GEMINI_PROJECT_DIR", proj}}); !errors.As(err, &se) || se.Var != "GEMINI_PROJECT_DIR" {
		t.Errorf("unsafeSubstitution = %v", err)
	}

	// The exported variable, expanded by the shell, is never parsed as code.
	rep = fire(`test -d "$(printenv GEMINI_PROJECT_DIR)" && echo '{"decision":"deny","reason":"exported"}'`)
	if _, err := os.Stat(filepath.Join(root, "pwned")); err == nil {
		t.Fatal("the exported value ran as code")
	}
	if rep.Merged.Outcome != dsh.HookOutcomeDeny || rep.Merged.Reason != "exported" {
		t.Fatalf("merged %s %q, want the hook run with the exported directory", rep.Merged.Outcome, rep.Merged.Reason)
	}
}

// Claude Code's ${CLAUDE_PROJECT_DIR} follows the same rule at load: a shell-form command
// would get a value with metacharacters, so the loader says so, naming the variable, and
// the hook blocks where exit 2 would; exec form (args, no shell) is substituted as is.
func TestClaudeProjectDirSubstitutionRefused(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "proj`touch pwned`")
	if err := os.Mkdir(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := `{"hooks":{"PreToolUse":[{"hooks":[
		{"type":"command","command":"echo ${CLAUDE_PROJECT_DIR}/x"},
		{"type":"command","command":"/bin/test","args":["-d","${CLAUDE_PROJECT_DIR}"]}]}]}}`
	rules := Rules{Shell: []string{"sh", "-c"}, ProjectDirVars: []string{"CLAUDE_PROJECT_DIR"}}
	c, diags := Load([]byte(cfg), LoadOptions{Dialect: ClaudeCode, Source: "settings.json", Rules: &rules, ProjectDir: proj})
	if len(diags) != 1 || diags[0].Skipped != "" || !strings.Contains(diags[0].Error(), "CLAUDE_PROJECT_DIR") || diags[0].Path != "hooks.PreToolUse[0].hooks[0].command" {
		t.Fatalf("diagnostics %v, want one naming CLAUDE_PROJECT_DIR at the shell-form command", diags)
	}
	e := &Engine{Table: &hookmap.ClaudeCode, Config: c, Shell: rules.ShellArgv(nil), Dir: root}
	rep := e.Fire(context.Background(), Fire{Event: "PreToolUse", Subject: "Bash", Stdin: []byte(`{}`)})
	if _, err := os.Stat(filepath.Join(root, "pwned")); err == nil {
		t.Fatal("the directory name ran as code")
	}
	if len(rep.Hooks) != 2 || rep.Merged.Outcome != dsh.HookOutcomeDeny || !errors.Is(rep.Hooks[0].Handler.SubstErr, ErrUnsafeSubstitution) {
		t.Fatalf("merged %s, hooks %+v: want the shell-form hook refused and the call denied", rep.Merged.Outcome, rep.Hooks)
	}
	if v := rep.Hooks[1].Verdict; v.Outcome != dsh.HookOutcomePass || rep.Hooks[1].Result.ExitCode == nil || *rep.Hooks[1].Result.ExitCode != 0 {
		t.Errorf("the exec-form hook: %+v, want it run with the directory as its argument", rep.Hooks[1])
	}
}

func TestPlainValue(t *testing.T) {
	for s, want := range map[string]bool{
		"/home/me/proj": true, "/Users/me/My Projects/x-1.2_b": true, "/home/józef/prój": true,
		"C:/a,b@c+d=e%f": true, "": true, "3f2a-uuid": true,
		"/a$(x)": false, "/a`x`": false, `/a"b`: false, "/a'b": false, `/a\b`: false, "/a;b": false,
		"/a|b": false, "/a&b": false, "/a*b": false, "/a\nb": false, "/a\tb": false, "/a\u200bb": false, "~/a": false,
	} {
		if got := PlainValue(s); got != want {
			t.Errorf("PlainValue(%q) = %v, want %v", s, got, want)
		}
	}
}
