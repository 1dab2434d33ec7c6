//go:build !race

// Left out of -race builds with hooktest's SpecTable, which loads the spec with CUE
// (docs/decisions/0015-ci.md, "The race run in CI"); scripts/test runs these tests.

package claudecode

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dshkit/dsh/bridges/internal/hookbridge"
	ht "github.com/dshkit/dsh/bridges/internal/hooktest"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
)

// The tables are what runs: each test edits one column of spec/bridges/claudecode.cue in
// a temporary copy of the spec, loads the copy as dshgen does (gen/load), runs the
// bridge on the table it yields, and checks that the behaviour follows the edit.

// specTable loads the claude-code table from a copy of spec/bridges edited by edit.
func specTable(t *testing.T, edit func(src string) string) *hookmap.Bridge {
	t.Helper()
	return ht.SpecTable(t, "claudecode.cue", &hookmap.ClaudeCode, edit)
}

// The unedited copy yields the generated table: what the edits below change is the only
// difference between the runs.
func TestTableCopyIsTheGeneratedTable(t *testing.T) {
	got, want := ht.WithoutDecoders(specTable(t, nil)), ht.WithoutDecoders(&hookmap.ClaudeCode)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the spec's table differs from generated/hookmap:\n got %+v\nwant %+v", got, want)
	}
}

// bridgeOn loads a canonical bridge with groups on table and registers it on a harness.
func bridgeOn(t *testing.T, table *hookmap.Bridge, groups ...ht.Group) (*ht.Harness, *hookbridge.Bridge) {
	t.Helper()
	dir := t.TempDir()
	h := ht.New(dir)
	cfg := Config{Files: []string{ht.Config(t, t.TempDir(), "settings.json", groups...)},
		Workspace: dir, Session: h.Session, Recorder: h.Rec, Logger: slog.New(slog.DiscardHandler), Canonical: true}
	d := behavior(cfg)
	d.Table = table
	b, err := hookbridge.New(d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	b.Register(h.Reg.Plugin(table.Plugin))
	return h, b
}

// point: UserPromptSubmit's hooks run where its row's point says.
func TestTablePointColumn(t *testing.T) {
	ctx := context.Background()
	block := ht.G("UserPromptSubmit", "", `echo '{"decision":"block","reason":"held"}'`)
	for _, tc := range []struct {
		name      string
		edit      func(string) string
		rejected  bool // the prompt is rejected at agent/pre-step
		steeredAt bool // the reason continues the turn at agent/turn-stopping
	}{
		{"as generated (agent/pre-step)", nil, true, false},
		{"edited to agent/turn-stopping", ht.EditField("UserPromptSubmit", "point", `"agent/pre-step"`, `"agent/turn-stopping"`), false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := bridgeOn(t, specTable(t, tc.edit), block)
			d, err := h.PreStep(ctx, "hello")
			if err != nil {
				t.Fatal(err)
			}
			if got := ht.Describe(d) == "reject: held"; got != tc.rejected {
				t.Errorf("pre-step: %s (rejected %v, want %v)", ht.Describe(d), got, tc.rejected)
			}
			if err := h.Stop(ctx, 0); err != nil {
				t.Fatal(err)
			}
			steered := h.Agent.Steered()
			if got := len(steered) == 1 && strings.Join(ht.Texts(steered[0]), "") == "held"; got != tc.steeredAt {
				t.Errorf("turn-stopping steered %v (want %v): %v", got, tc.steeredAt, steered)
			}
		})
	}
}

// defaultTimeoutSec: a hook without a timeout gets the column's, and is killed at it.
func TestTableDefaultTimeoutColumn(t *testing.T) {
	ctx := context.Background()
	sleep := ht.G("PreToolUse", "", "sleep 30")
	_, b := bridgeOn(t, specTable(t, nil), sleep)
	if got := b.Config().Groups("PreToolUse")[0].Handlers[0].Timeout; got != 600*time.Second {
		t.Errorf("as generated: timeout %v, want 600s", got)
	}
	h, b := bridgeOn(t, specTable(t, ht.EditField("", "defaultTimeoutSec", "600", "1")), sleep)
	if got := b.Config().Groups("PreToolUse")[0].Handlers[0].Timeout; got != time.Second {
		t.Errorf("edited: timeout %v, want 1s", got)
	}
	start := time.Now()
	if _, err := h.PreTool(ctx, h.Exec("Bash", `{}`)); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the hook ran %v: the edited 1 s default did not bound it", took)
	}
	if got := ht.Results(h.Rec.Take()); len(got) != 1 || got[0] != dsh.HookOutcomeTimeout {
		t.Errorf("outcomes %v, want timeout", got)
	}
}

// plugin: the bridge's messages carry the column's plugin name.
func TestTablePluginColumn(t *testing.T) {
	ctx := context.Background()
	h, _ := bridgeOn(t, specTable(t, ht.EditField("", "plugin", `"hooks-claude-code"`, `"hooks-edited"`)),
		ht.G("SessionStart", "", "echo started"))
	if err := h.SessionStart(ctx, dsh.SessionStartSourceStartup); err != nil {
		t.Fatal(err)
	}
	inj := h.Agent.Injected()
	if len(inj) != 1 || ht.Source(inj[0]) != "plugin:hooks-edited" {
		var src string
		if len(inj) > 0 {
			src = ht.Source(inj[0])
		}
		t.Errorf("injected %d messages, source %q, want plugin:hooks-edited", len(inj), src)
	}
}

// Columns of one event's row, each edited, with the PreToolUse outcome before and after.
func TestTableEventColumns(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		column, old, new string
		group            ht.Group
		tool             string
		before, after    string
	}{
		// fallbackReason: the reason of exit 2 with blank stderr.
		{"fallbackReason", `"Blocked by hook"`, `"edited fallback"`, ht.G("PreToolUse", "", "exit 2"), "Bash",
			"deny: Blocked by hook", "deny: edited fallback"},
		// exit2: exit 2 with a reason denies, or is an error (the call proceeds).
		{"exit2", `"deny"`, `"error"`, ht.G("PreToolUse", "", "echo no >&2; exit 2"), "Bash", "deny: no", "allow"},
		// matcher: "" makes the group's matcher ignored, so it matches every tool.
		{"matcher", `"tool_name"`, `""`, ht.G("PreToolUse", "Bash", "echo no >&2; exit 2"), "Read", "allow", "deny: no"},
		// halt: continue:false halts the turn, or is not honoured.
		{"halt", "true", "false", ht.G("PreToolUse", "", `echo '{"continue":false,"stopReason":"stop"}'`), "Bash", "halt: stop", "allow"},
		// haltReason: the reason of continue:false without a stopReason.
		{"haltReason", `"stopped by PreToolUse hook (continue:false)"`, `"edited halt"`, ht.G("PreToolUse", "", `echo '{"continue":false}'`), "Bash",
			"halt: stopped by PreToolUse hook (continue:false)", "halt: edited halt"},
		// joinReasons: several denying hooks' reasons, all joined or the first.
		{"joinReasons", `"all"`, `"first"`, ht.G("PreToolUse", "", "echo one >&2; exit 2", "echo two >&2; exit 2"), "Bash",
			"deny: one\n\ntwo", "deny: one"},
		// rules: the first rule's outcome.
		{"then", `"deny"`, `"ask"`, ht.G("PreToolUse", "", `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"r"}}'`), "Bash",
			"deny: r", "ask: r"},
	} {
		t.Run(tc.column, func(t *testing.T) {
			for i, edit := range []func(string) string{nil, ht.EditField("PreToolUse", tc.column, tc.old, tc.new)} {
				want := []string{tc.before, tc.after}[i]
				h, _ := bridgeOn(t, specTable(t, edit), tc.group)
				d, err := h.PreTool(ctx, h.Exec(tc.tool, `{}`))
				if err != nil {
					t.Fatal(err)
				}
				if got := ht.Describe(d); got != want {
					t.Errorf("edit %d: %s, want %s", i, got, want)
				}
			}
		})
	}
}

// Columns read outside PreToolUse's row: the bridge's exit2EmptyStderr and stdinNewline,
// SessionStart's plainStdoutContext.
func TestTableMoreColumns(t *testing.T) {
	ctx := context.Background()
	t.Run("exit2EmptyStderr", func(t *testing.T) {
		for i, edit := range []func(string) string{nil, ht.EditField("", "exit2EmptyStderr", `"block"`, `"failed"`)} {
			h, _ := bridgeOn(t, specTable(t, edit), ht.G("PreToolUse", "", "exit 2"))
			d, err := h.PreTool(ctx, h.Exec("Bash", `{}`))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := ht.Describe(d), []string{"deny: Blocked by hook", "allow"}[i]; got != want {
				t.Errorf("edit %d: %s, want %s", i, got, want)
			}
		}
	})
	t.Run("stdinNewline", func(t *testing.T) {
		for i, edit := range []func(string) string{nil, ht.EditField("", "stdinNewline", "true", "false")} {
			out := filepath.Join(t.TempDir(), "stdin")
			h, _ := bridgeOn(t, specTable(t, edit), ht.G("PreToolUse", "", "cat > '"+out+"'"))
			if _, err := h.PreTool(ctx, h.Exec("Bash", `{}`)); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := strings.HasSuffix(string(data), "\n"), i == 0; got != want {
				t.Errorf("edit %d: stdin ends with a newline: %v, want %v", i, got, want)
			}
		}
	})
	t.Run("plainStdoutContext", func(t *testing.T) {
		for i, edit := range []func(string) string{nil, ht.EditField("SessionStart", "plainStdoutContext", "true", "false")} {
			h, _ := bridgeOn(t, specTable(t, edit), ht.G("SessionStart", "", "echo started"))
			if err := h.SessionStart(ctx, dsh.SessionStartSourceStartup); err != nil {
				t.Fatal(err)
			}
			if got, want := len(h.Agent.Injected()), []int{1, 0}[i]; got != want {
				t.Errorf("edit %d: %d messages injected, want %d", i, got, want)
			}
		}
	})
}

// The columns that say which event fires where beyond its point: results (which results of
// tools/post-execute the row fires for), subject (what Notification's matcher field
// carries at approval/prompt) and also (the further point agent/status, where
// Notification fires as idle_prompt for an interactive host).
func TestTableDispatchColumns(t *testing.T) {
	ctx := context.Background()
	// fired runs a hook group on the table (edited by edit) and returns the tool_name or
	// notification_type of each run, in order.
	fired := func(t *testing.T, edit func(string) string, interactive bool, event, matcher string, run func(h *ht.Harness)) []string {
		t.Helper()
		out := filepath.Join(t.TempDir(), "fired")
		hook := `grep -o '"\(tool_name\|notification_type\)":"[A-Za-z_]*"' >> '` + out + `'`
		dir := t.TempDir()
		h := ht.New(dir)
		cfg := Config{Files: []string{ht.Config(t, t.TempDir(), "settings.json", ht.G(event, matcher, hook))},
			Workspace: dir, Session: h.Session, Recorder: h.Rec, Logger: slog.New(slog.DiscardHandler), Interactive: interactive, Canonical: true}
		d := behavior(cfg)
		d.Table = specTable(t, edit)
		b, err := hookbridge.New(d, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Close(context.Background()) })
		b.Register(h.Reg.Plugin(d.Table.Plugin))
		run(h)
		data, _ := os.ReadFile(out)
		return strings.Fields(string(data))
	}
	status := func(st dsh.AgentStatus) func(h *ht.Harness) {
		return func(h *ht.Harness) {
			h.Reg.EmitStatus(ctx, &dsh.StatusPayload{Agent: h.Agent, AgentID: h.Agent.AgentID, Status: st})
		}
	}
	// A successful call (Read), then one (Bash) that ran, through the execute wrappers, and
	// failed.
	calls := func(h *ht.Harness) {
		if _, err := h.PostTool(ctx, h.Exec("Read", `{}`), ht.Success(`"ok"`)); err != nil {
			t.Fatal(err)
		}
		ex := h.Exec("Bash", `{}`)
		failure := dsh.ToolFailure{Error: dsh.ToolError{Message: "boom"}, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "Error: boom"}}}
		if _, err := h.Reg.RunExecute(ctx, &dsh.ExecutePayload{Exec: ex}, func(context.Context) dsh.ToolExecutionResult { return failure }); err != nil {
			t.Fatal(err)
		}
		if _, err := h.PostTool(ctx, ex, failure); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name           string
		edit           func(string) string
		interactive    bool
		event, matcher string
		run            func(h *ht.Harness)
		as, ed         string // the runs as generated, edited
	}{
		// results: PostToolUse follows successful results, or (edited) failed ones.
		{"results", ht.EditField("PostToolUse", "results", `"success"`, `"failure"`), false, "PostToolUse", "", calls,
			`"tool_name":"Read"`, `"tool_name":"Bash"`},
		{"results (PostToolUseFailure)", ht.EditField("PostToolUseFailure", "results", `"failure"`, `"success"`), false, "PostToolUseFailure", "", calls,
			`"tool_name":"Bash"`, `"tool_name":"Read"`},
		// subject: Notification's notification_type at approval/prompt.
		{"subject", ht.EditField("Notification", "subject", `"permission_prompt"`, `"asked"`), false, "Notification", "", func(h *ht.Harness) {
			h.Reg.EmitApprovalPrompt(ctx, &dsh.ApprovalPromptPayload{Exec: h.Exec("Bash", `{}`)})
		}, `"notification_type":"permission_prompt"`, `"notification_type":"asked"`},
		// also: the status it fires at, the subject it fires with, and whether only an
		// interactive host fires it.
		{"also status", ht.EditField("Notification", "status", `"idle"`, `"running"`), true, "Notification", "", status(dsh.AgentStatusRunning),
			"", `"notification_type":"idle_prompt"`},
		{"also subject", ht.EditField("Notification", "subject", `"idle_prompt"`, `"waiting"`), true, "Notification", "idle_prompt", status(dsh.AgentStatusIdle),
			`"notification_type":"idle_prompt"`, ""},
		{"also interactive", ht.EditField("Notification", "interactive", "true", "false"), false, "Notification", "", status(dsh.AgentStatusIdle),
			"", `"notification_type":"idle_prompt"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i, edit := range []func(string) string{nil, tc.edit} {
				got := strings.Join(fired(t, edit, tc.interactive, tc.event, tc.matcher, tc.run), " ")
				if want := []string{tc.as, tc.ed}[i]; got != want {
					t.Errorf("edit %d: fired %q, want %q", i, got, want)
				}
			}
		})
	}
}

// The also entry of SessionStart: the session start of a committed compaction fires at
// compaction/post-compact (its point), with its subject as the source, before PostCompact
// (its before column; absent: after it, its contexts appended after PostCompact's), and
// only when the bridge follows the engine (its engine column; canonical mode keeps the
// canonical order: PostCompact, then agent/session-start{compact}).
func TestTableCompactionColumns(t *testing.T) {
	ctx := context.Background()
	// run compacts (PostCompact, then agent/session-start{compact}) and describes which
	// hooks ran, in order, with the SessionStart source, and where the contexts went.
	run := func(t *testing.T, edit func(string) string, canonical bool) string {
		t.Helper()
		dir := t.TempDir()
		order := filepath.Join(dir, "order")
		h := ht.New(dir)
		cfg := Config{Files: []string{ht.Config(t, t.TempDir(), "settings.json",
			ht.G("PostCompact", "", `echo PostCompact >> '`+order+`'; echo '{"hookSpecificOutput":{"hookEventName":"PostCompact","additionalContext":"PCCTX"}}'`),
			ht.G("SessionStart", "", `grep -o '"source":"[a-z]*"' | cut -d'"' -f4 | sed 's/^/SessionStart:/' >> '`+order+`'; `+
				`echo '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"SSCTX"}}'`))},
			Workspace: dir, Session: h.Session, Recorder: h.Rec, Logger: slog.New(slog.DiscardHandler), Canonical: canonical}
		d := behavior(cfg)
		d.Table = specTable(t, edit)
		b, err := hookbridge.New(d, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Close(context.Background()) })
		b.Register(h.Reg.Plugin(d.Table.Plugin))
		tags := func(msgs []dsh.UserMessage) string {
			var out []string
			for _, m := range msgs {
				text := strings.Join(ht.Texts(m), " ")
				for _, tag := range []string{"SSCTX", "PCCTX"} {
					if strings.Contains(text, tag) {
						out = append(out, tag)
					}
				}
			}
			return "[" + strings.Join(out, " ") + "]"
		}
		dec, err := h.PostCompact(ctx, "cmp_1", dsh.CompactionOriginAuto, "S", 1)
		if err != nil {
			t.Fatal(err)
		}
		var appended []dsh.UserMessage
		if a, ok := dec.(dsh.PostCompactAppend); ok {
			appended = a.Contexts
		}
		atPost := tags(h.Agent.Injected())
		if err := h.SessionStartCompact(ctx, "cmp_1", 1); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(order)
		return strings.Join(strings.Fields(string(data)), " ") + "; post-compact injected " + atPost + " appended " + tags(appended) +
			"; session-start injected " + tags(h.Agent.Injected())
	}
	const (
		engineOrder    = "SessionStart:compact PostCompact; post-compact injected [SSCTX] appended [PCCTX]; session-start injected []"
		canonicalOrder = "PostCompact SessionStart:compact; post-compact injected [] appended [PCCTX]; session-start injected [SSCTX]"
	)
	remove := func(s string) func(string) string {
		return func(src string) string { return strings.Replace(src, s, "", 1) }
	}
	for _, tc := range []struct {
		name      string
		edit      func(string) string
		canonical bool
		as, ed    string // as generated, edited
	}{
		// The entry itself: without it the engine mode keeps the canonical order.
		{"also", remove(`also: [{point: "compaction/post-compact", subject: "compact", before: "PostCompact", engine: true}]`), false,
			engineOrder, canonicalOrder},
		// subject: the source the session start fires with there.
		{"also subject", ht.EditField("SessionStart", "subject", `"compact"`, `"resume"`), false,
			engineOrder, strings.Replace(engineOrder, "SessionStart:compact", "SessionStart:resume", 1)},
		// before: absent, the session start fires after PostCompact, its contexts after.
		{"also before", remove(`, before: "PostCompact"`), false,
			engineOrder, "PostCompact SessionStart:compact; post-compact injected [] appended [PCCTX SSCTX]; session-start injected []"},
		// engine: canonical mode leaves the entry out, unless it is not the engine's own.
		{"also engine", ht.EditField("SessionStart", "engine", "true", "false"), true,
			canonicalOrder, engineOrder},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i, edit := range []func(string) string{nil, tc.edit} {
				if got, want := run(t, edit, tc.canonical), []string{tc.as, tc.ed}[i]; got != want {
					t.Errorf("edit %d: %s\nwant %s", i, got, want)
				}
			}
		})
	}
}
