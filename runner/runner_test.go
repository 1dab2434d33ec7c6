package runner_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runner"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/loop"
	"github.com/dshkit/dsh/runtime/session"
)

// build makes a session over a memory log with a scripted model playing rs.
func build(t *testing.T, limits runner.Limits, rs ...llm.ScriptedResponse) (*runner.Session, *session.Log) {
	t.Helper()
	ctx := context.Background()
	log, err := session.Open(ctx, session.NewMemory())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	open := func(string, runner.ContextPlacement) (llm.Model, dsh.LLMCallConfig, error) {
		return llm.NewScripted(rs...), dsh.LLMCallConfig{Provider: "scripted", Model: "test"}, nil
	}
	s, err := runner.New(ctx, runner.Config{Workspace: t.TempDir(), SessionID: "ses_test", Log: log, OpenModel: open, Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, log
}

// turn runs one turn of s with the prompt text.
func turn(t *testing.T, s *runner.Session, text string) *loop.Agent {
	t.Helper()
	ctx := context.Background()
	a, err := s.Start(ctx, "main", false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	msg := dsh.UserMessage{ID: "p1", Role: dsh.UserMessageRoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: text}}, Source: dsh.SourceUser{}}
	if err := a.Followup(ctx, msg); err != nil {
		t.Fatal(err)
	}
	if err := a.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestSession: a built session runs a turn on its log, and its Turns follows the log.
func TestSession(t *testing.T) {
	s, log := build(t, runner.Limits{}, llm.ScriptedResponse{Text: "hello"})
	turn(t, s, "hi")
	if n, open := s.Turns.Current(); n != 1 || open {
		t.Errorf("Turns.Current() = %d, %v; want 1, false", n, open)
	}
	if s.MaxTurnsReached() {
		t.Error("MaxTurnsReached without a limit")
	}
	if s.ContinuationCap != loop.DefaultContinuationCap || s.Compaction.ContextWindow != 0 {
		t.Errorf("limits: cap %d, window %d", s.ContinuationCap, s.Compaction.ContextWindow)
	}
	var ended bool
	for e, err := range log.Events() {
		if err != nil {
			t.Fatal(err)
		}
		ended = ended || e.Type == "turn/end"
	}
	if !ended {
		t.Error("no turn/end in the log")
	}
}

// TestLimits: MaxTurns halts a turn before its step N+1; StopCap 0 means no
// continuation; a ContextWindow is taken as given.
func TestLimits(t *testing.T) {
	zero, window := 0, 1000
	call := llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{ID: "c1", Name: "Read", Arguments: json.RawMessage(`{"file_path":"x"}`)}}}
	s, _ := build(t, runner.Limits{MaxTurns: 1, StopCap: &zero, ContextWindow: &window}, call, llm.ScriptedResponse{Text: "done"})
	turn(t, s, "go")
	if !s.MaxTurnsReached() {
		t.Error("MaxTurns 1 did not stop the second step")
	}
	if s.ContinuationCap != -1 || s.Compaction.ContextWindow != window {
		t.Errorf("limits: cap %d, window %d", s.ContinuationCap, s.Compaction.ContextWindow)
	}
}

// TestConfigRequired: a config without a log or a model is an error.
func TestConfigRequired(t *testing.T) {
	if _, err := runner.New(context.Background(), runner.Config{Workspace: t.TempDir()}); err == nil {
		t.Error("New without a log: no error")
	}
}

// TestHookSessionID: a session id becomes a stable UUID; a UUID stays as it is.
func TestHookSessionID(t *testing.T) {
	a, b := runner.HookSessionID("ses_x"), runner.HookSessionID("ses_x")
	if a != b || len(a) != 36 {
		t.Errorf("HookSessionID(ses_x) = %q, %q", a, b)
	}
	if got := runner.HookSessionID(a); got != a {
		t.Errorf("HookSessionID(%q) = %q", a, got)
	}
}
