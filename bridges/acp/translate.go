package acp

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/blocktext"
	"github.com/dshkit/dsh/runtime/session"
)

// translator turns session-log events into session/update notifications. Live streaming
// and session/load replay share it, so that a replayed session looks like the live one.
type translator struct {
	cwd  string
	send func(update)
	// fileText reads a Write's target for the old side of its diff, as the Write tool
	// itself could read it (Env.FileText).
	fileText func(filePath string) (text string, exists bool, err error)
	// terminalMeta shows Bash calls as terminals with Zed's display-only _meta convention
	// (terminal_info, terminal_output, terminal_exit) instead of fenced text.
	terminalMeta bool

	mu        sync.Mutex
	cond      *sync.Cond
	seen      int64 // the last seq translated
	calls     map[string]*callInfo
	turnEnds  map[int]dsh.TurnEndReason
	announced map[string]chan struct{}
}

// callInfo is what a tool/call said, kept for its tool/result.
type callInfo struct {
	name  string
	title string
	args  json.RawMessage
	diff  *toolCallContent // edits: the diff shown with the call and again with its result
}

func newTranslator(cwd string, send func(update)) *translator {
	t := &translator{cwd: cwd, send: send, seen: -1, calls: map[string]*callInfo{},
		turnEnds: map[int]dsh.TurnEndReason{}, announced: map[string]chan struct{}{}}
	t.cond = sync.NewCond(&t.mu)
	return t
}

// observe translates one event. replay says it comes from session/load: user prompts are
// replayed then (live, the client already shows them) and files are not read for diffs.
func (t *translator) observe(e session.Event, replay bool) {
	defer t.markSeen(e.Seq)
	switch e.Type {
	case dsh.AssistantChunkLoggedType:
		t.chunk(e.Data) // the hot path: a light decode of the two fields it needs
		return
	case dsh.UserMessageLoggedType, dsh.ToolCallType, dsh.ToolResultLoggedType, dsh.TurnEndType:
	default:
		return
	}
	data, err := e.Decode()
	if err != nil {
		return
	}
	//dshvet:partial an editor is shown the conversation and its tool calls; the other events are not updates
	switch d := data.(type) {
	case dsh.UserMessageLogged:
		if !replay {
			return
		}
		if _, ok := d.Message.Source.(dsh.SourceUser); !ok {
			return
		}
		for _, b := range d.Message.Content {
			if cb, ok := acpContent(b); ok {
				t.send(update{SessionUpdate: "user_message_chunk", Content: cb})
			}
		}
	case dsh.ToolCall:
		t.toolCall(d, replay)
	case dsh.ToolResultLogged:
		t.toolResult(d)
	case dsh.TurnEnd:
		t.mu.Lock()
		t.turnEnds[d.Turn] = d.Reason
		t.mu.Unlock()
	}
}

// chunk translates an assistant/chunk event: text and reasoning deltas.
func (t *translator) chunk(data []byte) {
	var d struct {
		Chunk struct {
			Kind dsh.AssistantChunkKind `json:"kind"`
			Text string                 `json:"text"`
		} `json:"chunk"`
	}
	if json.Unmarshal(data, &d) != nil || d.Chunk.Text == "" {
		return
	}
	switch d.Chunk.Kind {
	case dsh.ChunkTextDeltaKind:
		t.send(update{SessionUpdate: "agent_message_chunk", Content: contentBlock{Type: "text", Text: d.Chunk.Text}})
	case dsh.ChunkReasoningDeltaKind:
		t.send(update{SessionUpdate: "agent_thought_chunk", Content: contentBlock{Type: "text", Text: d.Chunk.Text}})
	}
}

func (t *translator) markSeen(seq int64) {
	t.mu.Lock()
	if seq > t.seen {
		t.seen = seq
	}
	t.mu.Unlock()
	t.cond.Broadcast()
}

// waitSeen blocks until the event seq has been translated.
func (t *translator) waitSeen(seq int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.seen < seq {
		t.cond.Wait()
	}
}

// turnEnd returns how turn ended, if it did.
func (t *translator) turnEnd(turn int) (dsh.TurnEndReason, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.turnEnds[turn]
	return r, ok
}

// announcedCh returns the channel closed once the tool_call of id is on the wire.
func (t *translator) announcedCh(id string) chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	ch, ok := t.announced[id]
	if !ok {
		ch = make(chan struct{})
		t.announced[id] = ch
	}
	return ch
}

// announce marks id's tool_call as sent (a call id seen again, say in a resumed session
// whose model reuses ids, stays announced).
func (t *translator) announce(id string) {
	ch := t.announcedCh(id)
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// waitAnnounced waits until the tool_call of id was sent, so that nothing refers to a call
// the client does not know yet.
func (t *translator) waitAnnounced(ctx context.Context, id string) bool {
	select {
	case <-t.announcedCh(id):
		return true
	case <-ctx.Done():
		return false
	}
}

// title returns the title of the announced call id ("" if unknown).
func (t *translator) title(id string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.calls[id]; c != nil {
		return c.title
	}
	return ""
}

// describe returns the card title and ACP kind of a call.
func (t *translator) describe(name string, args json.RawMessage) (title, kind string, locs []location) {
	var a struct {
		Command  string `json:"command"`
		FilePath string `json:"file_path"`
	}
	_ = json.Unmarshal(args, &a)
	path := a.FilePath
	if path != "" && !filepath.IsAbs(path) {
		path = filepath.Join(t.cwd, path)
	}
	if path != "" {
		locs = []location{{Path: path}}
	}
	switch name {
	case "Bash":
		cmd := a.Command
		if i := strings.IndexByte(cmd, '\n'); i >= 0 {
			cmd = cmd[:i] + " …"
		}
		return "`" + cmd + "`", "execute", nil
	case "Read":
		return "Read " + path, "read", locs
	case "Write":
		return "Write " + path, "edit", locs
	case "Edit":
		return "Edit " + path, "edit", locs
	}
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
		if srv, tool, ok := strings.Cut(rest, "__"); ok {
			return srv + ": " + tool, "other", nil
		}
	}
	return name, "other", nil
}

// diffOf is the diff an edit call shows: Edit's old and new strings, or Write's new
// content over the file's current text (read live only; null is a new file). The current
// text is read with t.fileText, the tools' own confined and capped read, before any
// permission is asked: a file the tool could not read (outside the workspace, not a
// regular file, over Read's byte cap) shows no diff at all, so the prompt shows nothing
// policy has not allowed.
func (t *translator) diffOf(name string, args json.RawMessage, replay bool) *toolCallContent {
	var a struct {
		FilePath  string  `json:"file_path"`
		Content   *string `json:"content"`
		OldString *string `json:"old_string"`
		NewString *string `json:"new_string"`
	}
	if json.Unmarshal(args, &a) != nil || a.FilePath == "" {
		return nil
	}
	path := a.FilePath
	if !filepath.IsAbs(path) {
		path = filepath.Join(t.cwd, path)
	}
	switch {
	case name == "Edit" && a.OldString != nil && a.NewString != nil:
		return &toolCallContent{Type: "diff", Path: path, OldText: a.OldString, NewText: a.NewString}
	case name == "Write" && a.Content != nil:
		var old *string
		if !replay {
			if t.fileText == nil {
				return nil
			}
			s, exists, err := t.fileText(a.FilePath)
			if err != nil {
				return nil
			}
			if exists {
				old = &s
			}
		}
		return &toolCallContent{Type: "diff", Path: path, OldText: old, NewText: a.Content}
	}
	return nil
}

func (t *translator) toolCall(d dsh.ToolCall, replay bool) {
	args := json.RawMessage(d.Arguments)
	if !json.Valid(args) {
		args = nil
	}
	title, kind, locs := t.describe(d.Name, args)
	info := &callInfo{name: d.Name, title: title, args: args, diff: t.diffOf(d.Name, args, replay)}
	t.mu.Lock()
	t.calls[d.CallID] = info
	t.mu.Unlock()
	u := update{SessionUpdate: "tool_call", ToolCallID: d.CallID, Title: title, Kind: kind, Status: "pending",
		Locations: locs, RawInput: rawObject(args)}
	if info.diff != nil {
		u.Content = []toolCallContent{*info.diff}
	}
	if d.Name == "Bash" && t.terminalMeta {
		u.Content = []toolCallContent{{Type: "terminal", TerminalID: d.CallID}}
		u.Meta = map[string]any{"terminal_info": map[string]any{"terminal_id": d.CallID, "cwd": t.cwd}}
	}
	t.send(u)
	t.announce(d.CallID)
}

// rawObject returns args when they are a JSON object (rawInput is an object).
func rawObject(args json.RawMessage) json.RawMessage {
	if len(args) > 0 && args[0] == '{' {
		return args
	}
	return nil
}

func (t *translator) toolResult(d dsh.ToolResultLogged) {
	for _, b := range d.Message.Content {
		tr, ok := b.(dsh.ToolResultBlock)
		if !ok {
			continue
		}
		t.mu.Lock()
		info := t.calls[tr.ToolCallID]
		delete(t.calls, tr.ToolCallID)
		t.mu.Unlock()
		if info == nil {
			// A call whose tool_call was never sent (it cannot happen with the loop's
			// tool/call-first order): announce it first rather than refer to an unknown id.
			info = &callInfo{name: "tool"}
			t.send(update{SessionUpdate: "tool_call", ToolCallID: tr.ToolCallID, Title: "tool", Kind: "other", Status: "pending"})
			t.announce(tr.ToolCallID)
		}
		text := blocktext.Text(tr.Content, "\n")
		u := update{SessionUpdate: "tool_call_update", ToolCallID: tr.ToolCallID, Status: "completed", RawOutput: text}
		var content []toolCallContent
		switch {
		case tr.IsError:
			u.Status = "failed"
			content = []toolCallContent{{Type: "content", Content: &contentBlock{Type: "text", Text: text}}}
		case info.diff != nil:
			content = []toolCallContent{*info.diff}
		case info.name == "Bash" && t.terminalMeta:
			// No content: it would replace the terminal block.
			u.Meta = map[string]any{
				"terminal_output": map[string]any{"terminal_id": tr.ToolCallID, "data": text},
				"terminal_exit":   map[string]any{"terminal_id": tr.ToolCallID, "exit_code": exitCode(text), "signal": nil},
			}
		case info.name == "Bash":
			content = []toolCallContent{{Type: "content", Content: &contentBlock{Type: "text", Text: fenced(text)}}}
		default:
			for _, cb := range tr.Content {
				if c, ok := acpContent(cb); ok {
					content = append(content, toolCallContent{Type: "content", Content: &c})
				}
			}
		}
		if content != nil {
			u.Content = content
		}
		t.send(u)
	}
}

var (
	exitSuffix = regexp.MustCompile(`\n?\[exit code (-?\d+)\]$`)
	exitHeader = regexp.MustCompile(`\AChunk ID: [^\n]*\nWall time: [^\n]*\nProcess exited with code (-?\d+)\n`)
)

// exitCode reads the exit code from Bash's rendering: dsh's "[exit code N]" at the end,
// or the "Process exited with code N" of the Codex style's header (none is 0). Claude
// Code's style fails the call instead.
func exitCode(text string) int {
	m := exitSuffix.FindStringSubmatch(text)
	if m == nil {
		m = exitHeader.FindStringSubmatch(text)
	}
	if m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

// fenced wraps command output in a console code fence longer than any fence inside it.
func fenced(s string) string {
	fence := "```"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + "console\n" + strings.TrimSuffix(s, "\n") + "\n" + fence
}

// acpContent maps a dsh content block to an ACP one (text and images).
func acpContent(b dsh.ContentBlock) (contentBlock, bool) {
	//dshvet:partial ACP content is text and images; the other blocks have no ACP content (false)
	switch v := b.(type) {
	case dsh.TextBlock:
		return contentBlock{Type: "text", Text: v.Text}, true
	case dsh.ImageBlock:
		return contentBlock{Type: "image", Data: v.Data, MIMEType: v.MediaType}, true
	}
	return contentBlock{}, false
}
