package hookproto

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
	"github.com/dshkit/dsh/runtime/permrule"
)

// with is a command handler with further fields.
func with(cmd string, fields map[string]any) map[string]any {
	m := map[string]any{"type": "command", "command": cmd}
	for k, v := range fields {
		m[k] = v
	}
	return m
}

func rawGroup(matcher string, hooks ...map[string]any) map[string]any {
	hs := make([]any, len(hooks))
	for i, h := range hooks {
		hs[i] = h
	}
	return map[string]any{"matcher": matcher, "hooks": hs}
}

func bashCall(cmd string) *permrule.Call {
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return &permrule.Call{Tool: "Bash", Input: in}
}

// An "if" that does not parse, is not a string, or stands at an event where the engine
// never tests it skips its handler with a diagnostic naming the file and JSON path; the
// other handlers load.
func TestIfLoadDiagnostics(t *testing.T) {
	for _, tc := range []struct {
		event string
		value any
		want  string
	}{
		{"PreToolUse", "Bash(git *", `test.json: hooks.PreToolUse[0].hooks[0].if: hook "if" that never runs: permission rule "Bash(git *": at position 4: an opening parenthesis that never closes`},
		{"PreToolUse", 5, `test.json: hooks.PreToolUse[0].hooks[0].if: malformed hook entry: "if" must be a permission rule string`},
		{"Stop", "Bash", `test.json: hooks.Stop[0].hooks[0].if: hook "if" that never runs: "if" is tested at PreToolUse, PostToolUse, PostToolUseFailure, PermissionRequest, PermissionDenied only; at Stop the engine never runs this hook`},
	} {
		_, _, diags := engineFor(t, &hookmap.ClaudeCode, tc.event, rawGroup("", with("exit 2", map[string]any{"if": tc.value}), with("exit 0", nil)))
		if len(diags) != 1 || diags[0].Skipped != "handler" || !strings.HasPrefix(diags[0].Error(), tc.want) {
			t.Errorf("%s if %v: diagnostics %v, want one skipping the handler: %s", tc.event, tc.value, diags, tc.want)
			continue
		}
		if tc.value == "Bash(git *" {
			var pe *permrule.ParseError
			if !errors.Is(diags[0], ErrHandlerIf) || !errors.As(diags[0], &pe) || pe.Pos != 4 {
				t.Errorf("the diagnostic does not unwrap to ErrHandlerIf and the parse error: %v", diags[0])
			}
		}
	}
	// Codex has no "if": the field is an unknown one, tolerated, and does not filter.
	e, _, diags := engineFor(t, &hookmap.Codex, "PreToolUse", rawGroup("", with("exit 0", map[string]any{"if": "Bash(git *"})))
	if len(diags) != 0 || len(e.Config.Handlers("PreToolUse")) != 1 || e.Config.Handlers("PreToolUse")[0].Options.If != nil {
		t.Errorf("codex: diagnostics %v, handlers %+v", diags, e.Config.Handlers("PreToolUse"))
	}
}

func TestOptionLoadDiagnostics(t *testing.T) {
	for field, value := range map[string]any{"onFailure": "stop", "asyncRewake": "yes"} {
		_, _, diags := engineFor(t, &hookmap.ClaudeCode, "PreToolUse", rawGroup("", with("exit 0", map[string]any{field: value})))
		if len(diags) != 1 || diags[0].Skipped != "handler" || !strings.Contains(diags[0].Path, field) || !errors.Is(diags[0], ErrMalformed) {
			t.Errorf("%s %v: %v", field, value, diags)
		}
	}
	e, _, diags := engineFor(t, &hookmap.ClaudeCode, "PreToolUse",
		rawGroup("", with("exit 0", map[string]any{"asyncRewake": true, "async": true, "onFailure": "block", "once": true})))
	hs := e.Config.Handlers("PreToolUse")
	if len(diags) != 0 || len(hs) != 1 || hs[0].Async || !hs[0].Options.AsyncRewake || hs[0].Options.OnFailure != "block" {
		t.Errorf("diagnostics %v, handler %+v", diags, hs)
	}
}

// The hook runs when its rule matches the call (one subcommand is enough) or cannot be
// told, and not otherwise; a Fire without a call runs it.
func TestFireIf(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	e, rec, diags := engineFor(t, &hookmap.ClaudeCode, "PreToolUse",
		rawGroup("Bash", with("echo x >> "+mark+"; echo no >&2; exit 2", map[string]any{"if": "Bash(git *)"})))
	if len(diags) != 0 {
		t.Fatal(diags)
	}
	for _, tc := range []struct {
		call *permrule.Call
		runs bool
	}{
		{bashCall("git push"), true},
		{bashCall("ls && FOO=1 git push"), true},
		{bashCall("ls -la"), false},
		{bashCall("for x in a; do ls; done"), true}, // cannot be told: fail safe
		{nil, true},
	} {
		_ = os.Remove(mark)
		before := len(rec.all())
		rep := e.Fire(context.Background(), Fire{Event: "PreToolUse", Subject: "Bash", Turn: 1, InTurn: true, Call: tc.call})
		_, err := os.Stat(mark)
		ran := err == nil
		if ran != tc.runs || (rep.Merged.Outcome == dsh.HookOutcomeDeny) != tc.runs || (len(rec.all()) > before) != tc.runs {
			t.Errorf("call %+v: ran %v, outcome %s, want ran %v", tc.call, ran, rep.Merged.Outcome, tc.runs)
		}
	}
}

// onFailure "block": exit 1, a timeout and a missing program become the event's exit-2
// outcome with the engine's reason; exit 0 and 2 are untouched; Stop ignores it.
func TestFireOnFailureBlock(t *testing.T) {
	for _, tc := range []struct {
		cmd     string
		timeout float64
		outcome Outcome
		reason  string
	}{
		{"echo 'broken guard' >&2; exit 1", 0, dsh.HookOutcomeDeny, "failed; blocking because onFailure is \"block\"\nbroken guard"},
		{"sleep 5", 0.2, dsh.HookOutcomeDeny, "timed out; blocking because onFailure is \"block\""},
		{"/nonexistent/guard", 0, dsh.HookOutcomeDeny, "failed; blocking because onFailure is \"block\"\n"},
		{"exit 0", 0, dsh.HookOutcomePass, ""},
		{"echo 'own reason' >&2; exit 2", 0, dsh.HookOutcomeDeny, "own reason"},
	} {
		hook := with(tc.cmd, map[string]any{"onFailure": "block"})
		if tc.timeout > 0 {
			hook["timeout"] = tc.timeout
		}
		e, rec, _ := engineFor(t, &hookmap.ClaudeCode, "PreToolUse", rawGroup("", hook))
		rep := e.Fire(context.Background(), Fire{Event: "PreToolUse", Subject: "Bash", Turn: 1, InTurn: true})
		asExit2 := tc.outcome == dsh.HookOutcomeDeny && tc.reason != "own reason"
		if rep.Merged.Outcome != tc.outcome || !strings.HasPrefix(rep.Merged.Reason, tc.reason) || rep.Hooks[0].Verdict.AsExit2 != asExit2 {
			t.Errorf("%q: %s %q, want %s %q", tc.cmd, rep.Merged.Outcome, rep.Merged.Reason, tc.outcome, tc.reason)
		}
		recs := rec.all()
		if res, ok := recs[len(recs)-1].(dsh.HookResult); !ok || res.Outcome != dsh.HookOutcome(tc.outcome) {
			t.Errorf("%q: hook/result %+v", tc.cmd, recs[len(recs)-1])
		}
	}
	e, _, _ := engineFor(t, &hookmap.ClaudeCode, "Stop", rawGroup("", with("exit 1", map[string]any{"onFailure": "block"})))
	if rep := e.Fire(context.Background(), Fire{Event: "Stop"}); rep.Merged.Outcome != dsh.HookOutcomePass || rep.Hooks[0].Verdict.AsExit2 {
		t.Errorf("Stop ignores onFailure, got %s", rep.Merged.Outcome)
	}
}

// asyncRewake: awaited; its exit 2 is the event's exit 2, anything else decides nothing.
func TestFireAsyncRewake(t *testing.T) {
	for _, tc := range []struct {
		cmd     string
		outcome Outcome
	}{
		{"sleep 0.3; echo 'wake up' >&2; exit 2", dsh.HookOutcomeDeny},
		{`printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"x"}}'`, dsh.HookOutcomePass},
		{"exit 1", dsh.HookOutcomeError},
	} {
		e, _, _ := engineFor(t, &hookmap.ClaudeCode, "PreToolUse", rawGroup("", with(tc.cmd, map[string]any{"asyncRewake": true, "onFailure": "block"})))
		start := time.Now()
		rep := e.Fire(context.Background(), Fire{Event: "PreToolUse", Subject: "Bash"})
		if rep.Merged.Outcome != tc.outcome && !(tc.outcome == dsh.HookOutcomeError && rep.Merged.Outcome == dsh.HookOutcomePass) {
			t.Errorf("%q: %s, want %s", tc.cmd, rep.Merged.Outcome, tc.outcome)
		}
		if rep.Async != 0 || len(rep.Hooks) != 1 || rep.Hooks[0].Verdict.Outcome != tc.outcome {
			t.Errorf("%q: not awaited as one sync hook: %+v", tc.cmd, rep)
		}
		if strings.HasPrefix(tc.cmd, "sleep") && time.Since(start) < 300*time.Millisecond {
			t.Errorf("Fire did not await the asyncRewake hook")
		}
	}
}

// A PreToolUse "defer" halts before the call (it never runs), as does continue:false
// with a deny or exit 2; continue:false alone halts otherwise.
func TestDeferIsAHaltBefore(t *testing.T) {
	ev, _ := hookmap.ClaudeCode.Lookup("PreToolUse")
	zero := 0
	out := func(s string) Result { return Result{ExitCode: &zero, Stdout: []byte(s)} }
	v := Decode(&hookmap.ClaudeCode, &ev, out(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"defer","permissionDecisionReason":"later"}}`))
	if v.Outcome != dsh.HookOutcomeHalt || !v.HaltBefore || v.Reason != "later" {
		t.Errorf("defer: %+v", v)
	}
	m := MergeVerdicts(&ev, []Verdict{v})
	if !m.HaltBefore {
		t.Errorf("merged defer lost HaltBefore: %+v", m)
	}
	v = Decode(&hookmap.ClaudeCode, &ev, out(`{"continue":false,"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"defer"}}`))
	if v.Outcome != dsh.HookOutcomeHalt || v.HaltBefore {
		t.Errorf("continue:false: %+v", v)
	}
	// continue:false with a deny, or with exit 2, halts before the call (measured in
	// Claude Code 2.1.328: differential cases pre/deny-continue-false and
	// pre/exit2-continue-false).
	v = Decode(&hookmap.ClaudeCode, &ev, out(`{"continue":false,"stopReason":"s","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}`))
	if v.Outcome != dsh.HookOutcomeHalt || !v.HaltBefore || v.Reason != "s" {
		t.Errorf("deny and continue:false: %+v", v)
	}
	two := 2
	v = Decode(&hookmap.ClaudeCode, &ev, Result{ExitCode: &two, Stdout: []byte(`{"continue":false,"stopReason":"s"}`), Stderr: []byte("no")})
	if v.Outcome != dsh.HookOutcomeHalt || !v.HaltBefore || v.Reason != "s" {
		t.Errorf("exit 2 and continue:false: %+v", v)
	}
}

// Two handlers of one command with different "if" rules: the one whose rule matches runs
// (the rule is tested before identical commands are de-duplicated, as the engine does).
func TestIfBeforeDedupe(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	cmd := "echo x >> " + mark
	e, _, _ := engineFor(t, &hookmap.ClaudeCode, "PreToolUse",
		rawGroup("Bash", with(cmd, map[string]any{"if": "Bash(git *)"})), rawGroup("Bash", with(cmd, map[string]any{"if": "Bash(npm *)"})))
	e.Fire(context.Background(), Fire{Event: "PreToolUse", Subject: "Bash", Call: bashCall("npm test")})
	if data, err := os.ReadFile(mark); err != nil || string(data) != "x\n" {
		t.Errorf("the npm guard ran %q (%v), want once", data, err)
	}
}

// NotFired: a table's pending event (one dsh has the capability for but does not fire yet)
// is an ErrUnsupportedEvent, which fails a file naming it; an unfired one is not; no table
// of the spec has one now, so the row is added to a copy.
func TestPendingEventFailsClosed(t *testing.T) {
	b := hookmap.ClaudeCode
	b.Pending = map[string]string{"InstructionsLoaded": "when an MCP server asks"}
	err := NotFired(&b, "InstructionsLoaded")
	if !errors.Is(err, ErrUnsupportedEvent) || !strings.Contains(err.Error(), "does not fire yet (it would fire when an MCP server asks)") {
		t.Errorf("pending: %v", err)
	}
	if err := NotFired(&b, "TeammateIdle"); !errors.Is(err, ErrUnfiredEvent) {
		t.Errorf("unfired: %v", err)
	}
	if err := NotFired(&b, "PreToolUse"); err != nil {
		t.Errorf("fired: %v", err)
	}
}

// A configuration file over MaxConfigBytes is one ErrConfigRead diagnostic naming it, and
// nothing of it loads; ReadAtMost reads a reader of exactly max bytes whole.
func TestLoadFileTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(path, bytes.Repeat([]byte(" "), MaxConfigBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	c, diags := LoadFile(path, LoadOptions{Dialect: ClaudeCode})
	if len(diags) != 1 || !errors.Is(diags[0].Err, ErrConfigRead) || diags[0].File != path || !strings.Contains(diags[0].Err.Error(), "larger than") || len(c.Events()) != 0 {
		t.Errorf("diagnostics %v, config %+v", diags, c)
	}
	if data, err := ReadAtMost(strings.NewReader("abc"), 3); err != nil || string(data) != "abc" {
		t.Errorf("ReadAtMost at the bound: %q, %v", data, err)
	}
}
