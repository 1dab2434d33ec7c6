package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/session"
)

// hostile is what a model's answer and a Bash command's output hold: an OSC 52 clipboard
// write, a window title, a screen clear, a C1 CSI and a bare carriage return.
const hostile = "\x1b]52;c;Zm9v\x07 \x1b]0;title\x07 \x1b[2J \u009b2J \rend"

// rawControl returns the first control character of s a terminal would obey (anything
// but newline and tab), or "".
func rawControl(s string) string {
	for i, r := range s {
		if r == utf8.RuneError || (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			return fmt.Sprintf("%s⟨%U⟩", strings.ToValidUTF8(s[max(0, i-20):i], "?"), r)
		}
	}
	return ""
}

// TestControlCharactersShownVisibly: dsh run's transcript and text answer and dsh log's
// views write every control character of a model's text and a tool's output out
// (\x1b...), while the json formats and the log keep the exact bytes.
func TestControlCharactersShownVisibly(t *testing.T) {
	dir := t.TempDir()
	model, _ := json.Marshal(map[string]any{"responses": []any{
		map[string]any{"text": "step " + hostile, "toolCalls": []any{map[string]any{"id": "c1", "name": "Bash",
			"arguments": map[string]any{"command": `printf '\033]52;c;Zm9v\007 \033]0;title\007 \033[2J \302\2332J \rend'`}},
			// A tool the model names with a screen clear: dsh log --summary lists it.
			map[string]any{"id": "c2", "name": "x\x1b[2J", "arguments": map[string]any{}}}},
		map[string]any{"text": hostile},
	}})
	script := filepath.Join(dir, "model.json")
	if err := os.WriteFile(script, model, 0o644); err != nil {
		t.Fatal(err)
	}
	clean := func(what, out string) {
		t.Helper()
		if c := rawControl(out); c != "" {
			t.Errorf("%s holds a raw control character: …%s\n%q", what, c, out)
		}
	}
	for _, format := range []string{"text", "json", "stream-json", "events"} {
		logFile := filepath.Join(dir, format+".jsonl")
		code, stdout, stderr := runDSH("run", "--model", "scripted:"+script, "--workspace", dir, "--log", logFile, "--output-format", format, "go")
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", format, code, stderr)
		}
		clean(format+": the transcript", stderr)
		if !strings.Contains(stderr, `assistant: step \x1b]52;c;Zm9v\x07 \x1b]0;title\x07 \x1b[2J \u009b2J \x0dend`) ||
			!strings.Contains(stderr, `✓ \x1b]52;c;Zm9v\x07 \x1b]0;title\x07 \x1b[2J \u009b2J \x0dend`) {
			t.Errorf("%s: the transcript does not show the text and the output visibly:\n%s", format, stderr)
		}
		switch format {
		case "text":
			clean("the text answer", stdout)
			if strings.TrimSpace(stdout) != `\x1b]52;c;Zm9v\x07 \x1b]0;title\x07 \x1b[2J \u009b2J \x0dend` {
				t.Errorf("text answer: %q", stdout)
			}
		case "json":
			var r struct{ Result string }
			if err := json.Unmarshal([]byte(stdout), &r); err != nil || r.Result != hostile {
				t.Errorf("json: the result is not the exact text (%v): %q", err, r.Result)
			}
		case "stream-json":
			// claude -p's stream (the claude-code dialect): the tool result's exact text.
			found := false
			for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
				var m struct {
					Type    string
					Message struct {
						Content []struct {
							Type    string
							Content string
						}
					}
				}
				if json.Unmarshal([]byte(l), &m) == nil && m.Type == "user" && len(m.Message.Content) == 1 &&
					m.Message.Content[0].Type == "tool_result" && m.Message.Content[0].Content == hostile {
					found = true
				}
			}
			if !found {
				t.Errorf("stream-json: no tool result with the exact output:\n%s", stdout)
			}
		case "events":
			found := false
			for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
				var e session.Event
				if e.UnmarshalJSON([]byte(l)) != nil {
					continue
				}
				if d, err := e.Decode(); err == nil {
					if tr, ok := d.(dsh.ToolResultLogged); ok && textOf(tr.Message.Content) == hostile {
						found = true
					}
				}
			}
			if !found {
				t.Errorf("events: no tool result with the exact output:\n%s", stdout)
			}
		}
		// The log keeps the exact bytes; dsh log's views show them visibly.
		data, err := os.ReadFile(logFile)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), `\u001b]52;c;Zm9v\u0007`) || !strings.Contains(string(data), "\u009b2J") {
			t.Errorf("%s: the log does not keep the exact text", format)
		}
		for _, view := range [][]string{{"log", logFile}, {"log", "--summary", logFile}, {"log", "--raw", logFile}} {
			code, stdout, stderr := runDSH(view...)
			if code != 0 {
				t.Fatalf("dsh %v: exit %d\n%s", view, code, stderr)
			}
			clean(strings.Join(view[:len(view)-1], " "), stdout+stderr)
			if view[1] == "--summary" && !strings.Contains(stdout, `x\x1b[2J`) {
				t.Errorf("dsh log --summary does not list the tool visibly:\n%s", stdout)
			}
		}
		_, stdout, _ = runDSH("log", logFile)
		if !strings.Contains(stdout, `assistant: \x1b]52;c;Zm9v\x07 \x1b]0;title\x07 \x1b[2J \u009b2J \x0dend`) {
			t.Errorf("dsh log does not show the answer visibly:\n%s", stdout)
		}
	}
}
