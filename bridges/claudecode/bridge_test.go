package claudecode_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dshkit/dsh/bridges/claudecode"
	"github.com/dshkit/dsh/bridges/hookproto"
	ht "github.com/dshkit/dsh/bridges/internal/hooktest"
	"github.com/dshkit/dsh/generated/dsh"
)

var ctx = context.Background()

// setup writes the groups as a settings file in a fresh workspace, loads a bridge on it
// and registers it; it returns the harness and the bridge.
func setup(t *testing.T, groups ...ht.Group) (*ht.Harness, *claudecode.Bridge) {
	t.Helper()
	dir := t.TempDir()
	return setupIn(t, dir, claudecode.Config{Canonical: true, Files: []string{ht.Config(t, t.TempDir(), "settings.json", groups...)}})
}

func setupIn(t *testing.T, dir string, cfg claudecode.Config) (*ht.Harness, *claudecode.Bridge) {
	t.Helper()
	h := ht.New(dir)
	if cfg.Workspace == "" {
		cfg.Workspace = dir
	}
	cfg.Session, cfg.Recorder = h.Session, h.Rec
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	n := 0
	b, err := claudecode.New(cfg, claudecode.WithMessageIDs(func() string { n++; return "hook-msg-" + string(rune('0'+n)) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close(ctx) })
	b.Register(h.Reg.Plugin(claudecode.Plugin))
	return h, b
}

func wantRecords(t *testing.T, h *ht.Harness, outcomes ...dsh.HookOutcome) {
	t.Helper()
	recs := h.Rec.Take()
	var types []string
	for range outcomes {
		types = append(types, dsh.HookInvokedType)
	}
	for range outcomes {
		types = append(types, dsh.HookResultType)
	}
	if got := ht.Types(recs); !slices.Equal(got, types) {
		t.Fatalf("records %v, want %v", got, types)
	}
	if got := ht.Results(recs); !slices.Equal(got, outcomes) {
		t.Errorf("outcomes %v, want %v", got, outcomes)
	}
	for _, r := range recs {
		if inv, ok := r.(dsh.HookInvoked); ok && inv.Dialect != dsh.HookDialectClaudeCode {
			t.Errorf("dialect %s", inv.Dialect)
		}
	}
}

// Scenario 2: a missing configuration is a diagnostic; nothing registers or records.
func TestMissingConfig(t *testing.T) {
	h, b := setupIn(t, t.TempDir(), claudecode.Config{Canonical: true, Files: []string{"/nonexistent/settings.json"}})
	d := b.Diagnostics()
	if len(d) != 1 || !errors.Is(d[0], hookproto.ErrConfigRead) {
		t.Fatalf("diagnostics %v", d)
	}
	dec, err := h.PreStep(ctx, "hi")
	if err != nil || dec.Kind() != dsh.PreStepEnterKind {
		t.Fatalf("%v %v", dec, err)
	}
	if recs := h.Rec.Take(); len(recs) != 0 {
		t.Errorf("records %v", recs)
	}
}

// Scenarios 3, 4 (decision 9: an invalid regex skips only its group; an unsupported
// event is reported) and 5 (matchers of matcher-less events are dropped).
func TestLoadingNeverFailsWhole(t *testing.T) {
	dir := t.TempDir()
	cfg := ht.Raw(t, dir, "settings.json", `{"hooks":{
		"PreToolUse":[{"matcher":"(","hooks":[{"type":"command","command":"exit 2"}]}],
		"SubagentFinish":[{"matcher":"(","hooks":[{"type":"command","command":"exit 2"}]}],
		"UserPromptSubmit":[{"matcher":"[","hooks":[{"command":"echo 'prompt denied by policy' >&2; exit 2"}]}],
		"Stop":[{"matcher":"(","hooks":[{"command":"x","shell":"powershell"},{"command":"exit 0"},{"type":"http","url":"x"}]}]}}`)
	h, b := setupIn(t, t.TempDir(), claudecode.Config{Canonical: true, Files: []string{cfg}})
	var msgs []string
	for _, d := range b.Diagnostics() {
		msgs = append(msgs, d.Error())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		`hooks.PreToolUse[0].matcher: invalid claude-code regex matcher "(" on event "PreToolUse"`,
		`unsupported hook event "SubagentFinish"`,
		`hooks.Stop[0].hooks[0].shell: unsupported hook handler type: shell "powershell"`,
		`hooks.Stop[0].hooks[2].url: malformed hook entry: url must be an absolute http or https URL, got "x"`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, all)
		}
	}
	dec, _ := h.PreStep(ctx, "hello")
	if got := ht.Describe(dec); got != "reject: prompt denied by policy" {
		t.Errorf("prompt: %s", got)
	}
	wantRecords(t, h, "block")
	if err := h.Stop(ctx, 0); err != nil {
		t.Fatal(err)
	}
	wantRecords(t, h, "pass") // scenario 6: only the command handler ran
	d, _ := h.PreTool(ctx, h.Exec("Bash", `{}`))
	if d.Kind() != dsh.PreToolAllowKind {
		t.Errorf("pretool %v", ht.Describe(d))
	}
}

// Scenarios 12, 13, 15, 16 and 17: Claude Code matchers at the bridge.
func TestMatchers(t *testing.T) {
	h, _ := setup(t,
		ht.G("PreToolUse", "Bash", "echo bash >&2; exit 2"),
		ht.G("PreToolUse", "Edit, Write", "echo edit >&2; exit 2"),
		ht.G("PreToolUse", "code-reviewer", "echo reviewer >&2; exit 2"),
		ht.G("PreToolUse", "Notebook.*", "echo notebook >&2; exit 2"),
		ht.G("PreToolUse", "mcp__memory", "echo bare >&2; exit 2"),
		ht.G("PreToolUse", "mcp__memory__.*", "echo mcp >&2; exit 2"),
		ht.G("SessionStart", "startup", "echo started"),
	)
	for tool, want := range map[string]string{
		"Bash": "deny: bash", "BashOutput": "allow", "Edit": "deny: edit", "Write": "deny: edit",
		"EditFile": "allow", "code-reviewer": "deny: reviewer", "senior-code-reviewer": "allow",
		"NotebookEdit": "deny: notebook", "mcp__memory__create_entities": "deny: mcp",
	} {
		d, err := h.PreTool(ctx, h.Exec(tool, `{}`))
		if err != nil || ht.Describe(d) != want {
			t.Errorf("%s: %s %v, want %s", tool, ht.Describe(d), err, want)
		}
	}
	h.Rec.Take()
	if err := h.SessionStart(ctx, dsh.SessionStartSourceResume); err != nil {
		t.Fatal(err)
	}
	if got := h.Agent.Injected(); len(got) != 0 {
		t.Errorf("resume fired startup hook: %v", got)
	}
	if err := h.SessionStart(ctx, dsh.SessionStartSourceStartup); err != nil {
		t.Fatal(err)
	}
	if got := h.Agent.Injected(); len(got) != 1 || ht.Texts(got[0])[0] != "started" {
		t.Errorf("startup: %v", got)
	}
}

// Scenarios 32-36: UserPromptSubmit on agent/pre-step.
func TestUserPromptSubmit(t *testing.T) {
	t.Run("32 block", func(t *testing.T) {
		h, _ := setup(t, ht.G("UserPromptSubmit", "", `echo "prompt denied by policy" >&2; exit 2`))
		d, err := h.PreStep(ctx, "hi")
		if err != nil || ht.Describe(d) != "reject: prompt denied by policy" {
			t.Fatalf("%s %v", ht.Describe(d), err)
		}
		wantRecords(t, h, "block")
	})
	t.Run("32 empty stderr", func(t *testing.T) {
		h, _ := setup(t, ht.G("UserPromptSubmit", "", `exit 2`))
		d, _ := h.PreStep(ctx, "hi")
		if ht.Describe(d) != "reject: blocked by UserPromptSubmit hook" {
			t.Fatalf("%s", ht.Describe(d))
		}
	})
	t.Run("33 context", func(t *testing.T) {
		h, _ := setup(t, ht.G("UserPromptSubmit", "", `echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"remember: be brief"}}'`))
		d, err := h.PreStep(ctx, "hi")
		if err != nil {
			t.Fatal(err)
		}
		e := d.(dsh.PreStepEnter)
		if len(e.Messages) != 2 || e.Messages[0].ID != "prompt-1" {
			t.Fatalf("messages %+v", e.Messages)
		}
		m := e.Messages[1]
		if ht.Source(m) != "plugin:hooks-claude-code" || !slices.Equal(ht.Texts(m), []string{"remember: be brief"}) || m.Role != "user" {
			t.Errorf("context message %+v", m)
		}
	})
	t.Run("64 plain stdout", func(t *testing.T) {
		h, _ := setup(t, ht.G("UserPromptSubmit", "", `echo "Current time: noon"`))
		d, _ := h.PreStep(ctx, "hi")
		if e := d.(dsh.PreStepEnter); len(e.Messages) != 2 || ht.Texts(e.Messages[1])[0] != "Current time: noon" {
			t.Errorf("%+v", e.Messages)
		}
	})
	t.Run("34 downstream reject wins", func(t *testing.T) {
		h, _ := setup(t, ht.G("UserPromptSubmit", "", `echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"ctx"}}'`))
		h.Reg.Plugin("policy").OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
			r := "policy says no"
			return dsh.PreStepReject{Reason: &r}, nil
		})
		d, _ := h.PreStep(ctx, "hi")
		if ht.Describe(d) != "reject: policy says no" {
			t.Errorf("%s", ht.Describe(d))
		}
	})
	t.Run("35 ordering", func(t *testing.T) {
		h, _ := setup(t, ht.G("UserPromptSubmit", "", `echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"from-bridge"}}'`))
		h.Reg.Plugin("policy").OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
			rewritten := ht.UserMessage("prompt-1", "rewritten-prompt")
			policy := dsh.UserMessage{ID: "policy-1", Role: "user", Content: []dsh.ContentBlock{dsh.TextBlock{Text: "policy context"}}, Source: dsh.SourcePlugin{Plugin: "policy"}}
			return dsh.PreStepEnter{Messages: []dsh.UserMessage{rewritten, policy}}, nil
		})
		d, _ := h.PreStep(ctx, "hi")
		var got []string
		for _, m := range d.(dsh.PreStepEnter).Messages {
			got = append(got, ht.Source(m)+"="+strings.Join(ht.Texts(m), ""))
		}
		want := []string{"user=rewritten-prompt", "plugin:policy=policy context", "plugin:hooks-claude-code=from-bridge"}
		if !slices.Equal(got, want) {
			t.Errorf("%q, want %q", got, want)
		}
	})
	t.Run("36 notice", func(t *testing.T) {
		h, _ := setup(t, ht.G("UserPromptSubmit", "", `echo '{"systemMessage":"heads up"}'`))
		d, _ := h.PreStep(ctx, "hi")
		if e := d.(dsh.PreStepEnter); len(e.Messages) != 1 {
			t.Errorf("the notice reached the model: %+v", e.Messages)
		}
		recs := h.Rec.Take()
		if res := recs[1].(dsh.HookResult); res.Notice == nil || *res.Notice != "heads up" {
			t.Errorf("notice not recorded: %+v", res)
		}
	})
	t.Run("halt", func(t *testing.T) {
		h, _ := setup(t, ht.G("UserPromptSubmit", "", `echo '{"continue":false,"stopReason":"maintenance"}'`))
		d, _ := h.PreStep(ctx, "hi")
		if ht.Describe(d) != "halt: maintenance" {
			t.Errorf("%s", ht.Describe(d))
		}
		wantRecords(t, h, "halt")
	})
	t.Run("not on continuations", func(t *testing.T) {
		h, _ := setup(t, ht.G("UserPromptSubmit", "", `exit 2`))
		p := &dsh.PreStepPayload{Agent: h.Agent, AgentID: "agent-1", Turn: 1, Step: 2, Messages: []dsh.UserMessage{{
			ID: "steer", Role: "user", Content: []dsh.ContentBlock{dsh.TextBlock{Text: "continue"}}, Source: dsh.SourcePlugin{Plugin: "x"}}}}
		d, _ := h.Reg.RunPreStep(ctx, p, nil)
		if d.Kind() != dsh.PreStepEnterKind || len(h.Rec.Take()) != 0 {
			t.Errorf("fired on a batch without user input: %s", ht.Describe(d))
		}
	})
}

// Scenarios 45, 46 and decision 6: Stop on agent/turn-stopping.
func TestStop(t *testing.T) {
	t.Run("45 continue once", func(t *testing.T) {
		dir := t.TempDir()
		h, _ := setup(t, ht.G("Stop", "", `if [ -e `+dir+`/marker ]; then exit 0; fi; touch `+dir+`/marker; echo "continue please" >&2; exit 2`))
		if err := h.Stop(ctx, 0); err != nil {
			t.Fatal(err)
		}
		s := h.Agent.Steered()
		if len(s) != 1 || ht.Texts(s[0])[0] != "continue please" || ht.Source(s[0]) != "plugin:hooks-claude-code" {
			t.Fatalf("steered %+v", s)
		}
		wantRecords(t, h, "block")
		if err := h.Stop(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if s := h.Agent.Steered(); len(s) != 0 {
			t.Errorf("steered again %+v", s)
		}
		wantRecords(t, h, "pass")
	})
	t.Run("45 empty stderr", func(t *testing.T) {
		h, _ := setup(t, ht.G("Stop", "", `exit 2`))
		h.Stop(ctx, 0)
		if s := h.Agent.Steered(); len(s) != 1 || ht.Texts(s[0])[0] != "Blocked by hook" {
			t.Errorf("%+v", s)
		}
	})
	t.Run("46 stop_hook_active", func(t *testing.T) {
		// A well-behaved Stop hook continues only when stop_hook_active is false.
		h, _ := setup(t, ht.G("Stop", "", `grep -q '"stop_hook_active":true' && exit 0; echo "run the tests" >&2; exit 2`))
		h.Stop(ctx, 0)
		if len(h.Agent.Steered()) != 1 {
			t.Error("did not continue on the first stop")
		}
		h.Stop(ctx, 1)
		if len(h.Agent.Steered()) != 0 {
			t.Error("continued although stop_hook_active was true")
		}
	})
	t.Run("halt", func(t *testing.T) {
		h, _ := setup(t, ht.G("Stop", "", `echo '{"continue":false,"stopReason":"enough","decision":"block","reason":"more"}'`))
		h.Stop(ctx, 0)
		if got := h.Agent.Halted(); !slices.Equal(got, []string{"enough"}) || len(h.Agent.Steered()) != 0 {
			t.Errorf("halted %v", got)
		}
	})
}

// Scenario 47: SessionStart contexts are injected before the first request.
func TestSessionStart(t *testing.T) {
	h, _ := setup(t,
		ht.G("SessionStart", "startup", `echo '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"project uses tabs"}}'`, `echo plain context`, `echo nope >&2; exit 2`))
	if err := h.SessionStart(ctx, dsh.SessionStartSourceStartup); err != nil {
		t.Fatal(err)
	}
	got := h.Agent.Injected()
	if len(got) != 1 || !slices.Equal(ht.Texts(got[0]), []string{"project uses tabs", "plain context"}) || ht.Source(got[0]) != "plugin:hooks-claude-code" {
		t.Errorf("injected %+v", got)
	}
	if len(h.Rec.Take()) != 0 {
		t.Error("SessionStart recorded outside a turn")
	}
}

// Scenario 60: an identical command in two files runs once in Claude Code.
func TestDedupe(t *testing.T) {
	dir, ws := t.TempDir(), t.TempDir()
	cmd := `echo x >> ` + filepath.Join(dir, "count")
	a := ht.Config(t, dir, "a.json", ht.G("Stop", "", cmd))
	b := ht.Config(t, dir, "b.json", ht.G("Stop", "", cmd))
	h, _ := setupIn(t, ws, claudecode.Config{Canonical: true, Files: []string{a, b}})
	h.Stop(ctx, 0)
	data, _ := os.ReadFile(filepath.Join(dir, "count"))
	if string(data) != "x\n" {
		t.Errorf("ran %d times", strings.Count(string(data), "x"))
	}
}

// Decisions 5 and 10 and scenario 9: plugin root, project trust.
func TestPluginAndTrust(t *testing.T) {
	t.Run("9 plugin root", func(t *testing.T) {
		root, ws := t.TempDir(), t.TempDir()
		ht.Script(t, root, "s.sh", `echo "$CLAUDE_PLUGIN_ROOT" > `+ws+`/env; exit 0`)
		ht.Raw(t, root, "hooks/hooks.json", `{"Stop":[{"hooks":[{"type":"command","command":"${CLAUDE_PLUGIN_ROOT}/s.sh"}]}],"description":"p"}`)
		h, _ := setupIn(t, ws, claudecode.Config{Canonical: true, Plugins: []hookproto.Source{{PluginRoot: root}}})
		h.Stop(ctx, 0)
		wantRecords(t, h, "pass")
		data, _ := os.ReadFile(filepath.Join(ws, "env"))
		if strings.TrimSpace(string(data)) != root {
			t.Errorf("CLAUDE_PLUGIN_ROOT %q, want %q", data, root)
		}
	})
	t.Run("10 trust", func(t *testing.T) {
		ws := t.TempDir()
		ht.Config(t, ws, ".claude/settings.json", ht.G("UserPromptSubmit", "", "echo project >&2; exit 2"))
		ht.Config(t, ws, ".claude/settings.local.json", ht.G("UserPromptSubmit", "", "echo local >&2; exit 2"))
		h, b := setupIn(t, ws, claudecode.Config{Canonical: true, DiscoverProject: true})
		d := b.Diagnostics()
		if len(d) != 2 || !errors.Is(d[0], hookproto.ErrUntrusted) || !strings.Contains(d[0].Error(), "--trust") {
			t.Fatalf("diagnostics %v", d)
		}
		if dec, _ := h.PreStep(ctx, "x"); dec.Kind() != dsh.PreStepEnterKind {
			t.Errorf("untrusted hooks ran: %s", ht.Describe(dec))
		}
		h, b = setupIn(t, ws, claudecode.Config{Canonical: true, DiscoverProject: true, TrustProject: true})
		if len(b.Diagnostics()) != 0 {
			t.Fatal(b.Diagnostics())
		}
		if dec, _ := h.PreStep(ctx, "x"); ht.Describe(dec) != "reject: project\n\nlocal" {
			t.Errorf("trusted: %s", ht.Describe(dec))
		}
	})
}

// Scenario 65 and decision 7: async hooks run detached; their contexts are injected for
// the next step.
func TestAsync(t *testing.T) {
	dir := t.TempDir()
	cfg := ht.Config(t, dir, "s.json", ht.Group{Event: "PostToolUse", Hooks: []ht.Hook{
		{Command: `sleep 1; echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"lint: 2 warnings"}}'; exit 2`, Async: true},
	}})
	h, b := setupIn(t, t.TempDir(), claudecode.Config{Canonical: true, Files: []string{cfg}})
	start := time.Now()
	d, _ := h.PostTool(ctx, h.Exec("Write", `{}`), ht.Success(`1`))
	if time.Since(start) > 800*time.Millisecond || d.Kind() != dsh.PostToolAcceptKind {
		t.Errorf("async hook awaited or decided: %s after %v", ht.Describe(d), time.Since(start))
	}
	if err := b.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	// Exit 2 of an async hook decides nothing; its JSON still counts on exit 2 (as in the
	// real engine), so its context is injected.
	if got := h.Agent.Injected(); len(got) != 1 || ht.Texts(got[0])[0] != "lint: 2 warnings" {
		t.Errorf("injected %+v", got)
	}
	cfg = ht.Config(t, dir, "s2.json", ht.Group{Event: "PostToolUse", Hooks: []ht.Hook{
		{Command: `sleep 0.2; echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"lint: 2 warnings"}}'`, Async: true}}})
	h, b = setupIn(t, t.TempDir(), claudecode.Config{Canonical: true, Files: []string{cfg}})
	h.PostTool(ctx, h.Exec("Write", `{}`), ht.Success(`1`))
	if err := b.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if got := h.Agent.Injected(); len(got) != 1 || ht.Texts(got[0])[0] != "lint: 2 warnings" {
		t.Errorf("injected %+v", got)
	}
	if recs := h.Rec.Take(); len(recs) != 0 {
		t.Errorf("async hooks recorded: %v", ht.Types(recs))
	}
}

// SessionEnd runs when the agent is closed: the input carries reason "other" (as claude
// -p at the end of its prompt) and no permission_mode; a matcher tests the reason; nothing
// the hooks print or exit with changes anything; the runtime's bound kills a slow hook.
func TestSessionEnd(t *testing.T) {
	dir := t.TempDir()
	stdin := filepath.Join(dir, "stdin.json")
	h, _ := setup(t,
		ht.G("SessionEnd", "other", `cat > `+stdin),
		ht.G("SessionEnd", "clear", `touch `+filepath.Join(dir, "clear-ran")),
		ht.G("SessionEnd", "", `echo '{"decision":"block","continue":false,"systemMessage":"bye"}'`, `echo no >&2; exit 2`),
		ht.G("SessionEnd", "", `sleep 1; touch `+filepath.Join(dir, "late")))
	start := time.Now()
	overran, err := h.SessionEnd(ctx, dsh.SessionEndReasonClose, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("session end took %s under a 300 ms bound", d)
	}
	if !slices.Equal(overran, []string{"hooks-claude-code#1"}) {
		t.Errorf("overran %v: the slow hook holds the bridge's listener past its bound", overran)
	}
	time.Sleep(1500 * time.Millisecond) // the slow hook would have touched "late" by now
	var in map[string]any
	data, _ := os.ReadFile(stdin)
	if err := json.Unmarshal(data, &in); err != nil {
		t.Fatalf("stdin %q: %v", data, err)
	}
	if in["hook_event_name"] != "SessionEnd" || in["reason"] != "other" || in["session_id"] != "session-1" || in["cwd"] != h.Dir {
		t.Errorf("stdin %s", data)
	}
	if _, ok := in["permission_mode"]; ok {
		t.Errorf("stdin has permission_mode: %s", data)
	}
	for _, f := range []string{"clear-ran", "late"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s exists", f)
		}
	}
	if len(h.Agent.Halted()) != 0 || len(h.Agent.Injected()) != 0 || len(h.Agent.Steered()) != 0 {
		t.Errorf("SessionEnd changed the agent: halted %v, injected %v, steered %v", h.Agent.Halted(), h.Agent.Injected(), h.Agent.Steered())
	}
}

// readJSON decodes the JSON object a hook saved to path.
func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v in %q", path, err, data)
	}
	return m
}
