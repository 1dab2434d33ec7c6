package gemini

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/dshkit/dsh/bridges/internal/hookbridge"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/blocktext"
)

// Chat writes a session's conversation as Gemini CLI records it (chats/session-….jsonl):
// a first line {sessionId, projectHash, startTime, lastUpdated, kind: "main"}, then one
// line per message {id, timestamp, type: "user" | "gemini", content, …}: a user message's
// content is its parts ([{text}]), a model message's its text, with its toolCalls
// ({id, name, args}); each message is followed by a {"$set": {lastUpdated}} line. Hooks
// that read transcript_path line by line read it as they read the engine's. It is safe
// for concurrent use; the file is private to the user (0600).
type Chat struct {
	mu  sync.Mutex
	out *hookbridge.JSONL
}

// NewChat creates (or appends to) the transcript at path for the session of a project. An
// existing file is appended to only when its first line is this session's (its
// sessionId); a symbolic link or another file is refused (hookbridge.OpenJSONL).
func NewChat(path, sessionID, project string) (*Chat, error) {
	out, fresh, err := hookbridge.OpenJSONL("gemini transcript", path, hookbridge.Owner{Field: []string{"sessionId"}, SessionID: sessionID})
	if err != nil {
		return nil, err
	}
	c := &Chat{out: out}
	if fresh {
		sum := sha256.Sum256([]byte(project))
		now := stamp()
		if err := c.write(map[string]any{"sessionId": sessionID, "projectHash": hex.EncodeToString(sum[:]),
			"startTime": now, "lastUpdated": now, "kind": "main"}); err != nil {
			out.Close()
			return nil, err
		}
	}
	return c, nil
}

// Close closes the file.
func (c *Chat) Close() error { return c.out.Close() }

// Observe writes the message of one logged event: a user prompt (user/message) or a model
// message (assistant/message); tool results and other events are not messages of the
// engine's transcript.
func (c *Chat) Observe(data dsh.SessionEventData) error {
	var msg map[string]any
	//dshvet:partial the chat file holds the conversation; the other session events are not in it
	switch d := data.(type) {
	case dsh.UserMessageLogged:
		if t := blocktext.Text(d.Message.Content, "\n"); t != "" {
			msg = map[string]any{"type": "user", "content": []any{map[string]string{"text": t}}}
		}
	case dsh.AssistantMessageLogged:
		msg = map[string]any{"type": "gemini", "content": blocktext.Text(d.Message.Content, "\n"), "thoughts": []any{}}
		var calls []any
		for _, b := range d.Message.Content {
			if tc, ok := b.(dsh.ToolCallBlock); ok {
				calls = append(calls, map[string]any{"id": tc.ID, "name": tc.Name, "args": json.RawMessage(tc.Arguments)})
			}
		}
		if calls != nil {
			msg["toolCalls"] = calls
		}
	}
	if msg == nil {
		return nil
	}
	var id [16]byte
	_, _ = rand.Read(id[:])
	now := stamp()
	msg["id"], msg["timestamp"] = fmt.Sprintf("%x-%x-%x-%x-%x", id[0:4], id[4:6], id[6:8], id[8:10], id[10:]), now
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.write(msg); err != nil {
		return err
	}
	return c.write(map[string]any{"$set": map[string]string{"lastUpdated": now}})
}

func stamp() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }

// write appends one JSON line.
func (c *Chat) write(v any) error { return c.out.Append(v) }
