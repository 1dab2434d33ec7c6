package hookproto

import (
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
)

func exited(code int, stdout, stderr string) Result {
	return Result{ExitCode: &code, Stdout: []byte(stdout), Stderr: []byte(stderr)}
}

func event(t testing.TB, b *hookmap.Bridge, name string) *hookmap.Event {
	t.Helper()
	ev, ok := b.Lookup(name)
	if !ok {
		t.Fatalf("%s has no event %s", b.Dialect, name)
	}
	return &ev
}

// TestDecode covers the codec scenarios of docs/design/HOOK-PROTOCOLS.md#4-bridge-scenarios (18-28) under the dsh
// decisions, for both tables.
func TestDecode(t *testing.T) {
	cc, cx := &hookmap.ClaudeCode, &hookmap.Codex
	two := 2
	tests := []struct {
		name     string
		b        *hookmap.Bridge
		event    string
		res      Result
		outcome  Outcome
		reason   string
		contexts []string
		notices  []string
		diag     string // a substring of some diagnostic
	}{
		// 18: exit 0, empty stdout: pass.
		{name: "18 empty", b: cc, event: "PreToolUse", res: exited(0, "", ""), outcome: "pass"},
		{name: "18 empty codex", b: cx, event: "PreToolUse", res: exited(0, "  \n", ""), outcome: "pass"},
		// 19: exit 2 blocks with the trimmed stderr; at the tool gate the outcome is deny.
		{name: "19 exit 2", b: cc, event: "PreToolUse", res: exited(2, "", "  this command is not allowed\n"), outcome: "deny", reason: "this command is not allowed"},
		{name: "19 exit 2 prompt", b: cc, event: "UserPromptSubmit", res: exited(2, "", "no"), outcome: "block", reason: "no"},
		{name: "19 exit 2 codex", b: cx, event: "Stop", res: exited(2, "", "keep going"), outcome: "block", reason: "keep going"},
		// 20: blank stderr: Claude Code blocks with the fallback, Codex fails (decision 2).
		{name: "20 cc", b: cc, event: "PreToolUse", res: exited(2, "", " \n"), outcome: "deny", reason: "Blocked by hook"},
		{name: "20 cc post", b: cc, event: "PostToolUse", res: exited(2, "", ""), outcome: "block", reason: "Blocked by hook"},
		{name: "20 cc stop", b: cc, event: "Stop", res: exited(2, "", ""), outcome: "block", reason: "Blocked by hook"},
		{name: "20 codex", b: cx, event: "PreToolUse", res: exited(2, "", ""), outcome: "failed", diag: "exit 2 with empty stderr"},
		// 21: other exit codes are non-blocking errors.
		{name: "21 exit 1", b: cc, event: "PreToolUse", res: exited(1, "", "some warning"), outcome: "error", diag: "exit status 1 (non-blocking): some warning"},
		{name: "21 exit 127", b: cx, event: "PreToolUse", res: exited(127, "", "sh: 1: /nonexistent: not found"), outcome: "error", diag: "exit status 127"},
		// 22: stdout is ignored on exit 2.
		{name: "22", b: cc, event: "PreToolUse", res: exited(2, `{"decision":"approve"}`, "blocked"), outcome: "deny", reason: "blocked"},
		// 23: top-level decisions other than approve/block: the wire type rejects them,
		// so the hook is a recorded error and makes no decision (never a deny).
		{name: "23 deny", b: cc, event: "PreToolUse", res: exited(0, `{"decision":"deny"}`, ""), outcome: "error", diag: "invalid PreToolUseOutput"},
		{name: "23 maybe", b: cc, event: "PreToolUse", res: exited(0, `{"decision":"maybe"}`, ""), outcome: "error"},
		{name: "23 approve", b: cc, event: "PreToolUse", res: exited(0, `{"decision":"approve"}`, ""), outcome: "allow"},
		{name: "23 block", b: cc, event: "PreToolUse", res: exited(0, `{"decision":"block","reason":"legacy"}`, ""), outcome: "deny", reason: "legacy"},
		// 24: hookSpecificOutput overrides the top-level decision.
		{name: "24", b: cc, event: "PreToolUse", res: exited(0, `{"decision":"approve","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"denied by policy"}}`, ""), outcome: "deny", reason: "denied by policy"},
		// 25: event-specific fields of another (or no) event are dropped, and noted.
		{name: "25 other event", b: cc, event: "PreToolUse", res: exited(0, `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","permissionDecision":"deny","additionalContext":"x"}}`, ""), outcome: "pass", diag: `hookEventName "UserPromptSubmit", want "PreToolUse"`},
		{name: "25 missing name", b: cc, event: "Stop", res: exited(0, `{"hookSpecificOutput":{"additionalContext":"x"}}`, ""), outcome: "pass", diag: "no hookEventName"},
		{name: "25 codex", b: cx, event: "PreToolUse", res: exited(0, `{"hookSpecificOutput":{"hookEventName":"Stop","permissionDecision":"deny","permissionDecisionReason":"r"}}`, ""), outcome: "pass", diag: `hookEventName "Stop"`},
		// 26: continue:false beats a block (dsh: halt with the stopReason).
		{name: "26", b: cc, event: "Stop", res: exited(0, `{"decision":"block","reason":"top","continue":false,"stopReason":"halt","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`, ""), outcome: "halt", reason: "halt"},
		// 27: invalid JSON and non-objects; whitespace is trimmed.
		// Claude Code (as the real engine): JSON stdout still counts on exit 2: a deny reason
		// replaces stderr, contexts join, an allow does not lift the block.
		{name: "exit2 json deny cc", b: cc, event: "PreToolUse", res: exited(2, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"json says no"}}`, "stderr says no"), outcome: "deny", reason: "json says no"},
		{name: "exit2 json context cc", b: cc, event: "PreToolUse", res: exited(2, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"ctx"}}`, "stderr says no"), outcome: "deny", reason: "stderr says no", contexts: []string{"ctx"}},
		{name: "exit2 json allow cc", b: cc, event: "PreToolUse", res: exited(2, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`, "stderr says no"), outcome: "deny", reason: "stderr says no"},
		{name: "exit2 json ignored codex", b: cx, event: "PreToolUse", res: exited(2, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"ctx"}}`, "stderr says no"), outcome: "deny", reason: "stderr says no"},
		// Claude Code (as the real engine): stdout that does not parse is plain output.
		{name: "27 invalid cc", b: cc, event: "PreToolUse", res: exited(0, `{ not valid json`, ""), outcome: "pass", diag: "not valid JSON: taken as plain output"},
		{name: "27 invalid cc context", b: cc, event: "UserPromptSubmit", res: exited(0, `{ not valid json`, ""), outcome: "pass", contexts: []string{"{ not valid json"}},
		{name: "27 undecodable cc", b: cc, event: "PreToolUse", res: exited(0, `{"continue":"yes"}`, ""), outcome: "error", diag: "invalid PreToolUseOutput"},
		{name: "27 array cc", b: cc, event: "PreToolUse", res: exited(0, `[1,2,3]`, ""), outcome: "pass", diag: "plain stdout ignored"},
		{name: "27 array codex", b: cx, event: "PreToolUse", res: exited(0, `[1,2,3]`, ""), outcome: "failed"},
		{name: "27 trimmed", b: cc, event: "UserPromptSubmit", res: exited(0, "  {\"decision\":\"block\"}  \n", ""), outcome: "block", reason: "blocked by UserPromptSubmit hook"},
		// 28: no exit status: error (or timeout), no decision.
		{name: "28 spawn", b: cc, event: "PreToolUse", res: Result{SpawnErr: errors.New("bad workdir: ENOENT")}, outcome: "error", diag: "bad workdir"},
		{name: "28 signal", b: cc, event: "PreToolUse", res: Result{Signal: syscall.SIGKILL, Stderr: []byte("x")}, outcome: "error", diag: "signal"},
		{name: "timeout", b: cc, event: "PreToolUse", res: Result{TimedOut: true}, outcome: "timeout"},
		// Output over the cap may lose its text, never a block.
		{name: "over cap json", b: cc, event: "PreToolUse", res: Result{ExitCode: new(int), Stdout: []byte(`{"hookSpecificOutput":{"hookEv`), StdoutOverCap: true, StdoutLost: true}, outcome: "deny", reason: "Blocked by hook: the hook wrote more than 30 bytes to stdout, so its decision could not be read", diag: "fail closed"},
		{name: "over cap json codex", b: cx, event: "Stop", res: Result{ExitCode: new(int), Stdout: []byte(`[`), StdoutOverCap: true, StdoutLost: true}, outcome: "block", reason: "continue: blocked by Stop hook: the hook wrote more than 1 bytes to stdout, so its decision could not be read", diag: "fail closed"},
		{name: "over cap blank head", b: cx, event: "PreToolUse", res: Result{ExitCode: new(int), Stdout: []byte(`   `), StdoutOverCap: true, StdoutLost: true}, outcome: "deny", reason: "blocked by PreToolUse hook: the hook wrote more than 3 bytes to stdout, so its decision could not be read", diag: "fail closed"},
		{name: "over cap json where nothing blocks", b: cc, event: "PermissionRequest", res: Result{ExitCode: new(int), Stdout: []byte(`{`), StdoutOverCap: true, StdoutLost: true}, outcome: "error", diag: "stdout exceeded its cap of 1 bytes"},
		{name: "over cap plain", b: cc, event: "UserPromptSubmit", res: Result{ExitCode: new(int), Stdout: []byte("plain"), StdoutOverCap: true, StdoutLost: true}, outcome: "pass", contexts: []string{"plain\n[truncated: the hook's output exceeded its cap; the rest was discarded]"}, diag: "stdout exceeded"},
		{name: "over cap spaces only", b: cc, event: "UserPromptSubmit", res: Result{ExitCode: new(int), Stdout: []byte(`{"decision":"block","reason":"r"}   `), StdoutOverCap: true}, outcome: "block", reason: "r"},
		{name: "over cap exit 2", b: cx, event: "PreToolUse", res: Result{ExitCode: &two, Stderr: []byte("no no"), StderrOverCap: true, StderrLost: true}, outcome: "deny", reason: "no no\n[truncated: the hook wrote more than 5 bytes to stderr; the rest was discarded]", diag: "stderr exceeded its cap"},
		{name: "over cap exit 2 blank head", b: cx, event: "PreToolUse", res: Result{ExitCode: &two, Stderr: []byte("  "), StderrOverCap: true, StderrLost: true}, outcome: "deny", reason: "blocked by PreToolUse hook\n[truncated: the hook wrote more than 2 bytes to stderr; the rest was discarded]"},
		{name: "over cap exit 0 stderr", b: cc, event: "PreToolUse", res: Result{ExitCode: new(int), Stdout: []byte(`{"decision":"block","reason":"r"}`), Stderr: []byte("e"), StderrOverCap: true, StderrLost: true}, outcome: "deny", reason: "r"},
		// Contexts, plain stdout, notices (decision 7).
		{name: "context", b: cc, event: "PostToolUse", res: exited(0, `{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"note: tool was slow"}}`, ""), outcome: "pass", contexts: []string{"note: tool was slow"}},
		{name: "43", b: cc, event: "PostToolUse", res: exited(0, `{"decision":"block","reason":"bad","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"context too"}}`, ""), outcome: "block", reason: "bad", contexts: []string{"context too"}},
		{name: "64 plain prompt", b: cc, event: "UserPromptSubmit", res: exited(0, "Current time: noon\n", ""), outcome: "pass", contexts: []string{"Current time: noon"}},
		{name: "plain session", b: cc, event: "SessionStart", res: exited(0, "project uses tabs", ""), outcome: "pass", contexts: []string{"project uses tabs"}},
		{name: "plain pretool", b: cc, event: "PreToolUse", res: exited(0, "hello", ""), outcome: "pass", diag: "plain stdout ignored"},
		{name: "36 notice", b: cc, event: "UserPromptSubmit", res: exited(0, `{"systemMessage":"heads up"}`, ""), outcome: "pass", notices: []string{"heads up"}},
		{name: "39 updatedInput", b: cc, event: "PreToolUse", res: exited(0, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"rewritten"}}}`, ""), outcome: "allow"},
		{name: "38 ask", b: cc, event: "PreToolUse", res: exited(0, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"needs approval"}}`, ""), outcome: "ask", reason: "needs approval"},
		{name: "38 ask no reason", b: cc, event: "PreToolUse", res: exited(0, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask"}}`, ""), outcome: "ask"},
		{name: "40 halt", b: cc, event: "PreToolUse", res: exited(0, `{"continue":false,"stopReason":"halt"}`, ""), outcome: "halt", reason: "halt"},
		{name: "halt no reason", b: cc, event: "PostToolUse", res: exited(0, `{"continue":false}`, ""), outcome: "halt", reason: "stopped by PostToolUse hook (continue:false)"},
		// The real engine blocks a reasonless Stop block with "Blocked by hook".
		{name: "stop blank reason", b: cc, event: "Stop", res: exited(0, `{"decision":"block"}`, ""), outcome: "block", reason: "Blocked by hook"},
		{name: "cc open output", b: cc, event: "PreToolUse", res: exited(0, `{"terminalSequence":"x","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"r","future":1}}`, ""), outcome: "deny", reason: "r"},
		// Codex (decision 2, real engine): ask, allow without updatedInput, empty
		// reasons, stop fields at PreToolUse, unknown fields fail.
		{name: "58 ask", b: cx, event: "PreToolUse", res: exited(0, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask"}}`, ""), outcome: "failed"},
		{name: "58 allow", b: cx, event: "PreToolUse", res: exited(0, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`, ""), outcome: "failed"},
		{name: "58 deny empty", b: cx, event: "PreToolUse", res: exited(0, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":" "}}`, ""), outcome: "failed"},
		{name: "codex deny", b: cx, event: "PreToolUse", res: exited(0, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}`, ""), outcome: "deny", reason: "no"},
		{name: "codex allow updatedInput", b: cx, event: "PreToolUse", res: exited(0, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"ls"}}}`, ""), outcome: "allow"},
		{name: "codex updatedInput alone", b: cx, event: "PreToolUse", res: exited(0, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"ls"}}}`, ""), outcome: "allow"},
		{name: "codex deny updatedInput", b: cx, event: "PreToolUse", res: exited(0, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no","updatedInput":{"command":"ls"}}}`, ""), outcome: "failed"},
		{name: "codex continue false pretool", b: cx, event: "PreToolUse", res: exited(0, `{"continue":false}`, ""), outcome: "failed"},
		{name: "codex unknown field", b: cx, event: "Stop", res: exited(0, `{"decision":"block","reason":"x","extra":1}`, ""), outcome: "failed"},
		{name: "codex block no reason", b: cx, event: "UserPromptSubmit", res: exited(0, `{"decision":"block"}`, ""), outcome: "failed"},
		{name: "codex reason only", b: cx, event: "PostToolUse", res: exited(0, `{"reason":"why"}`, ""), outcome: "failed"},
		{name: "55 codex plain", b: cx, event: "UserPromptSubmit", res: exited(0, "extra guidance from a plain hook", ""), outcome: "pass", contexts: []string{"extra guidance from a plain hook"}},
		{name: "55 codex plain exit 1", b: cx, event: "UserPromptSubmit", res: exited(1, "stale", ""), outcome: "error"},
		{name: "55 codex unrelated", b: cx, event: "UserPromptSubmit", res: exited(0, `{"unrelated":"json"}`, ""), outcome: "failed"},
		{name: "55 codex session exit 2", b: cx, event: "SessionStart", res: exited(2, "ctx", "err"), outcome: "block", reason: "err"},
		{name: "59 codex stop beats block", b: cx, event: "Stop", res: exited(0, `{"continue":false,"stopReason":"enough","decision":"block","reason":"keep going"}`, ""), outcome: "halt", reason: "enough"},
		// Bad input.
		{name: "two objects", b: cc, event: "PreToolUse", res: exited(0, `{"decision":"block"}{"decision":"approve"}`, ""), outcome: "pass", diag: "taken as plain output"},
		{name: "non-utf8 stdout", b: cc, event: "UserPromptSubmit", res: exited(0, "caf\xe9", ""), outcome: "pass", contexts: []string{"caf\uFFFD"}, diag: "not valid UTF-8"},
		{name: "non-utf8 stderr", b: cc, event: "PreToolUse", res: exited(2, "", "no \xff"), outcome: "deny", reason: "no \uFFFD", diag: "not valid UTF-8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := Decode(tc.b, event(t, tc.b, tc.event), tc.res)
			if v.Outcome != tc.outcome || v.Reason != tc.reason {
				t.Errorf("got %s %q, want %s %q (diagnostics %q)", v.Outcome, v.Reason, tc.outcome, tc.reason, v.Diagnostics)
			}
			if !slices.Equal(v.Contexts, tc.contexts) {
				t.Errorf("contexts %q, want %q", v.Contexts, tc.contexts)
			}
			if !slices.Equal(v.Notices, tc.notices) {
				t.Errorf("notices %q, want %q", v.Notices, tc.notices)
			}
			if tc.diag != "" && !strings.Contains(strings.Join(v.Diagnostics, "\n"), tc.diag) {
				t.Errorf("diagnostics %q lack %q", v.Diagnostics, tc.diag)
			}
			if !v.Outcome.Valid() {
				t.Errorf("invalid outcome %q", v.Outcome)
			}
		})
	}
}

// TestDecodeRewrite: a PreToolUse updatedInput is the verdict's rewrite. Claude Code:
// whatever the decision (a deny still denies), a merge with updatedInputMode "merge",
// nothing under another event's name or on exit 2. Codex: only with allow.
func TestDecodeRewrite(t *testing.T) {
	cc, cx := &hookmap.ClaudeCode, &hookmap.Codex
	out := func(fields string) string {
		return `{"hookSpecificOutput":{"hookEventName":"PreToolUse",` + fields + `}}`
	}
	for _, tc := range []struct {
		name    string
		b       *hookmap.Bridge
		res     Result
		outcome dsh.HookOutcome
		rewrite string
		merge   bool
	}{
		{"cc allow", cc, exited(0, out(`"permissionDecision":"allow","updatedInput":{"command":"x","n":12345678901234567890}`), ""), "allow", `{"command":"x","n":12345678901234567890}`, false},
		{"cc alone", cc, exited(0, out(`"updatedInput":{"command":"x"}`), ""), "pass", `{"command":"x"}`, false},
		{"cc deny", cc, exited(0, out(`"permissionDecision":"deny","permissionDecisionReason":"no","updatedInput":{"command":"x"}`), ""), "deny", `{"command":"x"}`, false},
		{"cc merge", cc, exited(0, out(`"updatedInput":{"timeout":5},"updatedInputMode":"merge"`), ""), "pass", `{"timeout":5}`, true},
		{"cc replace mode", cc, exited(0, out(`"updatedInput":{"command":"x"},"updatedInputMode":"replace"`), ""), "pass", `{"command":"x"}`, false},
		{"cc null", cc, exited(0, out(`"updatedInput":null`), ""), "pass", "", false},
		{"cc other event", cc, exited(0, `{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedInput":{"command":"x"}}}`, ""), "pass", "", false},
		{"cc exit 2", cc, exited(2, out(`"updatedInput":{"command":"x"}`), "no"), "deny", "", false},
		{"codex allow", cx, exited(0, out(`"permissionDecision":"allow","updatedInput":{"command":"x"}`), ""), "allow", `{"command":"x"}`, false},
		{"codex alone", cx, exited(0, out(`"updatedInput":{"command":"x"}`), ""), "allow", "", false},
		{"codex deny", cx, exited(0, out(`"permissionDecision":"deny","permissionDecisionReason":"no","updatedInput":{"command":"x"}`), ""), "failed", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Decode(tc.b, event(t, tc.b, "PreToolUse"), tc.res)
			if v.Outcome != tc.outcome || string(v.Rewrite) != tc.rewrite || v.RewriteMerge != tc.merge {
				t.Errorf("got %s rewrite %s merge %v, want %s %s %v (diagnostics %q)", v.Outcome, v.Rewrite, v.RewriteMerge, tc.outcome, tc.rewrite, tc.merge, v.Diagnostics)
			}
		})
	}
}

// TestMerge covers the merge scenarios of docs/design/HOOK-PROTOCOLS.md#4-bridge-scenarios (29-31).
func TestMerge(t *testing.T) {
	cc := event(t, &hookmap.ClaudeCode, "PreToolUse")
	v := func(o Outcome, reason string, ctx ...string) Verdict {
		return Verdict{Outcome: o, Reason: reason, Contexts: ctx}
	}
	tests := []struct {
		name    string
		ev      *hookmap.Event
		in      []Verdict
		outcome Outcome
		reason  string
	}{
		{"29 allow+ask", cc, []Verdict{v("allow", ""), v("ask", "")}, "ask", ""},
		{"29 ask+deny", cc, []Verdict{v("ask", ""), v("deny", "d")}, "deny", "d"},
		{"29 deny+allow", cc, []Verdict{v("deny", "d"), v("allow", "")}, "deny", "d"},
		{"29 allow+block", cc, []Verdict{v("allow", ""), v("block", "b")}, "block", "b"},
		{"30 joined", cc, []Verdict{v("deny", "first objection"), v("allow", "not collected"), v("block", "second objection")}, "deny", "first objection\n\nsecond objection"},
		{"30 ask", cc, []Verdict{v("allow", "x"), v("ask", "needs approval")}, "ask", "needs approval"},
		{"30 ask then deny", cc, []Verdict{v("ask", "a"), v("deny", "b")}, "deny", "b"},
		{"first", event(t, &hookmap.Codex, "PreToolUse"), []Verdict{v("deny", "one"), v("deny", "two")}, "deny", "one"},
		{"no decision", cc, []Verdict{v("error", ""), v("timeout", ""), v("failed", ""), v("pass", "")}, "pass", ""},
		{"31 halt first", cc, []Verdict{v("pass", ""), v("halt", "halt now"), v("halt", "second"), v("deny", "d")}, "halt", "halt now"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := MergeVerdicts(tc.ev, tc.in)
			if m.Outcome != tc.outcome || m.Reason != tc.reason {
				t.Errorf("got %s %q, want %s %q", m.Outcome, m.Reason, tc.outcome, tc.reason)
			}
		})
	}
	// 31: contexts in hook order, empty ones skipped, each capped.
	long := strings.Repeat("x", DefaultContextMax+50)
	m := MergeVerdicts(cc, []Verdict{v("pass", "", "ctx-A"), v("pass", "", ""), v("halt", "h", "ctx-B"), v("pass", "", long)})
	if len(m.Contexts) != 3 || m.Contexts[0] != "ctx-A" || m.Contexts[1] != "ctx-B" {
		t.Fatalf("contexts %q", m.Contexts)
	}
	if n := len([]rune(m.Contexts[2])); n > DefaultContextMax || n < DefaultContextMax-10 || !strings.Contains(m.Contexts[2], "[truncated:") {
		t.Errorf("long context: %d runes, want about %d with a truncation note", n, DefaultContextMax)
	}
}

// FuzzOutputCodec decodes arbitrary exit code × stdout × stderr at every event of both
// tables: no panic, and every outcome is one of the nine.
func FuzzOutputCodec(f *testing.F) {
	seeds := []struct {
		code           int
		stdout, stderr string
	}{
		{0, "", ""}, {2, "", "no"}, {2, "", ""}, {1, "x", "y"}, {127, "", ""},
		{0, `{"decision":"block","reason":"r"}`, ""},
		{0, `{"continue":false,"stopReason":"s"}`, ""},
		{0, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"x"}}`, ""},
		{0, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{}}}`, ""},
		{0, `[1,2]`, ""}, {0, "{", ""}, {0, "plain", ""}, {0, "\xff\xfe", "\xff"}, {-1, "", ""},
		{0, `{"hookSpecificOutput":null,"systemMessage":null,"decision":null}`, ""},
		{0, `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"c","env":{"A":"b"}}}`, ""},
	}
	for _, s := range seeds {
		f.Add(s.code, s.stdout, s.stderr)
	}
	f.Fuzz(func(t *testing.T, code int, stdout, stderr string) {
		for _, b := range hookmap.Bridges {
			for i := range b.Events {
				ev := &b.Events[i]
				res := exited(code, stdout, stderr)
				if code < 0 {
					res = Result{Signal: syscall.SIGKILL, Stdout: []byte(stdout), Stderr: []byte(stderr)}
				}
				v := Decode(b, ev, res)
				if !v.Outcome.Valid() {
					t.Fatalf("%s %s: invalid outcome %q", b.Dialect, ev.Name, v.Outcome)
				}
				m := MergeVerdicts(ev, []Verdict{v, v})
				if !m.Outcome.Valid() {
					t.Fatalf("%s %s: invalid merged outcome %q", b.Dialect, ev.Name, m.Outcome)
				}
				switch v.Outcome {
				case dsh.HookOutcomeError, dsh.HookOutcomeTimeout, dsh.HookOutcomeFailed:
					if v.Reason != "" || len(v.Contexts) > 0 {
						t.Fatalf("%s %s: %s carries a decision: %+v", b.Dialect, ev.Name, v.Outcome, v)
					}
					if len(v.Diagnostics) == 0 {
						t.Fatalf("%s %s: %s without a diagnostic", b.Dialect, ev.Name, v.Outcome)
					}
				case dsh.HookOutcomeDeny, dsh.HookOutcomeBlock, dsh.HookOutcomeHalt:
					if strings.TrimSpace(v.Reason) == "" {
						t.Fatalf("%s %s: %s without a reason", b.Dialect, ev.Name, v.Outcome)
					}
				}
			}
		}
	})
}

// The diagnostic of a field that makes a hook failed quotes a short string value (up to 40
// characters) and writes "(set)" for a longer one; a rule that names the value it matches
// quotes that; a blocking rule without its reason names the reason field.
func TestDecodeDiagnosticsDescribeTheField(t *testing.T) {
	cx := &hookmap.Codex
	forty := strings.Repeat("é", 40)
	for _, c := range []struct {
		name, stdout, want string
	}{
		{"short string", `{"stopReason":"short"}`, `stopReason "short" is not valid at PreToolUse`},
		{"40 characters", `{"stopReason":"` + forty + `"}`, `stopReason "` + forty + `" is not valid at PreToolUse`},
		{"41 characters", `{"stopReason":"` + forty + `x"}`, `stopReason (set) is not valid at PreToolUse`},
		{"matched value", `{"suppressOutput":true}`, `suppressOutput true is not valid at PreToolUse`},
		{"reason field", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"}}`,
			`hookSpecificOutput.permissionDecision "deny" needs a non-empty hookSpecificOutput.permissionDecisionReason`},
	} {
		v := Decode(cx, event(t, cx, "PreToolUse"), exited(0, c.stdout, ""))
		if v.Outcome != "failed" || !slices.Contains(v.Diagnostics, c.want) {
			t.Errorf("%s: outcome %q, diagnostics %q; want failed with %q", c.name, v.Outcome, v.Diagnostics, c.want)
		}
	}
	// A table rule that needs a reason but names no field asks for "reason".
	ev := *event(t, cx, "Stop")
	ev.Rules = []hookmap.Rule{{When: "decision", Is: `"block"`, Then: "block", NeedsReason: true}}
	v := Decode(cx, &ev, exited(0, `{"decision":"block"}`, ""))
	if want := `decision "block" needs a non-empty reason`; v.Outcome != "failed" || !slices.Contains(v.Diagnostics, want) {
		t.Errorf("custom rule: outcome %q, diagnostics %q; want failed with %q", v.Outcome, v.Diagnostics, want)
	}
}

// A notice whose field is present but empty (an empty object) is not given: an empty value
// counts as unset, as null and "" do.
func TestNoticeOfAnEmptyObjectIsNotGiven(t *testing.T) {
	cc := &hookmap.ClaudeCode
	for _, tc := range []struct {
		input   string
		notices int
	}{
		{`{}`, 0},
		{`null`, 0},
		{`{"command":"ls"}`, 1},
	} {
		out := `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":` + tc.input + `}}}`
		v := Decode(cc, event(t, cc, "PermissionRequest"), exited(0, out, ""))
		if len(v.Notices) != tc.notices {
			t.Errorf("updatedInput %s: notices %q, want %d", tc.input, v.Notices, tc.notices)
		}
	}
}

// On exit 2, Claude Code's JSON stdout supplies the reason when it blocks (or denies) with
// one; an allow's reason does not replace stderr's.
func TestExit2JSONReasonOnlyFromABlockOrDeny(t *testing.T) {
	cc := &hookmap.ClaudeCode
	for _, tc := range []struct {
		event, stdout, want string
	}{
		{"UserPromptSubmit", `{"decision":"block","reason":"json block"}`, "json block"},
		{"PreToolUse", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"fine"}}`, "stderr says no"},
	} {
		v := Decode(cc, event(t, cc, tc.event), exited(2, tc.stdout, "stderr says no"))
		if v.Reason != tc.want {
			t.Errorf("%s exit 2 with %s: reason %q, want %q", tc.event, tc.stdout, v.Reason, tc.want)
		}
	}
}

// TestSuspectCapture: where a process the hook left running kept its output open, Claude
// Code's table honours only a harmless document (a deny, a halt, a context where the
// event allows it) and refuses one that grants, rewrites or adds to the turn, and a JSON
// object cut short; Codex's honours what it read.
func TestSuspectCapture(t *testing.T) {
	cc, cx := &hookmap.ClaudeCode, &hookmap.Codex
	zero := 0
	orphan := func(out string) Result { return Result{ExitCode: &zero, Stdout: []byte(out), Orphaned: true} }
	for _, c := range []struct {
		name  string
		b     *hookmap.Bridge
		event string
		out   string
		want  Outcome
	}{
		{"stop block continues: refused", cc, "Stop", `{"decision":"block","reason":"again"}`, dsh.HookOutcomeError},
		{"codex honours", cx, "Stop", `{"decision":"block","reason":"again"}`, dsh.HookOutcomeBlock},
		{"pre deny kept", cc, "PreToolUse", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}`, dsh.HookOutcomeDeny},
		{"pre allow refused", cc, "PreToolUse", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`, dsh.HookOutcomeError},
		{"pre rewrite refused", cc, "PreToolUse", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"x"}}}`, dsh.HookOutcomeError},
		{"pre context refused", cc, "PreToolUse", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"c"}}`, dsh.HookOutcomeError},
		{"prompt context kept", cc, "UserPromptSubmit", `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"c"}}`, dsh.HookOutcomePass},
		{"post block refused", cc, "PostToolUse", `{"decision":"block","reason":"r"}`, dsh.HookOutcomeError},
		{"halt kept", cc, "Stop", `{"continue":false,"stopReason":"enough"}`, dsh.HookOutcomeHalt},
		{"cut short refused", cc, "PreToolUse", `{"hookSpecificOutput":{"hookEventName":"PreTo`, dsh.HookOutcomeError},
		{"plain text kept", cc, "UserPromptSubmit", `some words`, dsh.HookOutcomePass},
	} {
		v := Decode(c.b, event(t, c.b, c.event), orphan(c.out))
		if v.Outcome != c.want {
			t.Errorf("%s: outcome %s, want %s (%v)", c.name, v.Outcome, c.want, v.Diagnostics)
		}
		if c.want == dsh.HookOutcomeError && (len(v.Contexts) > 0 || v.Reason != "" || len(v.Rewrite) > 0) {
			t.Errorf("%s: a refused capture kept %+v", c.name, v)
		}
	}
	// The same document, not orphaned, counts.
	if v := Decode(cc, event(t, cc, "Stop"), Result{ExitCode: &zero, Stdout: []byte(`{"decision":"block","reason":"again"}`)}); v.Outcome != dsh.HookOutcomeBlock {
		t.Errorf("a clean capture's Stop block: %s", v.Outcome)
	}
}
