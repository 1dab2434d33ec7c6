package conformance

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	sc "github.com/dshkit/dsh/generated/conformance"
	"github.com/dshkit/dsh/generated/dsh"
)

// DefaultAgent is the id of the agent a scenario's inputs go to.
const DefaultAgent = "a1"

// scenarioTimeout bounds one scenario, so that a runtime that wedges fails instead of
// hanging the suite.
const scenarioTimeout = 20 * time.Second

// Scenarios returns the suite, decoded.
func Scenarios() ([]sc.Entry, error) { return sc.Scenarios() }

// Run runs every scenario of the suite against runtimes built by f, one subtest each.
func Run(t *testing.T, f Factory) {
	entries, err := sc.Scenarios()
	if err != nil {
		t.Fatalf("conformance suite: %v", err)
	}
	for _, e := range entries {
		t.Run(e.ID, func(t *testing.T) { RunScenario(t, f, e) })
	}
}

// RunID runs the scenario with the id against a runtime built by f.
func RunID(t *testing.T, f Factory, id string) {
	t.Helper()
	byID, err := suiteByID()
	if err != nil {
		t.Fatalf("conformance suite: %v", err)
	}
	e, ok := byID[id]
	if !ok {
		t.Fatalf("no conformance scenario %q", id)
	}
	RunScenario(t, f, e)
}

// suiteByID is the suite, decoded once per process and indexed by id, for RunID: the
// generated suite calls it once per scenario, and decoding the whole suite (800 KB of
// JSON) on every call made the suite quadratic (a minute of CPU more under -race). The
// entries are only read: a scenario run copies what it changes.
var suiteByID = sync.OnceValues(func() (map[string]sc.Entry, error) {
	entries, err := sc.Scenarios()
	if err != nil {
		return nil, err
	}
	byID := make(map[string]sc.Entry, len(entries))
	for _, e := range entries {
		byID[e.ID] = e
	}
	return byID, nil
})

// RunScenario runs one scenario against a runtime built by f and reports every mismatch,
// with the scenario's doc, as a test error.
func RunScenario(t *testing.T, f Factory, e sc.Entry) {
	t.Helper()
	for _, problem := range Evaluate(t, f, e) {
		t.Errorf("%s: %s\n%s", e.ID, e.Doc, problem)
	}
}

// Evaluate runs one scenario against a runtime built by f and returns every mismatch, as
// readable text; nil means the runtime conforms. A setup or input failure, or a runtime
// that does not settle within 20 s, is one problem that ends the run.
func Evaluate(tb testing.TB, f Factory, e sc.Entry) []string {
	return EvaluateWithin(tb, f, e, scenarioTimeout)
}

// EvaluateWithin is Evaluate with the scenario bounded by limit instead of 20 s: a
// mutation check, where a wedged scenario is just one more detection, can wait less.
func EvaluateWithin(tb testing.TB, f Factory, e sc.Entry, limit time.Duration) []string {
	rt := f(tb)
	defer rt.Close()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	r := &run{rt: rt, ctx: ctx, limit: limit, gates: map[string]*gate{}, agents: map[string]Agent{}, ids: map[string]int{}, tempDir: tb.TempDir}
	if err := r.setup(e.Scenario.Setup); err != nil {
		return []string{fmt.Sprintf("setup: %v", err)}
	}
	for i, step := range e.Scenario.Run {
		if err := r.step(step); err != nil {
			return []string{fmt.Sprintf("run[%d]: %v", i, err)}
		}
	}
	if err := r.settle(); err != nil {
		return []string{err.Error()}
	}
	return r.check(e.Scenario.Expect)
}

// run is the state of one scenario run.
type run struct {
	rt    Runtime
	ctx   context.Context
	limit time.Duration // ctx's bound

	mu       sync.Mutex
	trace    []string
	results  []dsh.ToolExecutionResult
	gates    map[string]*gate
	agents   map[string]Agent
	pending  sync.WaitGroup // direct executions in flight
	errs     []string
	ids      map[string]int // how many messages used each text, for their ids
	compacts []string       // the outcomes of the compact steps

	tempDir   func() string // a fresh temporary directory, removed after the run
	hookFiles *hookFiles    // the scenario's hook scripts, when it has hooks
}

// gate is a named point a script waits at until a `release` step opens it.
type gate struct {
	open    chan struct{}
	waiters int
	waiting chan struct{} // closed when the first waiter arrives
	once    sync.Once
}

func (r *run) gate(name string) *gate {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.gates[name]
	if g == nil {
		g = &gate{open: make(chan struct{}), waiting: make(chan struct{})}
		r.gates[name] = g
	}
	return g
}

// arrive counts a waiter at the named gate: a `settle` step on it then returns.
func (r *run) arrive(name string) *gate {
	g := r.gate(name)
	r.mu.Lock()
	g.waiters++
	r.mu.Unlock()
	g.once.Do(func() { close(g.waiting) })
	return g
}

// wait blocks at the named gate until it is released or ctx ends.
func (r *run) wait(ctx context.Context, name string) error {
	g := r.arrive(name)
	select {
	case <-g.open:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// release opens the named gate (once; releasing it again does nothing), for scripted
// hooks too.
func (r *run) release(name string) {
	g := r.gate(name)
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-g.open:
	default:
		close(g.open)
		if r.hookFiles != nil {
			if err := os.WriteFile(r.hookFiles.gateFile(name, "open"), nil, 0o644); err != nil {
				r.errs = append(r.errs, fmt.Sprintf("release %q for the hooks: %v", name, err))
			}
		}
	}
}

func (r *run) record(label string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.trace = append(r.trace, label)
}

// agent returns the agent with the id, creating it on first use.
func (r *run) agent(id string) (Agent, error) {
	r.mu.Lock()
	a := r.agents[id]
	r.mu.Unlock()
	if a != nil {
		return a, nil
	}
	a, err := r.rt.Agent(r.ctx, id)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if prev := r.agents[id]; prev != nil {
		return prev, nil
	}
	r.agents[id] = a
	return a, nil
}

// existing returns the agent with the id if it was created.
func (r *run) existing(id string) Agent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.agents[id]
}

// message builds a user message with a deterministic id: its text, followed by "#n" for
// the n-th message of the run with that text (n >= 2), so that expectations can name ids
// (e.g. turn/end{blocked}.droppedMessageIds) and ids stay unique.
func (r *run) message(text string, source dsh.MessageSource) dsh.UserMessage {
	r.mu.Lock()
	r.ids[text]++
	id := text
	if n := r.ids[text]; n > 1 {
		id = fmt.Sprintf("%s#%d", text, n)
	}
	r.mu.Unlock()
	return dsh.UserMessage{
		ID:      id,
		Role:    dsh.UserMessageRoleUser,
		Content: []dsh.ContentBlock{dsh.TextBlock{Text: text}},
		Source:  source,
	}
}

// pluginSource is the source of messages scripted listeners and bodies add.
var pluginSource dsh.MessageSource = dsh.SourcePlugin{Plugin: "conformance"}

// step runs one input.
func (r *run) step(s sc.Step) error {
	switch {
	case s.Execute != nil:
		return r.execute(*s.Execute)
	case s.Followup != nil:
		a, err := r.agent(DefaultAgent)
		if err != nil {
			return err
		}
		return a.Followup(r.ctx, r.message(*s.Followup, dsh.SourceUser{}))
	case s.Steer != nil:
		a, err := r.agent(DefaultAgent)
		if err != nil {
			return err
		}
		return a.Handle().Steer(r.ctx, r.message(*s.Steer, dsh.SourceUser{}))
	case s.Inject != nil:
		a, err := r.agent(DefaultAgent)
		if err != nil {
			return err
		}
		return a.Handle().Inject(r.ctx, r.message(*s.Inject, dsh.SourceUser{}))
	case s.Cancel != "":
		a, err := r.agent(DefaultAgent)
		if err != nil {
			return err
		}
		a.Cancel(string(s.Cancel), s.KeepInbox != nil && *s.KeepInbox)
		return nil
	case s.Release != nil:
		r.release(*s.Release)
		return nil
	case s.Settle != nil:
		g := r.gate(*s.Settle)
		select {
		case <-g.waiting:
			return nil
		case <-r.ctx.Done():
			return fmt.Errorf("nothing reached gate %q", *s.Settle)
		}
	case s.Idle != nil && *s.Idle:
		if a := r.existing(DefaultAgent); a != nil {
			return a.WaitIdle(r.ctx)
		}
		return nil
	case s.Compact != nil:
		a, err := r.agent(DefaultAgent)
		if err != nil {
			return err
		}
		out, err := a.Compact(r.ctx, *s.Compact)
		if err != nil {
			return fmt.Errorf("compact: %w", err)
		}
		r.mu.Lock()
		r.compacts = append(r.compacts, out)
		r.mu.Unlock()
		return nil
	case s.Resume != nil && *s.Resume:
		if r.existing(DefaultAgent) == nil {
			return fmt.Errorf("resume: no agent %q yet", DefaultAgent)
		}
		a, err := r.rt.Resume(r.ctx, DefaultAgent)
		if err != nil {
			return fmt.Errorf("resume: %w", err)
		}
		r.mu.Lock()
		r.agents[DefaultAgent] = a
		r.mu.Unlock()
		return nil
	}
	return fmt.Errorf("empty step")
}

// execute runs a direct execution in the background (a later step may release a gate it
// waits at); its result is collected in order of the steps.
func (r *run) execute(x sc.Execute) error {
	in := ExecuteInput{CallID: x.CallID, Name: x.Name, Arguments: x.Arguments}
	if len(in.Arguments) == 0 {
		in.Arguments = []byte("{}")
	}
	if x.Agent != nil {
		in.AgentID = *x.Agent
		if _, err := r.agent(in.AgentID); err != nil {
			return err
		}
	}
	ctx := r.ctx
	if x.PreCancelled != nil && *x.PreCancelled {
		c, cancel := context.WithCancel(ctx)
		cancel()
		ctx = c
	}
	r.mu.Lock()
	slot := len(r.results)
	r.results = append(r.results, nil)
	r.mu.Unlock()
	r.pending.Add(1)
	go func() {
		defer r.pending.Done()
		res := r.rt.Execute(ctx, in)
		r.mu.Lock()
		r.results[slot] = res
		r.mu.Unlock()
	}()
	return nil
}

// settle waits for the direct executions and for every agent to be idle.
func (r *run) settle() error {
	done := make(chan struct{})
	go func() { r.pending.Wait(); close(done) }()
	select {
	case <-done:
	case <-r.ctx.Done():
		return fmt.Errorf("direct executions did not finish within %s", r.limit)
	}
	r.mu.Lock()
	agents := make([]Agent, 0, len(r.agents))
	for _, a := range r.agents {
		agents = append(agents, a)
	}
	r.mu.Unlock()
	for _, a := range agents {
		if err := a.WaitIdle(r.ctx); err != nil {
			return fmt.Errorf("agent %s did not become idle: %v", a.ID(), err)
		}
	}
	return nil
}
