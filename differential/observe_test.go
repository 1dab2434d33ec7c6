package differential

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestCodexOutput: a Codex shell result keeps its exit code, token count and output; the
// run-specific Chunk ID and Wall time become placeholders; a text without the header is
// left as it is.
func TestCodexOutput(t *testing.T) {
	for in, want := range map[string]struct {
		text      string
		isErr, ok bool
	}{
		"Chunk ID: d16d5c\nWall time: 0.0001 seconds\nProcess exited with code 3\nOriginal token count: 1\nOutput:\nbad\n": {
			"Chunk ID: <id>\nWall time: <s>\nProcess exited with code 3\nOriginal token count: 1\nOutput:\nbad\n", true, true},
		"Chunk ID: 885729\nWall time: 0.0144 seconds\nProcess exited with code 0\nOriginal token count: 2\nOutput:\nout1\n": {
			"Chunk ID: <id>\nWall time: <s>\nProcess exited with code 0\nOriginal token count: 2\nOutput:\nout1\n", false, true},
		"Chunk ID: a\nWall time: 1.0000 seconds\nOutput:\nrunning\n": {"Chunk ID: <id>\nWall time: <s>\nOutput:\nrunning\n", false, true},
		"Chunk ID: 6feebc\nWall time: 0.5016 seconds\nProcess running with session ID 10767\nOriginal token count: 2\nOutput:\nfirst\n": {
			"Chunk ID: <id>\nWall time: <s>\nProcess running with session ID <id>\nOriginal token count: 2\nOutput:\nfirst\n", false, true},
		"bad\n[exit code 3]": {"bad\n[exit code 3]", false, false},
	} {
		text, isErr, ok := codexOutput(in)
		if text != want.text || isErr != want.isErr || ok != want.ok {
			t.Errorf("codexOutput(%q) = %q, %v, %v; want %q, %v, %v", in, text, isErr, ok, want.text, want.isErr, want.ok)
		}
	}
}

// TestGeminiNormalization: Gemini CLI's run-specific values (the timestamp, the shell's
// process group, the <session_context> preamble in a model event's messages) are
// normalized; the rest of a value is kept.
func TestGeminiNormalization(t *testing.T) {
	n := Normalizer{Paths: map[string]string{"/tmp/x/ws": "<ws>"}}
	for _, c := range []struct {
		field string
		v     any
		want  string
	}{
		{"timestamp", "2026-12-04T11:31:20.697Z", "<timestamp>"},
		{"timestamp", "yesterday", `"yesterday"`},
		{"tool_response", map[string]any{"llmContent": "<untrusted_context>\nOutput: out1\nProcess Group PGID: 22892\n</untrusted_context>"},
			`{"llmContent":"\u003cuntrusted_context\u003e\nOutput: out1\nProcess Group PGID: <pgid>\n\u003c/untrusted_context\u003e"}`},
		{"llm_request", map[string]any{"messages": []any{map[string]any{"role": "user", "content": "<session_context>\nin /tmp/x/ws\n</session_context>Do the task."}}},
			`{"messages":[{"content":"Do the task.","role":"user"}]}`},
	} {
		if got := n.Value(c.field, c.v); got != c.want {
			t.Errorf("Value(%s, %v) = %s, want %s", c.field, c.v, got, c.want)
		}
	}
}

// TestSentDropsDateChange: the reminder Claude Code adds when the local date changed
// between two requests (a run that crosses midnight) is the engine's clock, not a hook's
// context; it is dropped from a tool result, a user text and a system message alike,
// and the hook's context beside it stays.
func TestSentDropsDateChange(t *testing.T) {
	const date = "The date has changed. Today's date is now 2026-12-06. No need to announce the new date."
	const hook = "PostToolUse hook additional context: ctx1"
	first := Request{Main: true, Body: []byte(`{"messages":[{"role":"user","content":"go"}]}`)}
	bodies := []string{
		`{"messages":[{"role":"user","content":"go"},{"role":"assistant","content":"x"},{"role":"user","content":[{"type":"tool_result","content":"out1\n<system-reminder>\n` + date + `\n</system-reminder>\n<system-reminder>\n` + hook + `\n</system-reminder>"}]}]}`,
		`{"messages":[{"role":"user","content":"go"},{"role":"assistant","content":"x"},{"role":"user","content":[{"type":"tool_result","content":"out1"},{"type":"text","text":"<system-reminder>\n` + date + `\n</system-reminder>\n<system-reminder>\n` + hook + `\n</system-reminder>"}]}]}`,
		`{"messages":[{"role":"user","content":"go"},{"role":"assistant","content":"x"},{"role":"user","content":[{"type":"tool_result","content":"out1"}]},{"role":"system","content":"` + date + `\n\n` + hook + `"}]}`,
	}
	for _, b := range bodies {
		got := SentAnthropic([]Request{first, {Main: true, Body: []byte(b)}})
		want := Next{{Kind: "result", Text: "out1"}, {Kind: "context", Text: hook}}
		if len(got) != 2 || !reflect.DeepEqual(got[1], want) {
			t.Errorf("SentAnthropic(%s)[1] = %+v; want %+v", b, got[len(got)-1], want)
		}
	}
}

// TestSentToolReferences: a tool result's tool_reference blocks (a tool search's answer)
// are part of what the result sent, in order, so that a side that loads other tools, or
// none, differs.
func TestSentToolReferences(t *testing.T) {
	first := Request{Main: true, Body: []byte(`{"messages":[{"role":"user","content":"go"}]}`)}
	b := `{"messages":[{"role":"user","content":"go"},{"role":"assistant","content":"x"},{"role":"user","content":[{"type":"tool_result","content":[{"type":"tool_reference","tool_name":"A"},{"type":"tool_reference","tool_name":"B"}]},{"type":"text","text":"Tool loaded."}]}]}`
	got := SentAnthropic([]Request{first, {Main: true, Body: []byte(b)}})
	want := Next{{Kind: "result", Text: "[tool_reference A]\n[tool_reference B]"}, {Kind: "user", Text: "Tool loaded."}}
	if len(got) != 2 || !reflect.DeepEqual(got[1], want) {
		t.Errorf("SentAnthropic = %+v; want %+v", got, want)
	}
}

// TestUnordered: the runs of a concurrent hook move after the others, sorted by stdin;
// the others keep their order.
func TestUnordered(t *testing.T) {
	runs := []HookRun{{Name: "I-1", Raw: "b"}, {Name: "S-1", Raw: "s"}, {Name: "I-1", Raw: "a"}, {Name: "U-1", Raw: "u"}}
	var got []string
	for _, r := range Unordered(runs, []string{"I-1"}) {
		got = append(got, r.Name+":"+r.Raw)
	}
	if want := []string{"S-1:s", "U-1:u", "I-1:a", "I-1:b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Unordered = %v, want %v", got, want)
	}
}

// A stop-condition evaluation's conversation is compared with the last main request's
// messages, cache_control and a string content's form aside.
func TestConversationOf(t *testing.T) {
	main := Request{Main: true, Body: json.RawMessage(`{"messages":[{"role":"user","content":[{"type":"text","text":"go","cache_control":{"type":"ephemeral"}}]},{"role":"assistant","content":[{"type":"text","text":"ok"}]},{"role":"user","content":[{"type":"text","text":"fb","cache_control":{"type":"ephemeral"}}]}]}`)}
	var same, differs []any
	_ = json.Unmarshal([]byte(`[{"role":"user","content":[{"type":"text","text":"go"}]},{"role":"assistant","content":[{"type":"text","text":"ok"}]},{"role":"user","content":"fb"},{"role":"assistant","content":"done"}]`), &same)
	_ = json.Unmarshal([]byte(`[{"role":"user","content":[{"type":"text","text":"go"}]},{"role":"assistant","content":[{"type":"text","text":"ok"}]},{"role":"user","content":"other"},{"role":"assistant","content":"done"}]`), &differs)
	if got := conversationOf([]Request{main}, same); got != "the last main request's messages, then an answer" {
		t.Errorf("same: %q", got)
	}
	if got := conversationOf([]Request{main}, differs); got != "message 2 differs from the last main request's" {
		t.Errorf("differs: %q", got)
	}
	if got := conversationOf(nil, same); got != "4 messages, no main request before" {
		t.Errorf("no main: %q", got)
	}
}

// TestCodexWallTimeNormalization: the wall time of Codex's apply_patch result ("Exit
// code: 0\nWall time: 0.1 seconds") and of a shell call an interruption aborted ("Wall
// time: 0.1 seconds\naborted by user") is run-specific, in the model's text and in a
// hook's tool_response alike; the rest of the text is kept.
func TestCodexWallTimeNormalization(t *testing.T) {
	n := Normalizer{}
	for in, want := range map[string]string{
		"Exit code: 0\nWall time: 0.1 seconds\nOutput:\nSuccess.\n": "Exit code: 0\nWall time: <s>\nOutput:\nSuccess.\n",
		"Exit code: 1\nWall time: 12 seconds\nOutput:\nx\n":         "Exit code: 1\nWall time: <s>\nOutput:\nx\n",
		"Wall time: 0.1 seconds":                                    "Wall time: 0.1 seconds",
		// An exec_command call an interruption aborted (codex/subagent-send-interrupt).
		"Wall time: 0.2 seconds\naborted by user": "Wall time: <s>\naborted by user",
	} {
		if got := n.Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
	if got, want := n.Value("tool_response", "Exit code: 0\nWall time: 0 seconds\nOutput:\n"), `"Exit code: 0\nWall time: <s>\nOutput:\n"`; got != want {
		t.Errorf("Value = %s, want %s", got, want)
	}
}
