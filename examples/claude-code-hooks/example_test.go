// Package claudecodehooks holds an example Claude Code hooks configuration; its test
// runs the hook scripts through the dsh Claude Code bridge.
package claudecodehooks_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshkit/dsh/bridges/claudecode"
	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/generated/dsh"
)

// agent records what the Stop listener asks of it.
type agent struct{ steered, halted []string }

func (a *agent) ID() string                                    { return "example" }
func (a *agent) Inject(context.Context, dsh.UserMessage) error { return nil }
func (a *agent) Steer(_ context.Context, m dsh.UserMessage) error {
	for _, c := range m.Content {
		if t, ok := c.(dsh.TextBlock); ok {
			a.steered = append(a.steered, t.Text)
		}
	}
	return nil
}
func (a *agent) Halt(reason string) { a.halted = append(a.halted, reason) }
func (a *agent) Cancel(cause dsh.AgentCancelCause, keepInbox bool) {
	a.halted = append(a.halted, "cancel")
}
func (a *agent) Inbox() (nextTurn, nextStep []dsh.UserMessage) { return nil, nil }

func TestExampleHooks(t *testing.T) {
	ctx := context.Background()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	ag := &agent{}
	var records []dsh.SessionEventData
	b, err := claudecode.New(claudecode.Config{
		Files:     []string{"settings.json"},
		Workspace: dir, // CLAUDE_PROJECT_DIR, which the commands use
		Session: func(context.Context, string) hookproto.Session {
			return hookproto.Session{SessionID: "example", Turn: 1, TurnOpen: true, Agent: ag}
		},
		Recorder: hookproto.RecorderFunc(func(_ context.Context, d dsh.SessionEventData) error {
			records = append(records, d)
			return nil
		}),
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	if d := b.Diagnostics(); len(d) != 0 {
		t.Fatalf("settings.json: %v", d)
	}
	reg := dsh.NewRegistry()
	b.Register(reg.Plugin(claudecode.Plugin))
	id := "example"
	exec := func(tool, args string) dsh.ToolExecution {
		return dsh.ToolExecution{CallID: "call-1", Name: tool, Arguments: json.RawMessage(args), AgentID: &id,
			RootCallID: "call-1", Token: dsh.NewToken()}
	}

	// The Bash guard.
	for command, denied := range map[string]bool{
		"rm -rf build/": true, "rm -fr /tmp/x": true, "cd src && rm -r -f out": true, "sudo rm -Rf /": true,
		"ls -la": false, "rm notes.txt": false, "git rm -r --cached x": false, "echo rm": false,
	} {
		args, _ := json.Marshal(map[string]string{"command": command})
		d, err := reg.RunPreTool(ctx, &dsh.PreToolPayload{Exec: exec("Bash", string(args))}, nil)
		if err != nil {
			t.Fatal(err)
		}
		deny, isDeny := d.(dsh.PreToolDeny)
		if isDeny != denied {
			t.Errorf("%q: %v, want denied=%v", command, d.Kind(), denied)
		}
		if isDeny && !strings.Contains(deny.Reason, "deletes recursively") {
			t.Errorf("%q: reason %q", command, deny.Reason)
		}
	}
	// The guard only sees Bash.
	if d, _ := reg.RunPreTool(ctx, &dsh.PreToolPayload{Exec: exec("Write", `{"command":"rm -rf /"}`)}, nil); d.Kind() != dsh.PreToolAllowKind {
		t.Errorf("Write: %v", d.Kind())
	}

	// The post-edit context follows the tool result, in Claude Code's words (the bridge's
	// default; Config.Canonical gives dsh's).
	for _, tool := range []string{"Edit", "Write"} {
		d, err := reg.RunPostTool(ctx, &dsh.PostToolPayload{Exec: exec(tool, `{"file_path":"src/main.go"}`),
			Result: dsh.ToolSuccess{Value: json.RawMessage(`{"success":true}`)}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		a, ok := d.(dsh.PostToolAccept)
		if !ok || len(a.AdditionalContexts) != 1 {
			t.Fatalf("%s: %#v", tool, d)
		}
		m := a.AdditionalContexts[0]
		text := m.Content[0].(dsh.TextBlock).Text
		if !strings.Contains(text, "PostToolUse:"+tool+" hook additional context: src/main.go was modified") || m.Source.(dsh.SourcePlugin).Plugin != "hooks-claude-code" {
			t.Errorf("%s: context %q from %v", tool, text, m.Source)
		}
	}
	if d, _ := reg.RunPostTool(ctx, &dsh.PostToolPayload{Exec: exec("Read", `{"file_path":"a"}`), Result: dsh.ToolSuccess{Value: json.RawMessage(`1`)}}, nil); len(d.(dsh.PostToolAccept).AdditionalContexts) != 0 {
		t.Errorf("Read got a context")
	}

	// The Stop hook continues once, then respects stop_hook_active.
	stop := func(continuations int) {
		t.Helper()
		if err := reg.NotifyTurnStopping(ctx, &dsh.TurnStoppingPayload{Agent: ag, AgentID: id, Turn: 1,
			Continuations: continuations, StopHookActive: continuations > 0}); err != nil {
			t.Fatal(err)
		}
	}
	stop(0)
	n := len(ag.steered)
	if n == 0 || !strings.Contains(ag.steered[n-1], "Stop hook feedback:\nBefore you stop: run the test suite") {
		t.Errorf("first stop: steered %q", ag.steered)
	}
	stop(1)
	if len(ag.steered) != n || len(ag.halted) != 0 {
		t.Errorf("second stop continued again: %q %q", ag.steered, ag.halted)
	}

	// Every run in a turn is recorded: invoked, then result.
	var results int
	for _, r := range records {
		if _, ok := r.(dsh.HookResult); ok {
			results++
		}
	}
	if results == 0 || results*2 != len(records) {
		t.Errorf("%d records, %d results", len(records), results)
	}
}
