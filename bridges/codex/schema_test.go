package codex_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/dshkit/dsh/bridges/codex"
	"github.com/dshkit/dsh/bridges/hookproto"
	ht "github.com/dshkit/dsh/bridges/internal/hooktest"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
	"github.com/dshkit/dsh/internal/oracle"
)

// schemaDir is where the published Codex hook schemas live inside shared/ (docs/design/HOOK-PROTOCOLS.md#bridge-decision-2-codex-follows-the-real-codex-engine
// ); internal/oracle finds shared/.
const schemaDir = "reference/codex-hook-schemas"

// schemaNames maps each mapped event to the file prefix of its schemas.
var schemaNames = map[string]string{
	"SessionStart":     "session-start",
	"UserPromptSubmit": "user-prompt-submit",
	"PreToolUse":       "pre-tool-use",
	"PostToolUse":      "post-tool-use",
	"Stop":             "stop",
	// The published set has no PermissionRequest schemas: testdata holds the engine's own,
	// extracted from the codex 0.169.0 binary (engineSchemas).
	"PermissionRequest": "permission-request",
	// Nor Interrupt and SessionEnd schemas: testdata holds the engine's own too.
	"Interrupt":  "interrupt",
	"SessionEnd": "session-end",
	// Nor SubagentStart and SubagentStop schemas: testdata holds the engine's own.
	"SubagentStart": "subagent-start",
	"SubagentStop":  "subagent-stop",
}

// unpublished are the mapped events with no schema at all, published or in the engine:
// PreCompact, PostCompact and PreModelRequest, whose inputs and outputs follow the real
// engine (the differential suite's compact/* and codex/pre-model-request* cases).
var unpublished = map[string]bool{"PreCompact": true, "PostCompact": true, "PreModelRequest": true}

// engineSchemas are the schema prefixes read from testdata instead of shared/: extracted
// from the codex 0.169.0 binary.
var engineSchemas = map[string]bool{"permission-request": true, "interrupt": true, "session-end": true,
	"subagent-start": true, "subagent-stop": true}

// noOutputSchema are the events whose output the engine does not read, so that it has no
// schema for it (SessionEnd).
var noOutputSchema = map[string]bool{"SessionEnd": true}

// schemas compiles the published schemas of every mapped event: kind is "input" or
// "output". A missing directory or output schema fails the test; the published set has
// no session-start input schema, which is reported as such. A missing directory fails under
// CI and skips elsewhere (internal/oracle).
func schemas(t *testing.T, kind string) map[string]*jsonschema.Schema {
	t.Helper()
	dir := oracle.Dir(t, schemaDir)
	c := jsonschema.NewCompiler()
	out := map[string]*jsonschema.Schema{}
	for _, ev := range hookmap.Codex.Events {
		if unpublished[ev.Name] {
			continue
		}
		prefix, ok := schemaNames[ev.Name]
		if !ok {
			t.Fatalf("no schema name for mapped event %s", ev.Name)
		}
		path := filepath.Join(dir, prefix+".command."+kind+".schema.json")
		if engineSchemas[prefix] {
			path = filepath.Join("testdata", prefix+".command."+kind+".schema.json")
		}
		if _, err := os.Stat(path); err != nil {
			if kind == "input" && ev.Name == "SessionStart" {
				t.Logf("the published set has no %s input schema; its input is not cross-checked", ev.Name)
				continue
			}
			if kind == "output" && noOutputSchema[ev.Name] {
				t.Logf("the engine reads no %s output; it has no schema to cross-check", ev.Name)
				continue
			}
			t.Fatalf("missing schema %s: %v", path, err)
		}
		s, err := c.Compile(path)
		if err != nil {
			t.Fatalf("compiling %s: %v", path, err)
		}
		out[ev.Name] = s
	}
	return out
}

func validate(s *jsonschema.Schema, data []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// outputCandidates builds the outputs to cross-check for an event: every universal and
// event field alone with each kind of value, and the interesting combinations.
func outputCandidates(event string) []string {
	values := []string{`null`, `""`, `"x"`, `" "`, `true`, `false`, `1`, `{}`, `[]`, `"block"`, `"approve"`, `"deny"`, `"allow"`, `"ask"`}
	names := []string{"PreToolUse", "PostToolUse", "SessionStart", "UserPromptSubmit", "Stop", "PermissionRequest", "Nope"}
	top := []string{"continue", "stopReason", "suppressOutput", "systemMessage", "decision", "reason", "hookSpecificOutput", "unknownField"}
	specific := []string{"permissionDecision", "permissionDecisionReason", "updatedInput", "additionalContext", "updatedToolOutput", "updatedMCPToolOutput", "env", "other"}
	var out []string
	for _, f := range top {
		for _, v := range values {
			out = append(out, fmt.Sprintf(`{%q:%s}`, f, v))
		}
	}
	for _, n := range names {
		out = append(out, fmt.Sprintf(`{"hookSpecificOutput":{"hookEventName":%q}}`, n))
		for _, f := range specific {
			for _, v := range values {
				out = append(out, fmt.Sprintf(`{"hookSpecificOutput":{"hookEventName":%q,%q:%s}}`, n, f, v))
			}
		}
	}
	out = append(out,
		`{"hookSpecificOutput":{"additionalContext":"no name"}}`,
		`{"decision":"block","reason":"because"}`,
		`{"decision":"block","reason":""}`,
		`{"decision":"block"}`,
		`{"decision":null,"reason":null}`,
		`{"continue":false,"stopReason":"enough"}`,
		`{"continue":false,"stopReason":"enough","decision":"block","reason":"more"}`,
		`{"systemMessage":"note","suppressOutput":false}`,
		`{"hookSpecificOutput":{"hookEventName":"`+event+`","permissionDecision":"deny","permissionDecisionReason":"no"}}`,
		`{"hookSpecificOutput":{"hookEventName":"`+event+`","permissionDecision":"deny","permissionDecisionReason":""}}`,
		`{"hookSpecificOutput":{"hookEventName":"`+event+`","permissionDecision":"allow","updatedInput":{"command":"ls"}}}`,
		`{"hookSpecificOutput":{"hookEventName":"`+event+`","permissionDecision":"allow","updatedInput":{"command":"ls"},"additionalContext":"c"}}`,
		`{"hookSpecificOutput":{"hookEventName":"`+event+`","additionalContext":"ctx","env":{"A":"1"}}}`,
		`{"hookSpecificOutput":{"hookEventName":"`+event+`","env":{"A":1}}}`,
		`{"hookSpecificOutput":{"hookEventName":"`+event+`","additionalContext":"ctx"},"decision":"block","reason":"r"}`,
		`{"hookSpecificOutput":null}`,
		`{"hookSpecificOutput":{"hookEventName":"`+event+`","decision":{"behavior":"allow"}}}`,
		`{"hookSpecificOutput":{"hookEventName":"`+event+`","decision":{"behavior":"deny","message":"no"}}}`,
		`{"hookSpecificOutput":{"hookEventName":"`+event+`","decision":{"behavior":"deny"}}}`,
		`{"hookSpecificOutput":{"hookEventName":"`+event+`","decision":{"behavior":"deny","interrupt":true}}}`,
		`{"hookSpecificOutput":{"hookEventName":"`+event+`","decision":{"behavior":"deny","interrupt":false,"message":"no"}}}`,
		`{"hookSpecificOutput":{"hookEventName":"`+event+`","decision":{"behavior":"allow","updatedInput":{"command":"ls"}}}}`,
		`{"hookSpecificOutput":{"hookEventName":"`+event+`","decision":{"behavior":"allow","updatedPermissions":[]}}}`,
		`{"hookSpecificOutput":{"hookEventName":"`+event+`","decision":{"behavior":"maybe"}}}`,
		`{"hookSpecificOutput":{"hookEventName":"`+event+`","decision":{}}}`,
		`[1,2,3]`, `[]`, `{`, `{"a":1}{"b":2}`,
	)
	return out
}

// TestOutputsAgainstSchemas: every output the Codex bridge accepts validates against the
// published output schema of its event, and every output the schema rejects makes the
// hook failed; the one exception is the legacy PreToolUse {"decision":"block",
// "reason":...}, which the real engine honours although the schema omits it
// (legacyPreToolBlock).
func TestOutputsAgainstSchemas(t *testing.T) {
	outs := schemas(t, "output")
	for _, ev := range hookmap.Codex.Events {
		s := outs[ev.Name]
		if s == nil && (unpublished[ev.Name] || noOutputSchema[ev.Name]) {
			continue
		}
		accepted, rejected := 0, 0
		for _, cand := range outputCandidates(ev.Name) {
			code := 0
			v := hookproto.Decode(&hookmap.Codex, &ev, hookproto.Result{ExitCode: &code, Stdout: []byte(cand)})
			schemaErr := validate(s, []byte(cand))
			if v.Outcome != dsh.HookOutcomeFailed {
				accepted++
				if schemaErr != nil && ev.Name == "PreToolUse" && legacyPreToolBlock(cand) {
					if v.Outcome != dsh.HookOutcomeDeny {
						t.Errorf("PreToolUse: the legacy block %s is %s, want deny (as the real engine)", cand, v.Outcome)
					}
					continue
				}
				if schemaErr != nil {
					t.Errorf("%s: the bridge accepts %s (outcome %s) but the schema rejects it: %v", ev.Name, cand, v.Outcome, firstLine(schemaErr))
				}
			}
			if schemaErr != nil {
				rejected++
				if v.Outcome != dsh.HookOutcomeFailed {
					continue // reported above
				}
			}
		}
		t.Logf("%s: %d outputs accepted, %d rejected by the schema", ev.Name, accepted, rejected)
		if accepted == 0 {
			t.Errorf("%s: no candidate output was accepted", ev.Name)
		}
	}
}

// legacyPreToolBlock says whether an output is a legacy top-level block with a reason
// and no other field the schema rejects.
func legacyPreToolBlock(out string) bool {
	var m map[string]any
	if json.Unmarshal([]byte(out), &m) != nil || m["decision"] != "block" {
		return false
	}
	r, _ := m["reason"].(string)
	return r != ""
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// TestInputsAgainstSchemas runs every mapped event through the bridge with a hook that
// captures its stdin and validates it against the published input schema (the
// schemas pin tool_name to "Bash" and tool_input to {command}; other tools are checked
// with those two fields set aside).
func TestInputsAgainstSchemas(t *testing.T) {
	ins := schemas(t, "input")
	dir, ws := t.TempDir(), t.TempDir()
	var groups []ht.Group
	for _, ev := range hookmap.Codex.Events {
		groups = append(groups, ht.G(ev.Name, "", `cat > "`+dir+`/`+ev.Name+`-$$.json"`))
	}
	cfg := ht.Config(t, dir, "hooks.json", groups...)
	h := ht.New(ws)
	b, err := codex.New(codex.Config{Files: []string{cfg}, Workspace: ws, Session: h.Session, Recorder: h.Rec,
		Logger: slog.New(slog.DiscardHandler), Getenv: func(string) string { return "/bin/sh" }})
	if err != nil {
		t.Fatal(err)
	}
	b.Register(h.Reg.Plugin(codex.Plugin))
	ctx := context.Background()
	h.SessionStart(ctx, dsh.SessionStartSourceStartup)
	h.PreStep(ctx, "hello")
	for _, tool := range []struct{ name, args string }{
		{"Bash", `{"command":"ls -la","description":"list"}`},
		{"shell", `{"command":["bash","-lc","ls"]}`},
		{"mcp__memory__read", `{"key":"a"}`},
	} {
		ex := h.Exec(tool.name, tool.args)
		h.PreTool(ctx, ex)
		h.Reg.RunApprovalAnswer(ctx, &dsh.ApprovalAnswerPayload{Exec: ex}, nil)
		h.PostTool(ctx, ex, ht.Success(`{"output":"ok"}`))
	}
	h.Stop(ctx, 0)
	h.Stop(ctx, 1)
	h.SubagentStart(ctx, "child-1", "default", "call_1")
	h.SubagentStop(ctx, "child-1", "default", "call_1", "answer", 0)
	h.Transcript = "/logs/t.jsonl"
	h.Stop(ctx, 0)
	h.PreCompact(ctx, "cmp_1", dsh.CompactionOriginAuto, "", 1)
	h.PostCompact(ctx, "cmp_1", dsh.CompactionOriginAuto, "summary", 1)
	if _, err := h.Request(ctx, "gpt-test"); err != nil {
		t.Fatal(err)
	}
	if err := h.Interrupted(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := h.SessionEnd(ctx, dsh.SessionEndReasonClose, time.Minute); err != nil {
		t.Fatal(err)
	}

	files, _ := filepath.Glob(filepath.Join(dir, "*-*.json"))
	sort.Strings(files)
	seen := map[string]int{}
	for _, f := range files {
		event, _, _ := strings.Cut(filepath.Base(f), "-")
		seen[event]++
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.HasSuffix(data, []byte("\n")) {
			t.Errorf("%s: Codex stdin must not end with a newline", event)
		}
		var in map[string]any
		if err := json.Unmarshal(data, &in); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if in["hook_event_name"] != event {
			t.Errorf("%s: hook_event_name %v", f, in["hook_event_name"])
		}
		s := ins[event]
		if s == nil {
			continue
		}
		if _, ok := in["tool_name"]; ok && event == "PreToolUse" {
			in["tool_name"] = "Bash" // the schema pins the tool: set it aside
			if _, isShell := in["tool_input"].(map[string]any)["command"]; !isShell {
				in["tool_input"] = map[string]any{"command": ""}
			}
		}
		if event == "PreToolUse" {
			// The real engine (0.169.0) sends turn_id at PreToolUse although the published
			// schema does not list it; the engine wins (differential suite).
			delete(in, "turn_id")
		}
		norm, _ := json.Marshal(in)
		if err := validate(s, norm); err != nil {
			t.Errorf("%s input rejected by its schema: %v\n%s", event, err, data)
		}
	}
	for _, ev := range hookmap.Codex.Events {
		if seen[ev.Name] == 0 {
			t.Errorf("no %s input captured", ev.Name)
		}
	}
}
