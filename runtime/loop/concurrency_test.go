package loop

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
)

// TestConcurrentAgents runs 64 agents at once in one process: one registry and one tool
// runtime, each agent with its own log and its own scoped listeners.
func TestConcurrentAgents(t *testing.T) {
	const agents, turns = 64, 3
	reg := dsh.NewRegistry(dsh.WithLogger(quiet), DecisionAudit())
	toolReg := tools.NewRegistry()
	rt := tools.New(toolReg, reg, tools.WithLogger(quiet))
	if _, err := toolReg.Register(toolDef("p", true, func(ctx context.Context, rc *tools.RunContext) (any, error) {
		a, _ := AgentFromContext(ctx)
		return a.ID(), rc.DeferContext(pluginMsg("", "ctx of "+a.ID()))
	})); err != nil {
		t.Fatal(err)
	}
	var globalMu sync.Mutex
	global := map[string]int{}
	reg.OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		globalMu.Lock()
		global[p.AgentID]++
		globalMu.Unlock()
		return next.Call(ctx)
	})

	type result struct {
		id       string
		foreign  []string // agent ids a scoped listener saw that were not its own
		preSteps int
		log      *session.Log
		model    *llm.Scripted
	}
	results := make([]*result, agents)
	var wg sync.WaitGroup
	for i := range agents {
		id := fmt.Sprintf("agent-%02d", i)
		r := &result{id: id}
		results[i] = r
		scoped := reg.Plugin("scoped").ForAgent(id)
		scoped.OnPreStep(func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
			if p.AgentID != id {
				r.foreign = append(r.foreign, p.AgentID)
			}
			r.preSteps++
			return next.Call(ctx)
		})
		scoped.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
			if p.Exec.AgentID == nil || *p.Exec.AgentID != id {
				r.foreign = append(r.foreign, "tool call of another agent")
			}
			return next.Call(ctx)
		})
		wg.Add(1)
		go func() {
			defer wg.Done()
			var script []llm.ScriptedResponse
			for range turns {
				script = append(script, calls("c1:p", "c2:p"), text("done"))
			}
			r.model = llm.NewScripted(script...)
			l, err := session.Open(context.Background(), session.NewMemory())
			if err != nil {
				t.Error(err)
				return
			}
			r.log = l
			a, err := New(context.Background(), Config{ID: id, Registry: reg, Tools: rt, Model: r.model, Log: l,
				LLM: dsh.LLMCallConfig{Provider: "test", Model: "m"}, Audit: true, Logger: quiet})
			if err != nil {
				t.Error(err)
				return
			}
			defer closeWithin(t, a)
			for n := range turns {
				if err := a.Followup(context.Background(), userMsg(fmt.Sprintf("u%d", n), "go")); err != nil {
					t.Error(err)
					return
				}
				wait(t, a)
			}
		}()
	}
	wg.Wait()
	for _, r := range results {
		if r.log == nil {
			continue
		}
		if len(r.foreign) > 0 {
			t.Errorf("%s: scoped listeners saw %v", r.id, r.foreign)
		}
		diff(t, r.id+" pre-steps", 2*turns, r.preSteps)
		diff(t, r.id+" global pre-steps", 2*turns, global[r.id])
		diff(t, r.id+" reasons", []string{`{"kind":"completed"}`, `{"kind":"completed"}`, `{"kind":"completed"}`}, reasons(t, r.log))
		diff(t, r.id+" results", []string{r.id, r.id, r.id, r.id, r.id, r.id},
			fields(t, r.log, func(x dsh.ToolResultLogged) string { return textOf(x.Message.Content) }))
		diff(t, r.id+" contexts", 2*turns, len(userTextsBySource(t, r.log, dsh.SourcePluginKind)))
		_ = r.log.Close()
	}
}

// TestConcurrentSendsOnOneAgent hammers one agent with sends and cancels from many
// goroutines; the inbox the log replays to must equal the agent's.
func TestConcurrentSendsOnOneAgent(t *testing.T) {
	var script []llm.ScriptedResponse
	for range 200 {
		script = append(script, text("ok"))
	}
	e := newEnv(t, script...)
	a := e.agent()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				id := fmt.Sprintf("g%d-%d", g, i)
				var err error
				switch i % 4 {
				case 0:
					err = a.Followup(context.Background(), userMsg(id, id))
				case 1:
					err = a.Steer(context.Background(), pluginMsg(id, id))
				case 2:
					err = a.Inject(context.Background(), pluginMsg(id, id))
				case 3:
					a.Cancel(dsh.CancelUser{}, g%2 == 0)
				}
				if err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	wait(t, a)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	// Give asynchronous clears (clearInbox under contention) the time to land.
	waitFor(t, "a consistent inbox", func() bool {
		st, err := session.Replay(e.log.Events())
		if err != nil {
			t.Fatal(err)
		}
		nextTurn, nextStep := a.Inbox()
		return fmt.Sprint(messageIDs(st.NextTurn), messageIDs(st.NextStep)) == fmt.Sprint(messageIDs(nextTurn), messageIDs(nextStep))
	})
	if st, err := session.Replay(e.log.Events()); err != nil || st.TurnOpen {
		t.Errorf("replay: %v, open turn %v", err, st.TurnOpen)
	}
}
