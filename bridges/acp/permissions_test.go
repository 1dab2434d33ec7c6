package acp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dshkit/dsh/bridges/acp"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/tools"
)

// TestPermissions: the default policy asks for Bash, not for Read; a rejected call does
// not run; an unknown option is a reject; the tool_call precedes the request.
func TestPermissions(t *testing.T) {
	dir := t.TempDir()
	c := start(t, dir, acp.PermissionsAsk, scripted(
		llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{
			{ID: "r", Name: "Read", Arguments: json.RawMessage(`{"file_path":"x.txt"}`)},
			{ID: "b", Name: "Bash", Arguments: json.RawMessage(`{"command":"touch ran"}`)},
		}},
		llm.ScriptedResponse{Text: "ok"},
	))
	id := c.newSession(dir)
	p := c.request("session/prompt", prompt(id, "go"))
	var asked []string
	announced := map[string]bool{}
	for {
		f := c.next()
		if params, _ := f["params"].(map[string]any); params != nil {
			if u, _ := params["update"].(map[string]any); u != nil && u["sessionUpdate"] == "tool_call" {
				announced[u["toolCallId"].(string)] = true
			}
			if f["method"] == "session/request_permission" {
				call := params["toolCall"].(map[string]any)["toolCallId"].(string)
				asked = append(asked, call)
				if !announced[call] {
					t.Errorf("permission for %s before its tool_call", call)
				}
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": f["id"],
					"result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "something-else"}}})
				c.send(string(b))
			}
		}
		if responseTo(p)(f) {
			break
		}
	}
	if strings.Join(asked, ",") != "b" {
		t.Errorf("asked for %v", asked)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("a call answered with an unknown option ran")
	}
}

// chanModel streams the chunks pushed on its channel; a nil chunk finishes the response.
type chanModel struct{ chunks chan dsh.AssistantChunk }

func (m chanModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[dsh.AssistantChunk, error] {
	return func(yield func(dsh.AssistantChunk, error) bool) {
		for {
			select {
			case c := <-m.chunks:
				if c == nil {
					yield(dsh.ChunkFinish{Reason: dsh.FinishReasonStop}, nil)
					return
				}
				if !yield(c, nil) {
					return
				}
			case <-ctx.Done():
				yield(dsh.ChunkFinish{Reason: dsh.FinishReasonAborted}, nil)
				return
			}
		}
	}
}

// chunkTap takes the agent_message_chunk frames off the server's output (signalling each
// on its channel) and passes every other frame on.
type chunkTap struct {
	w      io.Writer
	chunks chan struct{}
}

func (t chunkTap) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(`"agent_message_chunk"`)) {
		t.chunks <- struct{}{}
		return len(p), nil
	}
	return t.w.Write(p)
}

// BenchmarkChunkToUpdate measures the latency from a model chunk arriving at the agent
// loop (the model's stream yields it) to its session/update frame written on the
// connection: the log append, the translation, the encoding and the write. One op is one
// chunk, sent once the previous frame was written; every 256 chunks the response ends and
// a new prompt starts (outside the timer), so that responses have a realistic length.
func BenchmarkChunkToUpdate(b *testing.B) {
	dir := b.TempDir()
	m := chanModel{chunks: make(chan dsh.AssistantChunk)}
	written := make(chan struct{})
	c := startWith(b, dir, acp.PermissionsAllow, func() llm.Model { return m },
		func(w io.Writer) io.Writer { return chunkTap{w: w, chunks: written} })
	id := c.newSession(dir)
	p := c.request("session/prompt", prompt(id, "stream"))
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i > 0 && i%256 == 0 {
			b.StopTimer()
			m.chunks <- nil
			c.until(responseTo(p))
			p = c.request("session/prompt", prompt(id, "stream"))
			b.StartTimer()
		}
		m.chunks <- dsh.ChunkTextDelta{Text: "token "}
		<-written
	}
	b.StopTimer()
	m.chunks <- nil
	c.until(responseTo(p))
}

// blockTool runs until its call is cancelled.
var blockTool = tools.Definition{Name: "Block", Description: "blocks until cancelled",
	Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}

// BenchmarkCancelToResponse measures the time from session/cancel to the cancelled
// session/prompt response while a tool call runs (the timer runs only over that span).
func BenchmarkCancelToResponse(b *testing.B) {
	dir := b.TempDir()
	var mu sync.Mutex
	n := 0
	model := func() llm.Model {
		return modelFunc(func(ctx context.Context, req llm.Request) iter.Seq2[dsh.AssistantChunk, error] {
			mu.Lock()
			n++
			call := fmt.Sprintf("blk_%d", n)
			mu.Unlock()
			return func(yield func(dsh.AssistantChunk, error) bool) {
				if yield(dsh.ChunkToolCall{ID: call, Name: "Block", Arguments: "{}"}, nil) {
					yield(dsh.ChunkFinish{Reason: dsh.FinishReasonToolCalls}, nil)
				}
			}
		})
	}
	c := start(b, dir, acp.PermissionsAllow, model, blockTool)
	id := c.newSession(dir)
	inProgress := func(f map[string]any) bool { return strings.Contains(fmt.Sprint(f["params"]), "in_progress") }
	cancel := fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`, id)
	b.ResetTimer()
	b.StopTimer()
	for range b.N {
		p := c.request("session/prompt", prompt(id, "block"))
		c.until(inProgress)
		b.StartTimer()
		c.send(cancel)
		seen := c.until(responseTo(p))
		b.StopTimer()
		if r := stopReason(seen[len(seen)-1]); r != "cancelled" {
			b.Fatalf("stop reason %q", r)
		}
	}
}

type modelFunc func(ctx context.Context, req llm.Request) iter.Seq2[dsh.AssistantChunk, error]

func (f modelFunc) Stream(ctx context.Context, req llm.Request) iter.Seq2[dsh.AssistantChunk, error] {
	return f(ctx, req)
}

// TestPermissionTransportFailure: a client that answers session/request_permission with
// an error denies the call (unavailable), recorded in the log's approval/decided.
func TestPermissionTransportFailure(t *testing.T) {
	dir := t.TempDir()
	c := start(t, dir, acp.PermissionsAsk, scripted(
		llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{ID: "b", Name: "Bash", Arguments: json.RawMessage(`{"command":"touch ran"}`)}}},
		llm.ScriptedResponse{Text: "ok"},
	))
	id := c.newSession(dir)
	p := c.request("session/prompt", prompt(id, "go"))
	var failed bool
	for {
		f := c.next()
		if f["method"] == "session/request_permission" {
			c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"error":{"code":-32603,"message":"ui crashed"}}`, f["id"]))
		}
		if strings.Contains(fmt.Sprint(f["params"]), "status:failed") {
			failed = true
		}
		if responseTo(p)(f) {
			if stopReason(f) != "end_turn" {
				t.Errorf("stop reason: %v", f)
			}
			break
		}
	}
	if !failed {
		t.Error("the call did not fail")
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("the call ran without a permission")
	}
	c.in.Close()
	<-c.served
	b, err := os.ReadFile(filepath.Join(dir, "sessions", id+".jsonl"))
	if err != nil || !strings.Contains(string(b), `"outcome":"unavailable"`) {
		t.Errorf("approval/decided unavailable not logged (%v)", err)
	}
}

// TestCancelWithPendingPermission: a cancel while a permission request is unanswered
// settles the request as cancelled, the call does not run, and the prompt answers
// cancelled.
func TestCancelWithPendingPermission(t *testing.T) {
	dir := t.TempDir()
	c := start(t, dir, acp.PermissionsAsk, scripted(
		llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{ID: "b", Name: "Bash", Arguments: json.RawMessage(`{"command":"touch ran"}`)}}},
	))
	id := c.newSession(dir)
	p := c.request("session/prompt", prompt(id, "go"))
	for f := c.next(); f["method"] != "session/request_permission"; f = c.next() {
	}
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`, id))
	var last map[string]any
	for f := c.next(); ; f = c.next() {
		if responseTo(p)(f) {
			last = f
			break
		}
	}
	if stopReason(last) != "cancelled" {
		t.Errorf("stop reason: %v", last)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("the call ran")
	}
	c.in.Close()
	<-c.served
	b, _ := os.ReadFile(filepath.Join(dir, "sessions", id+".jsonl"))
	if !strings.Contains(string(b), `"outcome":"cancelled"`) {
		t.Error("approval/decided cancelled not logged")
	}
}
