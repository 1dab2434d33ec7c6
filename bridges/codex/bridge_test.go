package codex_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dshkit/dsh/bridges/codex"
	"github.com/dshkit/dsh/bridges/hookproto"
	ht "github.com/dshkit/dsh/bridges/internal/hooktest"
	"github.com/dshkit/dsh/generated/dsh"
)

var ctx = context.Background()

func setupIn(t *testing.T, dir string, cfg codex.Config) (*ht.Harness, *codex.Bridge) {
	t.Helper()
	h := ht.New(dir)
	if cfg.Workspace == "" {
		cfg.Workspace = dir
	}
	cfg.Session, cfg.Recorder = h.Session, h.Rec
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Getenv == nil {
		cfg.Getenv = func(k string) string {
			if k == "SHELL" {
				return "/bin/sh"
			}
			return os.Getenv(k)
		}
	}
	b, err := codex.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close(ctx) })
	b.Register(h.Reg.Plugin(codex.Plugin))
	return h, b
}

func setup(t *testing.T, groups ...ht.Group) *ht.Harness {
	t.Helper()
	h, _ := setupIn(t, t.TempDir(), codex.Config{Canonical: true, Files: []string{ht.Config(t, t.TempDir(), "hooks.json", groups...)}})
	return h
}

func records(t *testing.T, h *ht.Harness) []dsh.SessionEventData {
	t.Helper()
	recs := h.Rec.Take()
	for _, r := range recs {
		if inv, ok := r.(dsh.HookInvoked); ok && (inv.Dialect != dsh.HookDialectCodex || !strings.HasPrefix(inv.HandlerID, "codex:")) {
			t.Errorf("invoked %+v", inv)
		}
	}
	return recs
}

// Scenario 54: exit 2 with stderr denies; hook/invoked has dialect codex.
func TestDeny(t *testing.T) {
	h := setup(t, ht.G("PreToolUse", "Bash", `echo "codex blocked it" >&2; exit 2`))
	d, _ := h.PreTool(ctx, h.Exec("Bash", `{"command":"ls"}`))
	if ht.Describe(d) != "deny: codex blocked it" {
		t.Errorf("%s", ht.Describe(d))
	}
	recs := records(t, h)
	if inv := recs[0].(dsh.HookInvoked); inv.Point != "PreToolUse" {
		t.Errorf("%+v", inv)
	}
	if got := ht.Results(recs); !slices.Equal(got, []dsh.HookOutcome{"deny"}) {
		t.Errorf("%v", got)
	}
}

// Scenarios 20 and 58 (real Codex): exit 2 with blank stderr, ask, allow without
// updatedInput and deny without a reason make the hook failed; the call proceeds.
func TestFailedOutcomes(t *testing.T) {
	for name, cmd := range map[string]string{
		"20 exit 2 blank":   `exit 2`,
		"58 ask":            `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"r"}}'`,
		"58 allow":          `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'`,
		"58 deny no reason": `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"}}'`,
		"continue false":    `echo '{"continue":false,"stopReason":"x"}'`,
		"unknown field":     `echo '{"permissionDecision":"deny"}'`,
	} {
		t.Run(name, func(t *testing.T) {
			h := setup(t, ht.G("PreToolUse", "", cmd))
			d, _ := h.PreTool(ctx, h.Exec("Bash", `{"command":"ls"}`))
			if d.Kind() != dsh.PreToolAllowKind {
				t.Errorf("%s", ht.Describe(d))
			}
			if got := ht.Results(records(t, h)); !slices.Equal(got, []dsh.HookOutcome{"failed"}) {
				t.Errorf("%v", got)
			}
		})
	}
}

// Scenario 55: plain stdout is context on UserPromptSubmit and SessionStart only, on
// exit 0 only.
func TestPlainStdout(t *testing.T) {
	h := setup(t,
		ht.G("UserPromptSubmit", "", `echo "extra guidance from a plain hook"`, `echo stale; exit 1`, `echo '{"unrelated":"json"}'`),
		ht.G("SessionStart", "", `echo "session context"`, `echo "not this"; echo err >&2; exit 2`))
	d, _ := h.PreStep(ctx, "hi")
	e := d.(dsh.PreStepEnter)
	if len(e.Messages) != 2 || !slices.Equal(ht.Texts(e.Messages[1]), []string{"extra guidance from a plain hook"}) || ht.Source(e.Messages[1]) != "plugin:hooks-codex" {
		t.Errorf("%+v", e.Messages)
	}
	if got := ht.Results(records(t, h)); !slices.Equal(got, []dsh.HookOutcome{"pass", "error", "failed"}) {
		t.Errorf("%v", got)
	}
	h.SessionStart(ctx, dsh.SessionStartSourceStartup)
	if got := h.Agent.Injected(); len(got) != 1 || !slices.Equal(ht.Texts(got[0]), []string{"session context"}) {
		t.Errorf("%+v", got)
	}
}

// Scenario 56: the Codex payload: tool_name as called, {command} for shell tools, model,
// permission_mode, null transcript_path, no trailing newline, and turn_id at PreToolUse
// too: the published schema has none there, but the real engine sends it (differential
// suite).
func TestPayload(t *testing.T) {
	dir := t.TempDir()
	h := setup(t, ht.G("PreToolUse", "", `cat > "`+dir+`/$(date +%s%N).json"`))
	h.Turn = 4
	for _, args := range []string{`{"command":"ls"}`, `{"command":["bash","-lc","ls -la"]}`, `{"command":5}`} {
		h.PreTool(ctx, h.Exec("shell", args))
	}
	h.PreTool(ctx, h.Exec("mcp__fs__read", `{"path":"a"}`))
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 4 {
		t.Fatalf("%d payloads", len(files))
	}
	var commands []string
	for _, f := range files {
		data, _ := os.ReadFile(f)
		if strings.HasSuffix(string(data), "\n") {
			t.Errorf("trailing newline: %q", data)
		}
		var in map[string]json.RawMessage
		if err := json.Unmarshal(data, &in); err != nil {
			t.Fatal(err)
		}
		if string(in["turn_id"]) != `"4"` {
			t.Errorf("PreToolUse turn_id = %s, want \"4\" (the real engine sends it)", in["turn_id"])
		}
		for k, want := range map[string]string{"model": `"test-model"`, "permission_mode": `"default"`, "transcript_path": `null`, "hook_event_name": `"PreToolUse"`} {
			if string(in[k]) != want {
				t.Errorf("%s = %s, want %s", k, in[k], want)
			}
		}
		if string(in["tool_name"]) == `"shell"` {
			var ti map[string]string
			if err := json.Unmarshal(in["tool_input"], &ti); err != nil || len(ti) != 1 {
				t.Errorf("shell tool_input %s", in["tool_input"])
			}
			commands = append(commands, ti["command"])
		} else if string(in["tool_input"]) != `{"path":"a"}` {
			t.Errorf("mcp tool_input %s", in["tool_input"])
		}
	}
	slices.Sort(commands)
	if want := []string{"", "bash -lc ls -la", "ls"}; !slices.Equal(commands, want) {
		t.Errorf("commands %q, want %q", commands, want)
	}
}

// TestTurnID: turn-scoped events other than PreToolUse carry the turn number as turn_id.
func TestTurnID(t *testing.T) {
	dir := t.TempDir()
	h := setup(t, ht.G("UserPromptSubmit", "", `cat > "`+dir+`/in.json"`))
	h.Turn = 7
	h.PreStep(ctx, "hi")
	data, _ := os.ReadFile(filepath.Join(dir, "in.json"))
	var in map[string]json.RawMessage
	if err := json.Unmarshal(data, &in); err != nil || string(in["turn_id"]) != `"7"` || string(in["prompt"]) != `"hi"` {
		t.Errorf("%s %v", data, err)
	}
}

// Scenario 57: cancelling the turn kills a hanging hook at once; the records are still
// written.
func TestCancel(t *testing.T) {
	h := setup(t, ht.G("UserPromptSubmit", "", `sleep 30`))
	c, cancel := context.WithCancel(ctx)
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	d, err := h.PreStep(c, "hi")
	if time.Since(start) > 2*time.Second {
		t.Errorf("cancel took %v", time.Since(start))
	}
	_ = d
	_ = err
	if got := ht.Types(records(t, h)); !slices.Equal(got, []string{"hook/invoked", "hook/result"}) {
		t.Errorf("%v", got)
	}
}

// Scenario 59: continue:false beats a block at Stop; first block reason at PreToolUse.
func TestStopBeatsBlock(t *testing.T) {
	h := setup(t, ht.G("Stop", "", `echo '{"continue":false,"stopReason":"enough"}'`, `echo '{"decision":"block","reason":"keep going"}'`))
	h.Stop(ctx, 0)
	if got := h.Agent.Halted(); !slices.Equal(got, []string{"enough"}) || len(h.Agent.Steered()) != 0 {
		t.Errorf("halted %v", got)
	}
	h = setup(t, ht.G("Stop", "", `echo '{"decision":"block","reason":"one"}'`, `echo two >&2; exit 2`))
	h.Stop(ctx, 0)
	if s := h.Agent.Steered(); len(s) != 1 || ht.Texts(s[0])[0] != "one\n\ntwo" {
		t.Errorf("steered %+v", s)
	}
	h = setup(t, ht.G("PreToolUse", "", `echo one >&2; exit 2`, `echo two >&2; exit 2`))
	if d, _ := h.PreTool(ctx, h.Exec("Bash", `{}`)); ht.Describe(d) != "deny: one" {
		t.Errorf("%s", ht.Describe(d))
	}
}

// Scenario 60: Codex does not de-duplicate identical handlers.
func TestNoDedupe(t *testing.T) {
	dir, ws := t.TempDir(), t.TempDir()
	cmd := `echo x >> ` + filepath.Join(dir, "count")
	a := ht.Config(t, dir, "a.json", ht.G("Stop", "", cmd))
	b := ht.Config(t, dir, "b.json", ht.G("Stop", "", cmd))
	h, _ := setupIn(t, ws, codex.Config{Canonical: true, Files: []string{a, b}})
	h.Stop(ctx, 0)
	data, _ := os.ReadFile(filepath.Join(dir, "count"))
	if string(data) != "x\nx\n" {
		t.Errorf("ran %d times", strings.Count(string(data), "x"))
	}
}

// Scenarios 12 and 14: Codex matchers are unanchored regexes.
func TestMatchers(t *testing.T) {
	h := setup(t, ht.G("PreToolUse", "Bash", `echo bash >&2; exit 2`), ht.G("PreToolUse", "^Edit$", `echo edit >&2; exit 2`))
	for tool, want := range map[string]string{"Bash": "deny: bash", "BashOutput": "deny: bash", "Edit": "deny: edit", "NotebookEdit": "allow", "shell": "allow"} {
		if d, _ := h.PreTool(ctx, h.Exec(tool, `{}`)); ht.Describe(d) != want {
			t.Errorf("%s: %s, want %s", tool, ht.Describe(d), want)
		}
	}
	h.Rec.Take()
	h.PreTool(ctx, h.Exec("shell", `{}`))
	if recs := h.Rec.Take(); len(recs) != 0 {
		t.Errorf("unmatched call recorded %v", ht.Types(recs))
	}
}

// Scenarios 8-10 and decisions 2, 5, 7: timeout keys, plugin variables, $SHELL -c,
// async hooks run detached (not skipped).
func TestConfigAndEnv(t *testing.T) {
	t.Run("8 timeoutSec", func(t *testing.T) {
		dir := t.TempDir()
		cfg := ht.Raw(t, dir, "hooks.json", `{"hooks":{"PreToolUse":[{"hooks":[
			{"type":"command","command":"sleep 5","timeoutSec":0.3},
			{"type":"command","command":"true"}]}]}}`)
		h, b := setupIn(t, t.TempDir(), codex.Config{Canonical: true, Files: []string{cfg}})
		hs := b.Config().Handlers("PreToolUse")
		if hs[0].Timeout != 300*time.Millisecond || hs[1].Timeout != 600*time.Second {
			t.Errorf("timeouts %v %v", hs[0].Timeout, hs[1].Timeout)
		}
		start := time.Now()
		h.PreTool(ctx, h.Exec("x", `{}`))
		if time.Since(start) > 2*time.Second {
			t.Errorf("took %v", time.Since(start))
		}
		if got := ht.Results(records(t, h)); !slices.Equal(got, []dsh.HookOutcome{"timeout", "pass"}) {
			t.Errorf("%v", got)
		}
	})
	t.Run("9 plugin variables", func(t *testing.T) {
		root, ws, plain := t.TempDir(), t.TempDir(), t.TempDir()
		ht.Script(t, root, "s.sh", `echo "$PLUGIN_ROOT|$CLAUDE_PLUGIN_ROOT" > `+ws+`/env`)
		ht.Raw(t, root, "hooks/hooks.json", `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"${PLUGIN_ROOT}/s.sh"}]}]}}`)
		user := ht.Raw(t, plain, "hooks.json", `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"echo '${NOT_SUBSTITUTED}/s.sh' > `+ws+`/cmd"}]}]}}`)
		h, b := setupIn(t, ws, codex.Config{Canonical: true, Files: []string{user}, Plugins: []hookproto.Source{{PluginRoot: root}}})
		h.Stop(ctx, 0)
		data, _ := os.ReadFile(filepath.Join(ws, "env"))
		if strings.TrimSpace(string(data)) != root+"|"+root {
			t.Errorf("plugin env %q", data)
		}
		if hs := b.Config().Handlers("Stop"); !strings.Contains(hs[0].Command, "${NOT_SUBSTITUTED}") {
			t.Errorf("user hook substituted: %s", hs[0].Command)
		}
	})
	// The real engine runs `$SHELL -c`, not a login shell (differential suite).
	t.Run("shell -c not a login shell", func(t *testing.T) {
		ws := t.TempDir()
		ht.Script(t, ws, "fake-shell", `echo "$@" > `+ws+`/argv; exec /bin/sh "$@"`)
		cfg := ht.Config(t, ws, "hooks.json", ht.G("Stop", "", "true"))
		h, _ := setupIn(t, ws, codex.Config{Canonical: true, Files: []string{cfg}, Getenv: func(k string) string {
			if k == "SHELL" {
				return filepath.Join(ws, "fake-shell")
			}
			return ""
		}})
		h.Stop(ctx, 0)
		data, _ := os.ReadFile(filepath.Join(ws, "argv"))
		if strings.TrimSpace(string(data)) != "-c true" {
			t.Errorf("argv %q", data)
		}
	})
	t.Run("10 async runs detached", func(t *testing.T) {
		dir := t.TempDir()
		cfg := ht.Config(t, dir, "hooks.json", ht.Group{Event: "PreToolUse", Hooks: []ht.Hook{
			{Command: `echo "sync" >&2; exit 2`},
			{Command: `sleep 0.2; touch ` + dir + `/bg`, Async: true},
		}})
		h, b := setupIn(t, t.TempDir(), codex.Config{Canonical: true, Files: []string{cfg}})
		d, _ := h.PreTool(ctx, h.Exec("Bash", `{}`))
		if ht.Describe(d) != "deny: sync" {
			t.Errorf("%s", ht.Describe(d))
		}
		b.Wait(ctx)
		if _, err := os.Stat(filepath.Join(dir, "bg")); err != nil {
			t.Errorf("async hook did not run: %v", err)
		}
	})
}

// Codex PreCompact and PostCompact only observe a compaction (docs/design/REWRITE-COMPACTION.md#23-mapping-claude-code-and-codex-hooks):
// exit 2 and a block do not defer it, systemMessage is a notice, and contexts are not
// taken; continue:false stops the turn (as Codex 0.169.0): the bridge defers the attempt
// and halts. The input carries turn_id, model and trigger, and no permission_mode.
func TestCompactionObservesOnly(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.json")
	for _, c := range []struct {
		pre, want string
		halted    bool
	}{
		{`cat > ` + in + `; echo 'not now' >&2; exit 2`, "proceed", false},
		{`echo '{"decision":"block","reason":"no"}'`, "proceed", false},
		{`echo 'plain words'`, "proceed", false},
		{`echo '{"systemMessage":"compacting"}'`, "proceed", false},
		{`echo '{"continue":false,"stopReason":"no compaction"}'`, "defer:no compaction", true},
	} {
		h := setup(t, ht.G("PreCompact", "auto", c.pre), ht.G("PreCompact", "manual", `touch `+filepath.Join(dir, "manual-ran")))
		d, err := h.PreCompact(ctx, "cmp_1", dsh.CompactionOriginAuto, "", 3)
		if err != nil {
			t.Fatal(err)
		}
		got := ht.PreCompactString(d)
		if got != c.want {
			t.Errorf("%s: %s, want %s", c.pre, got, c.want)
		}
		if hs := h.Agent.Halted(); (len(hs) > 0) != c.halted {
			t.Errorf("%s: halted %v", c.pre, hs)
		}
		recs := records(t, h)
		if len(recs) != 2 {
			t.Errorf("%s: %d records", c.pre, len(recs))
		} else if inv := recs[0].(dsh.HookInvoked); inv.Maintenance == nil || *inv.Maintenance != "cmp_1" || inv.Turn != 3 {
			t.Errorf("%s: invoked %+v", c.pre, inv)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "manual-ran")); err == nil {
		t.Error("the manual matcher ran at an automatic compaction")
	}
	data, _ := os.ReadFile(in)
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("stdin %q: %v", data, err)
	}
	if m["hook_event_name"] != "PreCompact" || m["trigger"] != "auto" || m["turn_id"] != "3" || m["model"] != "test-model" {
		t.Errorf("stdin %v", m)
	}
	if _, ok := m["permission_mode"]; ok {
		t.Errorf("stdin has permission_mode: %v", m)
	}

	post := filepath.Join(dir, "post.json")
	h := setup(t, ht.G("PostCompact", "", `cat > `+post+`; echo '{"hookSpecificOutput":{"hookEventName":"PostCompact","additionalContext":"not taken"}}'`),
		ht.G("PostCompact", "", `echo '{"systemMessage":"compacted"}'`))
	d, err := h.PostCompact(ctx, "cmp_2", dsh.CompactionOriginAuto, "S", 1)
	if err != nil || d.Kind() != dsh.PostCompactAcceptKind {
		t.Errorf("PostCompact: %s, %v", ht.Describe(d), err)
	}
	data, _ = os.ReadFile(post)
	if !strings.Contains(string(data), `"hook_event_name":"PostCompact"`) || strings.Contains(string(data), "compact_summary") {
		t.Errorf("PostCompact stdin %s", data)
	}
	if got := ht.Results(records(t, h)); !slices.Equal(got, []dsh.HookOutcome{dsh.HookOutcomeFailed, dsh.HookOutcomePass}) {
		t.Errorf("PostCompact outcomes %v", got)
	}
}
