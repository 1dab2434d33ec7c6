package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
	"github.com/google/go-cmp/cmp"
)

// testTimeout bounds every wait of a test.
const testTimeout = 10 * time.Second

// quiet is a logger that discards everything.
var quiet = slog.New(slog.DiscardHandler)

// env is an agent's world: a registry, tools, a scripted model and a memory log.
type env struct {
	t      testing.TB
	reg    *dsh.Registry
	tools  *tools.Registry
	rt     *tools.Runtime
	model  llm.Model
	script *llm.Scripted
	store  *session.Memory
	log    *session.Log
	cfg    Config
}

// newEnv returns an env whose model plays responses.
func newEnv(t testing.TB, responses ...llm.ScriptedResponse) *env {
	t.Helper()
	e := &env{t: t, reg: dsh.NewRegistry(dsh.WithLogger(quiet), DecisionAudit()), tools: tools.NewRegistry()}
	e.rt = tools.New(e.tools, e.reg, tools.WithLogger(quiet))
	e.script = llm.NewScripted(responses...).RecordRequests()
	e.model = e.script
	e.store = session.NewMemory()
	e.log = e.openLog()
	e.cfg = Config{ID: "a1", SessionID: "s1", Registry: e.reg, Tools: e.rt, Log: e.log,
		LLM: dsh.LLMCallConfig{Provider: "test", Model: "m1"}, Logger: quiet}
	t.Cleanup(func() { _ = e.log.Close() })
	return e
}

// openLog opens a log over the env's store.
func (e *env) openLog() *session.Log {
	e.t.Helper()
	l, err := session.Open(context.Background(), e.store)
	if err != nil {
		e.t.Fatalf("open log: %v", err)
	}
	return l
}

// config returns the env's config with its current model and log.
func (e *env) config() Config {
	c := e.cfg
	c.Model, c.Log = e.model, e.log
	return c
}

// agent creates the agent.
func (e *env) agent() *Agent {
	e.t.Helper()
	a, err := New(context.Background(), e.config())
	if err != nil {
		e.t.Fatalf("New: %v", err)
	}
	e.t.Cleanup(func() { closeWithin(e.t, a) })
	return a
}

// closeWithin closes a and fails the test when Close does not return within testTimeout:
// a wedged turn then fails its test instead of hanging the package's tests (which also
// keeps a mutation pass from waiting out its whole timeout, docs/testing.md).
func closeWithin(t testing.TB, a *Agent) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		_ = a.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(testTimeout):
		t.Errorf("Close did not return within %s", testTimeout)
	}
}

// register registers def globally.
func (e *env) register(def tools.Definition) func() {
	e.t.Helper()
	unregister, err := e.tools.Register(def)
	if err != nil {
		e.t.Fatalf("register %q: %v", def.Name, err)
	}
	return unregister
}

// requests returns the requests the scripted model received.
func (e *env) requests() []llm.Request { return e.script.Requests() }

// wait waits until a is idle.
func wait(t testing.TB, a *Agent) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := a.Wait(ctx); err != nil {
		t.Fatalf("Wait: %v", err)
	}
}

// turns runs one turn per text, in order, each a follow-up (ids p1, p2, …) waited for.
func turns(t testing.TB, a *Agent, texts ...string) {
	t.Helper()
	for i, text := range texts {
		followup(t, a, fmt.Sprintf("p%d", i+1), text)
		wait(t, a)
	}
}

// followup sends a user follow-up with id and text.
func followup(t testing.TB, a *Agent, id, text string) {
	t.Helper()
	if err := a.Followup(context.Background(), userMsg(id, text)); err != nil {
		t.Fatalf("Followup(%s): %v", id, err)
	}
}

// userMsg is a user message.
func userMsg(id, text string) dsh.UserMessage {
	return dsh.UserMessage{ID: id, Role: dsh.UserMessageRoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: text}},
		Source: dsh.SourceUser{}}
}

// pluginMsg is a message of the plugin "test".
func pluginMsg(id, text string) dsh.UserMessage {
	return dsh.UserMessage{ID: id, Role: dsh.UserMessageRoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: text}},
		Source: dsh.SourcePlugin{Plugin: "test"}}
}

// events returns the log's events from seq on.
func events(l *session.Log) []session.Event {
	var out []session.Event
	for ev := range l.Events() {
		out = append(out, ev)
	}
	return out
}

// types returns the types of the log's events, session/created excluded.
func types(l *session.Log) []string {
	out := []string{}
	for ev := range l.Events() {
		if ev.Type != dsh.SessionCreatedType {
			out = append(out, ev.Type)
		}
	}
	return out
}

// typesOf returns the types of the log's events that are among keep, in order.
func typesOf(l *session.Log, keep ...string) []string {
	var out []string
	for ev := range l.Events() {
		for _, k := range keep {
			if ev.Type == k {
				out = append(out, ev.Type)
			}
		}
	}
	return out
}

// boundaries are the turn and step boundary event types.
var boundaries = []string{dsh.TurnStartType, dsh.StepStartType, dsh.StepEndType, dsh.TurnEndType}

// records decodes the data of every event of type typ; T is the data record.
func records[T dsh.SessionEventData](t testing.TB, l *session.Log) []T {
	t.Helper()
	var zero T
	var out []T
	for ev := range l.Events() {
		if ev.Type != zero.SessionEventType() {
			continue
		}
		data, err := ev.Decode()
		if err != nil {
			t.Fatalf("decode %s %d: %v", ev.Type, ev.Seq, err)
		}
		out = append(out, data.(T))
	}
	return out
}

// fields extracts one field of every record of type T.
func fields[T dsh.SessionEventData, F any](t testing.TB, l *session.Log, f func(T) F) []F {
	t.Helper()
	var out []F
	for _, r := range records[T](t, l) {
		out = append(out, f(r))
	}
	return out
}

// reasons returns the turn/end reasons as JSON.
func reasons(t testing.TB, l *session.Log) []string {
	return fields(t, l, func(r dsh.TurnEnd) string { return jsonOf(t, r.Reason) })
}

// userTexts returns the texts of the user/message events.
func userTexts(t testing.TB, l *session.Log) []string {
	return fields(t, l, func(r dsh.UserMessageLogged) string { return textOf(r.Message.Content) })
}

// jsonOf is the JSON text of v.
func jsonOf(t testing.TB, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(data)
}

// textOf concatenates the text of blocks, tool results included.
func textOf(blocks []dsh.ContentBlock) string {
	var sb strings.Builder
	for _, b := range blocks {
		//dshvet:partial the tests compare text only
		switch v := b.(type) {
		case dsh.TextBlock:
			sb.WriteString(v.Text)
		case dsh.ToolResultBlock:
			sb.WriteString(textOf(v.Content))
		}
	}
	return sb.String()
}

// texts returns one string per message of req: its role and text.
func texts(req llm.Request) []string {
	out := make([]string, len(req.Messages))
	for i, m := range req.Messages {
		out[i] = string(m.Role) + ":" + textOf(m.Content)
		for _, b := range m.Content {
			//dshvet:partial only calls and results change a message's summary
			switch v := b.(type) {
			case dsh.ToolCallBlock:
				out[i] += "[call " + v.ID + "]"
			case dsh.ToolResultBlock:
				out[i] = string(m.Role) + ":[result " + v.ToolCallID + "]" + textOf(v.Content)
			}
		}
	}
	return out
}

// contains reports whether some message of req has text containing s.
func contains(req llm.Request, s string) bool {
	for _, m := range texts(req) {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// diff fails the test when want and got differ.
func diff(t testing.TB, what string, want, got any) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", what, d)
	}
}

// text is a scripted text response.
func text(s string) llm.ScriptedResponse { return llm.ScriptedResponse{Text: s} }

// calls is a scripted response calling tools; each call is "id:name" with arguments {}.
func calls(specs ...string) llm.ScriptedResponse {
	r := llm.ScriptedResponse{}
	for _, s := range specs {
		id, name, _ := strings.Cut(s, ":")
		r.ToolCalls = append(r.ToolCalls, llm.ScriptedToolCall{ID: id, Name: name})
	}
	return r
}

// toolDef is a tool with any output whose body is run.
func toolDef(name string, parallel bool, run func(ctx context.Context, rc *tools.RunContext) (any, error)) tools.Definition {
	d := tools.Definition{Name: name, Description: name, Run: run}
	if parallel {
		d.IsConcurrencySafe = func(json.RawMessage) bool { return true }
	}
	return d
}

// okTool is a tool returning "ok".
func okTool(name string, parallel bool) tools.Definition {
	return toolDef(name, parallel, func(context.Context, *tools.RunContext) (any, error) { return "ok", nil })
}

// recorder collects strings from concurrent goroutines.
type recorder struct {
	mu  sync.Mutex
	got []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.got = append(r.got, s)
	r.mu.Unlock()
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

// gateModel wraps a model: each call signals entered, then waits for release (or its
// context) before streaming.
type gateModel struct {
	inner   llm.Model
	entered chan int
	release chan struct{}
	n       int
	mu      sync.Mutex
}

func newGate(inner llm.Model) *gateModel {
	return &gateModel{inner: inner, entered: make(chan int, 16), release: make(chan struct{}, 16)}
}

func (g *gateModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[dsh.AssistantChunk, error] {
	inner := g.inner.Stream(ctx, req)
	return func(yield func(dsh.AssistantChunk, error) bool) {
		g.mu.Lock()
		g.n++
		n := g.n
		g.mu.Unlock()
		g.entered <- n
		select {
		case <-g.release:
		case <-ctx.Done():
		}
		for c, err := range inner {
			if !yield(c, err) {
				return
			}
		}
	}
}

// await receives from ch or fails the test after testTimeout.
func await[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(testTimeout):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

// failingStore is a memory store whose appends fail while fail is set.
// failingLog gives e a session log on a failingStore, closed with the test, and returns
// the store (its appends fail once setFail(true) is called).
func (e *env) failingLog(t *testing.T) *failingStore {
	t.Helper()
	store := &failingStore{Memory: session.NewMemory()}
	l, err := session.Open(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	e.log = l
	return store
}

type failingStore struct {
	*session.Memory
	mu   sync.Mutex
	fail bool
}

func (s *failingStore) Append(ctx context.Context, line []byte) error {
	s.mu.Lock()
	fail := s.fail
	s.mu.Unlock()
	if fail {
		return errors.New("disk full")
	}
	return s.Memory.Append(ctx, line)
}

func (s *failingStore) setFail(v bool) {
	s.mu.Lock()
	s.fail = v
	s.mu.Unlock()
}

// waitFor polls cond until it holds or fails the test after testTimeout.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// hasType reports whether the log holds an event of type typ.
func hasType(l *session.Log, typ string) bool {
	for ev := range l.Events() {
		if ev.Type == typ {
			return true
		}
	}
	return false
}

// blockPreStepUntilCancel is a pre-step listener that, at turn 1, waits for the turn's
// cancellation before deciding.
func blockPreStepUntilCancel(entered chan<- struct{}) dsh.PreStepListener {
	return func(ctx context.Context, p *dsh.PreStepPayload, next dsh.PreStepNext) (dsh.PreStepDecision, error) {
		if p.Turn == 1 {
			entered <- struct{}{}
			<-ctx.Done()
		}
		return next.Call(ctx)
	}
}

// sortedCopy returns a sorted copy of s.
func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	slices.Sort(out)
	return out
}
