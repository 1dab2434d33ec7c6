package differential

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// What each main request sent after the model's previous response, read from the requests
// of each wire (the aspect "sent"), and the tool errors a dsh session log records.

// Item is one thing the model was sent after its previous response.
type Item struct {
	Kind  string `json:"kind"` // "result" (a tool result), "context" (a system/developer text), "user" (a user-role text)
	Error bool   `json:"error,omitempty"`
	Text  string `json:"text"`
}

func (it Item) String() string {
	e := ""
	if it.Error {
		e = "!"
	}
	return fmt.Sprintf("%s%s:%q", it.Kind, e, it.Text)
}

var (
	reminderRE = regexp.MustCompile(`(?s)\n*<system-reminder>\n?(.*?)\n?</system-reminder>\n*`)
	codexOutRE = regexp.MustCompile(`(?s)^Chunk ID: \S+\nWall time: [^\n]*\n(?:Process exited with code (\d+)\n)?(Process running with session ID \d+\n)?(Original token count: \d+\n)?Output:\n(.*)$`)
)

// codexOutput normalizes the text of a Codex shell result (exec_command): the header's
// run-specific values become placeholders ("Chunk ID: <id>", "Wall time: <s>", a running
// command's "Process running with session ID <id>"), the exit code and token count stay,
// and the exit code gives the error flag. ok is false for a text without the header.
func codexOutput(out string) (text string, isErr, ok bool) {
	m := codexOutRE.FindStringSubmatch(out)
	if m == nil {
		return out, false, false
	}
	text = "Chunk ID: <id>\nWall time: <s>\n"
	if m[1] != "" {
		text += "Process exited with code " + m[1] + "\n"
	}
	if m[2] != "" {
		text += "Process running with session ID <id>\n"
	}
	return text + m[3] + "Output:\n" + m[4], m[1] != "" && m[1] != "0", true
}

// dateChangedPrefix opens the reminder Claude Code adds to the next request when the
// local date changed since the last one ("The date has changed. Today's date is now
// …"): a fact of the engine's clock, not of a hook, so a run that crosses midnight
// compares as any other.
const dateChangedPrefix = "The date has changed."

// splitReminders takes the <system-reminder> blocks out of a text: the rest and the
// reminders (token counters and date changes dropped).
func splitReminders(s string) (string, []string) {
	var rs []string
	rest := reminderRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := reminderRE.FindStringSubmatch(m)
		r := strings.TrimSpace(sub[1])
		if !strings.HasPrefix(r, "<total_tokens>") && !strings.HasPrefix(r, dateChangedPrefix) {
			rs = append(rs, r)
		}
		return ""
	})
	return rest, rs
}

// agentTypesPrefix opens the reminder in which Claude Code lists its agent types to a
// subagent, after the child's first tool result: the engine's own types (claude,
// Explore, Plan, statusline-setup, …), which dsh does not have, so it is left out, as
// the engine's environment reminders of a first request are (docs/design/SUBAGENTS.md
// says what dsh tells its children instead).
const agentTypesPrefix = "Available agent types for the Agent tool:"

// Next is what a main request sent after the model's previous response.
type Next []Item

// hookReminderRE matches the reminders Claude Code writes for hooks; the first request
// carries many other reminders (environment, tools, memory) that are left out.
var hookReminderRE = regexp.MustCompile(`^\S+ hook (success|additional context|blocking error|error)`)

// instructionsReminderRE matches the reminder that holds Claude Code's instruction files
// (CLAUDE.md and its imports): a context of the first request of a run, as the hooks'.
var instructionsReminderRE = regexp.MustCompile(`^Codebase and user instructions are shown below`)

// SentAnthropic returns, for every main request, the items after the last assistant
// message (the first request of a run, or one sent again before any answer: the prompt and
// the hooks' reminders). A request
// that follows a summarization starts with a "checkpoint" item when it carries the
// checkpoint, even before the last assistant message (a retained tail).
func SentAnthropic(reqs []Request) []Next {
	var out []Next
	for _, i := range conversationOrder(reqs) {
		r := reqs[i]
		if !r.Main {
			continue
		}
		var body struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		_ = json.Unmarshal(r.Body, &body)
		prelude, compacted := opensRun(reqs, i)
		last := -1
		for i, m := range body.Messages {
			if m.Role == "assistant" {
				last = i
			}
		}
		if last < 0 {
			// A request without an answer before it opens the run, whether it is the run's
			// first or the engine sends it again after a failure.
			prelude = true
		}
		var next Next
		blocks := func(m json.RawMessage) []map[string]any {
			var bs []map[string]any
			if json.Unmarshal(m, &bs) != nil {
				var s string
				_ = json.Unmarshal(m, &s)
				bs = []map[string]any{{"type": "text", "text": s}}
			}
			return bs
		}
		if compacted {
			for _, m := range body.Messages[:last+1] {
				for _, b := range blocks(m.Content) {
					if t, _ := b["text"].(string); strings.Contains(t, Summary) {
						next = append(next, Item{Kind: "checkpoint", Text: Summary})
					}
				}
			}
		}
		for _, m := range body.Messages[last+1:] {
			if m.Role == "system" {
				for _, b := range blocks(m.Content) {
					text, _ := b["text"].(string)
					next = append(next, systemContexts(text, prelude)...)
				}
				continue
			}
			for _, b := range blocks(m.Content) {
				switch b["type"] {
				case "tool_result":
					text := blockText(b["content"])
					rest, rs := splitReminders(text)
					isErr, _ := b["is_error"].(bool)
					next = append(next, Item{Kind: "result", Error: isErr, Text: strings.TrimRight(rest, "\n")})
					for _, r := range rs {
						if prelude && !hookReminderRE.MatchString(r) {
							continue // after a compaction the engine attaches its environment again
						}
						if strings.HasPrefix(r, agentTypesPrefix) {
							continue // the engine's own agent types (see agentTypesPrefix)
						}
						next = append(next, Item{Kind: "context", Text: r})
					}
				case "text":
					text, _ := b["text"].(string)
					if strings.Contains(text, Summary) {
						next = append(next, Item{Kind: "checkpoint", Text: Summary})
						continue
					}
					if it, ok := localCommand(text); ok {
						if it.Kind != "" {
							next = append(next, it)
						}
						continue
					}
					rest, rs := splitReminders(text)
					for _, r := range rs {
						if prelude && !hookReminderRE.MatchString(r) && !instructionsReminderRE.MatchString(r) {
							continue
						}
						next = append(next, Item{Kind: "context", Text: r})
					}
					if strings.TrimSpace(rest) != "" {
						// A hook's input quoted in a task (an agent hook's verifier's) names the
						// transcript where each side keeps it: compared by form, as stdin's
						// transcript_path is.
						rest = transcriptField.ReplaceAllString(rest, `"transcript_path":"<transcript>"`)
						next = append(next, Item{Kind: "user", Text: strings.TrimSpace(rest)})
					}
				}
			}
		}
		out = append(out, next)
	}
	return out
}

// systemContexts are the "context" items of a message of role "system" (Claude Code's
// channel for hook contexts with some models): the engine joins consecutive system texts
// with a blank line, so each paragraph that starts as a hook text starts a context and
// the paragraphs after it continue it; in the first request of a run the engine's own
// paragraphs (its environment block, the date) are left out, as its other reminders are.
func systemContexts(text string, prelude bool) []Item {
	var out []Item
	hook := false
	for _, p := range strings.Split(text, "\n\n") {
		switch {
		case strings.HasPrefix(p, dateChangedPrefix):
			hook = false
		case hookReminderRE.MatchString(p):
			out = append(out, Item{Kind: "context", Text: p})
			hook = true
		case prelude:
			hook = false
		case hook:
			out[len(out)-1].Text += "\n\n" + p
		default:
			out = append(out, Item{Kind: "context", Text: p})
			hook = true
		}
	}
	return out
}

// conversationOrder are the indexes of reqs, the parent's requests first, then each
// subagent's (Request.Child) in the order its first request came, each conversation in
// arrival order: a child that runs in the background races its parent, so that the
// arrival order of the two conversations' requests says nothing.
func conversationOrder(reqs []Request) []int {
	var order []string
	byChild := map[string][]int{}
	for i, r := range reqs {
		if _, seen := byChild[r.Child]; !seen && r.Child != "" {
			order = append(order, r.Child)
		}
		byChild[r.Child] = append(byChild[r.Child], i)
	}
	out := byChild[""]
	for _, c := range order {
		out = append(out, byChild[c]...)
	}
	return out
}

// opensRun says whether the main request reqs[i] is the first of its run (prelude), and
// whether a summarization came before it since the previous main request (compacted).
func opensRun(reqs []Request, i int) (prelude, compacted bool) {
	for j := i - 1; j >= 0; j-- {
		if reqs[j].Summarize {
			compacted = true
		}
		// A subagent's requests are a conversation of their own: its first one opens it.
		if reqs[j].Main && reqs[j].Child == reqs[i].Child {
			return reqs[j].Run != reqs[i].Run || compacted, compacted
		}
	}
	return true, compacted
}

var (
	commandRE = regexp.MustCompile(`(?s)^\s*<command-name>(.*?)</command-name>.*?<command-args>(.*?)</command-args>`)
	stdoutRE  = regexp.MustCompile(`(?s)^\s*<local-command-stdout>(.*?)</local-command-stdout>`)
)

// localCommand classifies the messages Claude Code records for a local command (a
// slash command it runs itself, such as /compact): the caveat is dropped (ok with an
// empty Kind), the command becomes a "command" item ("/compact ARGS"), its output a
// "command-output" item.
func localCommand(text string) (Item, bool) {
	switch {
	case strings.HasPrefix(strings.TrimSpace(text), "<local-command-caveat>"):
		return Item{}, true
	case commandRE.MatchString(text):
		m := commandRE.FindStringSubmatch(text)
		return Item{Kind: "command", Text: strings.TrimSpace(m[1] + " " + m[2])}, true
	case stdoutRE.MatchString(text):
		return Item{Kind: "command-output", Text: strings.TrimSpace(stdoutRE.FindStringSubmatch(text)[1])}, true
	}
	return Item{}, false
}

func blockText(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, p := range c {
			if pm, ok := p.(map[string]any); ok {
				if s, ok := pm["text"].(string); ok {
					parts = append(parts, s)
				}
				// A tool search's answer (Claude Code's ToolSearch) loads these tools.
				if name, ok := pm["tool_name"].(string); ok && pm["type"] == "tool_reference" {
					parts = append(parts, "[tool_reference "+name+"]")
				}
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

// SentResponses returns, for every main Responses request, the items after the last
// item the model produced (the first request of a run, and one after a summarization:
// what follows the environment context when the model produced nothing after it). The
// checkpoint message is a "checkpoint" item.
func SentResponses(reqs []Request) []Next {
	var out []Next
	for _, i := range conversationOrder(reqs) {
		r := reqs[i]
		if !r.Main {
			continue
		}
		var body struct {
			Input []map[string]any `json:"input"`
		}
		_ = json.Unmarshal(r.Body, &body)
		prelude, _ := opensRun(reqs, i)
		last := -1
		var beside Next // the texts of the environment's message beside it (AGENTS.md)
		for i, it := range body.Input {
			if it["type"] == "function_call" || it["type"] == "custom_tool_call" || (it["type"] == "message" && it["role"] == "assistant") {
				last, beside = i, nil
			}
			if prelude && it["type"] == "message" && hasEnvironment(it["content"]) {
				last, beside = i, nil
				parts, _ := it["content"].([]any)
				for _, p := range parts {
					if t := strings.TrimSpace(blockText([]any{p})); t != "" && !strings.HasPrefix(t, "<environment_context>") {
						beside = append(beside, Item{Kind: "user", Text: t})
					}
				}
			}
		}
		next := beside
		for _, it := range body.Input[last+1:] {
			switch it["type"] {
			case "function_call_output", "custom_tool_call_output":
				out, ok := it["output"].(string)
				if !ok {
					out = outputItems(it["output"])
				}
				out, isErr, _ := codexOutput(out)
				next = append(next, Item{Kind: "result", Error: isErr, Text: strings.TrimRight(out, "\n")})
			case "message":
				role, _ := it["role"].(string)
				text := blockText(it["content"])
				kind := "user"
				if role == "developer" || role == "system" {
					kind = "context"
				}
				if strings.Contains(text, Summary) {
					kind, text = "checkpoint", Summary
				}
				next = append(next, Item{Kind: kind, Text: strings.TrimSpace(text)})
			}
		}
		out = append(out, next)
	}
	return out
}

// wallTimeRE is the wall time Codex puts before an MCP tool's output ("Wall time:
// 0.0338 seconds\nOutput:").
var wallTimeRE = regexp.MustCompile(`^Wall time: \d+(?:\.\d+)? seconds`)

// outputItems is a function_call_output's output given as content items (Codex's MCP
// results: a "Wall time: … seconds\nOutput:" text, then the server's content), each item
// as "[<type>] <text>" on lines of its own, the wall time as <s>.
func outputItems(v any) string {
	items, _ := v.([]any)
	var lines []string
	for _, it := range items {
		m, _ := it.(map[string]any)
		typ, _ := m["type"].(string)
		text, _ := m["text"].(string)
		if text == "" {
			if u, ok := m["image_url"].(string); ok {
				text = fmt.Sprintf("(%d characters)", len(u))
			}
		}
		lines = append(lines, "["+typ+"] "+wallTimeRE.ReplaceAllString(text, "Wall time: <s>"))
	}
	return strings.Join(lines, "\n")
}

// hasEnvironment says whether a Responses message's content has Codex's
// <environment_context> part (the engine's preamble, with AGENTS.md beside it).
func hasEnvironment(content any) bool {
	parts, _ := content.([]any)
	for _, p := range parts {
		if strings.HasPrefix(strings.TrimSpace(blockText([]any{p})), "<environment_context>") {
			return true
		}
	}
	return false
}

// SentChat returns, for every main chat-completions request, the messages after the
// last assistant message (the first request of a run: after the system prompt). errs says
// which tool call ids dsh marked as errors (the chat wire has no error flag; the session
// log has it). The checkpoint message is a "checkpoint" item, listed first when it comes
// before the last assistant message (a retained tail).
func SentChat(reqs []Request, errs map[string]bool) []Next {
	var out []Next
	for i, r := range reqs {
		if !r.Main {
			continue
		}
		var body struct {
			Messages []map[string]any `json:"messages"`
		}
		_ = json.Unmarshal(r.Body, &body)
		prelude, compacted := opensRun(reqs, i)
		last := -1
		for i, m := range body.Messages {
			if m["role"] == "assistant" || (prelude && i == 0 && m["role"] == "system") {
				last = i
			}
		}
		var next Next
		if compacted {
			for _, m := range body.Messages[:last+1] {
				if m["role"] != "assistant" && strings.Contains(blockText(m["content"]), Summary) {
					next = append(next, Item{Kind: "checkpoint", Text: Summary})
				}
			}
		}
		for _, m := range body.Messages[last+1:] {
			text := blockText(m["content"])
			if strings.Contains(text, Summary) {
				next = append(next, Item{Kind: "checkpoint", Text: Summary})
				continue
			}
			switch m["role"] {
			case "tool":
				id, _ := m["tool_call_id"].(string)
				rest, rs := splitReminders(text)
				// dsh's Bash in the Codex style writes Codex's header too.
				rest, _, _ = codexOutput(rest)
				next = append(next, Item{Kind: "result", Error: errs[id], Text: strings.TrimRight(rest, "\n")})
				for _, r := range rs {
					next = append(next, Item{Kind: "context", Text: r})
				}
			case "system", "developer":
				next = append(next, Item{Kind: "context", Text: strings.TrimSpace(text)})
			default:
				rest, rs := splitReminders(text)
				for _, r := range rs {
					next = append(next, Item{Kind: "context", Text: r})
				}
				if strings.TrimSpace(rest) != "" {
					next = append(next, Item{Kind: "user", Text: strings.TrimSpace(rest)})
				}
			}
		}
		out = append(out, next)
	}
	return out
}

// ToolErrors reads a dsh session log and returns the ids of the tool results it marked
// as errors.
func ToolErrors(logFile string) map[string]bool {
	out := map[string]bool{}
	data, err := os.ReadFile(logFile)
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.Contains(line, `"isError":true`) {
			continue
		}
		var e struct {
			Data struct {
				Message struct {
					Content []struct {
						ToolCallID string `json:"toolCallId"`
						IsError    bool   `json:"isError"`
					} `json:"content"`
				} `json:"message"`
			} `json:"data"`
		}
		if json.Unmarshal([]byte(line), &e) == nil {
			for _, c := range e.Data.Message.Content {
				if c.IsError {
					out[c.ToolCallID] = true
				}
			}
		}
	}
	return out
}
