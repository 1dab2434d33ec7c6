package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/bridges/internal/hookbridge"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/blocktext"
)

// Transcript writes a session's conversation as a Claude Code transcript: JSONL entries
// of type "user" and "assistant", each with message.role and message.content (a string
// for a plain prompt; blocks of type text, tool_use and tool_result otherwise), uuid,
// parentUuid (the previous entry), sessionId, cwd and timestamp, as the real engine
// writes them under ~/.claude/projects. Hooks that parse transcript_path (a Stop loop
// reading the last assistant message) read it as they read the engine's. Feed it every
// logged event with Observe; an entry is on disk when Observe returns, so the transcript is
// current before the next hook runs. It is safe for concurrent use.
type Transcript struct {
	mu        sync.Mutex
	out       *hookbridge.JSONL
	sessionID string
	agentID   string // a child's: its entries are the session's sidechain
	cwd       string
	parent    *string
}

// NewTranscript creates (or appends to) the transcript at path: private to the user
// (the file 0600, a directory it creates 0700), as it holds the whole conversation. An
// existing file is appended to only when its first entry is this session's (its
// sessionId); a symbolic link or another file is refused (hookbridge.OpenJSONL).
func NewTranscript(path, sessionID, cwd string) (*Transcript, error) {
	out, _, err := hookbridge.OpenJSONL("transcript", path, hookbridge.Owner{Field: []string{"sessionId"}, SessionID: sessionID})
	if err != nil {
		return nil, err
	}
	return &Transcript{out: out, sessionID: sessionID, cwd: cwd, parent: lastUUID(out)}, nil
}

// NewSubagentTranscript creates the transcript of the child agentID of the session
// sessionID whose transcript is at parent, where the engine keeps it
// (SubagentTranscript): its entries are marked isSidechain and carry the child's agentId,
// with the parent's sessionId, as the engine writes them.
func NewSubagentTranscript(parent, sessionID, agentID, cwd string) (*Transcript, error) {
	path := SubagentTranscript(parent, agentID)
	if path == "" {
		return nil, errors.New("claude-code: a subagent transcript needs its session's transcript path")
	}
	t, err := NewTranscript(path, sessionID, cwd)
	if err != nil {
		return nil, err
	}
	t.agentID = agentID
	return t, nil
}

// maxTail bounds what lastUUID reads of a transcript's end.
const maxTail = 4 << 20

// lastUUID is the uuid of the last entry of the transcript out among those that begin in
// its last maxTail bytes (nil if none): a resumed session's first entry continues the
// chain, as the engine's does.
func lastUUID(out *hookbridge.JSONL) *string {
	data, err := out.Tail(maxTail)
	if err != nil {
		return nil
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		var e struct {
			UUID string `json:"uuid"`
		}
		if json.Unmarshal(lines[i], &e) == nil && e.UUID != "" {
			return &e.UUID
		}
	}
	return nil
}

// Path is the transcript's path (the hooks' transcript_path).
func (t *Transcript) Path() string { return t.out.Path() }

// Close closes the file.
func (t *Transcript) Close() error { return t.out.Close() }

// Observe writes the entry of one logged event: a user message (user/message), an
// assistant message (assistant/message) or a tool result (tool/result); other events are
// ignored.
func (t *Transcript) Observe(data dsh.SessionEventData) error {
	var role string
	var content any
	switch d := data.(type) {
	case dsh.UserMessageLogged:
		role, content = "user", userContent(d.Message.Content)
	case dsh.ToolResultLogged:
		role, content = "user", userContent(d.Message.Content)
	case dsh.AssistantMessageLogged:
		role, content = "assistant", assistantContent(d.Message.Content)
	default:
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	id := hookproto.NewUUID()
	entry := struct {
		ParentUUID  *string `json:"parentUuid"`
		IsSidechain bool    `json:"isSidechain"`
		AgentID     string  `json:"agentId,omitempty"`
		Type        string  `json:"type"`
		Message     struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"message"`
		UUID      string `json:"uuid"`
		Timestamp string `json:"timestamp"`
		UserType  string `json:"userType"`
		CWD       string `json:"cwd"`
		SessionID string `json:"sessionId"`
		Version   string `json:"version"`
	}{ParentUUID: t.parent, IsSidechain: t.agentID != "", AgentID: t.agentID, Type: role, UUID: id, Timestamp: time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
		UserType: "external", CWD: t.cwd, SessionID: t.sessionID, Version: "dsh"}
	entry.Message.Role, entry.Message.Content = role, content
	if err := t.out.Append(entry); err != nil {
		return err
	}
	t.parent = &id
	return nil
}

// resultContent is a tool result's content as the engine writes it: its text, or, for a
// tool search's answer (tool references), the tool_reference blocks.
func resultContent(content []dsh.ContentBlock) any {
	var refs []map[string]any
	for _, c := range content {
		if t, ok := c.(dsh.TextBlock); ok && t.ToolReference != nil {
			refs = append(refs, map[string]any{"type": "tool_reference", "tool_name": *t.ToolReference})
		}
	}
	if refs != nil {
		return refs
	}
	return blocktext.Text(content, "\n")
}

// userContent is a user entry's content: the text alone for a message of one text
// block (as the engine writes a prompt), else blocks.
func userContent(blocks []dsh.ContentBlock) any {
	if len(blocks) == 1 {
		if tb, ok := blocks[0].(dsh.TextBlock); ok {
			return tb.Text
		}
	}
	out := make([]map[string]any, 0, len(blocks))
	for _, b := range blocks {
		//dshvet:partial a user message holds text, tool results and images; reasoning and tool calls are the assistant's
		switch v := b.(type) {
		case dsh.TextBlock:
			out = append(out, map[string]any{"type": "text", "text": v.Text})
		case dsh.ToolResultBlock:
			out = append(out, map[string]any{"type": "tool_result", "tool_use_id": v.ToolCallID,
				"content": resultContent(v.Content), "is_error": v.IsError})
		case dsh.ImageBlock:
			out = append(out, map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": v.MediaType, "data": v.Data}})
		}
	}
	return out
}

// assistantContent is an assistant entry's blocks: text, thinking and tool_use.
func assistantContent(blocks []dsh.ContentBlock) []map[string]any {
	out := make([]map[string]any, 0, len(blocks))
	for _, b := range blocks {
		//dshvet:partial an assistant message holds text, reasoning and tool calls; the other blocks are the user's
		switch v := b.(type) {
		case dsh.TextBlock:
			out = append(out, map[string]any{"type": "text", "text": v.Text})
		case dsh.ReasoningBlock:
			out = append(out, map[string]any{"type": "thinking", "thinking": v.Text})
		case dsh.ToolCallBlock:
			var input any = map[string]any{}
			if v.Arguments != "" && json.Valid([]byte(v.Arguments)) {
				input = json.RawMessage(v.Arguments)
			}
			out = append(out, map[string]any{"type": "tool_use", "id": v.ID, "name": v.Name, "input": input})
		}
	}
	return out
}
