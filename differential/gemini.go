package differential

import (
	"encoding/json"
	"regexp"
	"strings"
)

// SentGemini returns, for every main Gemini request, the parts after the last "model"
// content (the first request of a run: the prompt): a functionResponse is a "result" (its
// response's output, or its error, flagged), a text a "user" item, or a "context" item
// when it is a <hook_context> part of its own. Gemini CLI's
// <session_context> part (date, OS, directory listing) is left out.
func SentGemini(reqs []Request) []Next {
	var out []Next
	for _, r := range reqs {
		if !r.Main {
			continue
		}
		var body struct {
			Contents []struct {
				Role  string           `json:"role"`
				Parts []map[string]any `json:"parts"`
			} `json:"contents"`
		}
		_ = json.Unmarshal(r.Body, &body)
		last := -1
		for i, c := range body.Contents {
			if c.Role == "model" {
				last = i
			}
		}
		var next Next
		for _, c := range body.Contents[last+1:] {
			for _, p := range c.Parts {
				switch {
				case p["functionResponse"] != nil:
					fr, _ := p["functionResponse"].(map[string]any)
					resp, _ := fr["response"].(map[string]any)
					it := Item{Kind: "result"}
					if e, ok := resp["error"]; ok {
						it.Error = true
						it.Text = str(e)
					} else if o, ok := resp["output"]; ok {
						it.Text = str(o)
					} else {
						it.Text = str(resp)
					}
					next = append(next, it)
				case p["text"] != nil:
					text, _ := p["text"].(string)
					if strings.HasPrefix(strings.TrimSpace(text), "<session_context>") {
						// The engine's environment preamble, not a hook's; the instruction
						// files (GEMINI.md) it holds count.
						if m := loadedContextRE.FindString(text); m != "" {
							next = append(next, Item{Kind: "user", Text: m})
						}
						continue
					}
					kind := "user"
					if strings.HasPrefix(strings.TrimSpace(text), "<hook_context>") {
						kind = "context" // a BeforeAgent hook's context, a part of its own
					}
					next = append(next, Item{Kind: kind, Text: strings.TrimSpace(text)})
				}
			}
		}
		out = append(out, next)
	}
	return out
}

// loadedContextRE is the part of Gemini CLI's <session_context> that holds the
// instruction files it read (GEMINI.md).
var loadedContextRE = regexp.MustCompile(`(?s)<loaded_context>.*</loaded_context>`)

// str is a JSON value as text: a string as it is, anything else as JSON.
func str(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	data, _ := json.Marshal(v)
	return string(data)
}

// geminiCases are the cases of Gemini CLI's hooks (engine "gemini"). The hook outputs
// and exit codes follow the protocol as measured
// (docs/design/GEMINI-HOOKS.md#13-output-and-exit-codes): stdout, else stderr, is
// parsed as JSON whatever the exit code; plain text on exit 0 is a system
// message, on exit 1 a warning, on any other code a block, and no output proceeds.
func geminiCases() []Case {
	g := func(name string, turns []Turn, hooks ...Hook) Case {
		return Case{Name: "gemini/" + name, Engines: []string{"gemini"}, Hooks: hooks, Turns: turns}
	}
	const (
		SS, SE, BA, AA = "SessionStart", "SessionEnd", "BeforeAgent", "AfterAgent"
		BM, AM, BTS    = "BeforeModel", "AfterModel", "BeforeToolSelection"
		BT, AT, PC     = "BeforeTool", "AfterTool", "PreCompress"
	)
	rewrite := func(cmd string) string {
		return js(`{"hookSpecificOutput":{"hookEventName":"BeforeTool","tool_input":{"command":"` + cmd + `","description":"run"}}}`)
	}
	seq := func(group int, hk Hook) Hook { hk.Group, hk.Sequential = group, true; return hk }
	failingCall := []Turn{{Text: "running", Bash: []string{"touch ran_1; echo bad >&2; exit 3"}}, {Text: "finished"}}
	return []Case{
		// Every event, silent: the baseline of hook stdin and environment.
		g("all/exit0", oneCall, h(SS, "exit 0"), h(BA, "exit 0"), h(BM, "exit 0"), h(BTS, "exit 0"), h(AM, "exit 0"),
			h(BT, "exit 0"), h(AT, "exit 0"), h(AA, "exit 0"), h(PC, "exit 0"), h(SE, "exit 0")),
		g("all/two-calls", twoCalls, h(BT, "exit 0"), h(AT, "exit 0")),
		// A hook that reads its stdin as text decides on the engine's bytes.
		g("tool/grep-stdin", rawCalls,
			h(BT, `grep -q '"command":"touch ran_1 && echo out1 >/dev/null </dev/null"' && exit 0; echo 'escaped or reordered' >&2; exit 2`)),

		// BeforeTool: each exit code and output channel.
		g("tool/exit0-text", oneCall, h(BT, "echo 'plain words'")),
		g("tool/exit1-text", oneCall, h(BT, "echo 'tool trouble' >&2; exit 1")),
		g("tool/exit2-empty", oneCall, h(BT, "exit 2")),
		g("tool/exit2-text", oneCall, h(BT, "echo 'blocked by policy' >&2; exit 2")),
		g("tool/exit3-text", oneCall, h(BT, "echo 'no via exit 3' >&2; exit 3")),
		g("tool/exit3-stdout", oneCall, h(BT, "echo 'stdout reason'; echo 'stderr reason' >&2; exit 3")),
		g("tool/json-stderr", oneCall, h(BT, js(`{"decision":"deny","reason":"denied on stderr"}`)+" >&2")),
		g("tool/json-string", oneCall, h(BT, js(`"{\"decision\":\"deny\",\"reason\":\"nested json\"}"`))),
		g("tool/exit2-allow", oneCall, h(BT, js(`{"decision":"allow"}`)+"; exit 2")),
		g("tool/invalid-json", oneCall, h(BT, "echo '{\"decision\": '")),
		g("tool/deny", oneCall, h(BT, js(`{"decision":"deny","reason":"denied by policy"}`))),
		g("tool/block", oneCall, h(BT, js(`{"decision":"block","reason":"blocked by policy"}`))),
		g("tool/deny-noreason", oneCall, h(BT, js(`{"decision":"deny"}`))),
		g("tool/allow-reason", oneCall, h(BT, js(`{"decision":"allow","reason":"fine"}`))),
		g("tool/continue-false", oneCall, h(BT, js(`{"continue":false,"stopReason":"halted by hook"}`))),
		g("tool/context", oneCall, h(BT, js(`{"hookSpecificOutput":{"hookEventName":"BeforeTool","additionalContext":"before context"}}`))),
		g("tool/system-message", oneCall, h(BT, js(`{"systemMessage":"a note for the user"}`))),
		g("tool/two-deny", oneCall, h(BT, js(`{"decision":"deny","reason":"first no"}`)), h(BT, js(`{"decision":"deny","reason":"second no"}`))),
		g("tool/deny-and-allow", oneCall, h(BT, js(`{"decision":"deny","reason":"denied by policy"}`)), h(BT, js(`{"decision":"allow","reason":"fine by me"}`))),
		g("tool/deny-two-calls", twoCalls, h(BT, "grep -q ran_2 && { echo 'not the second' >&2; exit 2; }; exit 0")),
		// BeforeTool rewrite: tool_input replaces the arguments.
		g("tool/rewrite", oneCall, h(BT, rewrite("touch ran_changed; echo changed")), h(AT, "exit 0")),
		g("tool/rewrite-partial", oneCall, h(BT, js(`{"hookSpecificOutput":{"hookEventName":"BeforeTool","tool_input":{"description":"no command"}}}`))),
		// A tool_input that is not an object: the engine ignores it and runs the original
		// arguments; dsh blocks the call (differences.md).
		g("tool/rewrite-string", oneCall, h(BT, js(`{"hookSpecificOutput":{"hookEventName":"BeforeTool","tool_input":"touch ran_changed; echo changed"}}`))),
		g("tool/rewrite-sequential", oneCall,
			seq(1, h(BT, rewrite("touch ran_first; echo first"))),
			seq(1, h(BT, "grep -q ran_first && "+rewrite("touch ran_second; echo second")+"; exit 0")), h(AT, "exit 0")),
		// A sequential group beside a parallel one: every hook of the event runs in order.
		g("tool/sequential-mixed", oneCall,
			seq(1, h(BT, rewrite("touch ran_first; echo first"))),
			h(BT, "grep -q ran_first && touch ran_third_saw_first; exit 0")),
		// Timeouts (milliseconds): a hook that overruns is failed and the call proceeds.
		g("tool/timeout", oneCall, Hook{Event: BT, Script: "sleep 4; echo 'late' >&2; exit 2", Timeout: 1}),
		g("tool/timeout-zero", oneCall, Hook{Event: BT, Script: "sleep 1; echo 'after a second' >&2; exit 2", RawTimeout: "0"}),
		g("tool/timeout-negative", oneCall, Hook{Event: BT, Script: "sleep 1; echo 'after a second' >&2; exit 2", RawTimeout: "-5"}),
		// Matchers: tool events match an unanchored regex; an invalid regex is an exact
		// string; SessionStart compares exactly.
		g("matcher/regex", oneCall, Hook{Event: BT, Matcher: "shell", Script: "echo 'shell blocked' >&2; exit 2"}),
		g("matcher/exact", oneCall, Hook{Event: BT, Matcher: "run_shell_command", Script: "echo 'exact blocked' >&2; exit 2"}),
		g("matcher/anchored-miss", oneCall, Hook{Event: BT, Matcher: "^shell$", Script: "echo 'no' >&2; exit 2"}),
		g("matcher/miss", oneCall, Hook{Event: BT, Matcher: "read_file", Script: "echo 'no' >&2; exit 2"}),
		g("matcher/invalid-regex", oneCall, Hook{Event: BT, Matcher: "run_shell_command(", Script: "echo 'invalid' >&2; exit 2"}),
		// JavaScript regular expressions (the engine builds new RegExp(matcher)): lookahead,
		// lookbehind and backreferences fire, a negative lookahead that excludes the tool
		// does not.
		g("matcher/lookahead", oneCall, Hook{Event: BT, Matcher: "^(?!read_file$)", Script: "echo 'lookahead blocked' >&2; exit 2"}),
		g("matcher/lookahead-miss", oneCall, Hook{Event: BT, Matcher: "^(?!run_shell_command$)", Script: "echo 'no' >&2; exit 2"}),
		g("matcher/lookbehind", oneCall, Hook{Event: BT, Matcher: "(?<=run_)shell", Script: "echo 'lookbehind blocked' >&2; exit 2"}),
		g("matcher/backreference", oneCall, Hook{Event: BT, Matcher: `^()run_shell_command\1$`, Script: "echo 'backreference blocked' >&2; exit 2"}),
		g("matcher/session-exact", oneCall, Hook{Event: SS, Matcher: "start", Script: "exit 0"}, Hook{Event: SS, Matcher: "startup", Script: "exit 0"}),
		g("matcher/ignored", oneCall, Hook{Event: BA, Matcher: "no-such-thing", Script: "exit 0"}),

		// AfterTool.
		g("after-tool/context", oneCall, h(AT, js(`{"hookSpecificOutput":{"hookEventName":"AfterTool","additionalContext":"after context"}}`))),
		g("after-tool/deny", oneCall, h(AT, js(`{"decision":"deny","reason":"result withheld"}`))),
		g("after-tool/exit2-text", oneCall, h(AT, "echo 'after feedback' >&2; exit 2")),
		g("after-tool/exit1-text", oneCall, h(AT, "echo 'after trouble' >&2; exit 1")),
		g("after-tool/failing-tool", failingCall, h(AT, js(`{"hookSpecificOutput":{"hookEventName":"AfterTool","additionalContext":"after context"}}`))),
		g("after-tool/plain-stdout", oneCall, h(AT, "echo 'plain after words'")),
		// tailToolCallRequest: another call replaces the first one, through BeforeTool, the
		// call and AfterTool again; the model reads its result as the first call's.
		g("after-tool/tail", oneCall, h(BT, "exit 0"), h(AT, once("t", tail(`{"name":"run_shell_command","args":{"command":"touch ran_tail; echo tail"}}`)))),
		g("after-tool/tail-context", oneCall, h(AT, once("t", js(`{"hookSpecificOutput":{"hookEventName":"AfterTool","additionalContext":"lost context","tailToolCallRequest":{"name":"run_shell_command","args":{"command":"touch ran_tail; echo tail"}}}}`)))),
		g("after-tool/tail-unknown", oneCall, h(BT, "exit 0"), h(AT, once("t", tail(`{"name":"no_such_tool","args":{"x":1}}`)))),
		g("after-tool/tail-bad-args", oneCall, h(BT, "exit 0"), h(AT, once("t", tail(`{"name":"run_shell_command","args":{"cmd":"touch ran_tail"}}`)))),
		g("after-tool/tail-not-object", oneCall, h(AT, tail(`"run_shell_command"`))),
		g("after-tool/tail-deny", oneCall, h(AT, once("t", js(`{"decision":"deny","reason":"result withheld","hookSpecificOutput":{"hookEventName":"AfterTool","tailToolCallRequest":{"name":"run_shell_command","args":{"command":"touch ran_tail; echo tail"}}}}`)))),
		g("after-tool/tail-blocked", oneCall, Hook{Event: BT, Script: "grep -q ran_tail && { echo 'tail blocked' >&2; exit 2; }; exit 0"}, h(AT, once("t", tail(`{"name":"run_shell_command","args":{"command":"touch ran_tail; echo tail"}}`)))),

		// AfterAgent: a deny sends the reason as a new prompt and runs the loop again.
		g("agent/after-deny-loop", textOnly, h(AA, upTo("n", 3, js(`{"decision":"deny","reason":"keep going"}`)))),
		// The new prompt of an AfterAgent deny fires BeforeAgent again, with the reason as
		// its prompt (the engine resets its once-per-prompt mark).
		g("agent/after-deny-before", textOnly, h(BA, "exit 0"), h(AA, once("s", js(`{"decision":"deny","reason":"keep going"}`)))),
		g("agent/after-exit2-once", textOnly, h(AA, once("s", "echo 'one more pass' >&2; exit 2"))),
		g("agent/after-continue-false", textOnly, h(AA, js(`{"continue":false,"stopReason":"agent halted"}`))),
		g("agent/before-context", oneCall, h(BA, js(`{"hookSpecificOutput":{"hookEventName":"BeforeAgent","additionalContext":"agent context"}}`))),
		g("agent/before-deny", oneCall, h(BA, js(`{"decision":"deny","reason":"no prompts today"}`))),
		g("agent/before-plain-stdout", oneCall, h(BA, "echo 'plain agent words'")),

		// The model events.
		g("model/before-deny", oneCall, h(BM, js(`{"decision":"deny","reason":"no model today"}`))),
		g("model/after-replace", oneCall, h(AM, once("s", js(`{"hookSpecificOutput":{"hookEventName":"AfterModel","llm_response":{"candidates":[{"content":{"role":"model","parts":["replaced by hook"]},"finishReason":"STOP"}]}}}`)))),
		g("model/after-deny", oneCall, h(AM, js(`{"decision":"deny","reason":"response withheld"}`))),
		g("model/selection-none", oneCall, h(BTS, js(`{"hookSpecificOutput":{"hookEventName":"BeforeToolSelection","toolConfig":{"mode":"NONE"}}}`))),
		g("model/selection-allowed", oneCall, h(BTS, js(`{"hookSpecificOutput":{"hookEventName":"BeforeToolSelection","toolConfig":{"mode":"ANY","allowedFunctionNames":["read_file"]}}}`))),

		// Session events.
		g("session/start-context", oneCall, h(SS, js(`{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"session context"}}`))),
		g("session/start-plain-stdout", oneCall, h(SS, "echo 'plain session words'")),
		g("session/start-exit2", oneCall, h(SS, "echo 'session exit2' >&2; exit 2")),
		g("session/end-output-ignored", oneCall, h(SE, js(`{"decision":"deny","reason":"no","continue":false}`))),
		g("session/pre-compress", oneCall, h(PC, "echo 'compress words'")),

		// The built-in tools: their input and output shapes (tool_input, tool_response) and
		// what the model reads (the functionResponse), for dsh's Gemini style.
		g("tools/shell-shapes", []Turn{{Text: "running", Bash: []string{"true", "echo out; echo err >&2", "printf 'no newline'", "echo partial; exit 5"}}, {Text: "finished"}},
			h(AT, "exit 0")),
		g("tools/files", []Turn{
			{Text: "writing", Calls: []Call{{Name: "write_file", Input: map[string]any{"file_path": "{{ws}}/notes.txt", "content": "alpha\nbeta\ngamma\nbeta\n"}}}},
			{Text: "reading", Calls: []Call{{Name: "read_file", Input: map[string]any{"file_path": "{{ws}}/notes.txt"}}}},
			{Text: "reading part", Calls: []Call{{Name: "read_file", Input: map[string]any{"file_path": "{{ws}}/notes.txt", "start_line": 2, "end_line": 3}}}},
			{Text: "editing", Calls: []Call{{Name: "replace", Input: map[string]any{"file_path": "{{ws}}/notes.txt", "instruction": "rename alpha", "old_string": "alpha", "new_string": "ALPHA"}}}},
			{Text: "editing all", Calls: []Call{{Name: "replace", Input: map[string]any{"file_path": "{{ws}}/notes.txt", "instruction": "rename beta", "old_string": "beta", "new_string": "BETA", "allow_multiple": true}}}},
			{Text: "rewriting", Calls: []Call{{Name: "write_file", Input: map[string]any{"file_path": "{{ws}}/notes.txt", "content": "one\n"}}}},
			{Text: "finished"}},
			h(BT, "exit 0"), h(AT, "exit 0")),
		g("tools/files-errors", []Turn{
			{Text: "reading", Calls: []Call{{Name: "read_file", Input: map[string]any{"file_path": "{{ws}}/missing.txt"}}}},
			{Text: "writing", Calls: []Call{{Name: "write_file", Input: map[string]any{"file_path": "{{ws}}/two.txt", "content": "x\nx\n"}}}},
			{Text: "editing", Calls: []Call{{Name: "replace", Input: map[string]any{"file_path": "{{ws}}/two.txt", "instruction": "change x", "old_string": "x", "new_string": "y"}}}},
			{Text: "editing", Calls: []Call{{Name: "replace", Input: map[string]any{"file_path": "{{ws}}/two.txt", "instruction": "change z", "old_string": "z", "new_string": "y"}}}},
			{Text: "outside", Calls: []Call{{Name: "write_file", Input: map[string]any{"file_path": "/etc/dsh-differential-outside.txt", "content": "no"}}}},
			{Text: "reading empty", Calls: []Call{{Name: "read_file", Input: map[string]any{"file_path": "{{ws}}/two.txt", "start_line": 9}}}},
			{Text: "finished"}},
			h(AT, "exit 0")),

		// Gemini CLI's own search tools, with hooks matching their names: glob (newest
		// first), grep_search (its auto context, names_only, filters, no match),
		// list_directory, and their refusals.
		g("tools/search", []Turn{
			{Text: "writing", Calls: []Call{{Name: "write_file", Input: map[string]any{"file_path": "{{ws}}/src/a.txt", "content": "alpha\nbeta\nAlpha again\n"}}}},
			{Text: "writing", Calls: []Call{{Name: "write_file", Input: map[string]any{"file_path": "{{ws}}/src/b.md", "content": "no match here\nbeta\n"}}}},
			{Text: "writing", Calls: []Call{{Name: "write_file", Input: map[string]any{"file_path": "{{ws}}/.hidden/c.txt", "content": "alpha\n"}}}},
			{Text: "globbing", Calls: []Call{{Name: "glob", Input: map[string]any{"pattern": "**/*.txt"}}}},
			{Text: "globbing", Calls: []Call{{Name: "glob", Input: map[string]any{"pattern": "src/*.{txt,md}"}}}},
			{Text: "globbing", Calls: []Call{{Name: "glob", Input: map[string]any{"pattern": "*.none"}}}},
			{Text: "globbing", Calls: []Call{{Name: "glob", Input: map[string]any{"pattern": "*", "dir_path": "/etc"}}}},
			{Text: "grepping", Calls: []Call{{Name: "grep_search", Input: map[string]any{"pattern": "alpha", "dir_path": "src"}}}},
			{Text: "grepping", Calls: []Call{{Name: "grep_search", Input: map[string]any{"pattern": "beta", "names_only": true}}}},
			{Text: "grepping", Calls: []Call{{Name: "grep_search", Input: map[string]any{"pattern": "zzz"}}}},
			{Text: "grepping", Calls: []Call{{Name: "grep_search", Input: map[string]any{"pattern": "beta", "dir_path": "src", "include_pattern": "*.md"}}}},
			{Text: "grepping", Calls: []Call{{Name: "grep_search", Input: map[string]any{"pattern": "here", "dir_path": "{{ws}}/missing"}}}},
			{Text: "listing", Calls: []Call{{Name: "list_directory", Input: map[string]any{"dir_path": "{{ws}}/src"}}}},
			{Text: "listing", Calls: []Call{{Name: "list_directory", Input: map[string]any{"dir_path": "src", "ignore": []any{"*.md"}}}}},
			{Text: "listing", Calls: []Call{{Name: "list_directory", Input: map[string]any{"dir_path": "{{ws}}/missing"}}}},
			{Text: "listing", Calls: []Call{{Name: "list_directory", Input: map[string]any{"dir_path": "{{ws}}/src/a.txt"}}}},
			{Text: "finished"}},
			Hook{Event: BT, Matcher: "^(glob|grep_search|list_directory)$", Script: "exit 0"},
			Hook{Event: AT, Matcher: "^(glob|grep_search|list_directory)$", Script: "exit 0"}),
		// update_topic: a new topic, an intent alone, the same title again.
		g("tools/topic", []Turn{
			{Text: "narrating", Calls: []Call{{Name: "update_topic", Input: map[string]any{"title": "Setup", "summary": "Getting started.", "strategic_intent": "Look around."}}}},
			{Text: "narrating", Calls: []Call{{Name: "update_topic", Input: map[string]any{"strategic_intent": "Read the files."}}}},
			{Text: "narrating", Calls: []Call{{Name: "update_topic", Input: map[string]any{"title": " Setup ", "strategic_intent": " Next\nstep "}}}},
			{Text: "narrating", Calls: []Call{{Name: "update_topic", Input: map[string]any{"title": "Build", "strategic_intent": ""}}}},
			{Text: "finished"}},
			Hook{Event: BT, Matcher: "^update_topic$", Script: "exit 0"},
			Hook{Event: AT, Matcher: "^update_topic$", Script: "exit 0"}),
		// The settings' tools.exclude and tools.core (an allowlist; "run_shell_command(echo)"
		// allows the shell for commands starting with echo).
		{Name: "gemini/tools/exclude", Engines: []string{"gemini"}, Settings: map[string]any{"tools": map[string]any{"exclude": []any{"glob", "run_shell_command"}}},
			Turns: []Turn{
				{Text: "globbing", Calls: []Call{{Name: "glob", Input: map[string]any{"pattern": "*"}}}},
				{Text: "running", Bash: []string{"touch ran_1"}},
				{Text: "listing", Calls: []Call{{Name: "list_directory", Input: map[string]any{"dir_path": "."}}}},
				{Text: "finished"}},
			Hooks: []Hook{h(BT, "exit 0"), h(AT, "exit 0")}},
		{Name: "gemini/tools/core", Engines: []string{"gemini"}, Settings: map[string]any{"tools": map[string]any{"core": []any{"list_directory", "run_shell_command(echo)"}}},
			Turns: []Turn{
				{Text: "running", Bash: []string{"echo hi"}},
				{Text: "running", Bash: []string{"touch ran_1"}},
				{Text: "listing", Calls: []Call{{Name: "list_directory", Input: map[string]any{"dir_path": "."}}}},
				{Text: "globbing", Calls: []Call{{Name: "glob", Input: map[string]any{"pattern": "*"}}}},
				{Text: "finished"}},
			Hooks: []Hook{h(BT, "exit 0"), h(AT, "exit 0")}},
		// write_todos and web_fetch (a loopback URL: refused by both).
		g("tools/todos-web", []Turn{
			{Text: "planning", Calls: []Call{{Name: "write_todos", Input: map[string]any{"todos": []any{
				map[string]any{"description": "look around", "status": "completed"},
				map[string]any{"description": "change things", "status": "in_progress"},
				map[string]any{"description": "check", "status": "pending"}}}}}},
			{Text: "planning", Calls: []Call{{Name: "write_todos", Input: map[string]any{"todos": []any{
				map[string]any{"description": "one", "status": "in_progress"},
				map[string]any{"description": "two", "status": "in_progress"}}}}}},
			{Text: "planning", Calls: []Call{{Name: "write_todos", Input: map[string]any{"todos": []any{}}}}},
			{Text: "fetching", Calls: []Call{{Name: "web_fetch", Input: map[string]any{"prompt": "Summarize http://127.0.0.1:9/page please"}}}},
			{Text: "fetching", Calls: []Call{{Name: "web_fetch", Input: map[string]any{"prompt": "Summarize ftp://example.com/x"}}}},
			{Text: "fetching", Calls: []Call{{Name: "web_fetch", Input: map[string]any{"prompt": "Summarize nothing"}}}},
			{Text: "finished"}},
			Hook{Event: BT, Matcher: "^(write_todos|web_fetch)$", Script: "exit 0"},
			Hook{Event: AT, Matcher: "^(write_todos|web_fetch)$", Script: "exit 0"}),

		// Extensions: their hooks load beside the settings' hooks; a malformed hooks.json is
		// a diagnostic and the other extensions still load.
		{Name: "gemini/extension/broken-beside-good", Engines: []string{"gemini"}, Turns: oneCall, BrokenExtension: true, Hooks: []Hook{
			{Event: BT, Source: "ext:good", Script: "echo 'blocked by the extension' >&2; exit 2"}, h(AT, "exit 0")}},

		// Environment: the variables are exported, and substituted into the command text
		// (Hook.Args is quoted, so only a substitution by the engine expands it).
		{Name: "gemini/env/substituted", Engines: []string{"gemini"}, Turns: oneCall, Hooks: []Hook{
			{Event: BT, Args: "'$GEMINI_PROJECT_DIR'", Script: `[ "$1" = "$(pwd)" ] && touch ran_substituted; exit 0`}}},
		// A workspace whose name is shell code, substituted inside double quotes: the engine
		// quotes the value for a bare word, so bash runs the name's command substitution
		// (ran_injected; the hook's $1 is '<ws without it>'/x, the quotes literal); dsh
		// refuses to run the hook and blocks the call (differences.md).
		{Name: "gemini/env/hostile-dir", Engines: []string{"gemini"}, Turns: oneCall, Workspace: "ws$(touch ran_injected)", Hooks: []Hook{
			{Event: BT, Args: `"$GEMINI_PROJECT_DIR/x"`, Script: `printf '%s\n' "$1" > {{state}}/arg; touch ran_hook; exit 0`}}},
	}
}

// tail is an AfterTool hook script answering the tail call request (a JSON value).
func tail(request string) string {
	return js(`{"hookSpecificOutput":{"hookEventName":"AfterTool","tailToolCallRequest":` + request + `}}`)
}
