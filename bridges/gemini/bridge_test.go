package gemini_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshkit/dsh/bridges/gemini"
	"github.com/dshkit/dsh/bridges/hookproto"
	ht "github.com/dshkit/dsh/bridges/internal/hooktest"
	"github.com/dshkit/dsh/generated/dsh"
)

var ctx = context.Background()

// setup writes a settings.json holding events (Gemini's hooks object) and registers a
// bridge over it.
func setup(t *testing.T, events map[string]any) (*ht.Harness, *gemini.Bridge) {
	t.Helper()
	dir := t.TempDir()
	data, _ := json.Marshal(map[string]any{"hooks": events})
	file := ht.Raw(t, t.TempDir(), "settings.json", string(data))
	h := ht.New(dir)
	b, err := gemini.New(gemini.Config{Files: []string{file}, Workspace: dir, Session: h.Session, Recorder: h.Rec,
		Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close(ctx) })
	b.Register(h.Reg.Plugin(gemini.Plugin))
	return h, b
}

// on is one group of command hooks of an event.
func on(event, matcher string, cmds ...string) map[string]any {
	var hs []any
	for _, c := range cmds {
		hs = append(hs, map[string]any{"type": "command", "command": c})
	}
	g := map[string]any{"hooks": hs}
	if matcher != "" {
		g["matcher"] = matcher
	}
	return map[string]any{event: []any{g}}
}

func merge(ms ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = append(asList(out[k]), asList(v)...)
		}
	}
	return out
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// TestBeforeToolStdin: the common fields in the engine's order, then the event's, with no
// trailing newline; the matcher is an unanchored regex ("shell" matches
// run_shell_command).
func TestBeforeToolStdin(t *testing.T) {
	out := filepath.Join(t.TempDir(), "stdin.json")
	h, _ := setup(t, on("BeforeTool", "shell", "cat > "+out))
	if d, err := h.PreTool(ctx, h.Exec("run_shell_command", `{"command":"ls"}`)); err != nil || d.Kind() != dsh.PreToolAllowKind {
		t.Fatalf("%v %v", ht.Describe(d), err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"session_id":"session-1","transcript_path":"","cwd":"` + h.Dir + `","hook_event_name":"BeforeTool","timestamp":"2026-01-02T03:04:05.006Z","tool_name":"run_shell_command","tool_input":{"command":"ls"}}`
	if string(data) != want {
		t.Fatalf("stdin\n%s\nwant\n%s", data, want)
	}
}

// TestBeforeToolDeny: a JSON deny on stderr with exit 0 denies, every hook's reason joined
// with a newline; the model reads "Tool execution blocked: <reason>".
func TestBeforeToolDeny(t *testing.T) {
	h, _ := setup(t, on("BeforeTool", "", `echo '{"decision":"allow","reason":"fine"}'`, `echo '{"decision":"deny","reason":"no rm"}' >&2`))
	ex := h.Exec("run_shell_command", `{"command":"rm -rf x"}`)
	d, err := h.PreTool(ctx, ex)
	if err != nil || ht.Describe(d) != "deny: fine\nno rm" {
		t.Fatalf("%q %v", ht.Describe(d), err)
	}
	post, err := h.Ran(ctx, ex, dsh.ToolFailure{Error: dsh.ToolError{Message: "fine\nno rm"}})
	if err != nil {
		t.Fatal(err)
	}
	acc, ok := post.(dsh.PostToolAccept)
	if !ok || len(acc.Content) != 1 || acc.Content[0].(dsh.TextBlock).Text != "Tool execution blocked: fine\nno rm" {
		t.Fatalf("%s", ht.Describe(post))
	}
}

// TestBeforeToolExitCodes: plain text on exit 3 blocks with the text; exit 2 with no
// output lets the call run; ask asks the approval seam.
func TestBeforeToolExitCodes(t *testing.T) {
	for _, tc := range []struct{ cmd, want string }{
		{`echo refused >&2; exit 3`, "deny: refused"},
		{`exit 2`, "allow"},
		{`echo '{"decision":"ask","reason":"sure?"}'`, "ask: sure?"},
		{`echo '{"decision":"deny"}'`, "deny: No reason provided"},
		{`sleep 5`, "allow"}, // timeout 0 below: fails at once, the call runs
	} {
		g := on("BeforeTool", "", tc.cmd)
		if tc.cmd == `sleep 5` {
			g["BeforeTool"].([]any)[0].(map[string]any)["hooks"].([]any)[0].(map[string]any)["timeout"] = 0
		}
		h, _ := setup(t, g)
		d, err := h.PreTool(ctx, h.Exec("run_shell_command", `{"command":"ls"}`))
		if err != nil || ht.Describe(d) != tc.want {
			t.Errorf("%s: %q %v, want %q", tc.cmd, ht.Describe(d), err, tc.want)
		}
	}
}

// TestBeforeToolRewrite: tool_input replaces the arguments; each hook of a sequential
// group sees the previous one's rewrite; the result gets the engine's note.
func TestBeforeToolRewrite(t *testing.T) {
	seen := filepath.Join(t.TempDir(), "seen.json")
	g := on("BeforeTool", "", `echo '{"hookSpecificOutput":{"tool_input":{"command":"pwd"}}}'`, "cat > "+seen)
	g["BeforeTool"].([]any)[0].(map[string]any)["sequential"] = true
	h, _ := setup(t, g)
	id := h.Agent.AgentID
	p := &dsh.RewriteInputPayload{AgentID: &id, CallID: "call-1", Name: "run_shell_command", Input: json.RawMessage(`{"command":"ls","dir_path":"."}`)}
	var got json.RawMessage
	err := h.Reg.RunRewriteInput(ctx, p, time.Minute, func(_ context.Context, _ string, d dsh.RewriteDecision) (*dsh.RewriteInputPayload, error) {
		if r, ok := d.(dsh.RewriteReplace); ok {
			got = r.Args
			p.Input = r.Args
		}
		return p, nil
	})
	if err != nil || string(got) != `{"command":"pwd"}` {
		t.Fatalf("rewrite %s, %v", got, err)
	}
	data, _ := os.ReadFile(seen)
	if !strings.Contains(string(data), `"tool_input":{"command":"pwd","dir_path":"."}`) {
		t.Errorf("the second sequential hook saw %s", data)
	}
	ex := h.Exec("run_shell_command", `{"command":"pwd"}`)
	ex.CallID, ex.ModelArguments = "call-1", json.RawMessage(`{"command":"ls","dir_path":"."}`)
	post, err := h.Ran(ctx, ex, dsh.ToolSuccess{Content: []dsh.ContentBlock{dsh.TextBlock{Text: "Output: /w"}}})
	acc, ok := post.(dsh.PostToolAccept)
	if err != nil || !ok || len(acc.Content) != 1 ||
		acc.Content[0].(dsh.TextBlock).Text != "Output: /w\n\n[System] Tool input parameters were modified by a hook before execution." {
		t.Fatalf("%s %v", ht.Describe(post), err)
	}
}

// TestAfterToolContext: additionalContext follows the result text inside <hook_context>,
// after a blank line, for a failed call too; a block replaces the result with the reason
// alone (as measured on the engine).
func TestAfterToolContext(t *testing.T) {
	h, _ := setup(t, on("AfterTool", "run_shell", `echo '{"hookSpecificOutput":{"additionalContext":"checked"}}'`))
	fail := dsh.ToolFailure{Error: dsh.ToolError{Message: "exit 1"}, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "Exit Code: 1"}}}
	post, err := h.Ran(ctx, h.Exec("run_shell_command", `{"command":"false"}`), fail)
	if err != nil {
		t.Fatal(err)
	}
	acc, ok := post.(dsh.PostToolAccept)
	if !ok || len(acc.Content) != 1 || acc.Content[0].(dsh.TextBlock).Text != "Exit Code: 1\n\n<hook_context>checked</hook_context>" {
		t.Fatalf("%s %+v", ht.Describe(post), post)
	}
	h, _ = setup(t, on("AfterTool", "", `echo '{"decision":"block","reason":"secret"}'`))
	post, err = h.Ran(ctx, h.Exec("read_file", `{"file_path":"x"}`), ht.Success(`"key"`))
	blk, ok := post.(dsh.PostToolBlock)
	if err != nil || !ok || blk.Feedback[0].(dsh.TextBlock).Text != "secret" {
		t.Fatalf("%s %v", ht.Describe(post), err)
	}
}

// TestAfterToolNotForDenied: a call denied before it ran (another listener's denial, as
// the engine's policy denies after BeforeTool) runs no AfterTool; one that ran and failed
// does.
func TestAfterToolNotForDenied(t *testing.T) {
	h, _ := setup(t, on("AfterTool", "", `echo '{"decision":"block","reason":"after"}'`))
	fail := dsh.ToolFailure{Error: dsh.ToolError{Message: "Tool execution denied by policy."}, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "Tool execution denied by policy."}}}
	post, err := h.PostTool(ctx, h.Exec("run_shell_command", `{"command":"touch x"}`), fail)
	if _, ok := post.(dsh.PostToolBlock); err != nil || ok {
		t.Fatalf("denied call: %s %v", ht.Describe(post), err)
	}
	post, err = h.Ran(ctx, h.Exec("run_shell_command", `{"command":"touch x"}`), fail)
	if _, ok := post.(dsh.PostToolBlock); err != nil || !ok {
		t.Fatalf("failed call that ran: %s %v", ht.Describe(post), err)
	}
}

// TestAfterAgentDeny: a deny sends the reason back as the next prompt.
func TestAfterAgentDeny(t *testing.T) {
	h, _ := setup(t, on("AfterAgent", "", `echo '{"decision":"deny","reason":"run the tests"}'`))
	if err := h.Stop(ctx, 0); err != nil {
		t.Fatal(err)
	}
	st := h.Agent.Steered()
	if len(st) != 1 || ht.Texts(st[0])[0] != "run the tests" {
		t.Fatalf("steered %+v", st)
	}
}

// TestBeforeAgentRelayed: BeforeAgent fires again for the reason an AfterAgent deny sends
// as the next prompt, its prompt that reason, and its deny rejects that prompt; a plugin
// message of another form fires nothing.
func TestBeforeAgentRelayed(t *testing.T) {
	out := filepath.Join(t.TempDir(), "prompts")
	h, _ := setup(t, merge(
		on("AfterAgent", "", `echo '{"decision":"deny","reason":"run the tests"}'`),
		on("BeforeAgent", "", `cat >> `+out+`; echo >> `+out+`; echo '{"decision":"deny","reason":"not again"}'`)))
	if err := h.Stop(ctx, 0); err != nil {
		t.Fatal(err)
	}
	st := h.Agent.Steered()
	if len(st) != 1 {
		t.Fatalf("steered %+v", st)
	}
	other := dsh.UserMessage{ID: "m-2", Role: dsh.UserMessageRoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "a context"}},
		Source: dsh.SourcePlugin{Plugin: gemini.Plugin}}
	step := func(msgs ...dsh.UserMessage) dsh.PreStepDecision {
		t.Helper()
		p := &dsh.PreStepPayload{Agent: h.Agent, AgentID: h.Agent.AgentID, Turn: h.Turn, Step: 2, Messages: msgs}
		d, err := h.Reg.RunPreStep(ctx, p, func(context.Context) (dsh.PreStepDecision, error) {
			return dsh.PreStepEnter{Messages: p.Messages}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d := step(other); d.Kind() != dsh.PreStepEnterKind {
		t.Fatalf("a plain plugin message: %+v", d)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("BeforeAgent fired for a plain plugin message (%v)", err)
	}
	d := step(st[0])
	r, ok := d.(dsh.PreStepReject)
	if !ok || r.Reason == nil || *r.Reason != "not again" {
		t.Fatalf("the relayed prompt: %+v", d)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"hook_event_name":"BeforeAgent"`) || !strings.Contains(string(data), `"prompt":"run the tests"`) {
		t.Fatalf("BeforeAgent stdin %s", data)
	}
}

func request(h *ht.Harness) *dsh.RequestPayload {
	req := dsh.ModelRequest{Config: dsh.LLMCallConfig{Provider: "gemini", Model: "gemini-2.5-pro"},
		Messages: []dsh.ModelMessage{{Role: dsh.ModelRoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "hi"}}, Source: dsh.SourceUser{}}},
		Tools:    []dsh.ModelTool{{Name: "run_shell_command", Description: "shell"}}}
	return &dsh.RequestPayload{Agent: h.Agent, AgentID: h.Agent.AgentID, Turn: 1, Step: 1, Attempt: 1, Request: req, Original: req}
}

// runRequest folds agent/request and returns the decisions that were not pass.
func runRequest(t *testing.T, h *ht.Harness) []dsh.RequestDecision {
	t.Helper()
	var out []dsh.RequestDecision
	p := request(h)
	err := h.Reg.RunRequest(ctx, p, time.Minute, func(_ context.Context, _ string, d dsh.RequestDecision) (*dsh.RequestPayload, error) {
		if d.Kind() != dsh.RequestPassKind {
			out = append(out, d)
		}
		return p, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestModelEvents: BeforeModel deny, a BeforeModel answer, BeforeToolSelection NONE and an
// llm_request rewrite.
func TestModelEvents(t *testing.T) {
	h, _ := setup(t, on("BeforeModel", "", `echo '{"decision":"deny","reason":"offline"}'`))
	if ds := runRequest(t, h); len(ds) != 1 || ds[0].(dsh.RequestDeny).Reason != "offline" {
		t.Fatalf("%+v", ds)
	}
	h, _ = setup(t, on("BeforeModel", "", `echo '{"decision":"block","hookSpecificOutput":{"llm_response":{"candidates":[{"content":{"role":"model","parts":["cached"]}}]}}}'`))
	if ds := runRequest(t, h); len(ds) != 1 || ds[0].(dsh.RequestAnswer).Content[0].(dsh.TextBlock).Text != "cached" {
		t.Fatalf("%+v", ds)
	}
	h, _ = setup(t, merge(on("BeforeToolSelection", "", `echo '{"hookSpecificOutput":{"toolConfig":{"mode":"ANY","allowedFunctionNames":["read_file"]}}}'`,
		`echo '{"hookSpecificOutput":{"toolConfig":{"mode":"NONE"}}}'`)))
	if ds := runRequest(t, h); len(ds) != 1 || len(ds[0].(dsh.RequestRestrict).Allow) != 0 {
		t.Fatalf("%+v", ds)
	}
	h, _ = setup(t, on("BeforeModel", "", `echo '{"hookSpecificOutput":{"llm_request":{"model":"gemini-2.5-flash","messages":[{"role":"user","content":"hello"}]}}}'`))
	ds := runRequest(t, h)
	if len(ds) != 2 {
		t.Fatalf("%+v", ds)
	}
	if rw := ds[0].(dsh.RequestRewrite); rw.Messages[0].Content[0].(dsh.TextBlock).Text != "hello" {
		t.Errorf("%+v", rw)
	}
	if use := ds[1].(dsh.RequestUse); use.Config.Model != "gemini-2.5-flash" || use.Config.Provider != "gemini" {
		t.Errorf("%+v", use)
	}
}

// TestAfterToolTail: a tailToolCallRequest object is a tail decision (the last hook's
// wins; absent args are null), its contexts dropped; any other value, or a block beside
// it, is not; a tail call's AfterTool stdin carries original_request_name last.
func TestAfterToolTail(t *testing.T) {
	out := filepath.Join(t.TempDir(), "stdin")
	h, _ := setup(t, merge(
		on("AfterTool", "", `echo '{"hookSpecificOutput":{"tailToolCallRequest":{"name":"read_file","args":{"file_path":"a"}}}}'`),
		on("AfterTool", "", `cat > `+out+`; echo '{"hookSpecificOutput":{"additionalContext":"lost","tailToolCallRequest":{"name":"run_shell_command","args":{"command":"echo tail","n":1.50}}}}'`)))
	ex := h.Exec("run_shell_command", `{"command":"true"}`)
	original := "run_shell_command"
	ex.OriginalName = &original
	post, err := h.Ran(ctx, ex, ht.Success(`"ok"`))
	tail, ok := post.(dsh.PostToolTail)
	if err != nil || !ok || tail.Name != "run_shell_command" || string(tail.Arguments) != `{"command":"echo tail","n":1.50}` {
		t.Fatalf("%s %+v %v", ht.Describe(post), post, err)
	}
	data, _ := os.ReadFile(out)
	if !strings.HasSuffix(string(data), `,"original_request_name":"run_shell_command"}`) {
		t.Errorf("AfterTool stdin %s", data)
	}
	for _, c := range []struct{ name, out string }{
		{"not an object", `{"hookSpecificOutput":{"tailToolCallRequest":"read_file"}}`},
		{"blocked", `{"decision":"deny","reason":"no","hookSpecificOutput":{"tailToolCallRequest":{"name":"read_file","args":{}}}}`},
	} {
		h, _ := setup(t, on("AfterTool", "", `echo '`+c.out+`'`))
		post, err := h.Ran(ctx, h.Exec("run_shell_command", `{"command":"true"}`), ht.Success(`"ok"`))
		if err != nil || post.Kind() == dsh.PostToolTailKind {
			t.Errorf("%s: %s %v", c.name, ht.Describe(post), err)
		}
	}
	h, _ = setup(t, on("AfterTool", "", `echo '{"hookSpecificOutput":{"tailToolCallRequest":{"name":7}}}'`))
	post, err = h.Ran(ctx, h.Exec("run_shell_command", `{"command":"true"}`), ht.Success(`"ok"`))
	if tail, ok := post.(dsh.PostToolTail); err != nil || !ok || tail.Name != "" || string(tail.Arguments) != "null" {
		t.Errorf("a name that is no string: %s %+v %v", ht.Describe(post), post, err)
	}
}

// TestAfterModelReplace: an llm_response replaces the text and drops the tool calls.
func TestAfterModelReplace(t *testing.T) {
	h, _ := setup(t, on("AfterModel", "", `echo '{"hookSpecificOutput":{"llm_response":{"text":"redacted","candidates":[]}}}'`))
	resp := dsh.ModelResponse{Content: []dsh.ContentBlock{dsh.TextBlock{Text: "secret"}}, Finish: dsh.FinishReasonStop}
	p := &dsh.ResponsePayload{Agent: h.Agent, AgentID: h.Agent.AgentID, Turn: 1, Step: 1, Response: resp, Original: resp}
	var got dsh.ResponseDecision
	err := h.Reg.RunResponse(ctx, p, time.Minute, func(_ context.Context, _ string, d dsh.ResponseDecision) (*dsh.ResponsePayload, error) {
		got = d
		return p, nil
	})
	rp, ok := got.(dsh.ResponseReplace)
	if err != nil || !ok || rp.Text != "redacted" || rp.ToolCalls != dsh.ReplaceToolCallsDrop {
		t.Fatalf("%+v %v", got, err)
	}
}

// TestSessionStartExact: SessionStart matchers compare exactly, and no SessionStart
// fires after a compaction.
func TestSessionStartExact(t *testing.T) {
	h, _ := setup(t, merge(on("SessionStart", "start", `echo '{"hookSpecificOutput":{"additionalContext":"A"}}'`),
		on("SessionStart", "startup", `echo '{"hookSpecificOutput":{"additionalContext":"B"}}'`)))
	if err := h.SessionStart(ctx, dsh.SessionStartSourceStartup); err != nil {
		t.Fatal(err)
	}
	inj := h.Agent.Injected()
	if len(inj) != 1 || ht.Texts(inj[0])[0] != "<hook_context>B</hook_context>" {
		t.Fatalf("%+v", inj)
	}
	if err := h.SessionStartCompact(ctx, "c1", 1); err != nil || len(h.Agent.Injected()) != 0 {
		t.Fatalf("SessionStart fired after a compaction: %v", err)
	}
}

// TestBothRequestEvents: BeforeModel and BeforeToolSelection share agent/request, and both
// run, in table order (BeforeModel's request first).
func TestBothRequestEvents(t *testing.T) {
	seen := filepath.Join(t.TempDir(), "seen")
	h, _ := setup(t, merge(on("BeforeModel", "", "echo model >> "+seen),
		on("BeforeToolSelection", "", "echo selection >> "+seen+`; echo '{"hookSpecificOutput":{"toolConfig":{"mode":"NONE"}}}'`)))
	ds := runRequest(t, h)
	if len(ds) != 1 || ds[0].Kind() != dsh.RequestRestrictKind {
		t.Fatalf("%+v", ds)
	}
	if data, _ := os.ReadFile(seen); string(data) != "model\nselection\n" {
		t.Fatalf("ran %q", data)
	}
}

// TestAfterToolStdin: tool_response is what Gemini CLI's tools give: llmContent the text
// the model reads, returnDisplay the tool's display (the shell's output, a partial read's
// line range, a write's diff object; another tool's text), and for a failure the error's
// message and type with the engine's words.
func TestAfterToolStdin(t *testing.T) {
	out := filepath.Join(t.TempDir(), "stdin.json")
	h, _ := setup(t, on("AfterTool", "", "cat >> "+out+"; echo >> "+out))
	text := func(s string) []dsh.ContentBlock { return []dsh.ContentBlock{dsh.TextBlock{Text: s}} }
	for _, c := range []struct {
		tool string
		r    dsh.ToolExecutionResult
		want string
	}{
		{"run_shell_command", dsh.ToolSuccess{Value: json.RawMessage(`{"stdout":"out1\n","stderr":"","exitCode":0,"wallTime":0.1,"pgid":7}`), Content: text("Output: out1")},
			`{"llmContent":"Output: out1","returnDisplay":"out1"}`},
		{"run_shell_command", dsh.ToolSuccess{Value: json.RawMessage(`{"stdout":"","stderr":"","exitCode":3,"wallTime":0.1}`), Content: text("Output: (empty)")},
			`{"llmContent":"Output: (empty)","returnDisplay":"Command exited with code: 3"}`},
		{"read_file", dsh.ToolSuccess{Value: json.RawMessage(`{"type":"text","file":{"filePath":"` + h.Dir + `/d/n.txt","content":"b","numLines":1,"startLine":2,"totalLines":5}}`), Content: text("…b")},
			`{"llmContent":"…b","returnDisplay":"Read lines 2-2 of 5 from d/n.txt"}`},
		{"write_file", dsh.ToolSuccess{Value: json.RawMessage(`{"type":"create","filePath":"/w/go.mod","content":"a\nb\n","structuredPatch":[],"originalFile":null,"userModified":false}`), Content: text("Successfully created")},
			`{"llmContent":"Successfully created","returnDisplay":{"fileDiff":"Index: go.mod\n===================================================================\n--- go.mod\tOriginal\n+++ go.mod\tWritten\n@@ -0,0 +1,2 @@\n+a\n+b\n","fileName":"go.mod","filePath":"/w/go.mod","originalContent":"","newContent":"a\nb\n","diffStat":{"model_added_lines":2,"model_removed_lines":0,"model_added_chars":2,"model_removed_chars":0,"user_added_lines":0,"user_removed_lines":0,"user_added_chars":0,"user_removed_chars":0},"isNewFile":true,"isBuildFile":true}}`},
		{"read_file", dsh.ToolFailure{Error: dsh.ToolError{Message: "File not found: x", Info: &dsh.ToolErrorInfo{Name: "HarnessError", Code: "FILE_NOT_FOUND"}}, Content: text("File not found: x")},
			`{"llmContent":"Could not read file because no file was found at the specified path.","returnDisplay":"File not found.","error":{"message":"File not found: x","type":"file_not_found"}}`},
		{"my_tool", dsh.ToolFailure{Error: dsh.ToolError{Message: "boom"}, Content: text("boom")},
			`{"llmContent":"boom","returnDisplay":"boom","error":{"message":"boom"}}`},
	} {
		_ = os.Remove(out)
		if _, err := h.Ran(ctx, h.Exec(c.tool, `{"file_path":"x"}`), c.r); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(out)
		if !strings.HasSuffix(strings.TrimSpace(string(data)), `"tool_response":`+c.want+`}`) {
			t.Errorf("%s stdin:\n%s\nwant tool_response\n%s", c.tool, data, c.want)
		}
	}
}

// TestPlansDir: every hook gets $GEMINI_PLANS_DIR exported, as
// $HOME/.gemini/tmp/<project id>/<session id>/plans: the id the
// engine's projects.json registers for the project, else the slug of its directory's
// name; the directory is not created.
func TestPlansDir(t *testing.T) {
	home, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	ws := filepath.Join(t.TempDir(), "My Project_2")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(map[string]any{"hooks": on("BeforeTool", "", `printf '%s|%s' "$GEMINI_PLANS_DIR" $GEMINI_PLANS_DIR > `+out)})
	file := ht.Raw(t, t.TempDir(), "settings.json", string(data))
	h := ht.New(ws)
	b, err := gemini.New(gemini.Config{Files: []string{file}, Workspace: ws, Session: h.Session, Logger: slog.New(slog.DiscardHandler),
		Getenv: func(k string) string { return map[string]string{"HOME": home}[k] }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close(ctx) })
	b.Register(h.Reg.Plugin(gemini.Plugin))
	if _, err := h.PreTool(ctx, h.Exec("run_shell_command", `{"command":"ls"}`)); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	want := filepath.Join(home, ".gemini", "tmp", "my-project-2", "session-1", "plans")
	if string(got) != want+"|"+want {
		t.Fatalf("GEMINI_PLANS_DIR %q, want %q twice", got, want)
	}
	if _, err := os.Stat(filepath.Join(home, ".gemini")); !os.IsNotExist(err) {
		t.Errorf("the bridge created under HOME: %v", err)
	}
	ht.Raw(t, filepath.Join(home, ".gemini"), "projects.json", `{"projects":{"`+ws+`":"my-project-2-1"}}`)
	if got := gemini.ProjectTempDir(home, ws); got != filepath.Join(home, ".gemini", "tmp", "my-project-2-1") {
		t.Errorf("registered id: %s", got)
	}
	if got := gemini.ProjectTempDir(home, "/"); got != filepath.Join(home, ".gemini", "tmp", "project") {
		t.Errorf("root: %s", got)
	}
}

// TestSessionEndReason: a session its host closes (the end of dsh run's prompt) ends with
// reason "exit" on stdin, as Gemini CLI's headless run does, and its matcher tests that.
func TestSessionEndReason(t *testing.T) {
	out := filepath.Join(t.TempDir(), "stdin.json")
	h, _ := setup(t, on("SessionEnd", "exit", "cat > "+out))
	if _, err := h.SessionEnd(ctx, dsh.SessionEndReasonClose, time.Minute); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(out); err != nil || !strings.HasSuffix(string(data), `"reason":"exit"}`) {
		t.Fatalf("stdin %s %v", data, err)
	}
}

// TestLLMResponseUsage: AfterModel's llm_response carries the response's usage as the
// Gemini API's usageMetadata.
func TestLLMResponseUsage(t *testing.T) {
	cached := 3
	r := gemini.LLMResponse(&dsh.ModelResponse{Content: []dsh.ContentBlock{dsh.TextBlock{Text: "hi"}}, Finish: dsh.FinishReasonStop,
		Usage: &dsh.Usage{InputTokens: 10, OutputTokens: 5, CacheReadTokens: &cached}})
	data, err := r.MarshalJSON()
	if err != nil || !strings.HasSuffix(string(data), `"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5,"totalTokenCount":15,"cachedContentTokenCount":3}}`) {
		t.Fatalf("%s %v", data, err)
	}
}

// TestBeforeToolNonObjectRewrite: a tool_input that is not an object (a string, an array,
// a number, null) blocks the call with a reason that says so; the original arguments never
// run. Gemini CLI 0.61.0 ignores such a tool_input and runs them (getModifiedToolInput
// returns nothing): a deliberate difference, fail closed.
func TestBeforeToolNonObjectRewrite(t *testing.T) {
	for _, tc := range []struct{ value, kind string }{
		{`"rm -rf /"`, "a string"}, {`["ls"]`, "an array"}, {`7`, "a number"}, {`null`, "null"},
	} {
		h, _ := setup(t, on("BeforeTool", "", `echo '{"hookSpecificOutput":{"tool_input":`+tc.value+`}}'`))
		ex := h.Exec("run_shell_command", `{"command":"ls"}`)
		d, err := h.PreTool(ctx, ex)
		want := "deny: the hook's hookSpecificOutput.tool_input is " + tc.kind + ", not an object of arguments: the call is blocked rather than run with its original arguments"
		if err != nil || ht.Describe(d) != want {
			t.Errorf("tool_input %s: %q %v, want %q", tc.value, ht.Describe(d), err, want)
		}
		id := h.Agent.AgentID
		p := &dsh.RewriteInputPayload{AgentID: &id, CallID: "call-1", Name: "run_shell_command", Input: json.RawMessage(`{"command":"ls"}`)}
		err = h.Reg.RunRewriteInput(ctx, p, time.Minute, func(_ context.Context, _ string, d dsh.RewriteDecision) (*dsh.RewriteInputPayload, error) {
			if _, ok := d.(dsh.RewriteReplace); ok {
				t.Errorf("tool_input %s rewrote the arguments: %s", tc.value, ht.Describe(d))
			}
			return p, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		recorded := false
		for _, r := range h.Rec.Take() {
			if hr, ok := r.(dsh.HookResult); ok && hr.Outcome == dsh.HookOutcomeDeny && hr.Diagnostic != nil && strings.Contains(*hr.Diagnostic, "not an object: blocked (fail closed)") {
				recorded = true
			}
		}
		if !recorded {
			t.Errorf("tool_input %s: no hook/result records the fail-closed deny", tc.value)
		}
	}
}

// mcpTools is an MCP caller that knows one mounted MCP tool, mcp_hk_hook.
type mcpTools struct{}

func (mcpTools) CallHookTool(context.Context, string, string, map[string]any) (string, bool, error) {
	return "", false, nil
}

func (mcpTools) MCPTool(name string) (hookproto.MCPTool, bool) {
	if name != "mcp_hk_hook" {
		return hookproto.MCPTool{}, false
	}
	return hookproto.MCPTool{Server: "hk", Tool: "hook", Command: "/bin/srv", Args: []string{}}, true
}

// TestMCPToolStdin: as Gemini CLI 0.61.0 writes them (gemini/tools/mcp), BeforeTool and
// AfterTool of an MCP tool carry mcp_context (the server's name, its name of the tool,
// its command and its args, an empty list too), and AfterTool's tool_response.llmContent
// is the parts the model reads, its returnDisplay the server's text; a built-in tool's
// stdin has no mcp_context.
func TestMCPToolStdin(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(t.TempDir(), "stdin")
	data, _ := json.Marshal(map[string]any{"hooks": merge(on("BeforeTool", "", "cat >> "+out+"; echo >> "+out), on("AfterTool", "", "cat >> "+out+"; echo >> "+out))})
	file := ht.Raw(t, t.TempDir(), "settings.json", string(data))
	h := ht.New(dir)
	b, err := gemini.New(gemini.Config{Files: []string{file}, Workspace: dir, Session: h.Session, Recorder: h.Rec, MCP: mcpTools{},
		Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close(ctx) })
	b.Register(h.Reg.Plugin(gemini.Plugin))

	ex := h.Exec("mcp_hk_hook", `{"name":"x"}`)
	if _, err := h.PreTool(ctx, ex); err != nil {
		t.Fatal(err)
	}
	res := dsh.ToolSuccess{Value: json.RawMessage(`{"content":[{"type":"text","text":"done"},{"type":"image","data":"AA==","mimeType":"image/png"}]}`),
		Content: []dsh.ContentBlock{dsh.TextBlock{Text: "<untrusted_context>\ndone\n</untrusted_context>"}, dsh.ImageBlock{MediaType: "image/png", Data: "AA=="}}}
	if _, err := h.Ran(ctx, ex, res); err != nil {
		t.Fatal(err)
	}
	shell := h.Exec("run_shell_command", `{"command":"ls"}`)
	if _, err := h.PreTool(ctx, shell); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d stdins: %s", len(lines), got)
	}
	mcpCtx := `"mcp_context":{"server_name":"hk","tool_name":"hook","command":"/bin/srv","args":[]}`
	if !strings.HasSuffix(lines[0], `"tool_input":{"name":"x"},`+mcpCtx+`}`) {
		t.Errorf("BeforeTool stdin %s", lines[0])
	}
	wantAfter := `"tool_response":{"llmContent":[{"text":"<untrusted_context>\ndone\n</untrusted_context>"}],"returnDisplay":"done\n[Image: image/png]"},` + mcpCtx + `}`
	if !strings.HasSuffix(lines[1], wantAfter) {
		t.Errorf("AfterTool stdin\n%s\nwant the end\n%s", lines[1], wantAfter)
	}
	if strings.Contains(lines[2], "mcp_context") {
		t.Errorf("built-in tool's stdin %s", lines[2])
	}
}
