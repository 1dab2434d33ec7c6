package subagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/loop"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/subagent"
	"github.com/dshkit/dsh/runtime/tools"
)

// harness is a parent agent whose registry has the agent tool and an Echo tool.
type harness struct {
	hooks  *dsh.Registry
	reg    *tools.Registry
	log    *session.Log
	logs   *subagent.MemoryLogs
	runner *subagent.Runner
	parent *loop.Agent

	mu     sync.Mutex
	events []string
}

func (h *harness) record(s string) {
	h.mu.Lock()
	h.events = append(h.events, s)
	h.mu.Unlock()
}

func newHarness(t *testing.T, log *session.Log, model llm.Model, resume bool, opts ...func(*subagent.Config)) *harness {
	t.Helper()
	return newHarnessWith(t, log, model, resume, subagent.ClaudeCode, opts...)
}

// newHarnessWith is newHarness with an agent tool reading its input by fields.
func newHarnessWith(t *testing.T, log *session.Log, model llm.Model, resume bool, fields subagent.Fields, opts ...func(*subagent.Config)) *harness {
	t.Helper()
	ctx := context.Background()
	h := &harness{hooks: dsh.NewRegistry(), reg: tools.NewRegistry(), log: log, logs: &subagent.MemoryLogs{}}
	rt := func() *tools.Runtime { return tools.New(h.reg, h.hooks) }
	_, _ = h.reg.Register(tools.Definition{Name: "Echo", Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
		l := rc.Exec().Lineage
		if l == nil {
			return "echo from the top", nil
		}
		return "echo from " + l.AgentType, nil
	}})
	var err error
	scfg := subagent.Config{Registry: h.hooks, Tools: rt, Model: model,
		LLM: dsh.LLMCallConfig{Provider: "scripted", Model: "m"}, Logs: h.logs, ParentLog: log,
		ParentSessionID: "ses_parent", ToolName: "Agent", GeneralSystem: "You are a child."}
	for _, o := range opts {
		o(&scfg)
	}
	h.runner, err = subagent.New(scfg)
	if err != nil {
		t.Fatal(err)
	}
	def := h.runner.Definition(fields)
	def.Name = "Agent"
	if _, err := h.reg.Register(def); err != nil {
		t.Fatal(err)
	}
	p := h.hooks.Plugin("probe")
	p.OnSessionStart(func(ctx context.Context, sp *dsh.SessionStartPayload) error {
		h.record("session-start " + sp.AgentID)
		return nil
	})
	p.OnSubagentStart(func(ctx context.Context, sp *dsh.SubagentStartPayload) error {
		h.record("subagent-start " + sp.Lineage.AgentType + " " + sp.Task)
		return sp.Agent.Inject(ctx, dsh.UserText(dsh.SourcePlugin{Plugin: "probe"}, "CONTEXT FOR THE CHILD"))
	})
	p.OnSubagentStop(func(ctx context.Context, sp *dsh.SubagentStopPayload) error {
		answer := ""
		if sp.Answer != nil {
			answer = *sp.Answer
		}
		h.record("subagent-stop " + sp.Lineage.ParentCallID + " " + answer)
		return nil
	})
	p.OnTurnStopping(func(ctx context.Context, sp *dsh.TurnStoppingPayload) error {
		h.record("turn-stopping " + sp.AgentID)
		return nil
	})
	p.OnPreTool(func(ctx context.Context, pp *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		lineage := "top"
		if l := pp.Exec.Lineage; l != nil {
			lineage = l.AgentType + "@" + l.ParentCallID
		}
		h.record("pre-tool " + pp.Exec.Name + " " + lineage)
		return next.Call(ctx)
	})
	cfg := loop.Config{ID: "main", Registry: h.hooks, Tools: rt(), Model: model, Log: log,
		LLM: dsh.LLMCallConfig{Provider: "scripted", Model: "m"}, BackgroundTasks: h.runner.BackgroundTasks}
	start := loop.New
	if resume {
		start = loop.Resume
	}
	h.parent, err = start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.parent.Close(); h.runner.Close() })
	return h
}

func (h *harness) prompt(t *testing.T, text string) {
	t.Helper()
	ctx := context.Background()
	if err := h.parent.Followup(ctx, dsh.UserText(dsh.SourceUser{}, text)); err != nil {
		t.Fatal(err)
	}
	if err := h.parent.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

func args(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// recordsOf are the events of type T in log, in order.
func recordsOf[T dsh.SessionEventData](t *testing.T, log *session.Log) []T {
	t.Helper()
	var out []T
	for r, err := range session.Of[T](log.Events()) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// toolResults are the texts of the tool results in log, by call id.
func toolResults(t *testing.T, log *session.Log) map[string]string {
	t.Helper()
	out := map[string]string{}
	for r, err := range session.Of[dsh.ToolResultLogged](log.Events()) {
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range r.Message.Content {
			tr, ok := c.(dsh.ToolResultBlock)
			if !ok {
				continue
			}
			var b strings.Builder
			for _, x := range tr.Content {
				if tb, ok := x.(dsh.TextBlock); ok {
					b.WriteString(tb.Text)
				}
			}
			out[tr.ToolCallID] = b.String()
		}
	}
	return out
}

func TestForegroundChild(t *testing.T) {
	model := llm.NewScripted(
		llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{ID: "call_a", Name: "Agent",
			Arguments: args(map[string]any{"description": "probe", "prompt": "say hi", "subagent_type": "general-purpose"})}}},
		llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{ID: "call_c", Name: "Echo", Arguments: args(map[string]any{})}}},
		llm.ScriptedResponse{Text: "child answer"},
		llm.ScriptedResponse{Text: "parent done"},
	)
	log, _ := session.Open(context.Background(), session.NewMemory())
	h := newHarness(t, log, model, false)
	h.prompt(t, "delegate")

	results := toolResults(t, log)
	if got := results["call_a"]; got != "child answer" {
		t.Errorf("the Agent call's result = %q, want the child's answer", got)
	}
	want := []string{
		"session-start main",
		"pre-tool Agent top",
		"subagent-start general-purpose say hi",
		"pre-tool Echo general-purpose@call_a",
		"subagent-stop call_a child answer",
		"turn-stopping main",
	}
	if strings.Join(h.events, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(h.events, "\n"), strings.Join(want, "\n"))
	}
	var started dsh.SubagentStarted
	for s, err := range session.Of[dsh.SubagentStarted](log.Events()) {
		if err != nil {
			t.Fatal(err)
		}
		started = s
	}
	if started.CallID != "call_a" || started.AgentType != "general-purpose" || started.Depth != 1 {
		t.Fatalf("subagent/started = %+v", started)
	}
	child, ok := h.logs.Log(started.SessionID)
	if !ok {
		t.Fatalf("no child log %s", started.SessionID)
	}
	if got := toolResults(t, child)["call_c"]; got != "echo from general-purpose" {
		t.Errorf("the child's Echo result = %q", got)
	}
	for c, err := range session.Of[dsh.SessionCreated](child.Events()) {
		if err != nil {
			t.Fatal(err)
		}
		if c.Lineage == nil || c.Lineage.ParentAgentID != "main" || c.Lineage.ParentCallID != "call_a" ||
			c.ParentSessionID == nil || *c.ParentSessionID != "ses_parent" || c.AgentID != started.AgentID {
			t.Errorf("the child's session/created = %+v", c)
		}
	}
	// The context subagent-start injected reached the child's first request.
	found := false
	for m, err := range session.Of[dsh.UserMessageLogged](child.Events()) {
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range m.Message.Content {
			if tb, ok := b.(dsh.TextBlock); ok && tb.Text == "CONTEXT FOR THE CHILD" {
				found = true
			}
		}
	}
	if !found {
		t.Error("the subagent-start context is not in the child's log")
	}
}

func TestRefusedCalls(t *testing.T) {
	model := llm.NewScripted(
		llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{
			{ID: "call_u", Name: "Agent", Arguments: args(map[string]any{"prompt": "x", "subagent_type": "nope"})},
			{ID: "call_e", Name: "Agent", Arguments: args(map[string]any{"prompt": "", "subagent_type": "general-purpose"})},
		}},
		llm.ScriptedResponse{Text: "parent done"},
	)
	log, _ := session.Open(context.Background(), session.NewMemory())
	h := newHarness(t, log, model, false)
	h.prompt(t, "delegate")
	results := toolResults(t, log)
	if got := results["call_u"]; !strings.Contains(got, `unknown agent type "nope"`) || !strings.Contains(got, "general-purpose") {
		t.Errorf("unknown type: %q", got)
	}
	if got := results["call_e"]; !strings.Contains(got, "prompt is empty") {
		t.Errorf("empty task: %q", got)
	}
	if n := len(recordsOf[dsh.SubagentStarted](t, log)); n != 0 {
		t.Errorf("the refused calls started %d children", n)
	}
}

// A child at the depth limit is not offered the agent tool, and a call of it fails.
func TestDepthLimit(t *testing.T) {
	model := llm.NewScripted(
		llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{ID: "call_a", Name: "Agent", Arguments: args(map[string]any{"prompt": "go deeper"})}}},
		llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{ID: "call_b", Name: "Agent", Arguments: args(map[string]any{"prompt": "deeper still"})}}},
		llm.ScriptedResponse{Text: "child gave up"},
		llm.ScriptedResponse{Text: "parent done"},
	).RecordRequests()
	log, _ := session.Open(context.Background(), session.NewMemory())
	h := newHarness(t, log, model, false)
	h.prompt(t, "delegate")
	results := toolResults(t, log)
	if got := results["call_a"]; got != "child gave up" {
		t.Errorf("call_a = %q", got)
	}
	var seen []string
	for _, r := range model.Requests() {
		var names []string
		for _, tl := range r.Tools {
			names = append(names, tl.Name)
		}
		seen = append(seen, strings.Join(names, ","))
	}
	if want := []string{"Agent,Echo", "Echo", "Echo", "Agent,Echo"}; strings.Join(seen, " ") != strings.Join(want, " ") {
		t.Errorf("tools offered per request: %q, want %q", seen, want)
	}
	if started := len(recordsOf[dsh.SubagentStarted](t, log)); started != 1 {
		t.Errorf("%d children started, want 1 (the child's own call is refused)", started)
	}
}

// A parent resumed after its child finished returns the child's answer from its log and
// runs no child again.
func TestResumeReplaysFinishedChild(t *testing.T) {
	ctx := context.Background()
	log, _ := session.Open(ctx, session.NewMemory())
	model := llm.NewScripted(
		llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{ID: "call_a", Name: "Agent", Arguments: args(map[string]any{"prompt": "say hi"})}}},
		llm.ScriptedResponse{Text: "child answer"},
		llm.ScriptedResponse{Text: "parent done"},
	)
	h := newHarness(t, log, model, false)
	h.prompt(t, "delegate")
	_ = h.parent.Close()
	h.runner.Close()

	// A second runner over the same log: the call id's child is finished.
	r2, err := subagent.New(subagent.Config{Registry: dsh.NewRegistry(), Tools: func() *tools.Runtime { return tools.New(nil, dsh.NewRegistry()) },
		Model: llm.NewScripted(), Logs: &subagent.MemoryLogs{}, ParentLog: log, ToolName: "Agent"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r2.Run(ctx, subagent.Request{CallID: "call_a", ParentAgentID: "main", Task: "say hi"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Replayed || res.Answer != "child answer" || res.Outcome != dsh.SubagentOutcomeCompleted {
		t.Errorf("replayed result = %+v", res)
	}
	if n := len(recordsOf[dsh.SubagentStarted](t, log)); n != 1 {
		t.Errorf("%d subagent/started events, want 1 (the replay starts none)", n)
	}
}

// Cancelling the parent's call cancels the child, whose end is recorded as cancelled.
func TestCancelledParentCancelsChild(t *testing.T) {
	ctx := context.Background()
	log, _ := session.Open(ctx, session.NewMemory())
	model := llm.NewScripted(
		llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{ID: "call_a", Name: "Agent", Arguments: args(map[string]any{"prompt": "hang"})}}},
		llm.ScriptedResponse{Text: "thinking", Hang: true},
	)
	h := newHarness(t, log, model, false)
	started := make(chan struct{})
	h.hooks.Plugin("watch").OnSubagentStart(func(ctx context.Context, p *dsh.SubagentStartPayload) error {
		close(started)
		return nil
	})
	if err := h.parent.Followup(ctx, dsh.UserText(dsh.SourceUser{}, "delegate")); err != nil {
		t.Fatal(err)
	}
	<-started
	h.parent.Cancel(dsh.CancelUser{}, false)
	if err := h.parent.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	h.runner.Close() // returns once the child is gone
	var fin []dsh.SubagentFinished
	for f, err := range session.Of[dsh.SubagentFinished](log.Events()) {
		if err != nil {
			t.Fatal(err)
		}
		fin = append(fin, f)
	}
	if len(fin) != 1 || fin[0].Outcome != dsh.SubagentOutcomeCancelled {
		t.Fatalf("subagent/finished = %+v (%s), want one cancelled", fin, *fin[0].Error)
	}
	if fin[0].Error == nil || !strings.Contains(*fin[0].Error, "cancelled") {
		t.Errorf("the record says %v, not why", fin[0].Error)
	}
}

// A child whose model call fails fails the parent's call, saying why; the parent's log
// records the child as failed.
func TestChildModelFailure(t *testing.T) {
	ctx := context.Background()
	log, _ := session.Open(ctx, session.NewMemory())
	model := llm.NewScripted(
		llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{ID: "call_a", Name: "Agent", Arguments: args(map[string]any{"prompt": "fail"})}}},
		llm.ScriptedResponse{Error: &llm.ScriptedError{Message: "the model is down"}},
		llm.ScriptedResponse{Text: "parent done"},
	)
	h := newHarness(t, log, model, false)
	h.prompt(t, "delegate")
	got := toolResults(t, log)["call_a"]
	if !strings.Contains(got, "failed") || !strings.Contains(got, "the model is down") {
		t.Errorf("the call's result = %q, want the child's failure", got)
	}
	for f, err := range session.Of[dsh.SubagentFinished](log.Events()) {
		if err != nil {
			t.Fatal(err)
		}
		if f.Outcome != dsh.SubagentOutcomeFailed || f.Error == nil {
			t.Errorf("subagent/finished = %+v", f)
		}
	}
}

// 50 agent calls in one step: at most MaxRunning children run at once; the calls past
// the bound fail at once and say so, the others complete, and nothing is left running.
func TestManyCallsBounded(t *testing.T) {
	ctx := context.Background()
	hooks, reg := dsh.NewRegistry(), tools.NewRegistry()
	rt := func() *tools.Runtime { return tools.New(reg, hooks) }
	release := make(chan struct{})
	var mu sync.Mutex
	running, peak := 0, 0
	hooks.Plugin("slow").OnSubagentStop(func(ctx context.Context, p *dsh.SubagentStopPayload) error {
		mu.Lock()
		running++
		peak = max(peak, running)
		mu.Unlock()
		<-release
		mu.Lock()
		running--
		mu.Unlock()
		return nil
	})
	refusals := 0
	var calls []llm.ScriptedToolCall
	for i := range 50 {
		calls = append(calls, llm.ScriptedToolCall{ID: "call_" + strconv.Itoa(i), Name: "Agent", Arguments: args(map[string]any{"prompt": "hi"})})
	}
	responses := []llm.ScriptedResponse{{ToolCalls: calls}}
	for range 4 {
		responses = append(responses, llm.ScriptedResponse{Text: "child answer"})
	}
	model := llm.NewScripted(append(responses, llm.ScriptedResponse{Text: "parent done"})...)
	log, _ := session.Open(ctx, session.NewMemory())
	r, err := subagent.New(subagent.Config{Registry: hooks, Tools: rt, Model: model, LLM: dsh.LLMCallConfig{Provider: "scripted", Model: "m"},
		Logs: &subagent.MemoryLogs{}, ParentLog: log, ToolName: "Agent", MaxRunning: 4})
	if err != nil {
		t.Fatal(err)
	}
	def := r.Definition(subagent.ClaudeCode)
	def.Name = "Agent"
	run := def.Run
	def.Run = func(ctx context.Context, rc *tools.RunContext) (any, error) {
		v, err := run(ctx, rc)
		if err != nil && strings.Contains(err.Error(), "too many children running") {
			mu.Lock()
			refusals++
			mu.Unlock()
		}
		return v, err
	}
	_, _ = reg.Register(def)
	a, err := loop.New(ctx, loop.Config{ID: "main", Registry: hooks, Tools: rt(), Model: model, Log: log,
		LLM: dsh.LLMCallConfig{Provider: "scripted", Model: "m"}, MaxParallelToolCalls: 50})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Followup(ctx, dsh.UserText(dsh.SourceUser{}, "go")); err != nil {
		t.Fatal(err)
	}
	// The four children wait at their stop while the other 46 calls are refused.
	for deadline := time.Now().Add(10 * time.Second); ; {
		mu.Lock()
		r, n := running, refusals
		mu.Unlock()
		if r == 4 && n == 46 {
			break
		}
		if time.Now().After(deadline) {
			close(release)
			t.Fatalf("%d children at their stop and %d calls refused after 10 s; want 4 and 46", r, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	if err := a.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	_ = a.Close()
	r.Close()
	results := toolResults(t, log)
	ok, refused := 0, 0
	for _, text := range results {
		switch {
		case text == "child answer":
			ok++
		case strings.Contains(text, "too many children running") && strings.Contains(text, "the limit is 4"):
			refused++
		default:
			t.Errorf("unexpected result %q", text)
		}
	}
	if ok != 4 || refused != 46 || peak != 4 {
		t.Errorf("%d completed, %d refused, %d at once; want 4, 46, 4", ok, refused, peak)
	}
}

// A definition's child is offered its tools that exist (a name of no tool is dropped),
// runs on its system prompt, and BeforeChild brackets it with the child's id; a child of a
// definition whose tools name no tool is created (agent/subagent-start fires, as in
// Claude Code) and never runs, and the call fails in Refusal's words; an unknown type
// starts no child.
func TestDefinitionToolsAndBeforeChild(t *testing.T) {
	model := llm.NewScripted(
		llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{
			{ID: "call_r", Name: "Agent", Arguments: args(map[string]any{"prompt": "read it", "subagent_type": "reader"})},
			{ID: "call_n", Name: "Agent", Arguments: args(map[string]any{"prompt": "x", "subagent_type": "none"})},
			{ID: "call_u", Name: "Agent", Arguments: args(map[string]any{"prompt": "x", "subagent_type": "nope"})},
		}},
		llm.ScriptedResponse{Text: "reader answer"},
		llm.ScriptedResponse{Text: "parent done"},
	).RecordRequests()
	log, _ := session.Open(context.Background(), session.NewMemory())
	var mu sync.Mutex
	var bracket []string
	var subagentStarts []string
	h := newHarness(t, log, model, false, func(c *subagent.Config) {
		c.Definitions = []subagent.Definition{
			{Name: "reader", System: "You read.", Tools: []string{"Nope", "Echo"}, Hooks: json.RawMessage(`{"x":1}`)},
			{Name: "none", System: "You cannot.", Tools: []string{"Nope"}},
		}
		c.BeforeChild = func(_ context.Context, def subagent.Definition, id string) (func(), error) {
			mu.Lock()
			bracket = append(bracket, "start "+def.Name+" "+string(def.Hooks)+" "+strconv.FormatBool(strings.HasPrefix(id, "a")))
			mu.Unlock()
			return func() {
				mu.Lock()
				bracket = append(bracket, "end "+def.Name)
				mu.Unlock()
			}, nil
		}
		c.Refusal = func(err error) string {
			var none *subagent.NoToolsError
			var unknown *subagent.UnknownTypeError
			switch {
			case errors.As(err, &none):
				return "REFUSED " + none.Type + ": " + strings.Join(none.Unrecognized, ",")
			case errors.As(err, &unknown):
				return "UNKNOWN " + unknown.Type + " of " + strings.Join(unknown.Types, ",")
			}
			return err.Error()
		}
	})
	h.hooks.Plugin("starts").OnSubagentStart(func(_ context.Context, sp *dsh.SubagentStartPayload) error {
		mu.Lock()
		subagentStarts = append(subagentStarts, sp.Lineage.AgentType)
		mu.Unlock()
		return nil
	})
	h.prompt(t, "delegate")
	slices.Sort(subagentStarts)
	results := toolResults(t, log)
	if got := results["call_n"]; !strings.HasSuffix(got, ": REFUSED none: Nope") {
		t.Errorf("no tools: %q", got)
	}
	if got := results["call_u"]; !strings.HasSuffix(got, ": UNKNOWN nope of general-purpose,none,reader") {
		t.Errorf("unknown: %q", got)
	}
	if got := results["call_r"]; got != "reader answer" {
		t.Errorf("reader: %q", got)
	}
	slices.Sort(bracket)
	if d := strings.Join(bracket, "; "); d != `end none; end reader; start none  true; start reader {"x":1} true` {
		t.Errorf("BeforeChild: %s", d)
	}
	var child *llm.Request
	for _, r := range model.Requests() {
		if r.System == "You read." {
			child = &r
		}
	}
	if child == nil {
		t.Fatal("no request on the reader's system prompt")
	}
	var offered []string
	for _, ts := range child.Tools {
		offered = append(offered, ts.Name)
	}
	if strings.Join(offered, ",") != "Echo" {
		t.Errorf("the reader was offered %v", offered)
	}
	var started []string
	for s, err := range session.Of[dsh.SubagentStarted](log.Events()) {
		if err != nil {
			t.Fatal(err)
		}
		started = append(started, s.AgentType)
	}
	slices.Sort(started)
	if strings.Join(started, ",") != "none,reader" {
		t.Errorf("children started: %v, want none and reader (the unknown type starts none)", started)
	}
	if strings.Join(subagentStarts, ",") != "none,reader" {
		t.Errorf("agent/subagent-start fired for %v", subagentStarts)
	}
}

// A child whose BeforeChild fails does not run; the call fails saying why.
func TestBeforeChildFails(t *testing.T) {
	model := llm.NewScripted(
		llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{ID: "call_a", Name: "Agent", Arguments: args(map[string]any{"prompt": "x"})}}},
		llm.ScriptedResponse{Text: "parent done"},
	)
	log, _ := session.Open(context.Background(), session.NewMemory())
	h := newHarness(t, log, model, false, func(c *subagent.Config) {
		c.BeforeChild = func(context.Context, subagent.Definition, string) (func(), error) {
			return nil, errors.New("hooks would not load")
		}
	})
	h.prompt(t, "delegate")
	if got := toolResults(t, log)["call_a"]; !strings.Contains(got, "failed") || !strings.Contains(got, "hooks would not load") {
		t.Errorf("result %q", got)
	}
}

// Spawn starts a child in the background: its id is known at once, the child's end is
// recorded in the parent's log, and a second Spawn for the same call id returns the
// finished child without running it again.
func TestSpawnBackground(t *testing.T) {
	ctx := context.Background()
	log, _ := session.Open(ctx, session.NewMemory())
	model := llm.NewScripted(
		llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{ID: "call_c", Name: "Echo", Arguments: args(map[string]any{})}}},
		llm.ScriptedResponse{Text: "background answer"},
	)
	h := newHarness(t, log, model, false)
	callCtx, cancelCall := context.WithCancel(ctx)
	c, err := h.runner.Spawn(callCtx, subagent.Request{CallID: "call_bg", ParentAgentID: "main", Task: "work alone"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The call that started it ends at once; the child goes on.
	cancelCall()
	if !strings.HasPrefix(c.ID, "a") || len(c.ID) != 17 || c.CallID != "call_bg" || c.Type != subagent.GeneralPurpose {
		t.Errorf("child = %+v", c)
	}
	res, err := c.Result()
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != dsh.SubagentOutcomeCompleted || res.Answer != "background answer" || res.AgentID != c.ID ||
		res.ToolUses != 1 || strings.Join(res.ToolsUsed, ",") != "Echo" {
		t.Errorf("result = %+v", res)
	}
	if n := len(h.runner.Background()); n != 0 {
		t.Errorf("%d children still listed as running after Done", n)
	}
	again, err := h.runner.Spawn(ctx, subagent.Request{CallID: "call_bg", ParentAgentID: "main", Task: "work alone"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-again.Done():
	default:
		t.Fatal("a Spawn of a finished call id is not done at once")
	}
	if r2, _ := again.Result(); !r2.Replayed || r2.Answer != "background answer" || r2.AgentID != c.ID {
		t.Errorf("replayed = %+v", r2)
	}
	if n := len(recordsOf[dsh.SubagentStarted](t, log)); n != 1 {
		t.Errorf("%d subagent/started events, want 1", n)
	}
}

// Closing the Runner cancels the children running in the background, and records each as
// cancelled, saying why.
func TestCloseCancelsBackground(t *testing.T) {
	ctx := context.Background()
	log, _ := session.Open(ctx, session.NewMemory())
	model := llm.NewScripted(llm.ScriptedResponse{Text: "thinking", Hang: true})
	h := newHarness(t, log, model, false)
	started := make(chan struct{})
	h.hooks.Plugin("watch").OnSubagentStart(func(ctx context.Context, p *dsh.SubagentStartPayload) error {
		close(started)
		return nil
	})
	c, err := h.runner.Spawn(ctx, subagent.Request{CallID: "call_bg", ParentAgentID: "main", Task: "hang"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	if bg := h.runner.Background(); len(bg) != 1 || bg[0] != c {
		t.Fatalf("Background() = %v, want the child", bg)
	}
	h.runner.Close()
	res, _ := c.Result()
	if res.Outcome != dsh.SubagentOutcomeCancelled || res.Err == nil || !strings.Contains(res.Err.Error(), "runner closed") {
		t.Errorf("result = %+v", res)
	}
	if fin := recordsOf[dsh.SubagentFinished](t, log); len(fin) != 1 || fin[0].Outcome != dsh.SubagentOutcomeCancelled {
		t.Errorf("subagent/finished = %+v", fin)
	}
	if _, err := h.runner.Spawn(ctx, subagent.Request{CallID: "call_late", Task: "x"}, nil); !errors.Is(err, subagent.ErrClosed) {
		t.Errorf("Spawn after Close = %v, want ErrClosed", err)
	}
}

// A definition's MaxTurns ends the child's turn before its model step past the limit: the
// tools of the last step run, no subagent-stop fires, and the child completes with its
// last text, marked with the limit, in its result and in subagent/finished, which a replay
// reads back.
func TestDefinitionMaxTurns(t *testing.T) {
	model := llm.NewScripted(
		llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{ID: "call_a", Name: "Agent", Arguments: args(map[string]any{"prompt": "work", "subagent_type": "short"})}}},
		llm.ScriptedResponse{Text: "child running", ToolCalls: []llm.ScriptedToolCall{{ID: "call_c", Name: "Echo", Arguments: args(map[string]any{})}}},
		llm.ScriptedResponse{Text: "parent done"},
	)
	ctx := context.Background()
	log, _ := session.Open(ctx, session.NewMemory())
	h := newHarness(t, log, model, false, func(c *subagent.Config) {
		c.Definitions = []subagent.Definition{{Name: "short", System: "You stop early.", MaxTurns: 1}}
	})
	h.prompt(t, "delegate")
	if got := toolResults(t, log)["call_a"]; got != "child running" {
		t.Errorf("the Agent call's result = %q, want the child's last text", got)
	}
	want := []string{"session-start main", "pre-tool Agent top", "subagent-start short work", "pre-tool Echo short@call_a", "turn-stopping main"}
	if strings.Join(h.events, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(h.events, "\n"), strings.Join(want, "\n"))
	}
	fins := recordsOf[dsh.SubagentFinished](t, log)
	if len(fins) != 1 || fins[0].Outcome != dsh.SubagentOutcomeCompleted || fins[0].TurnLimit == nil || *fins[0].TurnLimit != 1 {
		t.Fatalf("subagent/finished = %+v", fins)
	}
	r2, err := subagent.New(subagent.Config{Registry: dsh.NewRegistry(), Tools: func() *tools.Runtime { return tools.New(nil, dsh.NewRegistry()) },
		Model: llm.NewScripted(), Logs: &subagent.MemoryLogs{}, ParentLog: log, ToolName: "Agent"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r2.Run(ctx, subagent.Request{CallID: "call_a", ParentAgentID: "main", Task: "work", Type: "short"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Replayed || res.TurnLimit != 1 || res.Answer != "child running" {
		t.Errorf("replayed result = %+v", res)
	}
}

// A definition's Background runs its child in the background though the call asks for
// the foreground.
func TestDefinitionBackground(t *testing.T) {
	model := llm.NewScripted(
		llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{ID: "call_a", Name: "Agent",
			Arguments: args(map[string]any{"prompt": "work", "subagent_type": "bg", "run_in_background": false})}}},
		llm.ScriptedResponse{Text: "child answer"},
		llm.ScriptedResponse{Text: "parent done"},
		llm.ScriptedResponse{Text: "parent read the notice"},
	)
	ctx := context.Background()
	log, _ := session.Open(ctx, session.NewMemory())
	fields := subagent.ClaudeCode
	fields.Background = "run_in_background"
	h := newHarnessWith(t, log, model, false, fields, func(c *subagent.Config) {
		c.Definitions = []subagent.Definition{{Name: "bg", System: "You run alone.", Background: true}}
	})
	h.prompt(t, "delegate")
	if got := toolResults(t, log)["call_a"]; !strings.Contains(got, "The bg agent") || !strings.Contains(got, "runs in the background") {
		t.Errorf("the Agent call's result = %q, want a child in the background", got)
	}
	if err := h.runner.WaitBackground(ctx); err != nil {
		t.Fatal(err)
	}
	// The parent's next step and the child share the scripted model and run at once:
	// which reads which answer varies.
	if fins := recordsOf[dsh.SubagentFinished](t, log); len(fins) != 1 || fins[0].Outcome != dsh.SubagentOutcomeCompleted {
		t.Errorf("subagent/finished = %+v", fins)
	}
}
