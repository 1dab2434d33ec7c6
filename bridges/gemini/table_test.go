//go:build !race

// Left out of -race builds with hooktest's SpecTable, which loads the spec with CUE
// (docs/decisions/0015-ci.md, "The race run in CI"); scripts/test runs these tests.

package gemini

import (
	"context"
	"encoding/json"
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

// The table is what runs: each test edits one column of spec/bridges/gemini.cue in a
// temporary copy of the spec, loads the copy as dshgen does (gen/load), runs the bridge
// on the table it yields, and checks that the behaviour follows the edit.

// specTable loads the gemini table from a copy of spec/bridges with gemini.cue edited by
// edit (nil: as it is), with the generated wire decoders.
func specTable(t *testing.T, edit func(string) string) *hookmap.Bridge {
	t.Helper()
	return ht.SpecTable(t, "gemini.cue", &hookmap.Gemini, edit)
}

// bridgeOn registers a bridge over settings (Gemini's hooks object) with table.
func bridgeOn(t *testing.T, table *hookmap.Bridge, events map[string]any) (*ht.Harness, *hookbridge.Bridge) {
	t.Helper()
	dir := t.TempDir()
	h := ht.New(dir)
	data, _ := json.Marshal(map[string]any{"hooks": events})
	d := behavior(time.Now, true)
	d.Table = table
	rules := Rules
	rules.Shell = table.Shell
	d.Rules = &rules
	b, err := hookbridge.New(d, Config{Files: []string{ht.Raw(t, t.TempDir(), "settings.json", string(data))},
		Workspace: dir, Session: h.Session, Recorder: h.Rec, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	b.Register(h.Reg.Plugin(table.Plugin))
	return h, b
}

func group(matcher string, sequential bool, cmds ...string) []any {
	var hs []any
	for _, c := range cmds {
		hs = append(hs, map[string]any{"type": "command", "command": c, "timeout": 5000})
	}
	g := map[string]any{"hooks": hs}
	if matcher != "" {
		g["matcher"] = matcher
	}
	if sequential {
		g["sequential"] = true
	}
	return []any{g}
}

// The unedited copy is the generated table, so each edit below is the only difference.
func TestTableCopyIsTheGeneratedTable(t *testing.T) {
	if got, want := ht.WithoutDecoders(specTable(t, nil)), ht.WithoutDecoders(&hookmap.Gemini); !reflect.DeepEqual(got, want) {
		t.Errorf("the spec's table differs from generated/hookmap:\n got %+v\nwant %+v", got, want)
	}
}

// preTool runs the call's rewrite phase and pre-execute, as the runtime does.
func preTool(t *testing.T, h *ht.Harness, args string) (dsh.PreToolDecision, json.RawMessage) {
	t.Helper()
	ctx := context.Background()
	id := h.Agent.AgentID
	ex := h.Exec("run_shell_command", args)
	p := &dsh.RewriteInputPayload{AgentID: &id, CallID: ex.CallID, Name: ex.Name, Input: json.RawMessage(args)}
	var rewritten json.RawMessage
	if err := h.Reg.RunRewriteInput(ctx, p, time.Minute, func(_ context.Context, _ string, d dsh.RewriteDecision) (*dsh.RewriteInputPayload, error) {
		if r, ok := d.(dsh.RewriteReplace); ok {
			rewritten, p.Input = r.Args, r.Args
		}
		return p, nil
	}); err != nil {
		t.Fatal(err)
	}
	d, err := h.PreTool(ctx, ex)
	if err != nil {
		t.Fatal(err)
	}
	return d, rewritten
}

// Each column of the table, edited, changes what the bridge does.
func TestTableColumns(t *testing.T) {
	deny := `echo '{"decision":"deny","reason":"no"}'`
	for _, tc := range []struct {
		name   string
		edit   func(string) string
		events map[string]any
		check  func(t *testing.T, h *ht.Harness, b *hookbridge.Bridge) string // what happened
		as, ed string                                                         // as generated, edited
	}{
		{name: "point", edit: ht.EditField("BeforeTool", "point", `"tools/pre-execute"`, `"tools/post-execute"`),
			events: map[string]any{"BeforeTool": group("", false, deny)},
			check: func(t *testing.T, h *ht.Harness, _ *hookbridge.Bridge) string {
				d, _ := preTool(t, h, `{"command":"ls"}`)
				post, _ := h.Ran(context.Background(), h.Exec("run_shell_command", `{}`), ht.Success(`"x"`))
				return ht.Describe(d) + " / " + string(post.Kind())
			}, as: "deny: no / accept", ed: "allow / block"},
		{name: "timeoutUnit", edit: ht.EditField("", "timeoutUnit", `"ms"`, `"s"`),
			events: map[string]any{"BeforeTool": group("", false, "true")},
			check: func(t *testing.T, _ *ht.Harness, b *hookbridge.Bridge) string {
				return b.Config().Handlers("BeforeTool")[0].Timeout.String()
			}, as: "5s", ed: "1h23m20s"},
		{name: "readAnyExit", edit: ht.EditField("", "readAnyExit", "true", "false"),
			events: map[string]any{"BeforeTool": group("", false, deny+" >&2")},
			check: func(t *testing.T, h *ht.Harness, _ *hookbridge.Bridge) string {
				d, _ := preTool(t, h, `{"command":"ls"}`)
				return ht.Describe(d)
			}, as: "deny: no", ed: "allow"},
		{name: "matcherKind", edit: ht.EditField("BeforeTool", "matcherKind", `"regex"`, `"exact"`),
			events: map[string]any{"BeforeTool": group("shell", false, deny)},
			check: func(t *testing.T, h *ht.Harness, _ *hookbridge.Bridge) string {
				d, _ := preTool(t, h, `{"command":"ls"}`)
				return ht.Describe(d)
			}, as: "deny: no", ed: "allow"},
		{name: "joinReasons", edit: ht.EditField("BeforeTool", "joinReasons", `"every"`, `"all"`),
			events: map[string]any{"BeforeTool": group("", false, `echo '{"decision":"allow","reason":"ok"}'`, deny)},
			check: func(t *testing.T, h *ht.Harness, _ *hookbridge.Bridge) string {
				d, _ := preTool(t, h, `{"command":"ls"}`)
				return ht.Describe(d)
			}, as: "deny: ok\nno", ed: "deny: no"},
		{name: "fallbackReason", edit: ht.EditField("BeforeTool", "fallbackReason", `"No reason provided"`, `"refused"`),
			events: map[string]any{"BeforeTool": group("", false, `echo '{"decision":"deny"}'`)},
			check: func(t *testing.T, h *ht.Harness, _ *hookbridge.Bridge) string {
				d, _ := preTool(t, h, `{"command":"ls"}`)
				return ht.Describe(d)
			}, as: "deny: No reason provided", ed: "deny: refused"},
		{name: "commandVars", edit: ht.EditField("", "GEMINI_CWD", `"cwd"`, `"session_id"`),
			events: map[string]any{"BeforeTool": group("", false, `echo "{\"decision\":\"deny\",\"reason\":\"$GEMINI_CWD\"}" | sed "s|$PWD|WS|"`)},
			check: func(t *testing.T, h *ht.Harness, _ *hookbridge.Bridge) string {
				d, _ := preTool(t, h, `{"command":"ls"}`)
				return ht.Describe(d)
			}, as: "deny: WS", ed: "deny: session-1"},
		{name: "sequentialGroups", edit: ht.EditField("", "sequentialGroups", "true", "false"),
			events: map[string]any{"BeforeTool": group("", true, `echo '{"hookSpecificOutput":{"tool_input":{"command":"pwd"}}}'`,
				`grep -q '"command":"pwd"' && echo '{"decision":"deny","reason":"saw the rewrite"}'; exit 0`)},
			check: func(t *testing.T, h *ht.Harness, _ *hookbridge.Bridge) string {
				d, _ := preTool(t, h, `{"command":"ls"}`)
				return ht.Describe(d)
			}, as: "deny: saw the rewrite", ed: "allow"},
		{name: "rewrite input", edit: ht.EditField("BeforeTool", "input", `"hookSpecificOutput.tool_input"`, `"hookSpecificOutput.llm_request"`),
			events: map[string]any{"BeforeTool": group("", false, `echo '{"hookSpecificOutput":{"tool_input":{"command":"pwd"}}}'`)},
			check: func(t *testing.T, h *ht.Harness, _ *hookbridge.Bridge) string {
				_, rw := preTool(t, h, `{"command":"ls"}`)
				return string(rw)
			}, as: `{"command":"pwd"}`, ed: ""},
		// passOn: in a sequential group BeforeAgent's second hook sees the prompt with the
		// first one's context appended after the join.
		{name: "passOn join", edit: ht.EditField("BeforeAgent", "join", `"\n\n"`, `" + "`),
			events: map[string]any{"BeforeAgent": group("", true, `echo '{"hookSpecificOutput":{"additionalContext":"ctx"}}'`,
				`echo "{\"decision\":\"deny\",\"reason\":$(grep -o '"prompt":"[^"]*"' | cut -d: -f2-)}"`)},
			check: func(t *testing.T, h *ht.Harness, _ *hookbridge.Bridge) string {
				d, err := h.PreStep(context.Background(), "hello")
				if err != nil {
					t.Fatal(err)
				}
				return ht.Describe(d)
			}, as: "reject: hello\n\nctx", ed: "reject: hello + ctx"},
		// passOn: BeforeModel's second hook sees the first one's llm_request merged into
		// its own; edited to pass on another field, it sees the request unchanged.
		{name: "passOn output", edit: ht.EditField("BeforeModel", "output", `"hookSpecificOutput.llm_request"`, `"hookSpecificOutput.toolConfig"`),
			events: map[string]any{"BeforeModel": group("", true, `echo '{"hookSpecificOutput":{"llm_request":{"model":"gemini-2.5-flash"}}}'`,
				`grep -q '"model":"gemini-2.5-flash"' && echo '{"decision":"deny","reason":"saw the model"}'; exit 0`)},
			check: func(t *testing.T, h *ht.Harness, _ *hookbridge.Bridge) string {
				req := dsh.ModelRequest{Config: dsh.LLMCallConfig{Provider: "gemini", Model: "gemini-2.5-pro"},
					Messages: []dsh.ModelMessage{{Role: dsh.ModelRoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "hi"}}}}}
				p := &dsh.RequestPayload{Agent: h.Agent, AgentID: h.Agent.AgentID, Turn: 1, Step: 1, Attempt: 1, Request: req, Original: req}
				got := "pass"
				if err := h.Reg.RunRequest(context.Background(), p, 0, func(_ context.Context, _ string, d dsh.RequestDecision) (*dsh.RequestPayload, error) {
					if x, ok := d.(dsh.RequestDeny); ok {
						got = "deny: " + x.Reason
					}
					return nil, nil
				}); err != nil {
					t.Fatal(err)
				}
				return got
			}, as: "deny: saw the model", ed: "pass"},
		// results: AfterTool follows every call that ran; limited to successes, a failed
		// call runs no hook.
		{name: "results", edit: ht.EditField("AfterTool", "results", `"ran"`, `"success"`),
			events: map[string]any{"AfterTool": group("", false, deny)},
			check: func(t *testing.T, h *ht.Harness, _ *hookbridge.Bridge) string {
				failure := dsh.ToolFailure{Error: dsh.ToolError{Message: "boom"}, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "Error: boom"}}}
				post, err := h.Ran(context.Background(), h.Exec("run_shell_command", `{}`), failure)
				if err != nil {
					t.Fatal(err)
				}
				return string(post.Kind())
			}, as: "block", ed: "accept"},
		// subject: Notification's notification_type at approval/prompt.
		{name: "subject", edit: ht.EditField("Notification", "subject", `"ToolPermission"`, `"Edited"`),
			events: map[string]any{"Notification": group("", false, `grep -o '"notification_type":"[A-Za-z]*"' > notified`)},
			check: func(t *testing.T, h *ht.Harness, _ *hookbridge.Bridge) string {
				h.Reg.EmitApprovalPrompt(context.Background(), &dsh.ApprovalPromptPayload{Exec: h.Exec("run_shell_command", `{}`)})
				data, err := os.ReadFile(filepath.Join(h.Dir, "notified"))
				if err != nil {
					t.Fatal(err)
				}
				return strings.TrimSpace(string(data))
			}, as: `"notification_type":"ToolPermission"`, ed: `"notification_type":"Edited"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i, table := range []*hookmap.Bridge{specTable(t, nil), specTable(t, tc.edit)} {
				h, b := bridgeOn(t, table, tc.events)
				want := []string{tc.as, tc.ed}[i]
				if got := tc.check(t, h, b); got != want {
					t.Errorf("%s: got %q, want %q", []string{"as generated", "edited"}[i], got, want)
				}
			}
		})
	}
}
