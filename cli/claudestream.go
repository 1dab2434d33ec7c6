package cli

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/session"
)

// This file writes --output-format stream-json under a dialect whose engine has such a
// stream (dialect.Descriptor.StreamJSON "claude-code"): the lines claude -p
// --output-format stream-json --verbose writes, measured in Claude Code 2.1.328 against
// the differential suite's mock. A system/init line, then an assistant line per content
// block of each model message (text, tool_use), a user line per tool result, and the
// result object last. Each line carries the keys a consumer reads (type, subtype,
// message with Claude's content blocks, parent_tool_use_id, session_id, uuid,
// timestamp), in the engine's order; the engine's internal extras (cost, analytics,
// tool_use_result) are left out.

// claudeInit is the stream's system/init line.
type claudeInit struct {
	Type           string   `json:"type"`
	Subtype        string   `json:"subtype"`
	CWD            string   `json:"cwd"`
	SessionID      string   `json:"session_id"`
	Tools          []string `json:"tools"`
	MCPServers     []any    `json:"mcp_servers"`
	Model          string   `json:"model"`
	PermissionMode string   `json:"permissionMode"`
	UUID           string   `json:"uuid"`
}

// claudeMessage is an assistant or user line.
type claudeMessage struct {
	Type            string  `json:"type"`
	Message         any     `json:"message"`
	ParentToolUseID *string `json:"parent_tool_use_id"`
	SessionID       string  `json:"session_id"`
	UUID            string  `json:"uuid"`
	Timestamp       string  `json:"timestamp"`
}

// claudeAssistant is an assistant line's message (one content block).
type claudeAssistant struct {
	ID           string      `json:"id"`
	Model        string      `json:"model"`
	Role         string      `json:"role"`
	Content      []any       `json:"content"`
	StopReason   *string     `json:"stop_reason"`
	StopSequence *string     `json:"stop_sequence"`
	Type         string      `json:"type"`
	Usage        claudeUsage `json:"usage"`
}

// claudeUsage is an assistant message's usage.
type claudeUsage struct {
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

// claudeUser is a user line's message: tool results.
type claudeUser struct {
	Role    string `json:"role"`
	Content []any  `json:"content"`
}

// The content blocks, with Claude Code's key order.
type (
	claudeText struct {
		Text string `json:"text"`
		Type string `json:"type"`
	}
	claudeToolUse struct {
		ID    string          `json:"id"`
		Input json.RawMessage `json:"input"`
		Name  string          `json:"name"`
		Type  string          `json:"type"`
	}
	claudeThinking struct {
		Type     string `json:"type"`
		Thinking string `json:"thinking"`
	}
	claudeToolResult struct {
		ToolUseID string `json:"tool_use_id"`
		Type      string `json:"type"`
		Content   string `json:"content"`
		IsError   bool   `json:"is_error"`
	}
)

// claudeStream writes the session's events to w as Claude Code's stream-json lines.
type claudeStream struct {
	mu        sync.Mutex
	enc       *json.Encoder
	sessionID string
	model     string
	n         int // assistant messages so far, for their ids
}

// newClaudeStream returns a stream for session sessionID on w; init is its first line.
func newClaudeStream(w io.Writer, sessionID, model string) *claudeStream {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // as JSON.stringify writes it
	return &claudeStream{enc: enc, sessionID: sessionID, model: model}
}

// start writes the system/init line.
func (c *claudeStream) start(cwd string, tools []string, permissionMode string) {
	c.write(claudeInit{Type: "system", Subtype: "init", CWD: cwd, SessionID: c.sessionID, Tools: tools,
		MCPServers: []any{}, Model: c.model, PermissionMode: permissionMode, UUID: newUUID()})
}

// observe writes the lines of one session event.
func (c *claudeStream) observe(e session.Event) { c.lines(e, nil) }

// child returns the observer of a child's log (runner.Session.ObserveChildren): as claude
// -p does by default, its tool_use and tool_result blocks are written with
// parent_tool_use_id, the call that started the child; its text and thinking are not.
func (c *claudeStream) child(agentID string, lineage dsh.Lineage, log *session.Log) func() {
	parent := lineage.ParentCallID
	return log.Subscribe(func(e session.Event) { c.lines(e, &parent) })
}

// lines writes the lines of one session event of the agent, or of the child the call
// parent started (only its tool calls and results).
func (c *claudeStream) lines(e session.Event, parent *string) {
	data, err := e.Decode()
	if err != nil {
		return
	}
	ts := e.Time.UTC().Format("2006-01-02T15:04:05.000Z")
	//dshvet:partial the stream shows the model's messages and the tool results; the other events are dsh's own
	switch d := data.(type) {
	case dsh.AssistantMessageLogged:
		c.mu.Lock()
		c.n++
		id := fmt.Sprintf("msg_dsh_%03d", c.n)
		c.mu.Unlock()
		var usage claudeUsage
		if d.Usage != nil {
			usage = claudeUsage{InputTokens: d.Usage.InputTokens, OutputTokens: d.Usage.OutputTokens}
		}
		for _, b := range d.Message.Content {
			if _, call := b.(dsh.ToolCallBlock); parent != nil && !call {
				continue
			}
			block := claudeBlock(b)
			if block == nil {
				continue
			}
			c.write(claudeMessage{Type: "assistant", ParentToolUseID: parent, SessionID: c.sessionID, UUID: newUUID(), Timestamp: ts,
				Message: claudeAssistant{ID: id, Model: c.model, Role: "assistant", Content: []any{block}, Type: "message", Usage: usage}})
		}
	case dsh.ToolResultLogged:
		var results []any
		for _, b := range d.Message.Content {
			if r, ok := b.(dsh.ToolResultBlock); ok {
				results = append(results, claudeToolResult{ToolUseID: r.ToolCallID, Type: "tool_result", Content: textOf(r.Content), IsError: r.IsError})
			}
		}
		if len(results) > 0 {
			c.write(claudeMessage{Type: "user", ParentToolUseID: parent, SessionID: c.sessionID, UUID: newUUID(), Timestamp: ts,
				Message: claudeUser{Role: "user", Content: results}})
		}
	}
}

// claudeBlock is a model content block as Claude Code streams it (nil: none).
func claudeBlock(b dsh.ContentBlock) any {
	//dshvet:partial an image or a tool result is not a block of the model's message
	switch b := b.(type) {
	case dsh.TextBlock:
		return claudeText{Text: b.Text, Type: "text"}
	case dsh.ReasoningBlock:
		return claudeThinking{Type: "thinking", Thinking: b.Text}
	case dsh.ToolCallBlock:
		input := json.RawMessage(b.Arguments)
		if !json.Valid(input) {
			input = json.RawMessage("{}")
		}
		return claudeToolUse{ID: b.ID, Input: input, Name: b.Name, Type: "tool_use"}
	}
	return nil
}

// write writes one line.
func (c *claudeStream) write(v any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.enc.Encode(v)
}

// newUUID is a random (version 4) UUID, as the engine gives each line.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
