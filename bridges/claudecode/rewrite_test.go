package claudecode_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshkit/dsh/bridges/claudecode"
	ht "github.com/dshkit/dsh/bridges/internal/hooktest"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
)

// rewriteEnv is a runtime with a Bash tool (command required, description optional, a
// closed schema) that records the arguments it ran with.
type rewriteEnv struct {
	h   *ht.Harness
	rt  *tools.Runtime
	ran []string
}

func newRewriteEnv(t *testing.T, cfg claudecode.Config, groups ...ht.Group) *rewriteEnv {
	t.Helper()
	cfg.Files = []string{ht.Config(t, t.TempDir(), "settings.json", groups...)}
	h, _ := setupIn(t, t.TempDir(), cfg)
	e := &rewriteEnv{h: h}
	reg := tools.NewRegistry()
	if _, err := reg.Register(tools.Definition{Name: "Bash",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"description":{"type":"string"},"timeout":{"type":"number"}},"required":["command"],"additionalProperties":false}`),
		Output:      &tools.Output{Schema: json.RawMessage(`{"type":"string"}`)},
		Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
			e.ran = append(e.ran, string(rc.Arguments()))
			return "out", nil
		}}); err != nil {
		t.Fatal(err)
	}
	e.rt = tools.New(reg, h.Reg, tools.WithRewriteDeadline(0))
	return e
}

func (e *rewriteEnv) call(args string) tools.Result {
	return e.rt.Execute(ctx, tools.Input{CallID: "call-1", Name: "Bash", AgentID: "agent-1", Arguments: json.RawMessage(args)})
}

func updated(fields string) string {
	return `printf '%s\n' '{"hookSpecificOutput":{"hookEventName":"PreToolUse",` + fields + `}}'`
}

// Two rewriting hooks, the first configured the slower: each runs once per call, and their
// updatedInput values fold in configuration order (the second wins), whatever order they
// finish in; the call runs the effective arguments and PostToolUse gets them as
// tool_input, with the model's in dsh_original_tool_input.
func TestRewriteFoldsInConfigurationOrder(t *testing.T) {
	dir := t.TempDir()
	count := func(name string) string { return "echo x >> " + filepath.Join(dir, name) + "; " }
	post := filepath.Join(dir, "post.json")
	e := newRewriteEnv(t, claudecode.Config{},
		ht.G("PreToolUse", "Bash", count("a")+"sleep 0.3; "+updated(`"permissionDecision":"allow","updatedInput":{"command":"first"}`)),
		ht.G("PreToolUse", "Bash", count("b")+updated(`"updatedInput":{"command":"second"}`)),
		ht.G("PostToolUse", "", "cat > "+post))
	r := e.call(`{"command":"model","description":"run"}`)
	if len(e.ran) != 1 || e.ran[0] != `{"command":"second"}` || resultText(r) != "out" {
		t.Fatalf("ran %q, text %q", e.ran, resultText(r))
	}
	for _, f := range []string{"a", "b"} {
		if data, _ := os.ReadFile(filepath.Join(dir, f)); string(data) != "x\n" {
			t.Errorf("hook %s ran %q times", f, data)
		}
	}
	if string(r.Exec.Arguments) != `{"command":"second"}` || string(r.Exec.ModelArguments) != `{"command":"model","description":"run"}` {
		t.Errorf("exec arguments %s, model %s", r.Exec.Arguments, r.Exec.ModelArguments)
	}
	in := stdinOf(t, post)
	if got, _ := json.Marshal(in["tool_input"]); string(got) != `{"command":"second"}` {
		t.Errorf("PostToolUse tool_input %s", got)
	}
	if got, _ := json.Marshal(in["dsh_original_tool_input"]); string(got) != `{"command":"model","description":"run"}` {
		t.Errorf("PostToolUse dsh_original_tool_input %s", got)
	}
	// hook/result says which rewrite was overridden and which applied (PostToolUse: none).
	var got []string
	for _, rec := range e.h.Rec.Take() {
		if r, ok := rec.(dsh.HookResult); ok {
			got = append(got, r.Point+":"+string(r.Rewrite))
		}
	}
	if strings.Join(got, " ") != "PreToolUse:overridden PreToolUse:applied PostToolUse:" {
		t.Errorf("hook/result rewrites %q", got)
	}
	// As the engine (the default): the rewrite is silent, as the engine tells the model nothing.
	if strings.Contains(resultText(r), "rewritten") {
		t.Errorf("a notice as the engine: %q", resultText(r))
	}
}

// updatedInputMode merge patches the arguments (description kept); a deny from the same
// hook still denies, with the rewrite recorded; an updatedInput that drops the required
// command fails the call closed (REWRITE_INVALID), and the body never runs. Under
// Config.Canonical the model is told about the rewrite.
func TestRewriteModesAndFailures(t *testing.T) {
	t.Run("merge", func(t *testing.T) {
		e := newRewriteEnv(t, claudecode.Config{Canonical: true}, ht.G("PreToolUse", "", updated(`"updatedInput":{"timeout":5},"updatedInputMode":"merge"`)))
		k := e.rt.Start(ctx, tools.Input{CallID: "call-1", Name: "Bash", AgentID: "agent-1", Arguments: json.RawMessage(`{"command":"ls","description":"list"}`)})
		k.PreDispatch()
		k.Dispatch()
		k.Finish()
		if len(e.ran) != 1 || e.ran[0] != `{"command":"ls","description":"list","timeout":5}` {
			t.Fatalf("ran %q", e.ran)
		}
		rw := k.Rewritten()
		if rw.Notice == nil || rw.Rewrite == nil || len(rw.Rewrite.Chain) != 1 || rw.Rewrite.Chain[0].Reason == nil ||
			!strings.Contains(*rw.Rewrite.Chain[0].Reason, "PreToolUse hook updatedInput (claude-code:PreToolUse:") {
			t.Errorf("canonically the rewrite is disclosed and names the hook: %+v", rw)
		}
	})
	t.Run("deny", func(t *testing.T) {
		e := newRewriteEnv(t, claudecode.Config{}, ht.G("PreToolUse", "", updated(`"permissionDecision":"deny","permissionDecisionReason":"no","updatedInput":{"command":"x"}`)))
		r := e.call(`{"command":"ls"}`)
		if len(e.ran) != 0 || resultText(r) != "PreToolUse:Bash hook error: no" || string(r.Exec.Arguments) != `{"command":"x"}` {
			t.Errorf("ran %q, text %q, arguments %s", e.ran, resultText(r), r.Exec.Arguments)
		}
		wantRecords(t, e.h, "deny")
	})
	t.Run("invalid", func(t *testing.T) {
		e := newRewriteEnv(t, claudecode.Config{}, ht.G("PreToolUse", "", updated(`"permissionDecision":"allow","updatedInput":{"description":"only"}`)))
		r := e.call(`{"command":"ls"}`)
		f, ok := r.Outcome.(dsh.ToolFailure)
		if len(e.ran) != 0 || !ok || f.Error.Info == nil || f.Error.Info.Code != tools.CodeRewriteInvalid || !strings.Contains(f.Error.Message, "command") {
			t.Errorf("ran %q, outcome %+v", e.ran, r.Outcome)
		}
		if len(r.Exec.ModelArguments) != 0 && string(r.Exec.Arguments) != `{"command":"ls"}` {
			t.Errorf("a failed rewrite left arguments %s", r.Exec.Arguments)
		}
	})
	t.Run("no rewrite", func(t *testing.T) {
		dir := t.TempDir()
		e := newRewriteEnv(t, claudecode.Config{}, ht.G("PreToolUse", "", "echo x >> "+filepath.Join(dir, "n")))
		r := e.call(`{"command":"ls"}`)
		if len(e.ran) != 1 || e.ran[0] != `{"command":"ls"}` || len(r.Exec.ModelArguments) != 0 {
			t.Errorf("ran %q, model arguments %s", e.ran, r.Exec.ModelArguments)
		}
		if data, _ := os.ReadFile(filepath.Join(dir, "n")); string(data) != "x\n" {
			t.Errorf("the hook ran %q times", data)
		}
		wantRecords(t, e.h, "pass")
	})
}

// RevalidateAfterRewrite: when the hooks' updatedInput changed the input, they run a second
// time on the effective input at pre-execute; a deny from that pass denies, and a
// second-pass updatedInput is ignored (its hook/result says so and claims no rewrite).
// Without a rewrite, or without the option, each hook runs once.
func TestRewriteRevalidate(t *testing.T) {
	dir := t.TempDir()
	count := func(name string) string { return "echo x >> " + filepath.Join(dir, name) + "; " }
	x := count("x") + updated(`"updatedInput":{"command":"rm -rf /tmp/x"}`)
	y := count("y") + `case "$(cat)" in *'rm -rf'*) echo 'rm -rf is not allowed' >&2; exit 2 ;; esac`
	runs := func(name string) int {
		data, _ := os.ReadFile(filepath.Join(dir, name))
		_ = os.Remove(filepath.Join(dir, name))
		return strings.Count(string(data), "x\n")
	}
	for _, tc := range []struct {
		name       string
		revalidate bool
		args       string
		ran        bool
		xRuns      int
	}{
		{"revalidate denies", true, `{"command":"ls /tmp/x"}`, false, 2},
		{"off runs the rewrite", false, `{"command":"ls /tmp/x"}`, true, 1},
		{"no change runs once", true, `{"command":"rm -rf /tmp/x"}`, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newRewriteEnv(t, claudecode.Config{RevalidateAfterRewrite: tc.revalidate}, ht.G("PreToolUse", "Bash", x, y))
			r := e.call(tc.args)
			if (len(e.ran) == 1) != tc.ran || r.IsError() == tc.ran {
				t.Fatalf("ran %q, error %v, want ran %v", e.ran, r.IsError(), tc.ran)
			}
			if tc.ran && e.ran[0] != `{"command":"rm -rf /tmp/x"}` {
				t.Errorf("ran %q", e.ran)
			}
			if nx, ny := runs("x"), runs("y"); nx != tc.xRuns || ny != tc.xRuns {
				t.Errorf("hooks ran %d and %d times, want %d", nx, ny, tc.xRuns)
			}
			var got []string
			for _, rec := range e.h.Rec.Take() {
				if hr, ok := rec.(dsh.HookResult); ok {
					d := ""
					if hr.Diagnostic != nil && strings.Contains(*hr.Diagnostic, "updatedInput ignored") {
						d = "+ignored"
					}
					got = append(got, string(hr.Outcome)+":"+string(hr.Rewrite)+d)
				}
			}
			want := map[string]string{
				"revalidate denies":    "pass:applied pass: pass:+ignored deny:",
				"off runs the rewrite": "pass:applied pass:",
				"no change runs once":  "pass:applied deny:",
			}[tc.name]
			if strings.Join(got, " ") != want {
				t.Errorf("hook/result %q, want %q", got, want)
			}
		})
	}
}
