package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
)

// quietLogger discards log output.
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// env is a runtime with its registries.
type env struct {
	tools *Registry
	hooks *dsh.Registry
	rt    *Runtime
}

func newEnv(t testing.TB, opts ...Option) *env {
	t.Helper()
	tools := NewRegistry()
	hooks := dsh.NewRegistry(dsh.WithLogger(quietLogger()))
	opts = append([]Option{WithLogger(quietLogger())}, opts...)
	return &env{tools: tools, hooks: hooks, rt: New(tools, hooks, opts...)}
}

// register registers def globally or fails the test.
func (e *env) register(t testing.TB, def Definition) func() {
	t.Helper()
	unregister, err := e.tools.Register(def)
	if err != nil {
		t.Fatalf("register %q: %v", def.Name, err)
	}
	return unregister
}

// exec runs name with args (JSON text) as call c1.
func (e *env) exec(ctx context.Context, name, args string) Result {
	return e.rt.Execute(ctx, Input{CallID: "c1", Name: name, Arguments: json.RawMessage(args)})
}

// echoDef is the reference echo tool: {text?: string} -> text, with a string output.
func echoDef() Definition {
	return Definition{
		Name:        "echo",
		Description: "echo arguments back",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
		Output:      &Output{Schema: json.RawMessage(`{"type":"string"}`)},
		Run: func(ctx context.Context, rc *RunContext) (any, error) {
			var args struct {
				Text string `json:"text"`
			}
			if err := rc.BindArguments(&args); err != nil {
				return nil, err
			}
			return args.Text, nil
		},
	}
}

// toolDef is a tool with a string output whose body is run.
func toolDef(name string, run func(ctx context.Context, rc *RunContext) (any, error)) Definition {
	return Definition{Name: name, Output: &Output{Schema: json.RawMessage(`{"type":"string"}`)}, Run: run}
}

// outcomeJSON is the JSON of r's outcome.
func outcomeJSON(t testing.TB, r Result) string {
	t.Helper()
	data, err := json.Marshal(r.Outcome)
	if err != nil {
		t.Fatalf("marshal outcome: %v", err)
	}
	return string(data)
}

// wantOutcome checks r's outcome against the expected JSON.
func wantOutcome(t testing.TB, r Result, want string) {
	t.Helper()
	got := outcomeJSON(t, r)
	if !jsonEqual(got, want) {
		t.Errorf("outcome\n got: %s\nwant: %s", got, want)
	}
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	ax, _ := json.Marshal(x)
	by, _ := json.Marshal(y)
	return bytes.Equal(ax, by)
}

// text is the text of r's first content block.
func text(r Result) string {
	c := r.Content()
	if len(c) == 0 {
		return ""
	}
	if tb, ok := c[0].(dsh.TextBlock); ok {
		return tb.Text
	}
	return ""
}

// failureOfResult returns r's failure or fails the test.
func failureOfResult(t testing.TB, r Result) dsh.ToolFailure {
	t.Helper()
	f, ok := r.Outcome.(dsh.ToolFailure)
	if !ok {
		t.Fatalf("want a failure, got %s", outcomeJSON(t, r))
	}
	return f
}

// successOf returns r's success or fails the test.
func successOf(t testing.TB, r Result) dsh.ToolSuccess {
	t.Helper()
	s, ok := r.Outcome.(dsh.ToolSuccess)
	if !ok {
		t.Fatalf("want a success, got %s", outcomeJSON(t, r))
	}
	return s
}

// wantInfo checks r's failure info (nil: none).
func wantInfo(t testing.TB, r Result, name, code string) {
	t.Helper()
	f := failureOfResult(t, r)
	switch {
	case name == "" && f.Error.Info != nil:
		t.Errorf("info = %+v, want none", *f.Error.Info)
	case name != "" && (f.Error.Info == nil || f.Error.Info.Name != name || f.Error.Info.Code != code):
		t.Errorf("info = %+v, want {%s %s}", f.Error.Info, name, code)
	}
}

// ctxMsg is a plugin context message.
func ctxMsg(id, plugin string) dsh.UserMessage {
	return dsh.UserMessage{ID: id, Role: dsh.UserMessageRoleUser,
		Content: []dsh.ContentBlock{dsh.TextBlock{Text: id}}, Source: dsh.SourcePlugin{Plugin: plugin}}
}

// contextIDs lists the ids of r's additional contexts.
func contextIDs(r Result) []string {
	var ids []string
	for _, m := range r.AdditionalContexts() {
		ids = append(ids, m.ID)
	}
	return ids
}

// recorder records strings concurrently.
type recorder struct {
	mu  sync.Mutex
	log []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.log = append(r.log, s)
	r.mu.Unlock()
}

func (r *recorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.log...)
}

func (r *recorder) count(s string) int {
	n := 0
	for _, x := range r.get() {
		if x == s {
			n++
		}
	}
	return n
}

// counter registers a listener at every phase that counts calls.
func (e *env) phaseCounter(rec *recorder) {
	e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		rec.add("pre")
		return next.Call(ctx)
	})
	e.hooks.WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
		rec.add("execute")
		return next.Call(ctx)
	})
	e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		rec.add("post")
		return next.Call(ctx)
	})
	e.hooks.OnToolResult(func(ctx context.Context, p *dsh.ToolResultPayload) { rec.add("result") })
}
