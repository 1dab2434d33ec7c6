// Package hooktest is the test harness of the hook bridges: a recording agent handle and
// session recorder, helpers that write hook scripts and configurations, and drivers that
// run each extension point through a dsh.Registry the way the runtime does.
package hooktest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshkit/dsh/bridges/hookproto"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/agentrec"
)

// Agent is the recording agent handle (agentrec.Agent): what listeners inject, steer and
// halt.
type Agent = agentrec.Agent

// Recorder is a hookproto.Recorder that keeps the records.
type Recorder struct {
	mu   sync.Mutex
	recs []dsh.SessionEventData
}

// Record keeps d.
func (r *Recorder) Record(_ context.Context, d dsh.SessionEventData) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, d)
	return nil
}

// Take returns the records and resets them.
func (r *Recorder) Take() []dsh.SessionEventData {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.recs
	r.recs = nil
	return out
}

// Types returns the session-event types of recs, e.g. "hook/invoked".
func Types(recs []dsh.SessionEventData) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.SessionEventType())
	}
	return out
}

// Results returns the outcomes of the hook/result records of recs.
func Results(recs []dsh.SessionEventData) []dsh.HookOutcome {
	var out []dsh.HookOutcome
	for _, r := range recs {
		if res, ok := r.(dsh.HookResult); ok {
			out = append(out, res.Outcome)
		}
	}
	return out
}

// Script writes an executable /bin/sh script named name into dir and returns its path.
func Script(t testing.TB, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// Hook is one handler of a configuration written by Config.
type Hook struct {
	Command string
	Timeout float64
	Async   bool
}

// Group is one {matcher, hooks} entry.
type Group struct {
	Event   string
	Matcher string
	Hooks   []Hook
}

// G is shorthand for a group of command hooks.
func G(event, matcher string, commands ...string) Group {
	g := Group{Event: event, Matcher: matcher}
	for _, c := range commands {
		g.Hooks = append(g.Hooks, Hook{Command: c})
	}
	return g
}

// Config writes a {"hooks": {...}} configuration of the groups to dir/name and returns
// its path.
func Config(t testing.TB, dir, name string, groups ...Group) string {
	t.Helper()
	events := map[string][]any{}
	for _, g := range groups {
		var hs []any
		for _, h := range g.Hooks {
			m := map[string]any{"type": "command", "command": h.Command}
			if h.Timeout > 0 {
				m["timeout"] = h.Timeout
			}
			if h.Async {
				m["async"] = true
			}
			hs = append(hs, m)
		}
		e := map[string]any{"hooks": hs}
		if g.Matcher != "" {
			e["matcher"] = g.Matcher
		}
		events[g.Event] = append(events[g.Event], e)
	}
	data, err := json.MarshalIndent(map[string]any{"hooks": events}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return Raw(t, dir, name, string(data))
}

// Raw writes data to dir/name and returns its path.
func Raw(t testing.TB, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Plugin is a registrable bridge.
type Plugin interface {
	Register(r *dsh.Registrar) (unregister func())
}

// Harness drives the extension points of a registry for one agent.
type Harness struct {
	Reg   *dsh.Registry
	Agent *Agent
	Rec   *Recorder
	Dir   string
	// Turn is the open turn of tool events (0: none open).
	Turn int
	// Transcript is the session's transcript path.
	Transcript string
}

// New returns a harness whose workspace is dir.
func New(dir string) *Harness {
	return &Harness{Reg: dsh.NewRegistry(), Agent: &Agent{AgentID: "agent-1"}, Rec: &Recorder{}, Dir: dir, Turn: 1}
}

// Session is the hookproto.SessionFunc of the harness.
func (h *Harness) Session(_ context.Context, agentID string) hookproto.Session {
	return hookproto.Session{
		SessionID: "session-1", TranscriptPath: h.Transcript, CWD: h.Dir, Model: "test-model",
		Turn: h.Turn, TurnOpen: h.Turn > 0, Agent: h.Agent,
	}
}

// UserMessage is a user-sourced prompt.
func UserMessage(id, text string) dsh.UserMessage {
	return dsh.UserMessage{ID: id, Role: dsh.UserMessageRoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: text}}, Source: dsh.SourceUser{}}
}

// PreStep runs agent/pre-step with a claimed batch of one user prompt; the terminal
// enters with the batch.
func (h *Harness) PreStep(ctx context.Context, prompt string) (dsh.PreStepDecision, error) {
	p := &dsh.PreStepPayload{Agent: h.Agent, AgentID: h.Agent.AgentID, Turn: h.Turn, Step: 1,
		Messages: []dsh.UserMessage{UserMessage("prompt-1", prompt)}}
	return h.Reg.RunPreStep(ctx, p, func(context.Context) (dsh.PreStepDecision, error) {
		return dsh.PreStepEnter{Messages: p.Messages}, nil
	})
}

// Exec returns a sealed call of the harness's agent.
func (h *Harness) Exec(name, args string) dsh.ToolExecution {
	id := "agent-1"
	return dsh.ToolExecution{CallID: "call-" + name, Name: name, Arguments: json.RawMessage(args), AgentID: &id,
		RootCallID: "call-" + name, Token: dsh.NewToken()}
}

// PreTool runs tools/pre-execute (default allow).
func (h *Harness) PreTool(ctx context.Context, ex dsh.ToolExecution) (dsh.PreToolDecision, error) {
	return h.Reg.RunPreTool(ctx, &dsh.PreToolPayload{Exec: ex}, nil)
}

// PostTool runs tools/post-execute over result (default accept).
func (h *Harness) PostTool(ctx context.Context, ex dsh.ToolExecution, result dsh.ToolExecutionResult) (dsh.PostToolDecision, error) {
	return h.Reg.RunPostTool(ctx, &dsh.PostToolPayload{Exec: ex, Result: result}, nil)
}

// Ran runs tools/execute (its result) and then tools/post-execute over a call that ran;
// PostTool alone is a call denied before it ran.
func (h *Harness) Ran(ctx context.Context, ex dsh.ToolExecution, result dsh.ToolExecutionResult) (dsh.PostToolDecision, error) {
	if _, err := h.Reg.RunExecute(ctx, &dsh.ExecutePayload{Exec: ex}, func(context.Context) dsh.ToolExecutionResult { return result }); err != nil {
		return nil, err
	}
	return h.PostTool(ctx, ex, result)
}

// Success is a successful result with a value and its text.
func Success(value string) dsh.ToolSuccess {
	return dsh.ToolSuccess{Value: json.RawMessage(value), Content: []dsh.ContentBlock{dsh.TextBlock{Text: value}}}
}

// Stop runs agent/turn-stopping.
func (h *Harness) Stop(ctx context.Context, continuations int) error {
	return h.Reg.NotifyTurnStopping(ctx, &dsh.TurnStoppingPayload{Agent: h.Agent, AgentID: h.Agent.AgentID, Turn: h.Turn,
		Continuations: continuations, StopHookActive: continuations > 0})
}

// SubagentStart runs agent/subagent-start for the child agentID of type typ, started by
// the parent's call callID.
func (h *Harness) SubagentStart(ctx context.Context, agentID, typ, callID string) error {
	return h.Reg.NotifySubagentStart(ctx, &dsh.SubagentStartPayload{Agent: h.Agent, AgentID: agentID, Task: "task",
		Lineage: dsh.Lineage{ParentAgentID: h.Agent.AgentID, ParentCallID: callID, AgentType: typ, Depth: 1}})
}

// SubagentStop runs agent/subagent-stop for the child agentID of type typ, whose answer
// is answer.
func (h *Harness) SubagentStop(ctx context.Context, agentID, typ, callID, answer string, continuations int) error {
	return h.Reg.NotifySubagentStop(ctx, &dsh.SubagentStopPayload{Agent: h.Agent, AgentID: agentID, Turn: 1, Answer: &answer,
		Lineage:       dsh.Lineage{ParentAgentID: h.Agent.AgentID, ParentCallID: callID, AgentType: typ, Depth: 1},
		Continuations: continuations, StopHookActive: continuations > 0})
}

// SessionStart runs agent/session-start.
func (h *Harness) SessionStart(ctx context.Context, src dsh.SessionStartSource) error {
	return h.Reg.NotifySessionStart(ctx, &dsh.SessionStartPayload{Agent: h.Agent, AgentID: h.Agent.AgentID, Source: src})
}

// Request runs agent/request over a request to model, and returns the decision of the
// only listener (nil when none decided).
func (h *Harness) Request(ctx context.Context, model string) (dsh.RequestDecision, error) {
	req := dsh.ModelRequest{Config: dsh.LLMCallConfig{Provider: "test", Model: model}, Messages: []dsh.ModelMessage{}, Tools: []dsh.ModelTool{}}
	var got dsh.RequestDecision
	err := h.Reg.RunRequest(ctx, &dsh.RequestPayload{Agent: h.Agent, AgentID: h.Agent.AgentID, Turn: h.Turn, Step: 1, Attempt: 1,
		Request: req, Original: req}, 0, func(_ context.Context, _ string, d dsh.RequestDecision) (*dsh.RequestPayload, error) {
		got = d
		return nil, nil
	})
	return got, err
}

// Interrupted runs agent/turn-interrupted for the harness's turn.
func (h *Harness) Interrupted(ctx context.Context) error {
	return h.Reg.NotifyTurnInterrupted(ctx, &dsh.TurnInterruptedPayload{Agent: h.Agent, AgentID: h.Agent.AgentID, Turn: h.Turn})
}

// SessionEnd runs agent/session-end with the reason, each listener bounded by bound.
func (h *Harness) SessionEnd(ctx context.Context, reason dsh.SessionEndReason, bound time.Duration) (overran []string, err error) {
	return h.Reg.NotifySessionEndBounded(ctx, &dsh.SessionEndPayload{Agent: h.Agent, AgentID: h.Agent.AgentID, Reason: reason}, bound)
}

// PreCompact runs compaction/pre-compact for attempt id with the origin, the user's
// instructions ("" for none) and the open turn (0: a manual compaction, outside a turn);
// it returns the decision of the only listener.
func (h *Harness) PreCompact(ctx context.Context, id string, origin dsh.CompactionOrigin, instructions string, turn int) (dsh.PreCompactDecision, error) {
	p := &dsh.PreCompactPayload{Agent: h.Agent, AgentID: h.Agent.AgentID, CompactionID: id, Origin: origin,
		Trigger: dsh.CompactionTriggerManual, Phases: []dsh.CompactionPhase{dsh.CompactionPhaseSummarize}}
	if origin == dsh.CompactionOriginAuto {
		p.Trigger = dsh.CompactionTriggerPressure
	}
	if instructions != "" {
		p.UserInstructions = &instructions
	}
	if turn > 0 {
		p.Turn = &turn
	}
	return only(h.Reg.RunPreCompact(ctx, p, 10*time.Second))
}

// PostCompact runs compaction/post-compact for a committed attempt id with the summary;
// it returns the decision of the only listener.
func (h *Harness) PostCompact(ctx context.Context, id string, origin dsh.CompactionOrigin, summary string, turn int) (dsh.PostCompactDecision, error) {
	p := &dsh.PostCompactPayload{Agent: h.Agent, AgentID: h.Agent.AgentID, CompactionID: id, Origin: origin,
		Trigger: dsh.CompactionTriggerManual, Outcome: dsh.CompactionOutcomeCommitted, Summary: &summary}
	if origin == dsh.CompactionOriginAuto {
		p.Trigger = dsh.CompactionTriggerPressure
	}
	if turn > 0 {
		p.Turn = &turn
	}
	return only(h.Reg.RunPostCompact(ctx, p, 10*time.Second))
}

// SessionStartCompact runs agent/session-start with the source compact after attempt id
// (turn 0: a manual compaction).
func (h *Harness) SessionStartCompact(ctx context.Context, id string, turn int) error {
	p := &dsh.SessionStartPayload{Agent: h.Agent, AgentID: h.Agent.AgentID, Source: dsh.SessionStartSourceCompact, CompactionID: &id}
	if turn > 0 {
		p.Turn = &turn
	}
	return h.Reg.NotifySessionStart(ctx, p)
}

// only returns the decision of the one vote of a vote run (nil, nil when no listener
// voted).
func only[D any](votes []dsh.Vote[D]) (D, error) {
	var zero D
	switch {
	case len(votes) == 0:
		return zero, nil
	case len(votes) > 1:
		return zero, fmt.Errorf("%d votes, want one", len(votes))
	case votes[0].Overran:
		return zero, fmt.Errorf("%s overran", votes[0].Listener)
	case votes[0].Err != nil:
		return zero, votes[0].Err
	}
	return votes[0].Decision, nil
}

// Texts returns the text blocks of a message.
func Texts(m dsh.UserMessage) []string {
	var out []string
	for _, c := range m.Content {
		if t, ok := c.(dsh.TextBlock); ok {
			out = append(out, t.Text)
		}
	}
	return out
}

// Plugin returns the plugin name of a message's source, or its kind.
func Source(m dsh.UserMessage) string {
	if p, ok := m.Source.(dsh.SourcePlugin); ok {
		return "plugin:" + p.Plugin
	}
	if m.Source == nil {
		return "<nil>"
	}
	return string(m.Source.Kind())
}

// Describe renders a decision as "kind" or "kind: reason".
func Describe(d any) string {
	switch x := d.(type) {
	case dsh.PreToolDeny:
		return "deny: " + x.Reason
	case dsh.PreToolAsk:
		if x.Reason != nil {
			return "ask: " + *x.Reason
		}
		return "ask"
	case dsh.PreToolHalt:
		return "halt: " + x.Reason
	case dsh.PreStepReject:
		if x.Reason != nil {
			return "reject: " + *x.Reason
		}
		return "reject"
	case dsh.PreStepHalt:
		return "halt: " + x.Reason
	case dsh.PostToolBlock:
		var parts []string
		for _, c := range x.Feedback {
			if t, ok := c.(dsh.TextBlock); ok {
				parts = append(parts, t.Text)
			}
		}
		return "block: " + strings.Join(parts, "\n")
	case dsh.PostToolHalt:
		return "halt: " + x.Reason
	case interface {
		Kind() dsh.PreToolDecisionKind
	}:
		return string(x.Kind())
	case interface {
		Kind() dsh.PreStepDecisionKind
	}:
		return string(x.Kind())
	case interface {
		Kind() dsh.PostToolDecisionKind
	}:
		return string(x.Kind())
	case nil:
		return "<nil>"
	}
	return fmt.Sprintf("%T", d)
}

// PreCompactString describes a compaction/pre-compact decision for a comparison: its kind,
// then ":" and a defer's reason or a proceed's instructions joined by "|" when it has any.
func PreCompactString(d dsh.PreCompactDecision) string {
	got := string(d.Kind())
	if x, ok := d.(dsh.PreCompactDefer); ok {
		got += ":" + x.Reason
	}
	if x, ok := d.(dsh.PreCompactProceed); ok && len(x.Instructions) > 0 {
		got += ":" + strings.Join(x.Instructions, "|")
	}
	return got
}
