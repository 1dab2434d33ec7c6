package hookproto

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/hookmap"
)

// TestDecodeGemini covers the Gemini CLI output rules (hookmap.Gemini, ReadAnyExit):
// stdout, else stderr, parsed as JSON whatever the exit code; plain text by exit code.
func TestDecodeGemini(t *testing.T) {
	g := &hookmap.Gemini
	tests := []struct {
		name, event string
		res         Result
		outcome     Outcome
		reason      string
		notices     []string
		rewrite     string
	}{
		{name: "empty", event: "BeforeTool", res: exited(0, "", ""), outcome: "pass"},
		{name: "JSON deny on stdout", event: "BeforeTool", res: exited(0, `{"decision":"deny","reason":"no"}`, ""), outcome: "deny", reason: "no"},
		{name: "block is deny at the tool gate", event: "BeforeTool", res: exited(0, `{"decision":"block","reason":"no"}`, ""), outcome: "deny", reason: "no"},
		{name: "JSON deny on stderr, exit 0", event: "BeforeTool", res: exited(0, "  \n", `{"decision":"deny","reason":"from stderr"}`), outcome: "deny", reason: "from stderr"},
		{name: "stdout wins over stderr", event: "BeforeTool", res: exited(0, `{"decision":"allow"}`, `{"decision":"deny"}`), outcome: "pass"},
		{name: "JSON string holding JSON", event: "BeforeTool", res: exited(0, `"{\"decision\":\"deny\",\"reason\":\"nested\"}"`, ""), outcome: "deny", reason: "nested"},
		{name: "JSON on exit 2 counts", event: "BeforeTool", res: exited(2, `{"decision":"allow","reason":"fine"}`, ""), outcome: "allow", reason: "fine"},
		{name: "JSON deny on exit 1", event: "AfterTool", res: exited(1, "", `{"decision":"block","reason":"bad"}`), outcome: "block", reason: "bad"},
		{name: "ask asks", event: "BeforeTool", res: exited(0, `{"decision":"ask","reason":"sure?"}`, ""), outcome: "ask", reason: "sure?"},
		{name: "any other decision allows", event: "BeforeTool", res: exited(0, `{"decision":"approve"}`, ""), outcome: "pass"},
		{name: "plain exit 0 is a notice", event: "BeforeTool", res: exited(0, "hello", ""), outcome: "allow", notices: []string{"hello"}},
		{name: "plain exit 1 is a warning", event: "BeforeTool", res: exited(1, "", "careful"), outcome: "allow", notices: []string{"Warning: careful"}},
		{name: "plain exit 3 blocks", event: "BeforeTool", res: exited(3, "", "refused"), outcome: "deny", reason: "refused"},
		{name: "plain exit 2 blocks", event: "BeforeAgent", res: exited(2, "nope", ""), outcome: "block", reason: "nope"},
		{name: "exit 2 without output proceeds", event: "BeforeTool", res: exited(2, "", ""), outcome: "failed"},
		{name: "exit 127 without output proceeds", event: "BeforeTool", res: exited(127, "", " "), outcome: "failed"},
		{name: "plain exit 3 where nothing blocks", event: "PreCompress", res: exited(3, "", "x"), outcome: "error"},
		{name: "continue false halts", event: "BeforeTool", res: exited(0, `{"continue":false,"stopReason":"stop"}`, ""), outcome: "halt", reason: "stop"},
		{name: "tool_input rewrites", event: "BeforeTool", res: exited(0, `{"hookSpecificOutput":{"tool_input":{"command":"ls"}}}`, ""), outcome: "pass", rewrite: `{"command":"ls"}`},
		{name: "a number is plain text", event: "BeforeTool", res: exited(0, `42`, ""), outcome: "allow", notices: []string{"42"}},
		{name: "ill-typed output fails", event: "BeforeTool", res: exited(0, `{"continue":"no"}`, ""), outcome: "failed"},
		{name: "a death by signal reads as exit 0", event: "BeforeTool", res: Result{Signal: syscall.SIGKILL, Stdout: []byte(`{"decision":"deny","reason":"killed"}`)}, outcome: "deny", reason: "killed"},
		{name: "a missing command blocks (exit 127 with text)", event: "BeforeTool", res: exited(127, "", "bash: line 1: nope: command not found"), outcome: "deny", reason: "bash: line 1: nope: command not found"},
		{name: "cut JSON is plain text", event: "BeforeTool", res: exited(0, `{"decision": `, ""), outcome: "allow", notices: []string{`{"decision":`}},
		{name: "JSON over the cap fails closed", event: "BeforeTool", res: Result{ExitCode: new(int), Stdout: []byte(`{"decision":"allow","reason":"`), StdoutLost: true}, outcome: "deny",
			reason: "No reason provided: the hook wrote more than 30 bytes to stdout, so its decision could not be read"},
		{name: "stderr JSON over the cap fails closed", event: "BeforeTool", res: Result{ExitCode: new(int), Stderr: []byte(`{"decision":"allow"`), StderrLost: true}, outcome: "deny",
			reason: "No reason provided: the hook wrote more than 19 bytes to stderr, so its decision could not be read"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := Decode(g, event(t, g, tc.event), tc.res)
			if v.Outcome != tc.outcome || v.Reason != tc.reason {
				t.Fatalf("got %s %q, want %s %q (diagnostics %q)", v.Outcome, v.Reason, tc.outcome, tc.reason, v.Diagnostics)
			}
			if !slices.Equal(v.Notices, tc.notices) {
				t.Errorf("notices %q, want %q", v.Notices, tc.notices)
			}
			if string(v.Rewrite) != tc.rewrite {
				t.Errorf("rewrite %s, want %s", v.Rewrite, tc.rewrite)
			}
		})
	}
}

// TestMergeGeminiEvery: deny beats ask beats allow, and every deciding hook's reason,
// the allowing ones' included, is joined with a newline.
func TestMergeGeminiEvery(t *testing.T) {
	ev := event(t, &hookmap.Gemini, "BeforeTool")
	m := MergeVerdicts(ev, []Verdict{
		{Outcome: "allow", Reason: "looks fine"},
		{Outcome: "ask", Reason: "check"},
		{Outcome: "deny", Reason: "dangerous"},
		{Outcome: "timeout"},
	})
	if m.Outcome != "deny" || m.Reason != "looks fine\ncheck\ndangerous" {
		t.Fatalf("got %s %q", m.Outcome, m.Reason)
	}
	m = MergeVerdicts(ev, []Verdict{{Outcome: "allow", Reason: "a"}, {Outcome: "ask", Reason: "b"}})
	if m.Outcome != "ask" || m.Reason != "a\nb" {
		t.Fatalf("got %s %q", m.Outcome, m.Reason)
	}
}

func loadGemini(t *testing.T, cfg map[string]any) (*Config, []Diagnostic) {
	t.Helper()
	data, _ := json.Marshal(cfg)
	g := &hookmap.Gemini
	var events, noMatcher []string
	for _, e := range g.Events {
		events = append(events, e.Name)
		if e.Matcher == "" {
			noMatcher = append(noMatcher, e.Name)
		}
	}
	return Load(data, LoadOptions{Dialect: Gemini, Source: "settings.json", Events: events, NoMatcherEvents: noMatcher, Table: g})
}

// TestLoadGemini: milliseconds, a timeout of 0 or less expiring at once, regex and exact
// matchers (an invalid regex is an exact string), the hooksConfig block, sequential
// groups and de-duplication by name and command.
func TestLoadGemini(t *testing.T) {
	c, diags := loadGemini(t, map[string]any{
		"hooksConfig": map[string]any{"disabled": []string{"off"}},
		"hooks": map[string]any{
			"BeforeTool": []any{
				map[string]any{"matcher": "shell", "hooks": []any{
					map[string]any{"type": "command", "command": "a", "timeout": 1500},
					map[string]any{"type": "command", "command": "b", "timeout": 0},
					map[string]any{"type": "command", "command": "c", "timeout": -5},
					map[string]any{"type": "command", "command": "d"},
					map[string]any{"type": "command", "command": "x", "name": "off"},
				}},
				map[string]any{"matcher": "(", "sequential": true, "hooks": []any{
					map[string]any{"type": "command", "command": "a", "timeout": 1500},
				}},
			},
			"SessionStart": []any{map[string]any{"matcher": "start", "hooks": []any{map[string]any{"type": "command", "command": "s"}}}},
			"BeforeAgent":  []any{map[string]any{"matcher": "zzz", "hooks": []any{map[string]any{"type": "command", "command": "p"}}}},
			"disabled":     []any{},
		},
	})
	var timeouts []time.Duration
	for _, h := range c.Handlers("BeforeTool") {
		timeouts = append(timeouts, h.Timeout)
	}
	want := []time.Duration{1500 * time.Millisecond, ExpireAtOnce, ExpireAtOnce, 60 * time.Second, 60 * time.Second, 1500 * time.Millisecond}
	if !slices.Equal(timeouts, want) {
		t.Errorf("timeouts %v, want %v", timeouts, want)
	}
	if len(diags) != 3 || diags[2].Skipped != "" || !strings.Contains(diags[2].Error(), `matcher "(" on event "BeforeTool"`) || !strings.Contains(diags[2].Error(), "compared as an exact string") {
		t.Errorf("diagnostics %v, want the two non-positive timeouts and the invalid regex compared exactly", diags)
	}
	cmds := func(hs []Handler) string {
		var out []string
		for _, h := range hs {
			out = append(out, h.Command)
		}
		return strings.Join(out, " ")
	}
	if got := cmds(c.Match("BeforeTool", "run_shell_command")); got != "a b c d" {
		t.Errorf("run_shell_command matched %q, want the unanchored regex group without the disabled hook", got)
	}
	// "(" does not compile: it is an exact string; its "a" is a duplicate of the first
	// group's and runs once.
	if got := cmds(c.Match("BeforeTool", "(")); got != "a" {
		t.Errorf("( matched %q", got)
	}
	seq := c.Match("BeforeTool", "(")
	if len(seq) != 1 || !seq[0].Sequential {
		t.Errorf("the sequential group's handler is not sequential: %+v", seq)
	}
	if got := cmds(c.Match("SessionStart", "startup")); got != "" {
		t.Errorf("SessionStart matchers are exact, got %q", got)
	}
	if got := cmds(c.Match("BeforeAgent", "")); got != "p" {
		t.Errorf("BeforeAgent ignores its matcher, got %q", got)
	}
	off, _ := loadGemini(t, map[string]any{"hooksConfig": map[string]any{"enabled": false}, "hooks": map[string]any{
		"BeforeTool": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "a"}}}}}})
	if len(off.Events()) != 0 || off.DisabledBy == "" {
		t.Errorf("hooksConfig.enabled false left hooks: %v", off.Events())
	}
}

// TestLoadSourcesGeminiExtension: a malformed extension hooks.json is a diagnostic naming
// it, and the other extensions still load.
func TestLoadSourcesGeminiExtension(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad", "hooks", "hooks.json")
	good := filepath.Join(dir, "good", "hooks", "hooks.json")
	for p, body := range map[string]string{bad: `{"hooks": {"BeforeTool": [`, good: `{"hooks": {"BeforeTool": [{"hooks": [{"type": "command", "command": "ok"}]}]}}`} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, diags := LoadSources([]Source{{Path: bad, PluginRoot: filepath.Join(dir, "bad")}, {Path: good, PluginRoot: filepath.Join(dir, "good")}},
		SourcesOptions{Dialect: Gemini, Events: []string{"BeforeTool"}, Table: &hookmap.Gemini})
	if len(diags) != 1 || diags[0].File != bad || !errors.Is(diags[0], ErrConfigSyntax) {
		t.Fatalf("diagnostics %v, want one syntax error naming %s", diags, bad)
	}
	if hs := c.Handlers("BeforeTool"); len(hs) != 1 || hs[0].Command != "ok" {
		t.Fatalf("the good extension did not load: %+v", hs)
	}
}

// TestFireGemini: commands run under bash with $GEMINI_* substituted and exported; a
// sequential group passes each rewrite on; a timeout of 0 fails the hook (the action
// proceeds).
func TestFireGemini(t *testing.T) {
	if _, err := os.Stat("/bin/bash"); err != nil {
		t.Skip("no bash")
	}
	g := &hookmap.Gemini
	stdin := []byte(`{"session_id":"s 1","transcript_path":"","cwd":"/tmp/w","hook_event_name":"BeforeTool","timestamp":"t","tool_name":"run_shell_command","tool_input":{"command":"ls","dir_path":"."}}`)
	run := func(t *testing.T, cfg map[string]any) *Report {
		c, diags := loadGemini(t, cfg)
		if len(diags) > 0 && !strings.Contains(diags[0].Error(), "timeout") {
			t.Fatal(diags)
		}
		e := &Engine{Table: g, Config: c, Shell: g.Shell, Dir: t.TempDir()}
		return e.Fire(context.Background(), Fire{Event: "BeforeTool", Subject: "run_shell_command", Stdin: stdin})
	}
	hook := func(cmd string) map[string]any { return map[string]any{"type": "command", "command": cmd} }

	rep := run(t, map[string]any{"hooks": map[string]any{"BeforeTool": []any{map[string]any{"hooks": []any{
		hook(`printf '{"systemMessage":"%s|%s|%s"}' $GEMINI_SESSION_ID "$GEMINI_CWD" "$BASH_VERSION"`),
	}}}}})
	n := rep.Merged.Notices
	if len(n) != 1 || !strings.HasPrefix(n[0], "s 1|/tmp/w|") || strings.HasSuffix(n[0], "|") {
		t.Fatalf("notices %q: want the substituted session id, the exported cwd and bash", n)
	}

	rep = run(t, map[string]any{"hooks": map[string]any{"BeforeTool": []any{
		map[string]any{"sequential": true, "hooks": []any{
			hook(`echo '{"hookSpecificOutput":{"tool_input":{"command":"pwd"}}}'`),
			hook(`grep -q '"tool_input":{"command":"pwd","dir_path":"."}' && echo '{"systemMessage":"merged"}'`),
		}},
	}}})
	if n := rep.Merged.Notices; len(n) != 1 || n[0] != "merged" {
		t.Fatalf("the second sequential hook saw %q, want the first one's rewrite merged in", n)
	}

	// A parallel group before a sequential one: every matched hook then runs in order, so
	// the sequential group's hook sees the parallel group's rewrite.
	rep = run(t, map[string]any{"hooks": map[string]any{"BeforeTool": []any{
		map[string]any{"hooks": []any{hook(`echo '{"hookSpecificOutput":{"tool_input":{"dir_path":"/"}}}'`)}},
		map[string]any{"sequential": true, "hooks": []any{hook(`grep -q '"dir_path":"/"' && echo '{"decision":"deny","reason":"saw it"}'`)}},
	}}})
	if rep.Merged.Outcome != "deny" || rep.Merged.Reason != "saw it" {
		t.Fatalf("mixed groups: %s %q, want the sequential hook to see the parallel one's rewrite", rep.Merged.Outcome, rep.Merged.Reason)
	}

	rep = run(t, map[string]any{"hooks": map[string]any{"BeforeTool": []any{map[string]any{"hooks": []any{
		map[string]any{"type": "command", "command": `sleep 1; echo '{"decision":"deny"}'`, "timeout": 0},
	}}}}})
	if rep.Hooks[0].Verdict.Outcome != "timeout" || rep.Merged.Outcome != "pass" {
		t.Fatalf("timeout 0: %s, merged %s; want the hook timed out and the call let through", rep.Hooks[0].Verdict.Outcome, rep.Merged.Outcome)
	}
}

// TestMergeField keeps the other fields and their order, and merges shallowly.
func TestMergeField(t *testing.T) {
	got, err := MergeField([]byte(`{"a":1,"tool_input":{"x":1,"y":2},"z":3}`), "tool_input", json.RawMessage(`{"y":5,"w":6}`))
	if err != nil || string(got) != `{"a":1,"tool_input":{"x":1,"y":5,"w":6},"z":3}` {
		t.Fatalf("got %s, %v", got, err)
	}
	if _, err := MergeField([]byte(`{"a":1}`), "tool_input", json.RawMessage(`[1]`)); err == nil {
		t.Fatal("a non-object patch merged")
	}
}

// TestFireGeminiPassOn: a sequential BeforeAgent hook's context reaches the next hook
// appended to its prompt after a blank line, as it is (no HTML escaping), and a context that
// is not a string, or a hook that failed, passes nothing on.
func TestFireGeminiPassOn(t *testing.T) {
	if _, err := os.Stat("/bin/bash"); err != nil {
		t.Skip("no bash")
	}
	g := &hookmap.Gemini
	stdin := []byte(`{"session_id":"s","transcript_path":"","cwd":"/tmp","hook_event_name":"BeforeAgent","timestamp":"t","prompt":"hi"}`)
	hook := func(cmd string) map[string]any { return map[string]any{"type": "command", "command": cmd} }
	// The last hook reports the prompt it saw as its systemMessage (a \u00XX escape shows
	// as U+XX).
	report := hook(`printf '{"systemMessage":%s}' "$(grep -o '"prompt":"[^"]*"' | cut -d: -f2- | sed 's/\\u00/U+/g')"`)
	for _, tc := range []struct {
		name  string
		first string
		want  string
	}{
		{"context", `echo '{"hookSpecificOutput":{"additionalContext":"a<b&c"}}'`, "hi\n\na<b&c"},
		{"not a string", `echo '{"hookSpecificOutput":{"additionalContext":{"x":1}}}'`, "hi"},
		{"failed hook", `echo '{"hookSpecificOutput":{"additionalContext":"lost"}}'; exit 1`, "hi"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, diags := loadGemini(t, map[string]any{"hooks": map[string]any{"BeforeAgent": []any{
				map[string]any{"sequential": true, "hooks": []any{hook(tc.first), report}},
			}}})
			if len(diags) > 0 {
				t.Fatal(diags)
			}
			e := &Engine{Table: g, Config: c, Shell: g.Shell, Dir: t.TempDir()}
			rep := e.Fire(context.Background(), Fire{Event: "BeforeAgent", Stdin: stdin})
			var saw string
			for _, n := range rep.Hooks[1].Verdict.Notices {
				saw = n
			}
			if saw != tc.want {
				t.Errorf("the second hook saw the prompt %q, want %q", saw, tc.want)
			}
		})
	}
}
