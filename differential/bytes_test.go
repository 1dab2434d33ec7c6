package differential

import (
	"strings"
	"testing"
)

// TestStdinShape: the scanner reads key order per object path, the form of each
// character that JSON may write either way, compactness and the tail.
func TestStdinShape(t *testing.T) {
	s, ok := ReadStdinShape(`{"b":1,"a":{"y":"<\u0026>","x":[{"k":"\/é"}]},"c":"\u00e9\n"}` + "\n")
	if !ok {
		t.Fatal("not read")
	}
	if got := strings.Join(s.Keys[""], ","); got != "b,a,c" {
		t.Errorf("top keys = %s", got)
	}
	if got := strings.Join(s.Keys["a"], ","); got != "y,x" {
		t.Errorf("a's keys = %s", got)
	}
	if got := strings.Join(s.Keys["a.x[]"], ","); got != "k" {
		t.Errorf("a.x[]'s keys = %s", got)
	}
	for r, want := range map[rune]string{'<': "raw", '&': `\u0026`, '/': `\/`, 'é': "mixed", '\n': `\n`} {
		if got := s.Forms[r]; got != want {
			t.Errorf("form of %q = %q, want %q", r, got, want)
		}
	}
	if !s.Compact || s.Tail != "\n" {
		t.Errorf("compact %v, tail %q", s.Compact, s.Tail)
	}
	if s, _ := ReadStdinShape(`{"a": 1}`); s.Compact {
		t.Error(`{"a": 1} read as compact`)
	}
	if _, ok := ReadStdinShape(`[1]`); ok {
		t.Error("an array read as a hook's stdin object")
	}
	if _, ok := ReadStdinShape(`{"a":`); ok {
		t.Error("a truncated object read")
	}
}

// TestBytesDiffs: order (of the keys both write), escaping, spacing and newline are each
// reported; values and one-sided keys are not (the field comparison covers them).
func TestBytesDiffs(t *testing.T) {
	engine := HookRun{Raw: `{"session_id":"a","cwd":"/w","hook_event_name":"PreToolUse","tool_input":{"command":"x && y"},"prompt_id":"p"}` + "\n"}
	same := HookRun{Raw: `{"session_id":"b","cwd":"/v","hook_event_name":"PreToolUse","tool_input":{"command":"z & q"}}` + "\n"}
	if d := bytesDiffs("PreToolUse-1", engine, same); len(d) != 0 {
		t.Fatalf("same shape: %v", d)
	}
	dsh := HookRun{Raw: `{"hook_event_name":"PreToolUse", "session_id":"a","cwd":"/w","tool_input":{"command":"x \u0026\u0026 y"}}`}
	got := map[string]string{}
	for _, d := range bytesDiffs("PreToolUse-1", engine, dsh) {
		got[d[0]] = d[1]
	}
	for aspect, want := range map[string]string{
		"bytes.order":    "keys at the top: engine session_id,cwd,hook_event_name,tool_input, dsh hook_event_name,session_id,cwd,tool_input",
		"bytes.escaping": `'&': engine raw, dsh \u0026`,
		"bytes.spacing":  "compact under the engine true, under dsh false",
		"bytes.newline":  `the engine writes "\n", dsh ""`,
	} {
		if !strings.Contains(got[aspect], want) {
			t.Errorf("%s = %q, want it to hold %q", aspect, got[aspect], want)
		}
	}
}
