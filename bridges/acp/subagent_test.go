package acp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshkit/dsh/bridges/acp"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/subagent"
	"github.com/dshkit/dsh/runtime/tools"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// TestSubagentToolCalls: a child's tool calls go through the editor's permission
// requests, and show as tool calls of the prompt with ids of their own and _meta.dsh
// naming the child and the call that started it.
func TestSubagentToolCalls(t *testing.T) {
	dir := t.TempDir()
	model := llm.NewScripted(
		llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{ID: "c1", Name: "Agent", Arguments: json.RawMessage(`{"prompt":"sub task"}`)}}},
		llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{ID: "c2", Name: "Bash", Arguments: json.RawMessage(`{"command":"touch child_ran"}`)}}},
		llm.ScriptedResponse{Text: "child answer"},
		llm.ScriptedResponse{Text: "parent done"},
	)
	logs := &subagent.MemoryLogs{} // the children's logs, which both servers read
	newServer := func() *acp.Server {
		srv, err := acp.NewServer(acp.Config{
			SessionsDir: filepath.Join(dir, "sessions"),
			Permissions: acp.PermissionsAsk,
			Setup: func(ctx context.Context, spec acp.SessionSpec) (*acp.Env, error) {
				reg := tools.NewRegistry()
				if _, err := builtin.Register(reg, builtin.Options{Workspace: spec.CWD}); err != nil {
					return nil, err
				}
				hooks := dsh.NewRegistry()
				var childRuntime func() *tools.Runtime
				var observe func(string, dsh.Lineage, *session.Log) func()
				runner, err := subagent.New(subagent.Config{Registry: hooks, Model: model,
					Tools: func() *tools.Runtime { return childRuntime() },
					LLM:   dsh.LLMCallConfig{Provider: "test", Model: "m"},
					Logs:  logs, ParentLog: spec.Log, ToolName: "Agent",
					OnChild: func(id string, l dsh.Lineage, log *session.Log) func() { return observe(id, l, log) }})
				if err != nil {
					return nil, err
				}
				def := runner.Definition(subagent.ClaudeCode)
				def.Name = "Agent"
				if _, err := reg.Register(def); err != nil {
					return nil, err
				}
				return &acp.Env{Hooks: hooks, Tools: reg, Model: model, LLM: dsh.LLMCallConfig{Provider: "test", Model: "m"},
					Close:           runner.Close,
					SetChildRuntime: func(rt func() *tools.Runtime) { childRuntime = rt },
					ObserveChildren: func(fn func(string, dsh.Lineage, *session.Log) func()) { observe = fn },
					ChildEvents: func(id string) iter.Seq2[session.Event, error] {
						return func(yield func(session.Event, error) bool) {
							l, ok := logs.Log(id)
							if !ok {
								yield(session.Event{}, fmt.Errorf("no log of child session %s", id))
								return
							}
							for e := range l.Events() {
								if !yield(e, nil) {
									return
								}
							}
						}
					},
				}, nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		return srv
	}
	c := serve(t, newServer(), nil)
	id := c.newSession(dir)
	// until answers the permission requests with allow.
	frames := c.until(responseTo(c.request("session/prompt", prompt(id, "go"))))
	if r := frames[len(frames)-1]; stopReason(r) != "end_turn" {
		t.Fatalf("stop reason %v", r)
	}
	var childCall string
	var asked []string
	for _, f := range frames {
		params, _ := f["params"].(map[string]any)
		if params == nil {
			continue
		}
		if f["method"] == "session/request_permission" {
			asked = append(asked, params["toolCall"].(map[string]any)["toolCallId"].(string))
		}
		u, _ := params["update"].(map[string]any)
		if u == nil || u["sessionUpdate"] != "tool_call" {
			continue
		}
		meta, _ := u["_meta"].(map[string]any)
		if meta == nil {
			continue
		}
		d := meta["dsh"].(map[string]any)
		if d["parentToolCallId"] != "c1" || d["agentType"] != subagent.GeneralPurpose || !strings.HasPrefix(d["agentId"].(string), "a") {
			t.Errorf("the child's tool_call _meta = %v", meta)
		}
		childCall = u["toolCallId"].(string)
	}
	if !strings.HasSuffix(childCall, "/c2") || !strings.HasPrefix(childCall, "a") {
		t.Fatalf("the child's call was shown as %q, want <agentId>/c2", childCall)
	}
	if strings.Join(asked, ",") != "c1,"+childCall {
		t.Errorf("permission requests for %v, want the Agent call and the child's Bash", asked)
	}
	if _, err := os.Stat(filepath.Join(dir, "child_ran")); err != nil {
		t.Errorf("the child's Bash did not run after it was allowed: %v", err)
	}

	// session/load on another server shows the child's call again, as it was shown live:
	// its id, its _meta, its result.
	c.in.Close()
	<-c.served
	c = serve(t, newServer(), nil)
	c.call("initialize", map[string]any{"protocolVersion": 1})
	seen := c.until(responseTo(c.request("session/load", map[string]any{"sessionId": id, "cwd": dir, "mcpServers": []any{}})))
	if r := seen[len(seen)-1]; r["error"] != nil {
		t.Fatalf("load: %v", r)
	}
	var replayed, completed bool
	for _, f := range seen {
		params, _ := f["params"].(map[string]any)
		u, _ := params["update"].(map[string]any)
		if u == nil || u["toolCallId"] != childCall {
			continue
		}
		meta, _ := u["_meta"].(map[string]any)
		if d, _ := meta["dsh"].(map[string]any); d["parentToolCallId"] != "c1" {
			t.Errorf("the replayed child's call has _meta %v", meta)
		}
		replayed = replayed || u["sessionUpdate"] == "tool_call"
		completed = completed || u["status"] == "completed"
	}
	if !replayed || !completed {
		t.Errorf("session/load: the child's call %s shown %v, completed %v; want both:\n%v", childCall, replayed, completed, seen)
	}
}
