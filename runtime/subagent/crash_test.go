package subagent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
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

// router answers the parent from one script and each child from its own, chosen by the
// child's task, so that children running at
// once each follow their script whatever the order of their requests. Every request is
// recorded under its script's name.
type router struct {
	parent   *llm.Scripted
	children map[string]*llm.Scripted // by task

	mu   sync.Mutex
	seen map[string][]llm.Request
}

func (r *router) Stream(ctx context.Context, req llm.Request) iter.Seq2[dsh.AssistantChunk, error] {
	name, m := "parent", r.parent
	if strings.Contains(req.System+jsonOf(req.Config.System), "You are a child.") {
		for task, s := range r.children {
			if strings.Contains(jsonOf(req.Messages), `"text":"`+task+`"`) {
				name, m = task, s
			}
		}
	}
	r.mu.Lock()
	r.seen[name] = append(r.seen[name], req)
	r.mu.Unlock()
	return m.Stream(ctx, req)
}

func (r *router) requests(name string) []llm.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[name]
}

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// fourChildren is a parent whose first step calls the agent tool four times; the first
// child's model hangs when hang is set, the others answer at once.
func fourChildren(hang bool) *router {
	var calls []llm.ScriptedToolCall
	for _, n := range []string{"1", "2", "3", "4"} {
		calls = append(calls, llm.ScriptedToolCall{ID: "call_" + n, Name: "Agent", Arguments: args(map[string]any{"prompt": "task " + n})})
	}
	first := llm.ScriptedResponse{Text: "answer 1"}
	if hang {
		first = llm.ScriptedResponse{Text: "thinking", Hang: true}
	}
	return &router{
		parent: llm.NewScripted(llm.ScriptedResponse{ToolCalls: calls}, llm.ScriptedResponse{Text: "parent done"}),
		children: map[string]*llm.Scripted{"task 1": llm.NewScripted(first), "task 2": llm.NewScripted(llm.ScriptedResponse{Text: "answer 2"}),
			"task 3": llm.NewScripted(llm.ScriptedResponse{Text: "answer 3"}), "task 4": llm.NewScripted(llm.ScriptedResponse{Text: "answer 4"})},
		seen: map[string][]llm.Request{},
	}
}

// A parent killed while three of its four children have finished and one runs, then
// resumed: the finished children's answers come from the log (no request of theirs is sent
// again), only the unfinished child runs again, with the same requests as before, and the
// parent's next request carries the four results as a run without the crash does.
func TestCrashWithRunningChildResumes(t *testing.T) {
	ctx := context.Background()

	// The reference: the same parent, no crash.
	refModel := fourChildren(false)
	refLog, _ := session.Open(ctx, session.NewMemory())
	ref := newHarness(t, refLog, refModel, false)
	ref.prompt(t, "delegate")
	refParent := refModel.requests("parent")
	if len(refParent) != 2 {
		t.Fatalf("the reference parent sent %d requests, want 2", len(refParent))
	}

	// The crash: the first child hangs while the other three finish.
	model := fourChildren(true)
	store := session.NewMemory()
	log, _ := session.Open(ctx, store)
	h := newHarness(t, log, model, false)
	if err := h.parent.Followup(ctx, dsh.UserText(dsh.SourceUser{}, "delegate")); err != nil {
		t.Fatal(err)
	}
	var crashed *session.Log
	for deadline := time.Now().Add(10 * time.Second); crashed == nil; time.Sleep(2 * time.Millisecond) {
		finished := len(recordsOf[dsh.SubagentFinished](t, log))
		if finished == 3 && len(model.requests("task 1")) == 1 {
			var err error
			if crashed, err = session.Open(ctx, store.Clone()); err != nil { // the process dies here
				t.Fatal(err)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d children finished after 10 s, want 3 and one running", finished)
		}
	}
	firstRun := model.requests("task 1")[0]
	h.parent.Cancel(dsh.CancelUser{}, false)
	_ = h.parent.Wait(ctx)

	// The restart: the same children's scripts, the first child no longer hangs.
	again := fourChildren(false)
	again.parent = llm.NewScripted(llm.ScriptedResponse{Text: "parent done"})
	r := newHarness(t, crashed, again, true)
	for _, task := range []string{"task 2", "task 3", "task 4"} {
		if n := len(again.requests(task)); n != 0 {
			t.Errorf("the finished child of %q sent %d requests after the restart, want none", task, n)
		}
	}
	rerun := again.requests("task 1")
	if len(rerun) != 1 {
		t.Fatalf("the unfinished child sent %d requests after the restart, want 1", len(rerun))
	}
	if got, want := jsonOf(rerun[0].Messages), jsonOf(firstRun.Messages); got != want {
		t.Errorf("the unfinished child's request differs after the restart:\n got %s\nwant %s", got, want)
	}
	started := map[string]int{}
	for _, s := range recordsOf[dsh.SubagentStarted](t, crashed) {
		started[s.CallID]++
	}
	if started["call_1"] != 2 || started["call_2"] != 1 || started["call_3"] != 1 || started["call_4"] != 1 {
		t.Errorf("children started per call: %v, want call_1 twice and the others once", started)
	}

	// The resumed parent's next request carries the four results in model order, byte
	// for byte as the reference's second request does, before the new prompt.
	r.prompt(t, "go on")
	got := again.requests("parent")
	if len(got) != 1 {
		t.Fatalf("the resumed parent sent %d requests, want 1", len(got))
	}
	want := refParent[1].Messages
	if len(got[0].Messages) != len(want)+1 {
		t.Fatalf("the resumed request has %d messages, want %d and the new prompt", len(got[0].Messages), len(want))
	}
	if g, w := jsonOf(got[0].Messages[:len(want)]), jsonOf(want); g != w {
		t.Errorf("the resumed parent's history differs from the reference:\n got %s\nwant %s", g, w)
	}
	var ends []string
	for _, e := range recordsOf[dsh.TurnEnd](t, crashed) {
		ends = append(ends, string(e.Reason.Kind()))
	}
	if strings.Join(ends, ",") != "interrupted,completed" {
		t.Errorf("turn ends = %v, want the crashed turn interrupted, then the new one completed", ends)
	}
}

// A call in the background returns at once; the parent's turn ends with the child listed
// as a background task, and the child's end wakes the parent for a second turn whose
// message is the child's notice.
func TestBackgroundCallWakesParent(t *testing.T) {
	ctx := context.Background()
	model := &router{
		parent: llm.NewScripted(
			llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{ID: "call_a", Name: "Agent",
				Arguments: args(map[string]any{"description": "probe", "prompt": "slow task"})}}},
			llm.ScriptedResponse{Text: "parent waits"},
			llm.ScriptedResponse{Text: "parent done"}),
		children: map[string]*llm.Scripted{"slow task": llm.NewScripted(llm.ScriptedResponse{Text: "child answer"})},
		seen:     map[string][]llm.Request{},
	}
	log, _ := session.Open(ctx, session.NewMemory())
	h := newHarnessWith(t, log, model, false, subagent.Fields{Task: "prompt", Description: "description",
		Background: "run_in_background", BackgroundByDefault: true})
	// The child waits until the parent's first turn is stopping, so that it is running
	// then.
	release := make(chan struct{})
	var tasks [][]dsh.BackgroundTask
	h.hooks.Plugin("bg").OnTurnStopping(func(ctx context.Context, p *dsh.TurnStoppingPayload) error {
		tasks = append(tasks, p.BackgroundTasks)
		if len(tasks) == 1 {
			close(release)
		}
		return nil
	})
	h.hooks.Plugin("gate").OnSubagentStart(func(ctx context.Context, p *dsh.SubagentStartPayload) error {
		<-release
		return nil
	})
	h.prompt(t, "delegate")
	if err := h.runner.WaitBackground(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.parent.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	got := toolResults(t, log)["call_a"]
	if !strings.Contains(got, "runs in the background") {
		t.Errorf("the call's result = %q, want the launch", got)
	}
	if len(tasks) != 2 {
		t.Fatalf("turn-stopping ran %d times, want 2 (the second turn is the notice's)", len(tasks))
	}
	if len(tasks[0]) != 1 || tasks[0][0].Kind != "subagent" || tasks[0][0].AgentType != subagent.GeneralPurpose ||
		tasks[0][0].Description == nil || *tasks[0][0].Description != "probe" || tasks[0][0].Status != dsh.BackgroundTaskStatusRunning {
		t.Errorf("the first stop's background tasks = %+v, want the running child", tasks[0])
	}
	if len(tasks[1]) != 0 {
		t.Errorf("the second stop's background tasks = %+v, want none", tasks[1])
	}
	parent := model.requests("parent")
	if len(parent) != 3 {
		t.Fatalf("the parent sent %d requests, want 3", len(parent))
	}
	last := parent[2].Messages[len(parent[2].Messages)-1]
	if jsonOf(last.Content) != `[{"kind":"text","text":"child answer"}]` || jsonOf(last.Source) != `{"kind":"tool","callId":"call_a"}` {
		t.Errorf("the notice = %s from %s, want the child's answer from the call", jsonOf(last.Content), jsonOf(last.Source))
	}
}

// A subagent-stop listener that always continues the child is capped as turn-stopping's
// continuations are: the child's turn ends after the cap, its log records the cap, and
// the call's result is the child's last answer.
func TestAlwaysContinuingStopIsCapped(t *testing.T) {
	ctx := context.Background()
	var responses []llm.ScriptedResponse
	for i := range 3 {
		responses = append(responses, llm.ScriptedResponse{Text: "child answer " + string(rune('1'+i))})
	}
	model := &router{
		parent: llm.NewScripted(
			llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{ID: "call_a", Name: "Agent", Arguments: args(map[string]any{"prompt": "never done"})}}},
			llm.ScriptedResponse{Text: "parent done"}),
		children: map[string]*llm.Scripted{"never done": llm.NewScripted(responses...)},
		seen:     map[string][]llm.Request{},
	}
	log, _ := session.Open(ctx, session.NewMemory())
	hooks, reg := dsh.NewRegistry(), tools.NewRegistry()
	rt := func() *tools.Runtime { return tools.New(reg, hooks) }
	var active []bool
	hooks.Plugin("always").OnSubagentStop(func(ctx context.Context, p *dsh.SubagentStopPayload) error {
		active = append(active, p.StopHookActive)
		return p.Agent.Steer(ctx, dsh.UserText(dsh.SourcePlugin{Plugin: "always"}, "keep going"))
	})
	logs := &subagent.MemoryLogs{}
	r, err := subagent.New(subagent.Config{Registry: hooks, Tools: rt, Model: model, LLM: dsh.LLMCallConfig{Provider: "scripted", Model: "m"},
		Logs: logs, ParentLog: log, ToolName: "Agent", ContinuationCap: 2, GeneralSystem: "You are a child."})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	def := r.Definition(subagent.ClaudeCode)
	def.Name = "Agent"
	_, _ = reg.Register(def)
	a, err := loop.New(ctx, loop.Config{ID: "main", Registry: hooks, Tools: rt(), Model: model, Log: log,
		LLM: dsh.LLMCallConfig{Provider: "scripted", Model: "m"}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Followup(ctx, dsh.UserText(dsh.SourceUser{}, "go")); err != nil {
		t.Fatal(err)
	}
	if err := a.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if got := toolResults(t, log)["call_a"]; got != "child answer 3" {
		t.Errorf("the call's result = %q, want the child's last answer", got)
	}
	if fmt.Sprint(active) != "[false true true]" {
		t.Errorf("stopHookActive at each stop = %v, want [false true true]", active)
	}
	started := recordsOf[dsh.SubagentStarted](t, log)
	if len(started) != 1 {
		t.Fatalf("%d children started, want 1", len(started))
	}
	child, _ := logs.Log(started[0].SessionID)
	if capped := recordsOf[dsh.ContinuationCapped](t, child); len(capped) != 1 || capped[0].Cap != 2 || capped[0].Continuations != 2 {
		t.Errorf("turn/continuation-capped in the child's log = %+v, want one at 2 of 2", capped)
	}
}

// A parent killed while a child it started in the background runs, then resumed:
// ResumeBackground starts the child again on the call's task (a new id; the old start
// stays in the log without an end), and its end wakes the resumed parent with its notice;
// a child in the background that finished before the crash is not run again.
func TestCrashWithBackgroundChildResumes(t *testing.T) {
	ctx := context.Background()
	bg := subagent.Fields{Task: "prompt", Description: "description", Background: "run_in_background", BackgroundByDefault: true}
	model := &router{
		parent: llm.NewScripted(
			llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{
				{ID: "call_slow", Name: "Agent", Arguments: args(map[string]any{"description": "slow", "prompt": "slow task"})},
				{ID: "call_fast", Name: "Agent", Arguments: args(map[string]any{"description": "fast", "prompt": "fast task"})}}},
			llm.ScriptedResponse{Text: "parent waits"},
			llm.ScriptedResponse{Text: "parent read the fast one"}),
		children: map[string]*llm.Scripted{"slow task": llm.NewScripted(llm.ScriptedResponse{Text: "thinking", Hang: true}),
			"fast task": llm.NewScripted(llm.ScriptedResponse{Text: "fast answer"})},
		seen: map[string][]llm.Request{},
	}
	store := session.NewMemory()
	log, _ := session.Open(ctx, store)
	h := newHarnessWith(t, log, model, false, bg)
	if err := h.parent.Followup(ctx, dsh.UserText(dsh.SourceUser{}, "delegate")); err != nil {
		t.Fatal(err)
	}
	var crashed *session.Log
	for deadline := time.Now().Add(10 * time.Second); crashed == nil; time.Sleep(2 * time.Millisecond) {
		// The fast child's notice reached the parent (a step of the first turn, or a turn
		// of its own, as the two run), the parent is idle, and the slow child runs.
		noticed := slices.ContainsFunc(recordsOf[dsh.UserMessageLogged](t, log), func(m dsh.UserMessageLogged) bool {
			src, ok := m.Message.Source.(dsh.SourceTool)
			return ok && src.CallID == "call_fast"
		})
		if noticed && len(model.requests("slow task")) == 1 && h.parent.Status() == dsh.AgentStatusIdle {
			var err error
			if crashed, err = session.Open(ctx, store.Clone()); err != nil { // the process dies here
				t.Fatal(err)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s, the parent had not read the fast child's notice, or the slow child had not started: parent requests %d, slow %d, fast %d, status %s",
				len(model.requests("parent")), len(model.requests("slow task")), len(model.requests("fast task")), h.parent.Status())
		}
	}
	h.runner.Close()

	again := &router{
		parent:   llm.NewScripted(llm.ScriptedResponse{Text: "parent read the slow one"}),
		children: map[string]*llm.Scripted{"slow task": llm.NewScripted(llm.ScriptedResponse{Text: "slow answer"})},
		seen:     map[string][]llm.Request{},
	}
	r := newHarnessWith(t, crashed, again, true, bg)
	children, err := r.runner.ResumeBackground(ctx, r.parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(children) != 1 || children[0].CallID != "call_slow" || children[0].Task != "slow task" || children[0].Description != "slow" {
		t.Fatalf("resumed children = %+v, want the slow one alone", children)
	}
	if err := r.runner.WaitBackground(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.parent.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(again.requests("fast task")); n != 0 {
		t.Errorf("the finished child sent %d requests after the restart", n)
	}
	started := recordsOf[dsh.SubagentStarted](t, crashed)
	if len(started) != 3 || started[2].CallID != "call_slow" || started[2].AgentID == started[0].AgentID {
		t.Errorf("subagent/started = %+v, want the slow child started again with a new id", started)
	}
	parent := again.requests("parent")
	if len(parent) != 1 {
		t.Fatalf("the resumed parent sent %d requests, want 1 (the slow child's notice)", len(parent))
	}
	last := parent[0].Messages[len(parent[0].Messages)-1]
	if jsonOf(last.Content) != `[{"kind":"text","text":"slow answer"}]` || jsonOf(last.Source) != `{"kind":"tool","callId":"call_slow"}` {
		t.Errorf("the notice = %s from %s, want the slow child's answer from its call", jsonOf(last.Content), jsonOf(last.Source))
	}
	// A second resume finds nothing left running.
	if more, err := r.runner.ResumeBackground(ctx, r.parent); err != nil || len(more) != 0 {
		t.Errorf("a second ResumeBackground started %v (%v)", more, err)
	}
}

// A parent killed after its child in the background ended but before it read the child's
// notice: resumed, it reads the notice, built from subagent/finished, and the child does
// not run again.
func TestCrashBeforeNoticeDelivers(t *testing.T) {
	ctx := context.Background()
	bg := subagent.Fields{Task: "prompt", Description: "description", Background: "run_in_background", BackgroundByDefault: true}
	model := &router{
		parent: llm.NewScripted(
			llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{ID: "call_a", Name: "Agent", Arguments: args(map[string]any{"description": "probe", "prompt": "fast task"})}}},
			llm.ScriptedResponse{Text: "parent waits"},
			llm.ScriptedResponse{Text: "parent read it"}),
		children: map[string]*llm.Scripted{"fast task": llm.NewScripted(llm.ScriptedResponse{Text: "fast answer"})},
		seen:     map[string][]llm.Request{},
	}
	store := session.NewMemory()
	log, _ := session.Open(ctx, store)
	h := newHarnessWith(t, log, model, false, bg)
	// The process dies at the step that claims the notice (a step of the first turn, or a
	// turn of its own, as the two run): its message is claimed, not logged.
	var crashed *session.Log
	h.hooks.Plugin("crash").OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		notice := slices.ContainsFunc(p.Messages, func(m dsh.UserMessage) bool {
			src, ok := m.Source.(dsh.SourceTool)
			return ok && src.CallID == "call_a"
		})
		if p.AgentID == "main" && notice && crashed == nil {
			var err error
			if crashed, err = session.Open(ctx, store.Clone()); err != nil {
				return nil, err
			}
		}
		return next.Call(ctx)
	})
	h.prompt(t, "delegate")
	if err := h.runner.WaitBackground(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.parent.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if crashed == nil {
		t.Fatal("no step claimed the notice")
	}
	h.runner.Close()
	if fins := recordsOf[dsh.SubagentFinished](t, crashed); len(fins) != 1 {
		t.Fatalf("the crashed log has %d subagent/finished, want the child's", len(fins))
	}

	again := &router{parent: llm.NewScripted(llm.ScriptedResponse{Text: "parent read it"}), children: map[string]*llm.Scripted{}, seen: map[string][]llm.Request{}}
	r := newHarnessWith(t, crashed, again, true, bg)
	children, err := r.runner.ResumeBackground(ctx, r.parent)
	if err != nil || len(children) != 1 || children[0].CallID != "call_a" {
		t.Fatalf("resumed = %+v (%v), want the child of call_a", children, err)
	}
	if err := r.parent.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(recordsOf[dsh.SubagentStarted](t, crashed)); n != 1 {
		t.Errorf("%d children started, want 1 (the finished child does not run again)", n)
	}
	parent := again.requests("parent")
	if len(parent) != 1 {
		t.Fatalf("the resumed parent sent %d requests, want 1 (the notice's)", len(parent))
	}
	last := parent[0].Messages[len(parent[0].Messages)-1]
	if jsonOf(last.Content) != `[{"kind":"text","text":"fast answer"}]` {
		t.Errorf("the notice = %s, want the child's answer", jsonOf(last.Content))
	}
}
