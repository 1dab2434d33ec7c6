package subagent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
)

// The names of Codex's multi_agent_v1 functions (Codex 0.169.0), the keys of
// [Runner.CodexTools].
const (
	SpawnAgent  = "spawn_agent"
	WaitAgent   = "wait_agent"
	CloseAgent  = "close_agent"
	SendInput   = "send_input"
	ResumeAgent = "resume_agent"
)

// Codex's wait_agent bounds on timeout_ms (its description: "Defaults to 30000, min
// 10000, max 3600000").
const (
	codexWaitDefault = 30 * time.Second
	codexWaitMin     = 10 * time.Second
	codexWaitMax     = time.Hour
)

// CodexOptions are how [Runner.CodexTools] words what a child's end tells the parent.
type CodexOptions struct {
	// Notify, when set, receives the parent's notification of a child that reached a
	// final status (Codex sends "<subagent_notification>\n{agent_path, status}\n
	// </subagent_notification>" as a user message in the parent's next request): the
	// caller queues it for the parent agent's next step. callID is the spawn_agent call.
	Notify func(ctx context.Context, callID, text string) error
	// Clock, when set, replaces time.After for wait_agent's timeout (tests).
	Clock func(d time.Duration) <-chan time.Time
	// UnknownType, when set, is the model's text of a spawn_agent call naming an agent
	// type there is none of, {type} standing for it (Codex's "unknown agent_type
	// '{type}'", the toolset row's roles.unknown); "": dsh's own.
	UnknownType string
	// Nicknames are the names a spawned child is given, one at random, as Codex gives
	// each child a user-facing nickname from a list of its own (spec/toolsets/codex.json's
	// spawn_agent row); none: spawn_agent answers no nickname.
	Nicknames []string
	// Interrupted is the note a child whose running turn send_input interrupts reads
	// before the message (Codex's "<turn_aborted>…</turn_aborted>", the toolset's
	// send_input row's interrupted): [ContinueOptions].Aborted.
	Interrupted string
}

// NewCodexID makes a child's id shaped as Codex's thread ids: a UUID of version 7 (its
// first 48 bits the time in milliseconds).
func NewCodexID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	ms := uint64(time.Now().UnixMilli())
	for i := range 6 {
		b[i] = byte(ms >> (40 - 8*i))
	}
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// codexAgents is the state of Codex's agent functions over one Runner: the children
// spawn_agent started, by id, and those close_agent closed.
type codexAgents struct {
	r    *Runner
	opts CodexOptions

	mu       sync.Mutex
	children map[string]*Child
	closed   map[string]bool
	// notified is closed once the parent was notified of a child's latest turn's end (or
	// will not be).
	notified map[string]chan struct{}
	// rearmed are the children resume_agent reopened: the end of their next turn notifies
	// the parent.
	rearmed map[string]bool
}

// CodexTools returns Codex's multi_agent_v1 functions over r, by name: spawn_agent starts
// a child in the background and answers its id at once ({"agent_id", "nickname"});
// wait_agent waits until one of its targets reaches a final status, or its timeout
// ({"status": {id: status}, "timed_out"}); close_agent cancels a child that is still
// running and answers its previous status ({"previous_status"}); send_input gives a child
// whose turn ended another turn on its message, and a running child the message in its
// running turn, or, with interrupt, in a new turn after aborting that one
// ([Runner.Continue]), and answers at once ({"submission_id"}); resume_agent reopens a closed child ({"status": "pending_init"}),
// which send_input may then continue. A status is {"completed": answer}, {"errored":
// message}, "running" or "shutdown" (a closed or cancelled child). An id no spawn_agent
// gave fails in Codex's words ("agent with id X not found"). The caller sets each tool's
// name, description and schema (the toolset's rows).
func (r *Runner) CodexTools(opts CodexOptions) map[string]tools.Definition {
	a := &codexAgents{r: r, opts: opts, children: map[string]*Child{}, closed: map[string]bool{}, notified: map[string]chan struct{}{},
		rearmed: map[string]bool{}}
	return map[string]tools.Definition{
		SpawnAgent:  {Name: SpawnAgent, Run: a.spawn, IsConcurrencySafe: func(json.RawMessage) bool { return true }},
		WaitAgent:   {Name: WaitAgent, Run: a.wait, IsConcurrencySafe: func(json.RawMessage) bool { return true }},
		CloseAgent:  {Name: CloseAgent, Run: a.close},
		SendInput:   {Name: SendInput, Run: a.sendInput},
		ResumeAgent: {Name: ResumeAgent, Run: a.resume},
	}
}

// codexTask is the text of a message or of text items (spawn_agent's and send_input's).
func codexTask(message string, items []codexItem) string {
	if message != "" {
		return message
	}
	var texts []string
	for _, it := range items {
		if it.Text != "" {
			texts = append(texts, it.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// codexItem is an input item of spawn_agent and send_input (the text of text items is
// read).
type codexItem struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// sendInput runs send_input: a child whose turn ended (finished, or closed and resumed)
// gets message as a new turn on its own history, in the background; the value is the
// submission's id. Codex 0.169.0 answers {"submission_id":"<uuid>"}, and the child ends
// with another SubagentStop and no SubagentStart (codex/subagent-send-input); a child
// whose turn is running reads the message at its turn's next step, after the step's tool
// results (codex/subagent-send-running); with interrupt, its running turn is aborted (a
// running exec_command call reads "Wall time: N seconds\naborted by user", no
// PostToolUse, no SubagentStop) and another starts, which reads the Interrupted note and
// then the message (codex/subagent-send-interrupt). A closed child that resume_agent did
// not reopen is not found, as in Codex (codex/subagent-continue-edges).
func (a *codexAgents) sendInput(ctx context.Context, rc *tools.RunContext) (any, error) {
	var in struct {
		Target    string      `json:"target"`
		Message   string      `json:"message"`
		Items     []codexItem `json:"items"`
		Interrupt bool        `json:"interrupt"`
	}
	if err := rc.BindArguments(&in); err != nil {
		return nil, tools.NewError(CodeSubagent, "bad input: "+err.Error())
	}
	c, err := a.child(in.Target)
	if err != nil {
		return nil, err
	}
	task := codexTask(in.Message, in.Items)
	switch {
	case task == "":
		return nil, tools.NewError(CodeSubagent, "the input has no text: give message or text items")
	case a.isClosed(c.ID):
		// Codex 0.169.0 no longer knows a closed agent until resume_agent reopens it
		// (codex/subagent-continue-edges).
		return nil, tools.NewError(CodeSubagent, fmt.Sprintf("agent with id %s not found", c.ID))
	}
	opts := ContinueOptions{Interrupt: in.Interrupt, Aborted: a.opts.Interrupted}
	next, err := a.r.Continue(ctx, c.ID, dsh.UserText(dsh.SourceTool{CallID: rc.Exec().CallID}, task), opts, nil)
	if err != nil {
		if errors.Is(err, ErrRunning) {
			return nil, tools.NewError(CodeSubagent, fmt.Sprintf("agent with id %s is starting or ending its turn: send the input again", c.ID))
		}
		return nil, tools.NewError(CodeSubagent, err.Error())
	}
	if next != nil && next != c {
		// A new turn (a message for a running turn is read by it: its Child stays).
		a.track(ctx, next)
	}
	return map[string]string{"submission_id": NewCodexID()}, nil
}

// resume runs resume_agent: a closed child is open again (Codex 0.169.0 answers
// {"status":"pending_init"}, and the parent is notified of the end of its next turn:
// codex/subagent-resume); the value of an open one is its status (measured:
// {"status":{"completed":…}}, codex/subagent-continue-edges).
func (a *codexAgents) resume(ctx context.Context, rc *tools.RunContext) (any, error) {
	var in struct {
		ID string `json:"id"`
	}
	if err := rc.BindArguments(&in); err != nil {
		return nil, tools.NewError(CodeSubagent, "bad input: "+err.Error())
	}
	c, err := a.child(in.ID)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	closed := a.closed[c.ID]
	if closed {
		delete(a.closed, c.ID)
		a.rearmed[c.ID] = true
	}
	a.mu.Unlock()
	if !closed {
		return map[string]any{"status": a.status(c)}, nil
	}
	return map[string]any{"status": "pending_init"}, nil
}

// track makes c, a child's latest turn, the one its id names; the parent is notified of
// its end when it is a first turn, or the first after resume_agent (Codex notifies once
// per spawn or resume: a turn send_input started after neither ends without one).
func (a *codexAgents) track(ctx context.Context, c *Child) {
	notified := make(chan struct{})
	a.mu.Lock()
	_, known := a.children[c.ID]
	watch := !known || a.rearmed[c.ID]
	delete(a.rearmed, c.ID)
	a.children[c.ID] = c
	a.notified[c.ID] = notified
	a.mu.Unlock()
	if !watch {
		close(notified)
		return
	}
	go func() {
		defer close(notified)
		a.notify(context.WithoutCancel(ctx), c)
	}()
}

// codexSpawnInput is spawn_agent's input (the keys dsh reads).
type codexSpawnInput struct {
	Message   string      `json:"message"`
	Items     []codexItem `json:"items"`
	AgentType string      `json:"agent_type"`
}

// spawn runs spawn_agent.
func (a *codexAgents) spawn(ctx context.Context, rc *tools.RunContext) (any, error) {
	var in codexSpawnInput
	if err := rc.BindArguments(&in); err != nil {
		return nil, tools.NewError(CodeSubagent, "bad input: "+err.Error())
	}
	task := codexTask(in.Message, in.Items)
	if task == "" {
		return nil, tools.NewError(CodeSubagent, "the agent has no task: give message or text items")
	}
	exec := rc.Exec()
	req := Request{CallID: exec.CallID, Type: in.AgentType, Task: task, ParentLineage: exec.Lineage}
	if exec.AgentID != nil {
		req.ParentAgentID = *exec.AgentID
	}
	c, err := a.r.Spawn(ctx, req, nil)
	if err != nil {
		if errors.Is(err, ErrUnknownType) && a.opts.UnknownType != "" {
			return nil, tools.NewError(CodeSubagent, strings.ReplaceAll(a.opts.UnknownType, "{type}", in.AgentType))
		}
		return nil, tools.NewError(CodeSubagent, err.Error())
	}
	a.track(ctx, c)
	out := map[string]string{"agent_id": c.ID}
	if n := len(a.opts.Nicknames); n > 0 {
		out["nickname"] = a.opts.Nicknames[mrand.IntN(n)]
	}
	return out, nil
}

// notify tells the parent that c reached a final status, once it has.
func (a *codexAgents) notify(ctx context.Context, c *Child) {
	<-c.Done()
	if a.opts.Notify == nil || a.isClosed(c.ID) {
		return
	}
	body, _ := json.Marshal(map[string]any{"agent_path": c.ID, "status": a.status(c)})
	text := "<subagent_notification>\n" + string(body) + "\n</subagent_notification>"
	if err := a.opts.Notify(ctx, c.CallID, text); err != nil {
		a.r.cfg.Logger.Warn("subagent: notifying the parent of a child's end", "agent", c.ID, "err", err)
	}
}

// status is c's status as Codex words it.
func (a *codexAgents) status(c *Child) any {
	if a.isClosed(c.ID) {
		return "shutdown"
	}
	select {
	case <-c.Done():
	default:
		return "running"
	}
	res, err := c.Result()
	switch {
	case err != nil:
		return map[string]string{"errored": err.Error()}
	case res.Outcome == dsh.SubagentOutcomeCompleted:
		return map[string]string{"completed": res.Answer}
	case res.Outcome == dsh.SubagentOutcomeCancelled:
		return "shutdown"
	default:
		msg := string(res.Outcome)
		if res.Err != nil {
			msg = res.Err.Error()
		}
		return map[string]string{"errored": msg}
	}
}

func (a *codexAgents) isClosed(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.closed[id]
}

// child is the child of id, or a tool error naming it.
func (a *codexAgents) child(id string) (*Child, error) {
	a.mu.Lock()
	c, ok := a.children[id]
	a.mu.Unlock()
	if ok {
		return c, nil
	}
	// A child of the parent's log, started before a restart: its recorded end.
	if c, ok = a.r.Agent(id); ok {
		a.mu.Lock()
		defer a.mu.Unlock()
		if prev, ok := a.children[id]; ok {
			return prev, nil
		}
		done := make(chan struct{})
		close(done)
		a.children[id], a.notified[id] = c, done
		return c, nil
	}
	return nil, tools.NewError(CodeSubagent, fmt.Sprintf("agent with id %s not found", id))
}

// codexWaitInput is wait_agent's input.
type codexWaitInput struct {
	Targets   []string `json:"targets"`
	TimeoutMS *float64 `json:"timeout_ms"`
}

// waitTimeout is a wait's timeout for timeout_ms, within Codex's bounds.
func waitTimeout(ms *float64) time.Duration {
	if ms == nil {
		return codexWaitDefault
	}
	d := time.Duration(*ms * float64(time.Millisecond))
	return min(max(d, codexWaitMin), codexWaitMax)
}

// wait runs wait_agent: it returns as soon as one target has reached a final status
// (every target that has by then is in the status), or empty when the timeout passes.
func (a *codexAgents) wait(ctx context.Context, rc *tools.RunContext) (any, error) {
	var in codexWaitInput
	if err := rc.BindArguments(&in); err != nil {
		return nil, tools.NewError(CodeSubagent, "bad input: "+err.Error())
	}
	if len(in.Targets) == 0 {
		return nil, tools.NewError(CodeSubagent, "targets is empty: name the agents to wait for")
	}
	children := make([]*Child, len(in.Targets))
	for i, id := range in.Targets {
		c, err := a.child(id)
		if err != nil {
			return nil, err
		}
		children[i] = c
	}
	final := func() map[string]any {
		out := map[string]any{}
		for _, c := range children {
			if s := a.status(c); s != "running" {
				out[c.ID] = s
				// The parent reads the notification of an end with the wait's result, as
				// Codex sends the two in one request (codex/subagent-hooks).
				a.mu.Lock()
				ch := a.notified[c.ID]
				a.mu.Unlock()
				select {
				case <-ch:
				case <-ctx.Done():
				}
			}
		}
		return out
	}
	after := a.opts.Clock
	if after == nil {
		after = time.After
	}
	timeout := after(waitTimeout(in.TimeoutMS))
	// One goroutine per target signals the first end.
	done := make(chan struct{}, len(children))
	stop := make(chan struct{})
	defer close(stop)
	for _, c := range children {
		go func() {
			select {
			case <-c.Done():
				done <- struct{}{}
			case <-stop:
			}
		}()
	}
	if s := final(); len(s) > 0 {
		return codexWaitResult{Status: s}, nil
	}
	select {
	case <-done:
		return codexWaitResult{Status: final()}, nil
	case <-timeout:
		return codexWaitResult{Status: map[string]any{}, TimedOut: true}, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// codexWaitResult is wait_agent's value, as Codex writes it.
type codexWaitResult struct {
	Status   map[string]any `json:"status"`
	TimedOut bool           `json:"timed_out"`
}

// close runs close_agent: a running child is cancelled; its previous status is the
// value.
func (a *codexAgents) close(ctx context.Context, rc *tools.RunContext) (any, error) {
	var in struct {
		Target string `json:"target"`
	}
	if err := rc.BindArguments(&in); err != nil {
		return nil, tools.NewError(CodeSubagent, "bad input: "+err.Error())
	}
	c, err := a.child(in.Target)
	if err != nil {
		return nil, err
	}
	prev := a.status(c)
	a.mu.Lock()
	a.closed[c.ID] = true
	a.mu.Unlock()
	if prev == "running" {
		c.Cancel(fmt.Errorf("closed by close_agent"))
		<-c.Done()
	}
	return map[string]any{"previous_status": prev}, nil
}
