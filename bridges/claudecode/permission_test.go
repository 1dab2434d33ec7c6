package claudecode_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshkit/dsh/bridges/claudecode"
	ht "github.com/dshkit/dsh/bridges/internal/hooktest"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/approval"
	"github.com/dshkit/dsh/runtime/tools"
)

// permEnv is a tool runtime over the harness's registry with a Bash tool that fails when
// its command is "fail", and a native policy that asks for every call.
type permEnv struct {
	h   *ht.Harness
	rt  *tools.Runtime
	ran int
}

func newPermEnv(t *testing.T, cfg claudecode.Config, ask bool, groups ...ht.Group) *permEnv {
	t.Helper()
	dir := t.TempDir()
	cfg.Files = []string{ht.Config(t, t.TempDir(), "settings.json", groups...)}
	h, _ := setupIn(t, dir, cfg)
	e := &permEnv{h: h}
	reg := tools.NewRegistry()
	if _, err := reg.Register(tools.Definition{Name: "Bash", Output: &tools.Output{Schema: json.RawMessage(`{"type":"string"}`)},
		Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
			e.ran++
			var a struct{ Command string }
			_ = json.Unmarshal(rc.Arguments(), &a)
			if a.Command == "fail" {
				return nil, errors.New("Exit code 3\nbad")
			}
			return "out", nil
		}}); err != nil {
		t.Fatal(err)
	}
	if ask {
		h.Reg.Plugin("policy").OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
			if d, err := next.Call(ctx); err != nil || d.Kind() != dsh.PreToolAllowKind {
				return d, err
			}
			return dsh.PreToolAsk{}, nil
		})
	}
	e.rt = tools.New(reg, h.Reg)
	return e
}

func (e *permEnv) call(command string) tools.Result {
	return e.rt.Execute(ctx, tools.Input{CallID: "call-1", Name: "Bash", AgentID: "agent-1",
		Arguments: json.RawMessage(`{"command":"` + command + `"}`)})
}

func resultText(r tools.Result) string {
	var content []dsh.ContentBlock
	switch o := r.Outcome.(type) {
	case dsh.ToolSuccess:
		content = o.Content
	case dsh.ToolFailure:
		content = o.Content
	}
	var parts []string
	for _, c := range content {
		if t, ok := c.(dsh.TextBlock); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "|")
}

func stdinOf(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("stdin %q: %v", data, err)
	}
	return m
}

// PermissionRequest answers a call that needs approval before anyone is asked, in Claude
// Code's words (differential suite): allow runs it, deny shows the message alone ("Permission
// denied by hook" without one), interrupt halts the turn; exit 2, continue:false and a
// hook for another event decide nothing, and the ask falls through to the seam.
func TestPermissionRequest(t *testing.T) {
	pr := func(dec string) string {
		return `printf '%s\n' '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":` + dec + `}}'`
	}
	for _, tc := range []struct {
		name, script string
		ran          int
		text         string
		halt         bool
		outcome      dsh.HookOutcome
	}{
		{"allow", pr(`{"behavior":"allow"}`), 1, "out", false, "allow"},
		{"deny", pr(`{"behavior":"deny","message":"no way"}`), 0, "no way", false, "deny"},
		{"deny-nomessage", pr(`{"behavior":"deny"}`), 0, "Permission denied by hook", false, "deny"},
		{"interrupt", pr(`{"behavior":"deny","message":"stop now","interrupt":true}`), 0, "stop now", true, "halt"},
		{"exit2", `echo 'no via exit 2' >&2; exit 2`, 0, "Error: permission to use tool \"Bash\" was requested, but it has not been granted (no one can answer here)", false, "error"},
		{"continue-false", `printf '%s\n' '{"continue":false,"stopReason":"halt"}'`, 0, "Error: permission to use tool \"Bash\" was requested, but it has not been granted (no one can answer here)", false, "pass"},
		{"other-event", `printf '%s\n' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","decision":{"behavior":"allow"}}}'`, 0, "Error: permission to use tool \"Bash\" was requested, but it has not been granted (no one can answer here)", false, "pass"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			capture := filepath.Join(dir, "stdin")
			e := newPermEnv(t, claudecode.Config{}, true, ht.G("PermissionRequest", "Bash", "cat > "+capture+"; "+tc.script))
			r := e.call("touch x")
			if e.ran != tc.ran || resultText(r) != tc.text || (r.Halt != nil) != tc.halt {
				t.Errorf("ran %d, text %q, halt %+v; want %d, %q, halt %v", e.ran, resultText(r), r.Halt, tc.ran, tc.text, tc.halt)
			}
			wantRecords(t, e.h, tc.outcome)
			in := stdinOf(t, capture)
			if in["hook_event_name"] != "PermissionRequest" || in["tool_name"] != "Bash" || in["tool_input"].(map[string]any)["command"] != "touch x" {
				t.Errorf("stdin %v", in)
			}
			if _, ok := in["tool_use_id"]; ok {
				t.Errorf("PermissionRequest stdin has a tool_use_id (the engine sends none): %v", in)
			}
		})
	}
}

// PermissionRequest runs only for a call that needs approval, and a matcher that misses
// leaves the request to the seam, which then asks its answerer.
func TestPermissionRequestOnlyWhenAsked(t *testing.T) {
	dir := t.TempDir()
	capture := filepath.Join(dir, "ran")
	e := newPermEnv(t, claudecode.Config{}, false, ht.G("PermissionRequest", "", "touch "+capture))
	if r := e.call("ls"); resultText(r) != "out" {
		t.Fatalf("text %q", resultText(r))
	}
	if _, err := os.Stat(capture); err == nil {
		t.Errorf("PermissionRequest ran for a call that needed no approval")
	}

	asked := 0
	e2 := newPermEnv(t, claudecode.Config{}, true, ht.G("PermissionRequest", "Read", "exit 0"))
	e2.rt = tools.New(e2.rt.Tools(), e2.h.Reg, tools.WithApprover(approval.ApproverFunc(func(context.Context, approval.Request) (dsh.ApprovalOutcome, error) {
		asked++
		return dsh.ApprovalOutcomeAllowedOnce, nil
	})))
	if r := e2.call("ls"); resultText(r) != "out" || asked != 1 {
		t.Errorf("text %q, approver asked %d times", resultText(r), asked)
	}
}

// PostToolUseFailure fires for a call that ran and failed, with error, is_interrupt and
// duration_ms; its context follows the result. PostToolUse does not fire for it, and
// neither fires for a denied call.
func TestPostToolUseFailure(t *testing.T) {
	dir := t.TempDir()
	failed, post := filepath.Join(dir, "failed"), filepath.Join(dir, "post")
	e := newPermEnv(t, claudecode.Config{}, false,
		ht.G("PostToolUseFailure", "Bash", "cat > "+failed+`; printf '%s\n' '{"hookSpecificOutput":{"hookEventName":"PostToolUseFailure","additionalContext":"failure context"}}'`),
		ht.G("PostToolUse", "", "cat > "+post),
		ht.G("PreToolUse", "", `grep -q denyme && { echo 'no' >&2; exit 2; }; exit 0`))
	r := e.call("fail")
	in := stdinOf(t, failed)
	if in["hook_event_name"] != "PostToolUseFailure" || in["error"] != "Exit code 3\nbad" || in["is_interrupt"] != false ||
		in["tool_use_id"] != "call-1" || in["tool_input"].(map[string]any)["command"] != "fail" {
		t.Errorf("stdin %v", in)
	}
	if _, ok := in["duration_ms"].(float64); !ok {
		t.Errorf("no duration_ms: %v", in)
	}
	if _, err := os.Stat(post); err == nil {
		t.Errorf("PostToolUse ran for a failed call")
	}
	f, ok := r.Outcome.(dsh.ToolFailure)
	if !ok || len(f.AdditionalContexts) != 1 || !strings.Contains(ht.Texts(f.AdditionalContexts[0])[0], "PostToolUseFailure:Bash hook additional context: failure context") {
		t.Errorf("outcome %+v", r.Outcome)
	}
	_ = os.Remove(failed)
	if r := e.call("denyme"); e.ran != 1 || !strings.Contains(resultText(r), "no") {
		t.Fatalf("denied call: ran %d, text %q", e.ran, resultText(r))
	}
	if _, err := os.Stat(failed); err == nil {
		t.Errorf("PostToolUseFailure ran for a denied call")
	}
}

// Notification permission_prompt fires when a request goes to the approval seam (not
// when PermissionRequest answered it, not without a seam); its output decides nothing.
func TestNotificationPermissionPrompt(t *testing.T) {
	dir := t.TempDir()
	capture := filepath.Join(dir, "note")
	block := `cat > ` + capture + `; echo 'ignored' >&2; exit 2`
	e := newPermEnv(t, claudecode.Config{}, true, ht.G("Notification", "permission_prompt", block), ht.G("Notification", "idle_prompt", "exit 1"))
	// No seam: nobody is prompted.
	e.call("ls")
	if _, err := os.Stat(capture); err == nil {
		t.Fatalf("Notification ran without an approval seam")
	}
	e.h.Rec.Take()
	e.rt = tools.New(e.rt.Tools(), e.h.Reg, tools.WithApprover(approval.ApproverFunc(func(context.Context, approval.Request) (dsh.ApprovalOutcome, error) {
		return dsh.ApprovalOutcomeAllowedOnce, nil
	})))
	if r := e.call("ls"); resultText(r) != "out" {
		t.Fatalf("text %q", resultText(r))
	}
	in := stdinOf(t, capture)
	if in["hook_event_name"] != "Notification" || in["notification_type"] != "permission_prompt" || in["message"] != "Claude needs your permission to use Bash" {
		t.Errorf("stdin %v", in)
	}
	wantRecords(t, e.h, "error")
}

// Notification idle_prompt fires when an interactive host's agent goes idle, and never in
// a headless one.
func TestNotificationIdlePrompt(t *testing.T) {
	for _, interactive := range []bool{false, true} {
		dir := t.TempDir()
		capture := filepath.Join(dir, "note")
		e := newPermEnv(t, claudecode.Config{Interactive: interactive}, false, ht.G("Notification", "idle_prompt", "cat > "+capture))
		for _, st := range []dsh.AgentStatus{dsh.AgentStatusRunning, dsh.AgentStatusIdle} {
			e.h.Reg.EmitStatus(ctx, &dsh.StatusPayload{Agent: e.h.Agent, AgentID: "agent-1", Status: st})
		}
		_, err := os.Stat(capture)
		if (err == nil) != interactive {
			t.Fatalf("interactive %v: idle_prompt ran %v", interactive, err == nil)
		}
		if interactive {
			if in := stdinOf(t, capture); in["notification_type"] != "idle_prompt" || in["message"] != "Claude is waiting for your input" {
				t.Errorf("stdin %v", in)
			}
		}
	}
}
