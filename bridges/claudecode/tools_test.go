package claudecode_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dshkit/dsh/bridges/claudecode"
	ht "github.com/dshkit/dsh/bridges/internal/hooktest"
	"github.com/dshkit/dsh/generated/dsh"
)

// Scenarios 37-40, 50, 51, 53, 62, 63: PreToolUse on tools/pre-execute.
func TestPreToolUse(t *testing.T) {
	t.Run("37", func(t *testing.T) {
		h, _ := setup(t, ht.G("PreToolUse", "danger", `echo "danger tool blocked" >&2; exit 2`))
		d, _ := h.PreTool(ctx, h.Exec("danger", `{}`))
		if ht.Describe(d) != "deny: danger tool blocked" {
			t.Errorf("%s", ht.Describe(d))
		}
		wantRecords(t, h, "deny")
		d, _ = h.PreTool(ctx, h.Exec("safe", `{}`))
		if d.Kind() != dsh.PreToolAllowKind {
			t.Errorf("safe: %s", ht.Describe(d))
		}
		wantRecords(t, h)
	})
	t.Run("37 empty stderr", func(t *testing.T) {
		h, _ := setup(t, ht.G("PreToolUse", "", `exit 2`))
		d, _ := h.PreTool(ctx, h.Exec("danger", `{}`))
		if ht.Describe(d) != "deny: Blocked by hook" {
			t.Errorf("%s", ht.Describe(d))
		}
	})
	t.Run("38 ask", func(t *testing.T) {
		h, _ := setup(t, ht.G("PreToolUse", "", `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"needs approval"}}'`))
		d, _ := h.PreTool(ctx, h.Exec("x", `{}`))
		if ht.Describe(d) != "ask: needs approval" {
			t.Errorf("%s", ht.Describe(d))
		}
	})
	t.Run("39 allow never pre-approves", func(t *testing.T) {
		h, _ := setup(t, ht.G("PreToolUse", "", `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"rewritten"}}}'`))
		called := false
		h.Reg.Plugin("policy").OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
			called = true
			if string(p.Exec.Arguments) != `{"command":"ls"}` {
				t.Errorf("arguments changed: %s", p.Exec.Arguments)
			}
			return dsh.PreToolDeny{Reason: "downstream"}, nil
		})
		d, _ := h.PreTool(ctx, h.Exec("Bash", `{"command":"ls"}`))
		if !called || ht.Describe(d) != "deny: downstream" {
			t.Errorf("allow short-circuited: %s", ht.Describe(d))
		}
	})
	t.Run("40 halt", func(t *testing.T) {
		h, _ := setup(t, ht.G("PreToolUse", "", `echo '{"continue":false,"stopReason":"halt"}'`))
		d, _ := h.PreTool(ctx, h.Exec("x", `{}`))
		if ht.Describe(d) != "halt: halt" {
			t.Errorf("%s", ht.Describe(d))
		}
		wantRecords(t, h, "halt")
	})
	t.Run("62 deny wins, all ran", func(t *testing.T) {
		dir := t.TempDir()
		h, _ := setup(t, ht.G("PreToolUse", "",
			`touch `+dir+`/a; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'`,
			`touch `+dir+`/b; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"a"}}'`,
			`sleep 0.1; touch `+dir+`/c; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"b"}}'`))
		d, _ := h.PreTool(ctx, h.Exec("x", `{}`))
		if ht.Describe(d) != "deny: b" {
			t.Errorf("%s", ht.Describe(d))
		}
		for _, f := range []string{"a", "b", "c"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("hook %s did not run to completion", f)
			}
		}
		wantRecords(t, h, "allow", "ask", "deny")
	})
	t.Run("63 timeout", func(t *testing.T) {
		dir := t.TempDir()
		cfg := ht.Config(t, dir, "settings.json", ht.Group{Event: "PreToolUse", Hooks: []ht.Hook{{Command: `sleep 5; exit 2`, Timeout: 0.3}}})
		h, _ := setupIn(t, dir, claudecode.Config{Canonical: true, Files: []string{cfg}})
		start := time.Now()
		d, _ := h.PreTool(ctx, h.Exec("x", `{}`))
		if d.Kind() != dsh.PreToolAllowKind || time.Since(start) > 2*time.Second {
			t.Errorf("%s after %v", ht.Describe(d), time.Since(start))
		}
		wantRecords(t, h, "timeout")
	})
	t.Run("50 51 cwd, env and payload", func(t *testing.T) {
		ws, other := t.TempDir(), t.TempDir()
		cfg := ht.Config(t, other, "settings.json", ht.G("PreToolUse", "", `pwd > where; cat > payload; echo "$CLAUDE_PROJECT_DIR" > projdir`))
		h, _ := setupIn(t, ws, claudecode.Config{Canonical: true, Files: []string{cfg}})
		h.Transcript = "/logs/session-1.jsonl"
		if _, err := h.PreTool(ctx, h.Exec("Bash", `{"command":"ls","description":"list"}`)); err != nil {
			t.Fatal(err)
		}
		read := func(name string) string {
			data, err := os.ReadFile(filepath.Join(ws, name))
			if err != nil {
				t.Fatal(err)
			}
			return string(data)
		}
		real, _ := filepath.EvalSymlinks(ws)
		if got := strings.TrimSpace(read("where")); got != ws && got != real {
			t.Errorf("cwd %s, want %s", got, ws)
		}
		if got := strings.TrimSpace(read("projdir")); got != ws {
			t.Errorf("CLAUDE_PROJECT_DIR %s, want the workspace %s", got, ws)
		}
		payload := read("payload")
		if !strings.HasSuffix(payload, "}\n") {
			t.Errorf("stdin does not end with a newline: %q", payload)
		}
		var in map[string]any
		if err := json.Unmarshal([]byte(payload), &in); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"hook_event_name": "PreToolUse", "session_id": "session-1", "transcript_path": "/logs/session-1.jsonl",
			"cwd": ws, "tool_name": "Bash", "tool_use_id": "call-Bash", "tool_input": map[string]any{"command": "ls", "description": "list"}}
		for k, v := range want {
			if got, _ := json.Marshal(in[k]); string(got) != mustJSON(v) {
				t.Errorf("%s = %s, want %s", k, got, mustJSON(v))
			}
		}
	})
	t.Run("53 no agent", func(t *testing.T) {
		h, _ := setup(t, ht.G("PreToolUse", "", `exit 2`))
		ex := h.Exec("x", `{}`)
		ex.AgentID = nil
		d, _ := h.PreTool(ctx, ex)
		if d.Kind() != dsh.PreToolDenyKind || len(h.Rec.Take()) != 0 {
			t.Errorf("%s, or records written", ht.Describe(d))
		}
	})
	t.Run("53 unregistered", func(t *testing.T) {
		h := ht.New(t.TempDir())
		b, err := claudecode.New(claudecode.Config{Canonical: true, Workspace: h.Dir, Files: []string{ht.Config(t, h.Dir, "s.json", ht.G("UserPromptSubmit", "", "exit 2"))}})
		if err != nil {
			t.Fatal(err)
		}
		unregister := b.Register(h.Reg.Plugin(claudecode.Plugin))
		unregister()
		if d, _ := h.PreStep(ctx, "x"); d.Kind() != dsh.PreStepEnterKind {
			t.Errorf("still blocks after unregister: %s", ht.Describe(d))
		}
	})
}

func mustJSON(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

// Scenarios 41-44 and decision 8: PostToolUse on tools/post-execute, plus the PreToolUse
// context that follows the tool result (decision 7).
func TestPostToolUse(t *testing.T) {
	t.Run("41 block", func(t *testing.T) {
		h, _ := setup(t, ht.G("PostToolUse", "", `echo "output rejected, retry" >&2; exit 2`))
		ex := h.Exec("x", `{}`)
		d, _ := h.PostTool(ctx, ex, ht.Success(`"ok"`))
		if ht.Describe(d) != "block: output rejected, retry" {
			t.Errorf("%s", ht.Describe(d))
		}
		wantRecords(t, h, "block")
	})
	t.Run("41 empty stderr", func(t *testing.T) {
		h, _ := setup(t, ht.G("PostToolUse", "", `exit 2`))
		d, _ := h.PostTool(ctx, h.Exec("x", `{}`), ht.Success(`1`))
		if ht.Describe(d) != "block: Blocked by hook" {
			t.Errorf("%s", ht.Describe(d))
		}
	})
	t.Run("42 context", func(t *testing.T) {
		h, _ := setup(t, ht.G("PostToolUse", "", `echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"note: tool was slow"}}'`))
		d, _ := h.PostTool(ctx, h.Exec("x", `{}`), ht.Success(`1`))
		a := d.(dsh.PostToolAccept)
		if len(a.AdditionalContexts) != 1 || ht.Texts(a.AdditionalContexts[0])[0] != "note: tool was slow" || ht.Source(a.AdditionalContexts[0]) != "plugin:hooks-claude-code" {
			t.Errorf("%+v", a)
		}
	})
	t.Run("43 block with context", func(t *testing.T) {
		h, _ := setup(t, ht.G("PostToolUse", "", `echo '{"decision":"block","reason":"bad","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"context too"}}'`))
		d, _ := h.PostTool(ctx, h.Exec("x", `{}`), ht.Success(`1`))
		b := d.(dsh.PostToolBlock)
		if ht.Describe(d) != "block: bad" || len(b.AdditionalContexts) != 1 || ht.Texts(b.AdditionalContexts[0])[0] != "context too" {
			t.Errorf("%s %+v", ht.Describe(d), b)
		}
	})
	t.Run("44 downstream", func(t *testing.T) {
		policy := dsh.UserMessage{ID: "p", Role: "user", Content: []dsh.ContentBlock{dsh.TextBlock{Text: "policy"}}, Source: dsh.SourcePlugin{Plugin: "policy"}}
		for name, down := range map[string]dsh.PostToolDecision{
			"replace": dsh.PostToolAccept{Value: json.RawMessage(`"replaced"`)},
			"policy":  dsh.PostToolAccept{AdditionalContexts: []dsh.UserMessage{policy}},
			"block":   dsh.PostToolBlock{Feedback: []dsh.ContentBlock{dsh.TextBlock{Text: "downstream-block"}}, AdditionalContexts: []dsh.UserMessage{policy}},
		} {
			h, _ := setup(t, ht.G("PostToolUse", "", `echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"bridge"}}'`))
			h.Reg.Plugin("policy").OnPostTool(func(context.Context, *dsh.PostToolPayload, dsh.PostToolNext) (dsh.PostToolDecision, error) {
				return down, nil
			})
			d, _ := h.PostTool(ctx, h.Exec("x", `{}`), ht.Success(`1`))
			var ctxs []dsh.UserMessage
			//dshvet:partial a halt carries no contexts, which is what the test reads
			switch x := d.(type) {
			case dsh.PostToolAccept:
				ctxs = x.AdditionalContexts
				if name == "replace" && string(x.Value) != `"replaced"` {
					t.Errorf("%s: value lost", name)
				}
			case dsh.PostToolBlock:
				ctxs = x.AdditionalContexts
				if ht.Describe(d) != "block: downstream-block" {
					t.Errorf("%s: %s", name, ht.Describe(d))
				}
			}
			if len(ctxs) == 0 || ht.Texts(ctxs[0])[0] != "bridge" || (name != "replace" && (len(ctxs) != 2 || ctxs[1].ID != "p")) {
				t.Errorf("%s: contexts %+v", name, ctxs)
			}
		}
	})
	t.Run("decision 8: failures run no hook", func(t *testing.T) {
		h, _ := setup(t, ht.G("PostToolUse", "", `exit 2`))
		fail := dsh.ToolFailure{Error: dsh.ToolError{Message: "boom"}, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "Error: boom"}}}
		d, _ := h.PostTool(ctx, h.Exec("x", `{}`), fail)
		if d.Kind() != dsh.PostToolAcceptKind || len(h.Rec.Take()) != 0 {
			t.Errorf("%s", ht.Describe(d))
		}
	})
	t.Run("halt", func(t *testing.T) {
		h, _ := setup(t, ht.G("PostToolUse", "", `echo '{"continue":false,"stopReason":"enough"}'`))
		d, _ := h.PostTool(ctx, h.Exec("x", `{}`), ht.Success(`1`))
		if ht.Describe(d) != "halt: enough" {
			t.Errorf("%s", ht.Describe(d))
		}
	})
	t.Run("tool_response", func(t *testing.T) {
		dir := t.TempDir()
		h, _ := setup(t, ht.G("PostToolUse", "", `cat > `+dir+`/in`))
		h.PostTool(ctx, h.Exec("Read", `{"file_path":"a"}`), ht.Success(`{"lines":3}`))
		data, _ := os.ReadFile(filepath.Join(dir, "in"))
		var in map[string]json.RawMessage
		if err := json.Unmarshal(data, &in); err != nil || string(in["tool_response"]) != `{"lines":3}` || string(in["tool_input"]) != `{"file_path":"a"}` {
			t.Errorf("%s %v", data, err)
		}
	})
	t.Run("Edit's replace_all default", func(t *testing.T) {
		// The engine fills replace_all:false into Edit's tool_input before any hook runs
		// (differential suite, post/file-tools); a given value and other tools stay as they are.
		dir := t.TempDir()
		h, _ := setup(t, ht.G("PreToolUse", "", `cat >> `+dir+`/pre`), ht.G("PostToolUse", "", `cat >> `+dir+`/post`))
		for _, c := range [][2]string{
			{"Edit", `{"file_path":"a","old_string":"x","new_string":"y"}`},
			{"Edit", `{"file_path":"a","old_string":"x","new_string":"y","replace_all":true}`},
			{"Write", `{"file_path":"a","content":"x"}`},
		} {
			ex := h.Exec(c[0], c[1])
			h.PreTool(ctx, ex)
			h.PostTool(ctx, ex, ht.Success(`{}`))
		}
		want := []string{`{"file_path":"a","old_string":"x","new_string":"y","replace_all":false}`,
			`{"file_path":"a","old_string":"x","new_string":"y","replace_all":true}`, `{"file_path":"a","content":"x"}`}
		for _, f := range []string{"pre", "post"} {
			data, _ := os.ReadFile(filepath.Join(dir, f))
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				var in map[string]json.RawMessage
				if err := json.Unmarshal([]byte(line), &in); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				got = append(got, string(in["tool_input"]))
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s tool_input = %q, want %q", f, got, want)
			}
		}
	})
	t.Run("PreToolUse context after the result", func(t *testing.T) {
		h, _ := setup(t,
			ht.G("PreToolUse", "", `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"pre ctx"}}'`),
			ht.G("PostToolUse", "", `echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"post ctx"}}'`))
		ex := h.Exec("x", `{}`)
		if d, _ := h.PreTool(ctx, ex); d.Kind() != dsh.PreToolAllowKind {
			t.Fatal(ht.Describe(d))
		}
		d, _ := h.PostTool(ctx, ex, ht.Success(`1`))
		a := d.(dsh.PostToolAccept)
		if len(a.AdditionalContexts) != 1 || !slices.Equal(ht.Texts(a.AdditionalContexts[0]), []string{"pre ctx", "post ctx"}) {
			t.Errorf("%+v", a.AdditionalContexts)
		}
		// Delivered once.
		d, _ = h.PostTool(ctx, ex, ht.Success(`1`))
		if a := d.(dsh.PostToolAccept); len(a.AdditionalContexts) != 1 || len(ht.Texts(a.AdditionalContexts[0])) != 1 {
			t.Errorf("second delivery: %+v", a.AdditionalContexts)
		}
	})
}

// TestUpdatedToolOutput: a PostToolUse updatedToolOutput that fits the tool's output
// shape replaces the content the model reads, the value kept (Bash: an object with a
// string stdout, read as stdout then stderr; an MCP tool: a string, or updatedMCPToolOutput
// when updatedToolOutput is absent); one that does not fit is ignored, as Claude Code
// 2.1.328 ignores it, and a downstream replacement still wins.
func TestUpdatedToolOutput(t *testing.T) {
	cases := []struct {
		name, tool, out, want string
	}{
		{"bash object", "Bash", `{"updatedToolOutput":{"stdout":"replaced\n","stderr":"warn","interrupted":false,"isImage":false}}`, "replaced\nwarn"},
		{"bash string ignored", "Bash", `{"updatedToolOutput":"replaced"}`, ""},
		{"bash mcp field ignored", "Bash", `{"updatedMCPToolOutput":"replaced"}`, ""},
		{"mcp string", "mcp__mem__read", `{"updatedToolOutput":"from hook"}`, "from hook"},
		{"mcp field", "mcp__mem__read", `{"updatedMCPToolOutput":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`, "a|b"},
		{"other tool ignored", "Read", `{"updatedToolOutput":"x"}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := `{"hookSpecificOutput":{"hookEventName":"PostToolUse",` + c.out[1:] + `}`
			h, _ := setup(t, ht.G("PostToolUse", "", `printf '%s' '`+out+`'`))
			d, err := h.PostTool(ctx, h.Exec(c.tool, `{}`), ht.Success(`{"stdout":"orig"}`))
			if err != nil {
				t.Fatal(err)
			}
			a, ok := d.(dsh.PostToolAccept)
			if !ok {
				t.Fatalf("%s", ht.Describe(d))
			}
			var texts []string
			for _, b := range a.Content {
				texts = append(texts, b.(dsh.TextBlock).Text)
			}
			if got := strings.Join(texts, "|"); got != c.want || a.Value != nil {
				t.Errorf("content %q value %s, want %q and the value kept", got, a.Value, c.want)
			}
		})
	}
	t.Run("downstream replacement wins", func(t *testing.T) {
		h, _ := setup(t, ht.G("PostToolUse", "", `echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":"from hook"}}'`))
		h.Reg.Plugin("policy").OnPostTool(func(context.Context, *dsh.PostToolPayload, dsh.PostToolNext) (dsh.PostToolDecision, error) {
			return dsh.PostToolAccept{Content: []dsh.ContentBlock{dsh.TextBlock{Text: "policy"}}}, nil
		})
		d, _ := h.PostTool(ctx, h.Exec("mcp__mem__read", `{}`), ht.Success(`1`))
		if a := d.(dsh.PostToolAccept); len(a.Content) != 1 || a.Content[0].(dsh.TextBlock).Text != "policy" {
			t.Errorf("%+v", a)
		}
	})
}
