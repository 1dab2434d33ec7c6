package hookproto

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/hookmap"
)

// numbers is word, then the numbers 1 to n separated by sep: the contexts of the
// differential case codex/context-limit.
func numbers(word string, n int, sep string) string {
	parts := []string{word}
	for i := 1; i <= n; i++ {
		parts = append(parts, itoa(i))
	}
	return strings.Join(parts, sep)
}

func itoa(i int) string { data, _ := json.Marshal(i); return string(data) }

// TestLimitContextMeasured: the texts Codex 0.169.0 gave the model in place of contexts
// over their handler's additionalContextLimit (differential codex/context-limit), with a
// path of the engine's length (124 bytes of footer).
func TestLimitContextMeasured(t *testing.T) {
	cl := hookmap.Codex.ContextLimit
	path := "/tmp/hook_outputs/01a248b1-f43a-7cd3-b91f-a08cf1dd391f/7bcec6c9-777f-43e3-82d5-33f586be41ff.txt"
	footer := "\n\nFull hook output saved to: " + path
	session := numbers("session", 400, " ")
	got := LimitContext(cl, session, 100, path)
	want := "Warning: truncated output (original token count: 375)\nTotal output lines: 1\n\n" +
		session[:138] + "…306 tokens truncated…" + session[len(session)-138:] + footer
	if got != want {
		t.Errorf("limit 100:\n got %q\nwant %q", got, want)
	}
	if !strings.HasPrefix(want, "Warning: truncated output (original token count: 375)\nTotal output lines: 1\n\nsession 1 2 3") ||
		!strings.Contains(want, " 46 4…306 tokens truncated…66 367 ") {
		t.Fatalf("the expected text is not the measured one: %q", want)
	}
	prompt := numbers("prompt", 400, "\n")
	got = LimitContext(cl, prompt, 60, path)
	want = "Warning: truncated output (original token count: 375)\nTotal output lines: 401\n\n" +
		"prompt\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n…346 tokens truncated…86\n387\n388\n389\n390\n391\n392\n393\n394\n395\n396\n397\n398\n399\n400" + footer
	if got != want {
		t.Errorf("limit 60:\n got %q\nwant %q", got, want)
	}
	// A limit below the footer keeps nothing of the context.
	post := numbers("post", 400, " ")
	got = LimitContext(cl, post, 20, path)
	want = "Warning: truncated output (original token count: 374)\nTotal output lines: 1\n\n…374 tokens truncated…" + footer
	if got != want {
		t.Errorf("limit 20:\n got %q\nwant %q", got, want)
	}
}

// TestLimitContextUTF8: the head and the tail are cut back to whole characters.
func TestLimitContextUTF8(t *testing.T) {
	cl := &hookmap.ContextLimit{BytesPerToken: 4, Text: "{kept}", Marker: "…{tokens}…", Footer: ""}
	got := LimitContext(cl, strings.Repeat("é", 20), 3, "")
	// 12 bytes kept: 6 of head (3 é), 6 of tail (3 é); 28 bytes cut are 7 tokens.
	if got != "ééé…7…ééé" {
		t.Errorf("got %q", got)
	}
	got = LimitContext(cl, "a"+strings.Repeat("é", 10), 2, "")
	// 8 bytes: the head's 4 (a, é, half an é) cut back to 3, the tail's 4 whole.
	if got != "aé…4…éé" {
		t.Errorf("got %q", got)
	}
}

// TestFireContextLimit: a Codex handler's additionalContextLimit spills a longer context to
// <temp>/hook_outputs/<session id>/<uuid>.txt and the verdict carries the text in its place;
// a context within the limit, or a handler without one, is kept; a session id that is no
// directory name saves nothing and says so.
func TestFireContextLimit(t *testing.T) {
	long := numbers("prompt", 400, " ")
	out := `printf '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"%s"}}' "` + long + `"`
	withLimit := func(limit int) map[string]any {
		return map[string]any{"hooks": []any{map[string]any{"type": "command", "command": out, "additionalContextLimit": limit}}}
	}
	e, _, diags := engineFor(t, &hookmap.Codex, "UserPromptSubmit", withLimit(20), withLimit(400),
		map[string]any{"hooks": []any{map[string]any{"type": "command", "command": out}}})
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	e.TempDir = t.TempDir()
	stdin := []byte(`{"session_id":"0193aaaa-bbbb-7ccc-8ddd-eeeeffff0000","hook_event_name":"UserPromptSubmit"}`)
	rep := e.Fire(context.Background(), Fire{Event: "UserPromptSubmit", Stdin: stdin})
	if len(rep.Hooks) != 3 {
		t.Fatalf("runs %+v", rep.Hooks)
	}
	c := rep.Hooks[0].Verdict.Contexts
	if len(c) != 1 || !strings.HasPrefix(c[0], "Warning: truncated output (original token count: 375)\n") {
		t.Fatalf("limited context %q", c)
	}
	i := strings.Index(c[0], "Full hook output saved to: ")
	if i < 0 {
		t.Fatalf("no footer: %q", c[0])
	}
	path := c[0][i+len("Full hook output saved to: "):]
	if filepath.Dir(path) != filepath.Join(e.TempDir, "hook_outputs", "0193aaaa-bbbb-7ccc-8ddd-eeeeffff0000") || filepath.Ext(path) != ".txt" {
		t.Errorf("path %q", path)
	}
	if data, err := os.ReadFile(path); err != nil || string(data) != long {
		t.Errorf("saved %q, %v", data, err)
	}
	for _, k := range []int{1, 2} {
		if c := rep.Hooks[k].Verdict.Contexts; len(c) != 1 || c[0] != long {
			t.Errorf("run %d: context %q", k, c)
		}
	}
	rep = e.Fire(context.Background(), Fire{Event: "UserPromptSubmit", Stdin: []byte(`{"session_id":"../x"}`)})
	c = rep.Hooks[0].Verdict.Contexts
	if len(c) != 1 || strings.Contains(c[0], "saved to") || !strings.Contains(c[0], "tokens truncated") {
		t.Errorf("unsaved context %q", c)
	}
	if d := strings.Join(rep.Hooks[0].Verdict.Diagnostics, "\n"); !strings.Contains(d, `session_id "../x" is not a directory name`) {
		t.Errorf("diagnostics %q", d)
	}
}
