package hookproto

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
)

// fakeVerifier answers every agent hook with answer (or err), keeping the evals.
type fakeVerifier struct {
	answer string
	err    error
	hang   bool
	evals  []AgentEval
}

func (v *fakeVerifier) VerifyHook(ctx context.Context, r AgentEval) (json.RawMessage, error) {
	v.evals = append(v.evals, r)
	if v.hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if v.err != nil {
		return nil, v.err
	}
	return json.RawMessage(v.answer), nil
}

func fireAgent(t *testing.T, cfg, event, stdin string, v AgentVerifier) *Report {
	t.Helper()
	c, diags := Load([]byte(cfg), LoadOptions{Dialect: ClaudeCode, Source: "f.json"})
	if len(diags) > 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	e := &Engine{Table: &hookmap.ClaudeCode, Config: c, Agents: v}
	return e.Fire(context.Background(), Fire{Event: event, Subject: "Bash", Stdin: []byte(stdin), InTurn: true, Turn: 1})
}

// An agent hook runs a verifier with the table's system prompt (the event and the
// transcript named), the prompt with $ARGUMENTS replaced, the answer tool and the tools
// it is not offered; ok:true passes, ok:false blocks as exit 2 does with the table's
// words; a verifier that gives no verdict, fails, hangs or is missing blocks too (dsh
// fails closed), unless the handler's onFailure says "continue".
func TestAgentHook(t *testing.T) {
	const cfg = `{"hooks":{"PreToolUse":[{"hooks":[{"type":"agent","prompt":"Harmless? $ARGUMENTS","model":"m2"}]}]}}`
	stdin := `{"session_id":"s","transcript_path":"/t/s.jsonl","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}` + "\n"
	v := &fakeVerifier{answer: `{"ok":true,"reason":"fine"}`}
	if rep := fireAgent(t, cfg, "PreToolUse", stdin, v); rep.Merged.Outcome != dsh.HookOutcomePass {
		t.Errorf("ok: got %s %q, want pass", rep.Merged.Outcome, rep.Merged.Reason)
	}
	r := v.evals[0]
	if !strings.HasPrefix(r.System, "You are evaluating a PreToolUse hook in Claude Code. Your task is to evaluate the condition described in the user message. The conversation transcript is available at: /t/s.jsonl\nYou can read this file") ||
		!strings.Contains(r.System, "return your result using the StructuredOutput tool") {
		t.Errorf("system prompt: %q", r.System)
	}
	if r.Prompt != "Harmless? "+strings.TrimSuffix(stdin, "\n") || r.Model != "m2" || r.AnswerTool != "StructuredOutput" ||
		!strings.Contains(string(r.AnswerSchema), `"required":["ok"]`) || r.MaxTurns != 50 || !strings.Contains(strings.Join(r.Without, ","), "Agent") {
		t.Errorf("eval: %+v", r)
	}
	rep := fireAgent(t, cfg, "PreToolUse", stdin, &fakeVerifier{answer: `{"ok":false,"reason":"it deletes"}`})
	if rep.Merged.Outcome != dsh.HookOutcomeDeny || rep.Merged.Reason != "Agent hook condition was not met: it deletes" {
		t.Errorf("not ok: got %s %q", rep.Merged.Outcome, rep.Merged.Reason)
	}
	for name, c := range map[string]struct {
		v    AgentVerifier
		cfg  string
		want string
	}{
		"no verdict":  {&fakeVerifier{err: ErrAgentNoVerdict}, cfg, "gave no verdict"},
		"bad answer":  {&fakeVerifier{answer: `{"reason":"x"}`}, cfg, "has no boolean ok"},
		"model fail":  {&fakeVerifier{err: errors.New("HTTP 500")}, cfg, "agent hook verifier failed: HTTP 500"},
		"no verifier": {nil, cfg, "no verifier to run agent hooks"},
		"hang":        {&fakeVerifier{hang: true}, strings.Replace(cfg, `"model":"m2"`, `"timeout":1`, 1), "timed out; blocking because the agent hook's verifier gave no verdict"},
	} {
		t.Run(name, func(t *testing.T) {
			rep := fireAgent(t, c.cfg, "PreToolUse", stdin, c.v)
			if rep.Merged.Outcome != dsh.HookOutcomeDeny || !strings.Contains(rep.Merged.Reason, c.want) ||
				!strings.Contains(rep.Merged.Reason, "dsh fails closed") {
				t.Errorf("got %s %q, want a deny with %q", rep.Merged.Outcome, rep.Merged.Reason, c.want)
			}
		})
	}
	// onFailure "continue" is the handler's own choice to let a verifier's failure pass.
	cont := strings.Replace(cfg, `"model":"m2"`, `"onFailure":"continue"`, 1)
	if rep := fireAgent(t, cont, "PreToolUse", stdin, &fakeVerifier{err: ErrAgentNoVerdict}); rep.Merged.Outcome == dsh.HookOutcomeDeny {
		t.Errorf("onFailure continue: got %s", rep.Merged.Outcome)
	}
}

// At Stop and SubagentStop the verifier checks a stop condition (the table's stop
// intro); an input without transcript_path names none.
func TestAgentHookStopIntro(t *testing.T) {
	v := &fakeVerifier{answer: `{"ok":true}`}
	fireAgent(t, `{"hooks":{"Stop":[{"hooks":[{"type":"agent","prompt":"Done?"}]}]}}`, "Stop", `{"hook_event_name":"Stop"}`, v)
	if len(v.evals) != 1 || !strings.HasPrefix(v.evals[0].System, "You are verifying a stop condition in Claude Code. Your task is to verify that the agent completed the given plan. There is no conversation transcript file to read here.\n") {
		t.Errorf("evals: %+v", v.evals)
	}
	if _, diags := Load([]byte(`{"hooks":{"PreToolUse":[{"hooks":[{"type":"agent","prompt":""}]}]}}`), LoadOptions{Dialect: ClaudeCode, Source: "f.json"}); len(diags) != 1 ||
		!strings.Contains(diags[0].Error(), "an agent handler needs a non-empty prompt string") {
		t.Errorf("an empty prompt: %v", diags)
	}
}

// Inside a verifier (Fire.Verifier) no prompt or agent handler runs, as Claude Code
// 2.1.328 cancels them there, and none is recorded; a command handler still runs; the
// eval's agent id is the table's, its {uuid} a new UUID each time.
func TestAgentHookInsideVerifier(t *testing.T) {
	const cfg = `{"hooks":{"PreToolUse":[{"hooks":[{"type":"agent","prompt":"Harmless? $ARGUMENTS"},{"type":"prompt","prompt":"Fine? $ARGUMENTS"},{"type":"command","command":"exit 0"}]}]}}`
	c, diags := Load([]byte(cfg), LoadOptions{Dialect: ClaudeCode, Source: "f.json"})
	if len(diags) > 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	stdin := []byte(`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}` + "\n")
	v, m := &fakeVerifier{answer: `{"ok":false,"reason":"no"}`}, &fakeModel{text: `{"ok":false,"reason":"no"}`}
	e := &Engine{Table: &hookmap.ClaudeCode, Config: c, Agents: v, Model: m}
	rep := e.Fire(context.Background(), Fire{Event: "PreToolUse", Subject: "Bash", Stdin: stdin, InTurn: true, Turn: 1, Verifier: true})
	if rep.Merged.Outcome != dsh.HookOutcomePass || len(rep.Hooks) != 1 || rep.Hooks[0].Handler.Type() != "command" || len(v.evals) != 0 || len(m.reqs) != 0 {
		t.Errorf("inside a verifier: %s, %d hooks run, %d verifiers, %d prompt requests", rep.Merged.Outcome, len(rep.Hooks), len(v.evals), len(m.reqs))
	}
	rep = e.Fire(context.Background(), Fire{Event: "PreToolUse", Subject: "Bash", Stdin: stdin, InTurn: true, Turn: 1})
	if rep.Merged.Outcome == dsh.HookOutcomePass || len(rep.Hooks) != 3 || len(v.evals) != 1 || len(m.reqs) != 1 {
		t.Errorf("outside: %s, %d hooks run, %d verifiers", rep.Merged.Outcome, len(rep.Hooks), len(v.evals))
	}
	a := rep.Hooks[0].Handler.Agent
	id1, id2 := a.Eval(stdin).AgentID, a.Eval(stdin).AgentID
	if !strings.HasPrefix(id1, "hook-agent-") || len(id1) != len("hook-agent-")+36 || id1 == id2 {
		t.Errorf("agent ids %q, %q", id1, id2)
	}
}
