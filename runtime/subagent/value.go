package subagent

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
)

// ToolKind is how one tool's calls count in a child's [ToolStats] (a dialect's toolset
// row says it per tool; a tool with none counts as other).
type ToolKind struct {
	// Kind is the counter a call adds to: "read", "search", "bash", "edit", or "none" (not
	// counted).
	Kind string
	// Added and Removed are the input keys whose text an edit adds and removes: each
	// non-empty text counts its lines (its newlines and one).
	Added, Removed []string
}

// ToolStats counts a child's tool calls by kind.
type ToolStats struct {
	// Read, Search, Bash, Edit and Other count the calls of each kind.
	Read   int `json:"read"`
	Search int `json:"search"`
	Bash   int `json:"bash"`
	Edit   int `json:"edit"`
	// LinesAdded and LinesRemoved are the lines the edits' inputs add and remove.
	LinesAdded   int `json:"linesAdded"`
	LinesRemoved int `json:"linesRemoved"`
	Other        int `json:"other"`
}

// count adds one call of tool with args (its JSON input) to s, as kinds says.
func (s *ToolStats) count(kinds map[string]ToolKind, tool, args string) {
	k, ok := kinds[tool]
	if !ok {
		s.Other++
		return
	}
	switch k.Kind {
	case "read":
		s.Read++
	case "search":
		s.Search++
	case "bash":
		s.Bash++
	case "none":
	case "edit":
		s.Edit++
		var in map[string]any
		_ = json.Unmarshal([]byte(args), &in) // arguments that are not an object add no lines
		for _, key := range k.Added {
			s.LinesAdded += lines(in[key])
		}
		for _, key := range k.Removed {
			s.LinesRemoved += lines(in[key])
		}
	default:
		s.Other++
	}
}

// zero says no call was counted.
func (s ToolStats) zero() bool { return s.Read+s.Search+s.Bash+s.Edit+s.Other == 0 }

// lines is how many lines a string input holds: none when it is empty or not a string.
func lines(v any) int {
	s, _ := v.(string)
	if s == "" {
		return 0
	}
	return strings.Count(s, "\n") + 1
}

// Templates are the JSON shapes of the agent tool's value as a host's hooks see it (Claude
// Code's PostToolUse tool_response): a toolset row's data, rendered by [Value.Wire].
type Templates struct {
	// Completed is the value of a foreground call whose child completed, Async that of a
	// call that started a child in the background.
	Completed, Async json.RawMessage
	// ToolsUsedNote is the text block that leads {content} when the child called tools:
	// {tools} their names, joined with ", " ("": none).
	ToolsUsedNote string
	// TurnLimitNote is the text block that follows it when the child stopped at its limit
	// of model steps: {turns} the limit ("": none).
	TurnLimitNote string
}

// placeholderRE is a template string that is one placeholder.
var placeholderRE = regexp.MustCompile(`^\{([A-Za-z][A-Za-z0-9.]*)\}$`)

// Wire renders v through t's template (Async's for a child in the background, else
// Completed's; nil when t has none). The template is JSON whose key order the result
// keeps; a string that is exactly "{name}" is replaced by the value of name, of any JSON
// type, and an object member or array element whose placeholder has no value is left
// out, as is an object or array all of whose members were. The names: task, agentId,
// agentType, description, outputFile, answer, model (when known), toolsUsed (when the
// child called tools), toolUses, tokens, durationMs, usage.inputTokens (the input tokens
// not read from or written to the cache), usage.outputTokens, usage.cacheReadTokens and
// usage.cacheWriteTokens (when the provider reported usage), toolStats.read, .search,
// .bash, .edit, .linesAdded, .linesRemoved and .other (when a call was counted), content
// (the text blocks {type: "text", text}: ToolsUsedNote when the child called tools,
// TurnLimitNote when it stopped at its limit of model steps, then the answer), notes (how many blocks lead the answer) and contentHash (Claude Code's
// fingerprint of content: the first 16 hex digits of the SHA-256 of the block count and,
// per block, ":LENGTH:TEXT", lengths in UTF-16 code units).
func (v Value) Wire(t Templates) (json.RawMessage, error) {
	tmpl := t.Completed
	if v.Async {
		tmpl = t.Async
	}
	if len(tmpl) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(tmpl))
	dec.UseNumber()
	out, _, err := render(dec, v.env(t))
	if err != nil {
		return nil, fmt.Errorf("subagent: the value template: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("subagent: the value template: more than one JSON value")
	}
	return out, nil
}

// env are the values a template's placeholders name.
func (v Value) env(t Templates) map[string]any {
	env := map[string]any{"task": v.Task, "agentId": v.AgentID, "agentType": v.Type, "answer": v.Answer,
		"toolUses": v.ToolUses, "tokens": v.Tokens, "durationMs": v.DurationMS}
	for k, s := range map[string]string{"description": v.Description, "outputFile": v.OutputFile, "model": v.Model} {
		if s != "" {
			env[k] = s
		}
	}
	if len(v.ToolsUsed) > 0 {
		env["toolsUsed"] = v.ToolsUsed
	}
	if u := v.Usage; u != nil {
		read, write := deref0(u.CacheReadTokens), deref0(u.CacheWriteTokens)
		env["usage.inputTokens"] = u.InputTokens - read - write
		env["usage.outputTokens"] = u.OutputTokens
		env["usage.cacheReadTokens"] = read
		env["usage.cacheWriteTokens"] = write
	}
	if s := v.ToolStats; s != nil {
		for k, n := range map[string]int{"read": s.Read, "search": s.Search, "bash": s.Bash, "edit": s.Edit,
			"linesAdded": s.LinesAdded, "linesRemoved": s.LinesRemoved, "other": s.Other} {
			env["toolStats."+k] = n
		}
	}
	var texts []string
	if len(v.ToolsUsed) > 0 && t.ToolsUsedNote != "" {
		texts = append(texts, strings.ReplaceAll(t.ToolsUsedNote, "{tools}", strings.Join(v.ToolsUsed, ", ")))
	}
	if v.TurnLimit > 0 && t.TurnLimitNote != "" {
		texts = append(texts, strings.ReplaceAll(t.TurnLimitNote, "{turns}", strconv.Itoa(v.TurnLimit)))
	}
	env["notes"] = len(texts)
	texts = append(texts, v.Answer)
	type block struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	content := make([]block, len(texts))
	for i, s := range texts {
		content[i] = block{Type: "text", Text: s}
	}
	env["content"] = content
	env["contentHash"] = ContentHash(texts)
	return env
}

// ContentHash is Claude Code's fingerprint of a tool result's text blocks (its
// harnessSectionHash, 2.1.328): the first 16 hex digits of the SHA-256 of the block count
// followed, per block, by ":LENGTH:TEXT", LENGTH in UTF-16 code units.
func ContentHash(texts []string) string {
	h := sha256.New()
	h.Write([]byte(strconv.Itoa(len(texts))))
	for _, t := range texts {
		fmt.Fprintf(h, ":%d:", len(utf16.Encode([]rune(t))))
		h.Write([]byte(t))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// render writes the next JSON value of dec with its placeholders replaced from env; keep
// is false when it is to be left out (a placeholder with no value, or a container all of
// whose members were).
func render(dec *json.Decoder, env map[string]any) (out []byte, keep bool, err error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, false, err
	}
	switch t := tok.(type) {
	case json.Delim:
		obj := t == '{'
		var b bytes.Buffer
		b.WriteByte(byte(t))
		members, kept := 0, 0
		for dec.More() {
			members++
			var key []byte
			if obj {
				k, err := dec.Token()
				if err != nil {
					return nil, false, err
				}
				key, _ = marshal(k)
			}
			val, ok, err := render(dec, env)
			if err != nil {
				return nil, false, err
			}
			if !ok {
				continue
			}
			if kept > 0 {
				b.WriteByte(',')
			}
			kept++
			if obj {
				b.Write(key)
				b.WriteByte(':')
			}
			b.Write(val)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, false, err
		}
		if obj {
			b.WriteByte('}')
		} else {
			b.WriteByte(']')
		}
		return b.Bytes(), members == 0 || kept > 0, nil
	case string:
		if m := placeholderRE.FindStringSubmatch(t); m != nil {
			val, ok := env[m[1]]
			if !ok {
				return nil, false, nil
			}
			data, err := marshal(val)
			return data, true, err
		}
		data, err := marshal(t)
		return data, true, err
	case json.Number:
		return []byte(t), true, nil
	}
	data, err := marshal(tok) // a bool or null
	return data, true, err
}

// marshal encodes v as JSON without escaping HTML characters, as the engines write them.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func deref0(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
