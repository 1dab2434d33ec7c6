package codex

import (
	"crypto/rand"
	"fmt"
	"sync"
	"time"

	"github.com/dshkit/dsh/bridges/internal/hookbridge"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/blocktext"
)

// Rollout writes a session's conversation as a Codex rollout: JSONL lines {timestamp,
// ordinal, type, payload}, a session_meta line first, then one response_item per message
// (message with role user or assistant and content input_text/output_text,
// function_call with name, arguments and call_id, function_call_output with call_id and
// output), as the real engine writes them under $CODEX_HOME/sessions. Hooks that parse
// transcript_path read it as they read the engine's. Feed it every logged event with
// Observe; a line is on disk when Observe returns. It is safe for concurrent use.
type Rollout struct {
	mu      sync.Mutex
	out     *hookbridge.JSONL
	ordinal int
}

// NewRollout creates (or appends to) the rollout at path; a new file starts with the
// session_meta line. It is private to the user (the file 0600, a directory it creates
// 0700), as it holds the whole conversation. An existing file is appended to only when
// its first line is this session's session_meta (payload.id); a symbolic link or another
// file is refused (hookbridge.OpenJSONL).
func NewRollout(path, sessionID, cwd string) (*Rollout, error) {
	out, fresh, err := hookbridge.OpenJSONL("rollout", path, hookbridge.Owner{Field: []string{"payload", "id"}, SessionID: sessionID})
	if err != nil {
		return nil, err
	}
	r := &Rollout{out: out}
	if fresh {
		now := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
		if err := r.write("session_meta", map[string]any{"id": sessionID, "session_id": sessionID, "timestamp": now,
			"cwd": cwd, "originator": "dsh", "cli_version": "dsh", "source": "exec"}); err != nil {
			out.Close()
			return nil, err
		}
	}
	return r, nil
}

// Path is the rollout's path (the hooks' transcript_path).
func (r *Rollout) Path() string { return r.out.Path() }

// Close closes the file.
func (r *Rollout) Close() error { return r.out.Close() }

// Observe writes the response items of one logged event: a user message (user/message),
// an assistant message (assistant/message: its text, then its tool calls) or a tool
// result (tool/result); other events are ignored.
func (r *Rollout) Observe(data dsh.SessionEventData) error {
	var items []map[string]any
	//dshvet:partial the rollout holds the conversation; the other session events are not in it
	switch d := data.(type) {
	case dsh.UserMessageLogged:
		if t := blocktext.Text(d.Message.Content, "\n"); t != "" {
			items = append(items, message("user", "input_text", t))
		}
	case dsh.ToolResultLogged:
		for _, b := range d.Message.Content {
			if tr, ok := b.(dsh.ToolResultBlock); ok {
				items = append(items, map[string]any{"type": "function_call_output", "call_id": tr.ToolCallID, "output": blocktext.Text(tr.Content, "\n")})
			}
		}
	case dsh.AssistantMessageLogged:
		if t := blocktext.Text(d.Message.Content, "\n"); t != "" {
			items = append(items, message("assistant", "output_text", t))
		}
		for _, b := range d.Message.Content {
			if tc, ok := b.(dsh.ToolCallBlock); ok {
				items = append(items, map[string]any{"type": "function_call", "name": tc.Name, "arguments": tc.Arguments, "call_id": tc.ID})
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, it := range items {
		it["id"] = newID()
		if err := r.write("response_item", it); err != nil {
			return err
		}
	}
	return nil
}

// write appends one line (the caller holds mu, or owns r).
func (r *Rollout) write(typ string, payload map[string]any) error {
	line := map[string]any{"timestamp": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), "ordinal": r.ordinal, "type": typ, "payload": payload}
	r.ordinal++
	return r.out.Append(line)
}

func message(role, kind, text string) map[string]any {
	return map[string]any{"type": "message", "role": role, "content": []any{map[string]any{"type": kind, "text": text}}}
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("item_%x", b)
}
