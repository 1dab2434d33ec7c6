package gen_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/dshkit/dsh/gen/ir"
	"github.com/dshkit/dsh/generated/wire/codex"
)

// This file cross-checks the generated Codex wire types (generated/wire/codex, from
// spec/wire/codex.cue) against the JSON Schemas Codex publishes for its hooks, kept in
// shared/reference/codex-hook-schemas beside the repository (../shared from the repository
// root, as in CI's clean clone, or $DSH_SHARED; see internal/oracle: missing, the check
// fails under CI and skips elsewhere). Both directions are checked:
//
//   - Go to reference: a fully populated and a minimal value of each generated type,
//     marshalled, validate against the reference schema.
//   - Reference to Go: documents the reference accepts (built from the reference schema:
//     every field, only the required ones, every enum value, null wherever it allows null;
//     plus hand-written examples) decode with the generated Go; documents it rejects (an
//     unknown field, a wrong enum value) fail to decode, with ErrUnknownField or
//     ErrInvalidEnum.
//
// Known disagreements are listed below (codexDeviations, codexNullLeniency) and pinned: the
// test fails when one appears or disappears, so that the list stays the truth. The one
// general exception: the reference pre-tool-use input pins tool_name to "Bash" and
// tool_input to {command}, since it describes Codex's shell tool only; dsh's types carry any
// tool, so those two constraints are not checked.

// codexReferenceDir is where the reference schemas live inside shared/.
const codexReferenceDir = "reference/codex-hook-schemas"

// codexReference maps each reference schema (its file name without .schema.json) to the
// generated type that must agree with it.
var codexReference = map[string]reflect.Type{
	"post-tool-use.command.input":       reflect.TypeFor[codex.PostToolUseInput](),
	"post-tool-use.command.output":      reflect.TypeFor[codex.PostToolUseOutput](),
	"pre-tool-use.command.input":        reflect.TypeFor[codex.PreToolUseInput](),
	"pre-tool-use.command.output":       reflect.TypeFor[codex.PreToolUseOutput](),
	"session-start.command.output":      reflect.TypeFor[codex.SessionStartOutput](),
	"stop.command.input":                reflect.TypeFor[codex.StopInput](),
	"stop.command.output":               reflect.TypeFor[codex.StopOutput](),
	"user-prompt-submit.command.input":  reflect.TypeFor[codex.UserPromptSubmitInput](),
	"user-prompt-submit.command.output": reflect.TypeFor[codex.UserPromptSubmitOutput](),
}

// codexShellOnly lists, per reference schema, the properties whose constraints describe
// Codex's shell tool only (tool_name "Bash", tool_input {command}); they are relaxed to
// "any string" and "any JSON" when checking the generated types.
var codexShellOnly = map[string][]string{
	"pre-tool-use.command.input": {"tool_name", "tool_input"},
}

// codexDeviations lists, per reference schema, the fields the generated type declares but
// the reference does not (the reference rejects them as additional properties). A field the
// Go requires has a fill value, added to documents built from the reference before they are
// decoded with the Go. spec/wire/codex.cue follows the published schemas field for field
// except where the real engine (0.169.0, checked by differential/) disagrees with them; a
// deviation added to the spec must be listed here, with the reason.
var codexDeviations = map[string][]deviation{
	// The engine sends turn_id at PreToolUse too.
	// Inside a sub-agent the engine adds agent_id and agent_type to the tool events
	// (0.169.0, differential codex/subagent-spawn; its own embedded schemas have them, the
	// published ones predate sub-agent hooks).
	"pre-tool-use.command.input":  {{field: "turn_id"}, {field: "agent_id"}, {field: "agent_type"}},
	"post-tool-use.command.input": {{field: "agent_id"}, {field: "agent_type"}},
	// The engine honours the legacy {"decision":"block","reason":...} at PreToolUse.
	"pre-tool-use.command.output": {{field: "decision"}, {field: "reason"}},
}

// deviation is a field of a generated type that its reference schema does not declare.
type deviation struct {
	field string
	// fill is the value to add to reference documents when the Go requires the field.
	fill any
}

// codexNullLeniency lists the JSON paths (schema file: dotted path) where the generated Go
// accepts null and the reference does not. It is empty: the spec makes a field nullable
// exactly where the published schema does (only the Stop and UserPromptSubmit outputs). The
// semantic rules the reference states with if/then (a "block" decision needs a non-blank
// reason) are not the decoder's business: the bridge tables check them (needsReason).
var codexNullLeniency = []string{}

// codexExample is a hand-written document for one reference schema: accepted by the
// reference and decoded by the Go (with check, when set, true of the decoded value), or
// rejected by both (the Go with an error wrapping reject).
type codexExample struct {
	schema string
	doc    string
	reject error
	check  func(v any) bool
}

var codexExamples = []codexExample{
	// Accepted, nulls included.
	{schema: "stop.command.output", doc: `{}`},
	{schema: "stop.command.output", doc: `{"decision":null,"reason":null}`, check: func(v any) bool {
		o := v.(codex.StopOutput)
		return o.Decision == "" && o.Reason == nil
	}},
	{schema: "stop.command.output", doc: `{"decision":"block","reason":"keep going"}`, check: func(v any) bool {
		o := v.(codex.StopOutput)
		return o.Decision == codex.StopOutputDecisionBlock && o.Reason != nil && *o.Reason == "keep going"
	}},
	{schema: "stop.command.output", doc: `{"continue":false,"stopReason":null,"systemMessage":null,"suppressOutput":false}`},
	{schema: "user-prompt-submit.command.output", doc: `{"decision":null,"reason":null,"hookSpecificOutput":null,"stopReason":null,"systemMessage":null}`, check: func(v any) bool {
		o := v.(codex.UserPromptSubmitOutput)
		return o.HookSpecificOutput == nil && o.StopReason == nil && o.SystemMessage == nil
	}},
	{schema: "user-prompt-submit.command.output", doc: `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":null}}`},
	{schema: "user-prompt-submit.command.output", doc: `{"decision":"block","reason":"not this prompt"}`},
	{schema: "pre-tool-use.command.output", doc: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no rm"}}`, check: func(v any) bool {
		o := v.(codex.PreToolUseOutput)
		return o.HookSpecificOutput != nil && o.HookSpecificOutput.PermissionDecision == codex.PreToolUseSpecificPermissionDecisionDeny
	}},
	{schema: "pre-tool-use.command.output", doc: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"ls"}}}`},
	{schema: "pre-tool-use.command.output", doc: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":null}}`},
	{schema: "pre-tool-use.command.output", doc: `{"continue":true,"systemMessage":"careful","suppressOutput":false}`},
	{schema: "post-tool-use.command.output", doc: `{"decision":"block","reason":"bad output","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"ctx","updatedMCPToolOutput":null,"updatedToolOutput":{"x":1}}}`},
	{schema: "session-start.command.output", doc: `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"hello","env":{"FOO":"bar"}}}`, check: func(v any) bool {
		o := v.(codex.SessionStartOutput)
		return o.HookSpecificOutput != nil && o.HookSpecificOutput.Env["FOO"] == "bar"
	}},
	{schema: "session-start.command.output", doc: `{"suppressOutput":true,"continue":true}`},
	{schema: "stop.command.input", doc: `{"session_id":"s1","transcript_path":null,"cwd":"/w","hook_event_name":"Stop","model":"gpt-5","permission_mode":"default","turn_id":"3","stop_hook_active":false,"last_assistant_message":null}`, check: func(v any) bool {
		in := v.(codex.StopInput)
		return in.TranscriptPath == nil && in.LastAssistantMessage == nil && in.TurnID == "3"
	}},
	{schema: "stop.command.input", doc: `{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/w","hook_event_name":"Stop","model":"gpt-5","permission_mode":"plan","turn_id":"3","stop_hook_active":true,"last_assistant_message":"done"}`},
	{schema: "user-prompt-submit.command.input", doc: `{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/w","hook_event_name":"UserPromptSubmit","model":"gpt-5","permission_mode":"dontAsk","turn_id":"1","prompt":"hi"}`},
	{schema: "pre-tool-use.command.input", doc: `{"session_id":"s1","transcript_path":null,"cwd":"/w","hook_event_name":"PreToolUse","model":"gpt-5","permission_mode":"bypassPermissions","tool_name":"Bash","tool_input":{"command":"ls -l"},"tool_use_id":"call_1"}`, check: func(v any) bool {
		return string(v.(codex.PreToolUseInput).ToolInput) == `{"command":"ls -l"}`
	}},
	{schema: "post-tool-use.command.input", doc: `{"session_id":"s1","transcript_path":null,"cwd":"/w","hook_event_name":"PostToolUse","model":"gpt-5","permission_mode":"acceptEdits","turn_id":"2","tool_name":"apply_patch","tool_input":{"patch":"..."},"tool_use_id":"call_2","tool_response":{"output":"ok","exit_code":0}}`},

	// Rejected: unknown fields and wrong enum values.
	{schema: "stop.command.output", doc: `{"decision":"approve"}`, reject: codex.ErrInvalidEnum},
	{schema: "stop.command.output", doc: `{"decision":"block","reason":"x","hookSpecificOutput":{"hookEventName":"Stop"}}`, reject: codex.ErrUnknownField},
	{schema: "user-prompt-submit.command.output", doc: `{"hookSpecificOutput":{"hookEventName":"PreToolUse"}}`, reject: codex.ErrInvalidEnum},
	{schema: "user-prompt-submit.command.output", doc: `{"additionalContext":"misplaced"}`, reject: codex.ErrUnknownField},
	{schema: "pre-tool-use.command.output", doc: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"defer"}}`, reject: codex.ErrInvalidEnum},
	{schema: "pre-tool-use.command.output", doc: `{"hookSpecificOutput":{"hookEventName":"PostToolUse"}}`, reject: codex.ErrInvalidEnum},
	{schema: "pre-tool-use.command.output", doc: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedToolOutput":1}}`, reject: codex.ErrUnknownField},
	{schema: "post-tool-use.command.output", doc: `{"decision":"deny","reason":"x"}`, reject: codex.ErrInvalidEnum},
	{schema: "post-tool-use.command.output", doc: `{"hookSpecificOutput":{"hookEventName":"PostToolUse","permissionDecision":"deny"}}`, reject: codex.ErrUnknownField},
	{schema: "session-start.command.output", doc: `{"hookSpecificOutput":{"hookEventName":"Stop"}}`, reject: codex.ErrInvalidEnum},
	{schema: "session-start.command.output", doc: `{"decision":"block","reason":"x"}`, reject: codex.ErrUnknownField},
	{schema: "stop.command.input", doc: `{"session_id":"s1","transcript_path":null,"cwd":"/w","hook_event_name":"Stop","model":"m","permission_mode":"auto","turn_id":"3","stop_hook_active":false,"last_assistant_message":null}`, reject: codex.ErrInvalidEnum},
	{schema: "user-prompt-submit.command.input", doc: `{"session_id":"s1","transcript_path":null,"cwd":"/w","hook_event_name":"UserPromptSubmit","model":"m","permission_mode":"default","turn_id":"1","prompt":"hi","agent_id":"a1"}`, reject: codex.ErrUnknownField},
	{schema: "pre-tool-use.command.input", doc: `{"session_id":"s1","transcript_path":null,"cwd":"/w","hook_event_name":"PostToolUse","model":"m","permission_mode":"default","turn_id":"2","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"c"}`, reject: codex.ErrInvalidEnum},
}

// TestCodexWireAgreesWithReference is the cross-check described at the top of this file.
func TestCodexWireAgreesWithReference(t *testing.T) {
	refs := loadCodexReference(t)
	wire := codexSpec(t)
	var lenient []string
	for _, name := range sortedNames(codexReference) {
		typ, ref := codexReference[name], refs[name]
		t.Run(name, func(t *testing.T) {
			t.Run("go-to-reference", func(t *testing.T) {
				rt := wire.Lookup(typ.Name())
				if rt == nil || rt.Kind != ir.Record {
					t.Fatalf("spec/wire/codex.cue declares no record %s", typ.Name())
				}
				for _, full := range []bool{true, false} {
					v := reflect.New(typ).Elem()
					populate(t, wire, rt, v, full)
					data, err := json.Marshal(v.Interface())
					if err != nil {
						t.Fatalf("marshal: %v", err)
					}
					ref.checkGoDocument(t, data, full)
				}
			})
			t.Run("reference-to-go", func(t *testing.T) {
				for _, doc := range ref.accepted(t) {
					if _, err := decodeAs(typ, ref.forGo(doc)); err != nil {
						t.Errorf("the reference accepts %s; the generated %s does not decode it: %v", doc, typ.Name(), err)
					}
				}
			})
			t.Run("rejects", func(t *testing.T) {
				for _, r := range ref.rejected() {
					if ref.validate(ref.strict, r.doc) == nil {
						t.Fatalf("test bug: the reference accepts %s", r.doc)
					}
					if _, err := decodeAs(typ, ref.forGo(r.doc)); !errors.Is(err, r.sentinel) {
						t.Errorf("the reference rejects %s; the generated %s decodes it with error %v, want one wrapping %q", r.doc, typ.Name(), err, r.sentinel)
					}
				}
			})
			lenient = append(lenient, ref.nullLeniency(typ)...)
		})
	}
	sort.Strings(lenient)
	if !slices.Equal(lenient, codexNullLeniency) {
		t.Errorf("the places where the generated Go accepts null and the reference does not changed; "+
			"update codexNullLeniency (and say why):\ngot:\n\t%s\nlisted:\n\t%s",
			strings.Join(lenient, "\n\t"), strings.Join(codexNullLeniency, "\n\t"))
	}
}

// TestCodexReferenceExamples runs the hand-written documents of codexExamples.
func TestCodexReferenceExamples(t *testing.T) {
	refs := loadCodexReference(t)
	for i, ex := range codexExamples {
		t.Run(fmt.Sprintf("%s/%d", ex.schema, i), func(t *testing.T) {
			ref, typ := refs[ex.schema], codexReference[ex.schema]
			if ref == nil || typ == nil {
				t.Fatalf("no reference schema %q", ex.schema)
			}
			refErr := ref.validate(ref.strict, []byte(ex.doc))
			v, err := decodeAs(typ, ref.forGo([]byte(ex.doc)))
			if ex.reject != nil {
				if refErr == nil {
					t.Errorf("test bug: the reference accepts %s", ex.doc)
				}
				if !errors.Is(err, ex.reject) {
					t.Errorf("decoding %s as %s: %v, want an error wrapping %q", ex.doc, typ.Name(), err, ex.reject)
				}
				return
			}
			if refErr != nil {
				t.Fatalf("test bug: the reference rejects %s: %v", ex.doc, refErr)
			}
			if err != nil {
				t.Fatalf("the reference accepts %s; decoding it as %s: %v", ex.doc, typ.Name(), err)
			}
			if ex.check != nil && !ex.check(v) {
				t.Errorf("decoding %s as %s gave %+v", ex.doc, typ.Name(), v)
			}
		})
	}
}
