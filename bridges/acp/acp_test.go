package acp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshkit/dsh/bridges/acp"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/session"
)

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	c := start(t, dir, acp.PermissionsAllow, scripted())
	c.send("this is not json")
	if f := c.next(); errCode(f) != acp.CodeParseError || f["id"] != nil {
		t.Fatalf("garbage: %v", f)
	}
	if f := c.call("session/new", map[string]any{"cwd": dir}); errCode(f) != acp.CodeInvalidRequest {
		t.Errorf("before initialize: %v", f)
	}
	if f := c.call("initialize", map[string]any{"protocolVersion": 7}); fmt.Sprint(f["result"].(map[string]any)["protocolVersion"]) != "1" {
		t.Errorf("initialize with version 7: %v", f)
	}
	if f := c.call("initialize", map[string]any{}); errCode(f) != acp.CodeInvalidParams {
		t.Errorf("initialize without a version: %v", f)
	}
	c.send(`[{"jsonrpc":"2.0","id":99,"method":"initialize"}]`)
	if f := c.next(); errCode(f) != acp.CodeInvalidRequest {
		t.Errorf("batch: %v", f)
	}
	if f := c.call("nope/nope", map[string]any{}); errCode(f) != acp.CodeMethodNotFound {
		t.Errorf("unknown method: %v", f)
	}
	if f := c.call("session/new", map[string]any{"cwd": "relative/dir", "mcpServers": []any{}}); errCode(f) != acp.CodeInvalidParams ||
		!strings.Contains(f["error"].(map[string]any)["message"].(string), "absolute") {
		t.Errorf("relative cwd: %v", f)
	}
	if f := c.call("session/prompt", prompt("sess_missing", "hi")); errCode(f) != acp.CodeNotFound {
		t.Errorf("unknown session: %v", f)
	}
	if f := c.call("session/load", map[string]any{"sessionId": "sess_missing", "cwd": dir, "mcpServers": []any{}}); errCode(f) != acp.CodeNotFound {
		t.Errorf("load unknown: %v", f)
	}
	if f := c.call("session/load", map[string]any{"sessionId": "../escape", "cwd": dir, "mcpServers": []any{}}); errCode(f) != acp.CodeInvalidParams {
		t.Errorf("load bad id: %v", f)
	}
	id := c.newSession(dir)
	if f := c.call("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "audio", "data": "", "mimeType": "audio/wav"}}}); errCode(f) != acp.CodeInvalidParams {
		t.Errorf("audio prompt: %v", f)
	}
	// The connection still works.
	if f := c.call("session/prompt", prompt(id, "hi")); stopReason(f) != "end_turn" {
		t.Errorf("prompt after bad input: %v", f)
	}
}

// TestRequestsRightAfterInitialize: a client that sends session/new without waiting for
// initialize's response still gets a session (requests run concurrently, but initialize
// is handled in frame order).
func TestRequestsRightAfterInitialize(t *testing.T) {
	dir := t.TempDir()
	c := start(t, dir, acp.PermissionsAllow, scripted())
	for i := 0; i < 20; i++ {
		c.request("initialize", map[string]any{"protocolVersion": 1})
		id := c.request("session/new", map[string]any{"cwd": dir, "mcpServers": []any{}})
		seen := c.until(responseTo(id))
		if r := seen[len(seen)-1]; r["result"] == nil {
			t.Fatalf("round %d: session/new right after initialize: %v", i, r)
		}
	}
}

func TestStopReasons(t *testing.T) {
	dir := t.TempDir()
	c := start(t, dir, acp.PermissionsAllow, scripted(
		llm.ScriptedResponse{Text: "cut", Finish: dsh.FinishReasonMaxTokens},
		llm.ScriptedResponse{Error: &llm.ScriptedError{Message: "provider down", Code: "UNAVAILABLE"}},
		llm.ScriptedResponse{Text: "fine"},
	))
	id := c.newSession(dir)
	if f := c.call("session/prompt", prompt(id, "a")); stopReason(f) != "max_tokens" {
		t.Errorf("max tokens: %v", f)
	}
	f := c.call("session/prompt", prompt(id, "b"))
	if errCode(f) != acp.CodeInternalError || !strings.Contains(fmt.Sprint(f["error"]), "provider down") {
		t.Errorf("error turn: %v", f)
	}
	if f := c.call("session/prompt", prompt(id, "c")); stopReason(f) != "end_turn" {
		t.Errorf("after error: %v", f)
	}
}

// TestOverlappingPrompts: a second prompt while one runs is refused; after a cancel, a new
// prompt waits for the cancelled one to settle and then runs.
func TestOverlappingPrompts(t *testing.T) {
	dir := t.TempDir()
	c := start(t, dir, acp.PermissionsAllow, scripted(
		llm.ScriptedResponse{Text: "thinking hard", Hang: true},
		llm.ScriptedResponse{Text: "next one"},
	))
	id := c.newSession(dir)
	first := c.request("session/prompt", prompt(id, "one"))
	c.until(func(f map[string]any) bool { return strings.Contains(fmt.Sprint(f["params"]), "agent_message_chunk") })
	if f := c.call("session/prompt", prompt(id, "two")); errCode(f) != acp.CodeInvalidParams {
		t.Fatalf("overlapping prompt: %v", f)
	}
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`, id))
	third := c.request("session/prompt", prompt(id, "three"))
	got := map[int]string{}
	c.until(func(f map[string]any) bool {
		if v, ok := f["id"].(float64); ok && f["method"] == nil {
			got[int(v)] = stopReason(f)
		}
		return len(got) == 2
	})
	if got[first] != "cancelled" || got[third] != "end_turn" {
		t.Errorf("stop reasons = %v", got)
	}
}

// TestEOFMidTurn: a client that disappears mid-turn cancels it, the prompt is answered,
// Serve returns and the log is consistent (replays, last turn closed).
func TestEOFMidTurn(t *testing.T) {
	dir := t.TempDir()
	c := start(t, dir, acp.PermissionsAllow, scripted(llm.ScriptedResponse{Text: "forever", Hang: true}))
	id := c.newSession(dir)
	p := c.request("session/prompt", prompt(id, "go"))
	c.until(func(f map[string]any) bool { return strings.Contains(fmt.Sprint(f["params"]), "agent_message_chunk") })
	c.in.Close()
	f := c.until(responseTo(p))
	if r := stopReason(f[len(f)-1]); r != "cancelled" {
		t.Errorf("stop reason = %q", r)
	}
	select {
	case err := <-c.served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	file, rec, err := session.OpenFile(filepath.Join(dir, "sessions", id+".jsonl"))
	if err != nil || rec.Truncated() {
		t.Fatalf("log: %v %+v", err, rec)
	}
	lg, err := session.Open(context.Background(), file)
	if err != nil {
		t.Fatal(err)
	}
	defer lg.Close()
	st, err := session.Replay(lg.Events())
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	var last session.Event
	for e := range lg.Events() {
		if e.Type == dsh.TurnEndType {
			last = e
		}
	}
	if !strings.Contains(string(last.Data), `"aborted"`) {
		t.Errorf("last turn/end = %s (state %+v)", last.Data, st)
	}
}

// TestMCPServerThatDoesNotStart: session/new with an MCP server that cannot start still
// creates the session (the failure is logged), and prompts work.
func TestMCPServerThatDoesNotStart(t *testing.T) {
	dir := t.TempDir()
	c := start(t, dir, acp.PermissionsAllow, scripted(llm.ScriptedResponse{Text: "fine"}))
	c.call("initialize", map[string]any{"protocolVersion": 1})
	r := c.call("session/new", map[string]any{"cwd": dir, "mcpServers": []any{
		map[string]any{"name": "ghost", "command": filepath.Join(dir, "no-such-server"), "args": []any{}, "env": []any{}},
	}})
	res, _ := r["result"].(map[string]any)
	if res == nil {
		t.Fatalf("session/new: %v", r)
	}
	if f := c.call("session/prompt", prompt(res["sessionId"].(string), "hi")); stopReason(f) != "end_turn" {
		t.Errorf("prompt: %v", f)
	}
	if f := c.call("session/new", map[string]any{"cwd": dir, "mcpServers": []any{map[string]any{"name": "x", "args": []any{}, "env": []any{}}}}); errCode(f) != acp.CodeInvalidParams {
		t.Errorf("mcpServers without a command: %v", f)
	}
}

// TestTerminalMeta: a client advertising _meta.terminal_output gets Bash calls as terminal
// cards with Zed's _meta convention (output and exit code on the result, no content).
func TestTerminalMeta(t *testing.T) {
	dir := t.TempDir()
	c := start(t, dir, acp.PermissionsAllow, scripted(
		llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{ID: "t1", Name: "Bash", Arguments: json.RawMessage(`{"command":"echo out; exit 3"}`)}}},
		llm.ScriptedResponse{Text: "ok"},
	))
	c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{"_meta": map[string]any{"terminal_output": true}}})
	r := c.call("session/new", map[string]any{"cwd": dir, "mcpServers": []any{}})
	id := r["result"].(map[string]any)["sessionId"].(string)
	seen := c.until(responseTo(c.request("session/prompt", prompt(id, "go"))))
	var call, done map[string]any
	for _, f := range seen {
		params, _ := f["params"].(map[string]any)
		u, _ := params["update"].(map[string]any)
		if u == nil || u["toolCallId"] != "t1" {
			continue
		}
		switch {
		case u["sessionUpdate"] == "tool_call":
			call = u
		case u["status"] == "completed":
			done = u
		}
	}
	b, _ := json.Marshal(call)
	if !strings.Contains(string(b), `"content":[{"terminalId":"t1","type":"terminal"}]`) || !strings.Contains(string(b), `"terminal_info":{"cwd":`) {
		t.Errorf("tool_call = %s", b)
	}
	b, _ = json.Marshal(done)
	if done["content"] != nil || !strings.Contains(string(b), `"exit_code":3`) || !strings.Contains(string(b), `"data":"out\n[exit code 3]"`) {
		t.Errorf("result = %s", b)
	}
}

// TestSeveralSessions: two sessions of one connection run prompts at the same time, each
// with its own model, workspace and log.
func TestSeveralSessions(t *testing.T) {
	dir := t.TempDir()
	c := start(t, dir, acp.PermissionsAllow, func() llm.Model {
		return llm.NewScripted(llm.ScriptedResponse{Text: "slow answer", DelayMS: 50})
	})
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.MkdirAll(a, 0o755)
	os.MkdirAll(b, 0o755)
	ida := c.newSession(a)
	r := c.call("session/new", map[string]any{"cwd": b, "mcpServers": []any{}})
	idb := r["result"].(map[string]any)["sessionId"].(string)
	pa := c.request("session/prompt", prompt(ida, "one"))
	pb := c.request("session/prompt", prompt(idb, "two"))
	got := map[int]string{}
	c.until(func(f map[string]any) bool {
		if v, ok := f["id"].(float64); ok && f["method"] == nil {
			got[int(v)] = stopReason(f)
		}
		return len(got) == 2
	})
	if got[pa] != "end_turn" || got[pb] != "end_turn" || ida == idb {
		t.Errorf("stop reasons %v, ids %s %s", got, ida, idb)
	}
}

// TestLoadAndContinue: a second server on the same sessions directory loads a session
// (replaying it before the response) and continues it, even when its model reuses a
// call id of the replayed history.
func TestLoadAndContinue(t *testing.T) {
	dir := t.TempDir()
	script := scripted(
		llm.ScriptedResponse{Text: "reading", ToolCalls: []llm.ScriptedToolCall{{ID: "x1", Name: "Read", Arguments: json.RawMessage(`{"file_path":"f.txt"}`)}}},
		llm.ScriptedResponse{Text: "read it"},
	)
	os.WriteFile(filepath.Join(dir, "f.txt"), []byte("content\n"), 0o644)
	c := start(t, dir, acp.PermissionsAllow, script)
	id := c.newSession(dir)
	if f := c.call("session/prompt", prompt(id, "first prompt")); stopReason(f) != "end_turn" {
		t.Fatalf("first: %v", f)
	}
	c.in.Close()
	<-c.served

	c = start(t, dir, acp.PermissionsAllow, script)
	c.call("initialize", map[string]any{"protocolVersion": 1})
	seen := c.until(responseTo(c.request("session/load", map[string]any{"sessionId": id, "cwd": dir, "mcpServers": []any{}})))
	if r := seen[len(seen)-1]; r["error"] != nil {
		t.Fatalf("load: %v", r)
	}
	replay := fmt.Sprint(seen)
	for _, want := range []string{"user_message_chunk", "first prompt", "tool_call", "x1", "completed", "reading"} {
		if !strings.Contains(replay, want) {
			t.Errorf("replay lacks %q", want)
		}
	}
	seen = c.until(responseTo(c.request("session/prompt", prompt(id, "again"))))
	if r := seen[len(seen)-1]; stopReason(r) != "end_turn" {
		t.Errorf("continued prompt: %v", r)
	}
	if !strings.Contains(fmt.Sprint(seen), "x1") {
		t.Error("the continued turn did not call the tool")
	}
}

// TestCompactCommand: /compact is advertised; typed as a prompt it compacts the session
// (the summarizer's answer becomes the checkpoint the next prompt's request starts with)
// and answers end_turn with a message; on a fresh session there is nothing to compact.
func TestCompactCommand(t *testing.T) {
	dir := t.TempDir()
	model := llm.NewScripted(llm.ScriptedResponse{Text: strings.Repeat("a long answer ", 40)}, llm.ScriptedResponse{Text: "two"},
		llm.ScriptedResponse{Text: "THE SUMMARY"}, llm.ScriptedResponse{Text: "three"}).RecordRequests()
	c := start(t, dir, acp.PermissionsAllow, func() llm.Model { return model })
	if r := c.call("initialize", map[string]any{"protocolVersion": 1}); r["result"] == nil {
		t.Fatalf("initialize: %v", r)
	}
	c.request("session/new", map[string]any{"cwd": dir, "mcpServers": []any{}})
	var id string
	cmds := c.until(func(f map[string]any) bool {
		if r, ok := f["result"].(map[string]any); ok && r["sessionId"] != nil {
			id = r["sessionId"].(string)
		}
		p, _ := f["params"].(map[string]any)
		u, _ := p["update"].(map[string]any)
		return u["sessionUpdate"] == "available_commands_update"
	})
	if last := fmt.Sprint(cmds[len(cmds)-1]); !strings.Contains(last, "name:compact") {
		t.Fatalf("available commands: %s", last)
	}
	f := c.call("session/prompt", prompt(id, "/compact"))
	if stopReason(f) != "end_turn" {
		t.Fatalf("/compact on a fresh session: %v", f)
	}
	for _, p := range []string{"one", "two"} {
		if f := c.call("session/prompt", prompt(id, p)); stopReason(f) != "end_turn" {
			t.Fatalf("prompt %s: %v", p, f)
		}
	}
	seen := c.until(responseTo(c.request("session/prompt", prompt(id, "/compact keep the numbers"))))
	if stopReason(seen[len(seen)-1]) != "end_turn" || !strings.Contains(fmt.Sprint(seen), "Compacted the conversation") {
		t.Fatalf("/compact: %v", seen)
	}
	if f := c.call("session/prompt", prompt(id, "three")); stopReason(f) != "end_turn" {
		t.Fatalf("prompt three: %v", f)
	}
	reqs := model.Requests()
	if len(reqs) != 4 || !strings.Contains(fmt.Sprint(reqs[2].Messages), "keep the numbers") {
		t.Fatalf("%d requests; summarizer %v", len(reqs), reqs[len(reqs)-1].Messages)
	}
	first := reqs[3].Messages[0].Content[0].(dsh.TextBlock).Text
	if !strings.Contains(first, "THE SUMMARY") {
		t.Fatalf("the request after /compact starts with %q", first)
	}
}
