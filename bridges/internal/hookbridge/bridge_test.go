package hookbridge

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshkit/dsh/bridges/dialect"
	ht "github.com/dshkit/dsh/bridges/internal/hooktest"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
	"github.com/dshkit/dsh/runtime/approval"
)

// fakeTable is a small dialect of four events at four extension points: Begin at
// agent/session-start, Prompt at agent/pre-step, Gate at tools/pre-execute (exit 2
// denies; {"decision":"ask"|"deny","reason":...} asks or denies; "context" is a
// context) and After at tools/post-execute.
func fakeTable() *hookmap.Bridge {
	rules := []hookmap.Rule{
		{When: "decision", Is: `"ask"`, Then: "ask", Reason: "reason"},
		{When: "decision", Is: `"deny"`, Then: "deny", Reason: "reason"},
	}
	decode := func(data []byte) (any, error) {
		var v map[string]any
		return v, json.Unmarshal(data, &v)
	}
	return &hookmap.Bridge{
		Dialect: "fake", Plugin: "fake", DefaultTimeoutSec: 10, Exit2EmptyStderr: "failed",
		JSONPrefixes: []string{"{"}, InvalidJSON: "error", TimeoutUnit: "s", NonPositiveTimeout: "default",
		Events: []hookmap.Event{
			{Name: "Begin", Point: dsh.SessionStartEventName, Exit2: "error", Contexts: []string{"context"}, DecodeOutput: decode},
			{Name: "Prompt", Point: dsh.PreStepEventName, Exit2: "block"},
			{Name: "Gate", Point: dsh.PreToolEventName, Matcher: "tool_name", Exit2: "deny", Rules: rules, Contexts: []string{"context"}, DecodeOutput: decode},
			{Name: "After", Point: dsh.PostToolEventName, Matcher: "tool_name", Exit2: "block"},
		},
	}
}

// fakeBehavior is the fake dialect's behaviour: its stdin is the event name and the
// tool's name and input; an asked call's denied result reads "asked: <reason>".
func fakeBehavior() Behavior {
	return Behavior{
		Name: "fake", Table: fakeTable(),
		Encode: func(in Input) ([]byte, error) {
			return json.Marshal(map[string]any{"hook_event_name": in.Event, "tool_name": in.ToolName, "tool_input": in.ToolInput})
		},
		Render: Render{AskDenied: func(reason string) string { return "asked: " + reason }},
	}
}

// fakeBridge loads the fake dialect with groups, registers it on a harness's registry
// and returns both and the unregister func.
func fakeBridge(t *testing.T, groups ...ht.Group) (*ht.Harness, *Bridge, func()) {
	t.Helper()
	dir := t.TempDir()
	h := ht.New(dir)
	b, err := New(fakeBehavior(), dialect.Config{Files: []string{ht.Config(t, t.TempDir(), "hooks.json", groups...)},
		Workspace: dir, Session: h.Session, Recorder: h.Rec, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if d := b.Diagnostics(); len(d) > 0 {
		t.Fatalf("diagnostics: %v", d)
	}
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	return h, b, b.Register(h.Reg.Plugin("fake"))
}

// rewritePhase runs tools/rewrite-input for the call ex, as the runtime does before
// pre-execute.
func rewritePhase(t *testing.T, h *ht.Harness, ex dsh.ToolExecution) {
	t.Helper()
	p := &dsh.RewriteInputPayload{CallID: ex.CallID, Name: ex.Name, Input: ex.Arguments, ModelInput: ex.Arguments, AgentID: ex.AgentID, Turn: h.Turn, Step: 1}
	if err := h.Reg.RunRewriteInput(context.Background(), p, 0, func(context.Context, string, dsh.RewriteDecision) (*dsh.RewriteInputPayload, error) {
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
}

// An event with hooks gets the listener of its point (Gate: rewrite-input and
// pre-execute, with the post-execute and result listeners that deliver its state); an
// event without hooks (Prompt, After) gets none; unregistering removes them all.
func TestRegisterFromTable(t *testing.T) {
	_, b, _ := fakeBridge(t) // no hooks at all
	if len(b.points) != 0 {
		t.Fatalf("points %v, want none without hooks", b.points)
	}
	h, _, unregister := fakeBridge(t, ht.G("Begin", "", "true"), ht.G("Gate", "", "true"))
	want := map[string]bool{
		dsh.SessionStartEventName: true, dsh.RewriteInputEventName: true, dsh.PreToolEventName: true,
		dsh.PostToolEventName: true, dsh.ToolResultEventName: true,
		dsh.PreStepEventName: false, dsh.ExecuteEventName: false, dsh.TurnStoppingEventName: false,
	}
	for point, listens := range want {
		if got := h.Reg.Listens(point); got != listens {
			t.Errorf("Listens(%s) = %v, want %v", point, got, listens)
		}
	}
	unregister()
	for point := range want {
		if h.Reg.Listens(point) {
			t.Errorf("after unregister, Listens(%s) = true", point)
		}
	}
}

// A PreToolUse-like deny fires its hook once, in the rewrite phase, and the pre-execute
// listener replays the denial.
func TestPreToolDenyReplayed(t *testing.T) {
	count := filepath.Join(t.TempDir(), "count")
	h, b, _ := fakeBridge(t, ht.G("Gate", "", "echo run >> '"+count+"'; echo no >&2; exit 2"))
	ex := h.Exec("Bash", `{"command":"ls"}`)
	rewritePhase(t, h, ex)
	if n := b.calls.len(); n != 1 {
		t.Fatalf("%d calls kept after the rewrite phase, want 1 (its report)", n)
	}
	d, err := h.PreTool(context.Background(), ex)
	if err != nil {
		t.Fatal(err)
	}
	if deny, ok := d.(dsh.PreToolDeny); !ok || deny.Reason != "no" {
		t.Fatalf("pre-execute decision %s, want deny \"no\"", ht.Describe(d))
	}
	if data, _ := os.ReadFile(count); strings.Count(string(data), "run") != 1 {
		t.Errorf("the hook ran %d times, want once", strings.Count(string(data), "run"))
	}
}

// A call's state (its contexts, its ask) lives from pre-execute to its result and no
// longer: post-execute ends it; the result listener ends what post-execute never saw.
func TestCallStateEnds(t *testing.T) {
	h, b, _ := fakeBridge(t, ht.G("Gate", "", `echo '{"context":"note"}'`))
	ctx := context.Background()
	ex := h.Exec("Read", `{}`)
	rewritePhase(t, h, ex)
	if _, err := h.PreTool(ctx, ex); err != nil {
		t.Fatal(err)
	}
	if n := b.calls.len(); n != 1 {
		t.Fatalf("%d calls kept after pre-execute, want 1 (its contexts)", n)
	}
	d, err := h.PostTool(ctx, ex, ht.Success(`"ok"`))
	if err != nil {
		t.Fatal(err)
	}
	if acc, ok := d.(dsh.PostToolAccept); !ok || len(acc.AdditionalContexts) != 1 {
		t.Fatalf("post-execute decision %s, want accept with the context", ht.Describe(d))
	}
	if n := b.calls.len(); n != 0 {
		t.Fatalf("%d calls kept after post-execute, want 0", n)
	}

	// A call whose rewrite failed: pre-execute and post-execute never run.
	ex = h.Exec("Write", `{}`)
	rewritePhase(t, h, ex)
	if _, err := h.PreTool(ctx, ex); err != nil {
		t.Fatal(err)
	}
	other := h.Exec("Edit", `{}`)
	rewritePhase(t, h, other)
	if n := b.calls.len(); n != 2 {
		t.Fatalf("%d calls kept, want 2", n)
	}
	for _, e := range []dsh.ToolExecution{ex, other} {
		if err := h.Reg.EmitToolResult(ctx, &dsh.ToolResultPayload{Exec: e, Result: ht.Success(`"ok"`)}); err != nil {
			t.Fatal(err)
		}
	}
	if n := b.calls.len(); n != 0 {
		t.Fatalf("%d calls kept after their results, want 0", n)
	}
}

// A call a hook asked about, that the runtime denied because no one could answer
// (approval.Unanswered marks the context), is rendered by the dialect; a denial of the
// same call by an answer (even one worded as the ask's reason) is left as it is.
func TestAskDenial(t *testing.T) {
	h, _, _ := fakeBridge(t, ht.G("Gate", "", `echo '{"decision":"ask","reason":"check first"}'`))
	denial := dsh.ToolFailure{Error: dsh.ToolError{Message: "check first"}, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "Error: check first"}}}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"unanswered", approval.WithUnanswered(context.Background(), approval.Unanswered{Reason: "check first"}), "asked: check first"},
		{"answered", context.Background(), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := h.Exec("Bash", `{}`)
			d, err := h.PreTool(context.Background(), ex)
			if err != nil {
				t.Fatal(err)
			}
			if ask, ok := d.(dsh.PreToolAsk); !ok || ask.Reason == nil || *ask.Reason != "check first" {
				t.Fatalf("pre-execute decision %s, want ask", ht.Describe(d))
			}
			post, err := h.PostTool(tc.ctx, ex, denial)
			if err != nil {
				t.Fatal(err)
			}
			acc, _ := post.(dsh.PostToolAccept)
			got := ""
			if len(acc.Content) == 1 {
				got = acc.Content[0].(dsh.TextBlock).Text
			}
			if got != tc.want {
				t.Errorf("result text %q, want %q", got, tc.want)
			}
		})
	}
}
