package hookproto

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
)

// fakeMCP is an MCP client of one server "hk": its tool answers text, or isError, or
// waits for ctx; every call's arguments are kept.
type fakeMCP struct {
	text  string
	isErr bool
	hang  bool
	args  []map[string]any
}

func (f *fakeMCP) CallHookTool(ctx context.Context, server, tool string, args map[string]any) (string, bool, error) {
	if server != "hk" {
		return "", false, errors.Join(ErrMCPUnavailable, errors.New("MCP server '"+server+"' not connected"))
	}
	f.args = append(f.args, args)
	if f.hang {
		<-ctx.Done()
		return "", false, ctx.Err()
	}
	return f.text, f.isErr, nil
}

// fakeModel answers every prompt hook with text (or err), keeping the requests.
type fakeModel struct {
	text string
	err  error
	hang bool
	reqs []PromptEval
}

func (m *fakeModel) EvaluateHook(ctx context.Context, r PromptEval) (string, error) {
	m.reqs = append(m.reqs, r)
	if m.hang {
		<-ctx.Done()
		return "", ctx.Err()
	}
	return m.text, m.err
}

const preStdin = `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /","n":3,"o":{"a":1}}}` + "\n"

func fire(t *testing.T, d Dialect, cfg string, mcp MCPCaller, model PromptModel) *Report {
	t.Helper()
	c, diags := Load([]byte(cfg), LoadOptions{Dialect: d, Source: "f.json"})
	if len(diags) > 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	e := &Engine{Table: hookmap.Lookup(string(d)), Config: c, MCP: mcp, Model: model}
	return e.Fire(context.Background(), Fire{Event: "PreToolUse", Subject: "Bash", Stdin: []byte(preStdin), InTurn: true, Turn: 1})
}

// Claude Code's placeholders are text: a missing value is empty, an object its JSON, a
// number its text; Codex's keep a whole placeholder's type and fail on a missing path.
func TestMCPInterpolation(t *testing.T) {
	input := map[string]any{"cmd": "${tool_input.command}", "n": "${tool_input.n}", "o": "${tool_input.o}",
		"in": "n=${tool_input.n}", "list": []any{"${hook_event_name}"}, "keep": 7.0}
	text := &MCPToolHandler{Input: input, Placeholders: "text"}
	got, err := text.Interpolate([]byte(preStdin))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"cmd": "rm -rf /", "n": "3", "o": `{"a":1}`, "in": "n=3", "list": []any{"PreToolUse"}, "keep": 7.0}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("text: got %v, want %v", got, want)
	}
	typed := &MCPToolHandler{Input: input, Placeholders: "typed"}
	got, err = typed.Interpolate([]byte(preStdin))
	if err != nil {
		t.Fatal(err)
	}
	want = map[string]any{"cmd": "rm -rf /", "n": 3.0, "o": map[string]any{"a": 1.0}, "in": "n=3", "list": []any{"PreToolUse"}, "keep": 7.0}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("typed: got %v, want %v", got, want)
	}
	text.Input = map[string]any{"x": "[${tool_input.nothing}]"}
	if got, _ := text.Interpolate([]byte(preStdin)); got["x"] != "[]" {
		t.Errorf("text missing: got %v", got)
	}
	typed.Input = map[string]any{"x": "${tool_input.nothing}"}
	if _, err := typed.Interpolate([]byte(preStdin)); !errors.Is(err, ErrPlaceholder) || !strings.Contains(err.Error(), "tool_input.nothing") {
		t.Errorf("typed missing: got %v, want ErrPlaceholder naming the path", err)
	}
}

// An mcp_tool hook's text is read as a command's stdout: a deny denies; isError, an
// unmounted server and a hang are non-blocking (error, timeout) unless onFailure is
// "block", which blocks where exit 2 would.
func TestMCPToolHook(t *testing.T) {
	deny := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"mcp no"}}`
	hook := func(server, extra string) string {
		return `{"hooks":{"PreToolUse":[{"hooks":[{"type":"mcp_tool","server":"` + server + `","tool":"t","input":{"c":"${tool_input.command}"}` + extra + `}]}]}}`
	}
	f := &fakeMCP{text: deny}
	rep := fire(t, ClaudeCode, hook("hk", ""), f, nil)
	if rep.Merged.Outcome != dsh.HookOutcomeDeny || rep.Merged.Reason != "mcp no" {
		t.Errorf("deny: got %s %q", rep.Merged.Outcome, rep.Merged.Reason)
	}
	if len(f.args) != 1 || f.args[0]["c"] != "rm -rf /" {
		t.Errorf("args: got %v", f.args)
	}
	if rep.Hooks[0].Handler.Command != "hk/t" {
		t.Errorf("command: got %q, want hk/t", rep.Hooks[0].Handler.Command)
	}
	for name, c := range map[string]struct {
		cfg  string
		mcp  *fakeMCP
		want dsh.HookOutcome
	}{
		"is-error":          {hook("hk", ""), &fakeMCP{text: deny, isErr: true}, dsh.HookOutcomeError},
		"not-mounted":       {hook("nope", ""), &fakeMCP{}, dsh.HookOutcomeError},
		"not-mounted-block": {hook("nope", `,"onFailure":"block"`), &fakeMCP{}, dsh.HookOutcomeDeny},
		"odd-value-blocks":  {hook("nope", `,"onFailure":"yes"`), &fakeMCP{}, dsh.HookOutcomeDeny},
		"continue":          {hook("nope", `,"onFailure":"continue"`), &fakeMCP{}, dsh.HookOutcomeError},
		"hang":              {hook("hk", `,"timeout":1`), &fakeMCP{hang: true}, dsh.HookOutcomeTimeout},
		"hang-block":        {hook("hk", `,"timeout":1,"onFailure":"block"`), &fakeMCP{hang: true}, dsh.HookOutcomeDeny},
	} {
		t.Run(name, func(t *testing.T) {
			rep := fire(t, ClaudeCode, c.cfg, c.mcp, nil)
			if got := rep.Hooks[0].Verdict.Outcome; got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
	// No MCP client at all: the server is not connected, in the engine's words (measured
	// in Claude Code 2.1.328, case handler/mcp-not-mounted-block).
	want := "failed; " + hookmap.ClaudeCode.Handlers[MCPToolHandlerType].OnFailureBecause + "\nMCP server 'hk' not connected"
	if rep := fire(t, ClaudeCode, hook("hk", `,"onFailure":"block"`), nil, nil); rep.Merged.Outcome != dsh.HookOutcomeDeny || rep.Merged.Reason != want {
		t.Errorf("no client: got %s %q, want deny %q", rep.Merged.Outcome, rep.Merged.Reason, want)
	}
	// A timeout says so, without output.
	if rep := fire(t, ClaudeCode, hook("hk", `,"timeout":1,"onFailure":"block"`), &fakeMCP{hang: true}, nil); !strings.HasPrefix(rep.Merged.Reason, "timed out; blocking because") {
		t.Errorf("hang: got %q", rep.Merged.Reason)
	}
}

// Codex runs mcp_tool too, with typed placeholders; a missing path fails the hook.
func TestMCPToolHookCodex(t *testing.T) {
	f := &fakeMCP{text: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}`}
	rep := fire(t, Codex, `{"hooks":{"PreToolUse":[{"hooks":[{"type":"mcp_tool","server":"hk","tool":"t","input":{"n":"${tool_input.n}"}}]}]}}`, f, nil)
	if rep.Merged.Outcome != dsh.HookOutcomeDeny || f.args[0]["n"] != 3.0 {
		t.Errorf("got %s, args %v", rep.Merged.Outcome, f.args)
	}
	rep = fire(t, Codex, `{"hooks":{"PreToolUse":[{"hooks":[{"type":"mcp_tool","server":"hk","tool":"t","input":{"n":"${nope}"}}]}]}}`, f, nil)
	if got := rep.Hooks[0].Verdict.Outcome; got != dsh.HookOutcomeError {
		t.Errorf("missing path: got %s, want error", got)
	}
}

// A prompt hook asks the model with the table's system prompt and schema and the prompt
// with $ARGUMENTS replaced; ok:false ends the turn with the reason, or with
// continueOnBlock blocks as exit 2 does, with the reason as its stderr; prose, an error and
// a hang are recorded outcomes that decide nothing.
func TestPromptHook(t *testing.T) {
	cfg := `{"hooks":{"PreToolUse":[{"hooks":[{"type":"prompt","prompt":"Safe? $ARGUMENTS","model":"m2"}]}]}}`
	m := &fakeModel{text: `{"ok": false, "reason": "dangerous"}`}
	rep := fire(t, ClaudeCode, cfg, nil, m)
	if rep.Merged.Outcome != dsh.HookOutcomeHalt || rep.Merged.Reason != "dangerous" {
		t.Errorf("not ok: got %s %q, want halt \"dangerous\"", rep.Merged.Outcome, rep.Merged.Reason)
	}
	cont := strings.Replace(cfg, `"model":"m2"`, `"model":"m2","continueOnBlock":true`, 1)
	if rep := fire(t, ClaudeCode, cont, nil, m); rep.Merged.Outcome != dsh.HookOutcomeDeny || rep.Merged.Reason != "dangerous" {
		t.Errorf("not ok, continueOnBlock: got %s %q", rep.Merged.Outcome, rep.Merged.Reason)
	}
	r := m.reqs[0]
	if r.Model != "m2" || !strings.HasPrefix(r.System, "You are evaluating a hook in Claude Code.") || !strings.Contains(string(r.Schema), `"ok"`) {
		t.Errorf("request: %+v", r)
	}
	if r.Prompt != "Safe? "+strings.TrimSuffix(preStdin, "\n") {
		t.Errorf("prompt text: %q", r.Prompt)
	}
	if got := fire(t, ClaudeCode, cfg, nil, &fakeModel{text: "```json\n{\"ok\":true,\"reason\":\"fine\"}\n```"}).Merged.Outcome; got != dsh.HookOutcomePass {
		t.Errorf("ok: got %s, want pass", got)
	}
	for name, c := range map[string]struct {
		m    *fakeModel
		cfg  string
		want dsh.HookOutcome
		diag string
	}{
		"prose":      {&fakeModel{text: "Yes, looks safe."}, cfg, dsh.HookOutcomeError, "JSON validation failed"},
		"no-reason":  {&fakeModel{text: `{"ok": false}`}, cfg, dsh.HookOutcomeError, "schema validation failed"},
		"model-fail": {&fakeModel{err: errors.New("HTTP 500")}, cfg, dsh.HookOutcomeError, "hook evaluator API error"},
		"hang":       {&fakeModel{hang: true}, strings.Replace(cfg, `"model":"m2"`, `"timeout":1`, 1), dsh.HookOutcomeTimeout, ""},
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			rep := fire(t, ClaudeCode, c.cfg, nil, c.m)
			v := rep.Hooks[0].Verdict
			if v.Outcome != c.want || !strings.Contains(strings.Join(v.Diagnostics, "\n"), c.diag) {
				t.Errorf("got %s %v, want %s with %q", v.Outcome, v.Diagnostics, c.want, c.diag)
			}
			if time.Since(start) > 10*time.Second {
				t.Errorf("took %v", time.Since(start))
			}
		})
	}
	if got := PromptText("no placeholder", []byte("{}\n")); got != "no placeholder\n\nARGUMENTS: {}" {
		t.Errorf("appended: %q", got)
	}
	if got := PromptText(`keep \$ARGUMENTS, use $ARGUMENTS`, []byte("{}")); got != `keep $ARGUMENTS, use {}` {
		t.Errorf("escaped: %q", got)
	}
}

// The handler types' loading: default timeouts per type and event (an agent's 60 s), a
// prompt at Stop refused, shell and Codex's command fields checked.
func TestLoadHandlerTypes(t *testing.T) {
	c, diags := ccLoad(t, `{"hooks":{
		"UserPromptSubmit":[{"hooks":[{"type":"command","command":"a"},{"type":"prompt","prompt":"p"},{"type":"mcp_tool","server":"s","tool":"t"}]}],
		"PreToolUse":[{"hooks":[{"type":"command","command":"b"},{"type":"prompt","prompt":"p"},{"type":"mcp_tool","server":"s","tool":"t"},
			{"type":"agent","prompt":"verify"},{"type":"command","command":"c","shell":"powershell"},{"type":"command","command":"d","shell":"bash"},
			{"type":"command","command":"e","shell":"zsh"},{"type":"mcp_tool","server":"","tool":"t"},{"type":"prompt","prompt":""}]}],
		"Stop":[{"hooks":[{"type":"prompt","prompt":"done?"}]}]}}`)
	want := map[string]time.Duration{}
	for _, h := range c.Handlers("UserPromptSubmit") {
		want[h.Command] = h.Timeout
	}
	if want["a"] != 30*time.Second || want["p"] != 30*time.Second || want["s/t"] != 30*time.Second {
		t.Errorf("UserPromptSubmit timeouts: %v", want)
	}
	got := map[string]time.Duration{}
	for _, h := range c.Handlers("PreToolUse") {
		got[h.Command] = h.Timeout
	}
	if got["b"] != 600*time.Second || got["p"] != 30*time.Second || got["s/t"] != 600*time.Second || got["d"] != 600*time.Second || got["verify"] != 60*time.Second {
		t.Errorf("PreToolUse timeouts: %v", got)
	}
	if _, ok := got["c"]; ok {
		t.Error("a powershell hook loaded")
	}
	var msgs []string
	for _, d := range diags {
		msgs = append(msgs, d.Error())
	}
	all := strings.Join(msgs, "\n")
	for _, w := range []string{
		`hooks.PreToolUse[0].hooks[4].shell: unsupported hook handler type: shell "powershell"`,
		`hooks.PreToolUse[0].hooks[6].shell: malformed hook entry: shell must be "bash" or "powershell"`,
		`hooks.PreToolUse[0].hooks[7].server: malformed hook entry: an mcp_tool handler needs a non-empty server string`,
		`hooks.PreToolUse[0].hooks[8].prompt: malformed hook entry: a prompt handler needs a non-empty prompt string`,
	} {
		if !strings.Contains(all, w) {
			t.Errorf("no diagnostic %q in\n%s", w, all)
		}
	}
	// Codex: mcp_tool loads; prompt and agent are refused; commandWindows is read and
	// additionalContextLimit checked.
	cx, diags := Load([]byte(`{"hooks":{"PreToolUse":[{"hooks":[{"type":"mcp_tool","server":"s","tool":"t"},{"type":"prompt","prompt":"p"},
		{"type":"command","command":"x","commandWindows":"x.exe","additionalContextLimit":100},{"type":"command","command":"y","additionalContextLimit":-1}]}]}}`),
		LoadOptions{Dialect: Codex, Source: "h.json"})
	hs := cx.Handlers("PreToolUse")
	if len(hs) != 2 || hs[0].MCP == nil || hs[1].Command != "x" || hs[1].ContextLimit != 100 {
		t.Errorf("codex handlers: %+v", hs)
	}
	if len(diags) != 2 || !errors.Is(diags[0], ErrUnsupportedHandler) || !errors.Is(diags[1], ErrMalformed) {
		t.Errorf("codex diagnostics: %v", diags)
	}
}

// At Stop a prompt hook judges the conversation: the table's stop-condition system
// prompt, the condition wrapping the prompt, Conversation set; ok:false blocks without
// ending the turn, even without continueOnBlock; impossible:true passes.
func TestPromptHookStopCondition(t *testing.T) {
	cfg := `{"hooks":{"Stop":[{"hooks":[{"type":"prompt","prompt":"Done? $ARGUMENTS"}]}]}}`
	c, diags := Load([]byte(cfg), LoadOptions{Dialect: ClaudeCode, Source: "f.json"})
	if len(diags) > 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	stdin := `{"hook_event_name":"Stop","stop_hook_active":false}` + "\n"
	conv := hookmap.ClaudeCode.Handlers[PromptHandlerType].Conversation
	for name, tc := range map[string]struct {
		answer string
		want   dsh.HookOutcome
		reason string
	}{
		"not-ok":     {`{"ok": false, "reason": "no tests ran"}`, dsh.HookOutcomeBlock, "no tests ran"},
		"impossible": {`{"ok": false, "reason": "cannot", "impossible": true}`, dsh.HookOutcomePass, ""},
		"ok":         {`{"ok": true, "reason": "done"}`, dsh.HookOutcomePass, ""},
	} {
		t.Run(name, func(t *testing.T) {
			m := &fakeModel{text: tc.answer}
			e := &Engine{Table: &hookmap.ClaudeCode, Config: c, Model: m}
			rep := e.Fire(context.Background(), Fire{Event: "Stop", Stdin: []byte(stdin), InTurn: true, Turn: 1})
			if rep.Merged.Outcome != tc.want || rep.Merged.Reason != tc.reason {
				t.Errorf("got %s %q, want %s %q", rep.Merged.Outcome, rep.Merged.Reason, tc.want, tc.reason)
			}
			r := m.reqs[0]
			wantPrompt := strings.ReplaceAll(conv.Condition, "{prompt}", "Done? "+strings.TrimSuffix(stdin, "\n"))
			if !r.Conversation || r.System != conv.SystemPrompt || r.Prompt != wantPrompt {
				t.Errorf("request: %+v", r)
			}
		})
	}
}
