package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
)

// The tests of this file pin rules that a mutation pass (docs/testing.md) showed no other
// test to check.

// An agent-less call shows no agent id at any phase, an agent's call its id at every one.
func TestPhasesSeeTheCallsAgentID(t *testing.T) {
	for _, agent := range []string{"", "a1"} {
		e := newEnv(t)
		e.register(t, echoDef())
		var seen []*string
		e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
			seen = append(seen, p.Exec.AgentID)
			return next.Call(ctx)
		})
		e.hooks.Guard(func(ctx context.Context, p *dsh.GuardPayload) dsh.GuardVerdict {
			seen = append(seen, p.Exec.AgentID)
			return dsh.GuardAbstain{}
		})
		e.hooks.WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
			seen = append(seen, p.Exec.AgentID)
			return next.Call(ctx)
		})
		e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
			seen = append(seen, p.Exec.AgentID)
			return next.Call(ctx)
		})
		e.hooks.OnToolResult(func(ctx context.Context, p *dsh.ToolResultPayload) { seen = append(seen, p.Exec.AgentID) })
		r := e.rt.Execute(context.Background(), Input{CallID: "c1", Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`), AgentID: agent})
		if r.IsError() {
			t.Fatalf("agent %q: %s", agent, text(r))
		}
		if len(seen) != 5 {
			t.Fatalf("agent %q: %d phases ran, want 5", agent, len(seen))
		}
		for i, id := range seen {
			switch {
			case agent == "" && id != nil:
				t.Errorf("agent-less call: phase %d sees agent id %q", i, *id)
			case agent != "" && (id == nil || *id != agent):
				t.Errorf("agent %q: phase %d sees agent id %v", agent, i, id)
			}
		}
	}
}

// B §4.4 step 1.1: when the innermost wrapper passes the caller's own context to next, the
// body runs under that very context (no fusion); a derived one is fused with the caller's.
func TestBodyRunsUnderTheCallersOwnContext(t *testing.T) {
	type key struct{}
	caller := context.WithValue(context.Background(), key{}, "caller")
	for _, derive := range []bool{false, true} {
		e := newEnv(t)
		var body context.Context
		e.register(t, toolDef("t", func(ctx context.Context, rc *RunContext) (any, error) {
			body = ctx
			return "ok", nil
		}))
		e.hooks.WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
			if derive {
				ctx = context.WithValue(ctx, key{}, "wrapper")
			}
			return next.Call(ctx)
		})
		if r := e.exec(caller, "t", `{}`); r.IsError() {
			t.Fatalf("derive=%v: %s", derive, text(r))
		}
		if same := body == caller; same == derive {
			t.Errorf("derive=%v: the body's context is the caller's: %v", derive, same)
		}
		if want := map[bool]string{false: "caller", true: "wrapper"}[derive]; body.Value(key{}) != want {
			t.Errorf("derive=%v: the body sees value %v, want %q", derive, body.Value(key{}), want)
		}
	}
}

// A failing tools/result observer is logged (at debug level); a healthy one is not.
func TestFailedResultObserverIsLogged(t *testing.T) {
	for _, fail := range []bool{false, true} {
		var logs bytes.Buffer
		tools := NewRegistry()
		hooks := dsh.NewRegistry(dsh.WithLogger(quietLogger()))
		rt := New(tools, hooks, WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
		if _, err := tools.Register(echoDef()); err != nil {
			t.Fatal(err)
		}
		hooks.OnToolResult(func(ctx context.Context, p *dsh.ToolResultPayload) {
			if fail {
				panic("observer broke")
			}
		})
		if r := rt.Execute(context.Background(), Input{CallID: "c1", Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)}); r.IsError() {
			t.Fatalf("fail=%v: %s", fail, text(r))
		}
		if logged := strings.Contains(logs.String(), "tools/result observer failed"); logged != fail {
			t.Errorf("fail=%v: logged %v: %s", fail, logged, logs.String())
		}
	}
}

// Strings are skipped when a Go value's encoding is checked for lossless numbers: a
// string that reads like a non-finite number or a negative zero, escapes included, is
// lossless.
func TestNumberLikeStringsAreLossless(t *testing.T) {
	for _, v := range []any{
		map[string]any{"s": "-0"}, map[string]any{"s": "1e999"}, []string{"x-0", "xx-0", "x 1e999"}, []string{`x"-0`},
		map[string]any{"s": `\`, "n": -1}, []any{`a\"1e999`, 2},
		[]any{1, "-0"}, []any{-9, json.Number("1e9"), json.Number("1" + strings.Repeat("0", 300))},
	} {
		e := newEnv(t)
		e.register(t, Definition{Name: "t", Run: func(ctx context.Context, rc *RunContext) (any, error) {
			return v, nil
		}})
		if r := e.exec(context.Background(), "t", `{}`); r.IsError() {
			t.Errorf("value %#v: %s", v, text(r))
		}
	}
	// The check itself still applies outside strings.
	e := newEnv(t)
	e.register(t, Definition{Name: "t", Run: func(ctx context.Context, rc *RunContext) (any, error) {
		return map[string]any{"s": "x", "n": math.Copysign(0, -1)}, nil
	}})
	if r := e.exec(context.Background(), "t", `{}`); !r.IsError() {
		t.Errorf("a negative zero outside a string is lossless: %s", outcomeJSON(t, r))
	}
	// So does the range check of a long integer literal, which overflows a float64.
	e = newEnv(t)
	e.register(t, Definition{Name: "t", Run: func(ctx context.Context, rc *RunContext) (any, error) {
		return []any{json.Number("1" + strings.Repeat("0", 310))}, nil
	}})
	if r := e.exec(context.Background(), "t", `{}`); !r.IsError() {
		t.Errorf("a 311-digit integer is lossless: %s", outcomeJSON(t, r))
	}
}

// A string value is encoded as encoding/json would (without HTML escaping): printable
// ASCII, the space included, as is.
func TestStringValueEncoding(t *testing.T) {
	for v, want := range map[string]string{
		"a b":       `"a b"`,
		"é\"x\n":    `"é\"x\n"`,
		"q\"\\ \n":  `"q\"\\ \n"`,
		"<&>\u2028": `"<&>\u2028"`,
		"\x01\x1f~": `"\u0001\u001f~"`,
	} {
		e := newEnv(t)
		e.register(t, Definition{Name: "t", Run: func(ctx context.Context, rc *RunContext) (any, error) { return v, nil }})
		r := e.exec(context.Background(), "t", `{}`)
		if got := string(successOf(t, r).Value); got != want {
			t.Errorf("value %q encodes as %s, want %s", v, got, want)
		}
	}
}

// The default rendering of a string value given as JSON text is the string itself,
// escapes decoded; any other value renders as its JSON text.
func TestDefaultRenderingOfJSONText(t *testing.T) {
	for raw, want := range map[string]string{
		`""`:        "",
		`"\"b"`:     `"b`,
		`"a\u0041"`: "aA",
		`"plain"`:   "plain",
		`[1,"x"]`:   `[1,"x"]`,
		`7`:         "7",
	} {
		e := newEnv(t)
		e.register(t, Definition{Name: "t", Run: func(ctx context.Context, rc *RunContext) (any, error) {
			return json.RawMessage(raw), nil
		}})
		if got := text(e.exec(context.Background(), "t", `{}`)); got != want {
			t.Errorf("value %s renders as %q, want %q", raw, got, want)
		}
	}
}

// A failure a tools/execute wrapper returns is materialized whole: meta that is not
// lossless JSON makes it the final materialization failure, however valid its content.
func TestWrapperFailureMetaIsMaterialized(t *testing.T) {
	for meta, lossless := range map[string]bool{`{"a":1}`: true, `{"a":`: false, `[1e999]`: false} {
		e := newEnv(t)
		e.register(t, echoDef())
		e.hooks.WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
			return dsh.ToolFailure{Error: dsh.ToolError{Message: "wrapped"},
				Content: []dsh.ContentBlock{dsh.TextBlock{Text: "wrapped"}}, Meta: json.RawMessage(meta)}
		})
		f := failureOfResult(t, e.exec(context.Background(), "echo", `{"text":"hi"}`))
		switch {
		case lossless && (f.Error.Message != "wrapped" || string(f.Meta) != meta):
			t.Errorf("meta %s: got %+v, want the wrapper's failure", meta, f)
		case !lossless && f.Error.Message != msgResultNotJSON:
			t.Errorf("meta %s: got %q, want %q", meta, f.Error.Message, msgResultNotJSON)
		}
	}
}

// The info of a tool's error is made JSON-safe field by field: an invalid code alone is
// cleaned, as is an invalid name alone.
func TestErrorInfoIsMadeJSONSafe(t *testing.T) {
	for _, c := range []struct{ name, code, wantName, wantCode string }{
		{NameHarnessError, "BAD\xff", NameHarnessError, "BAD\uFFFD"},
		{"Name\xfe", "OK", "Name\uFFFD", "OK"},
		{NameHarnessError, "OK", NameHarnessError, "OK"},
	} {
		e := newEnv(t)
		e.register(t, toolDef("t", func(ctx context.Context, rc *RunContext) (any, error) {
			return nil, &Error{Name: c.name, Code: c.code, Message: "failed"}
		}))
		wantInfo(t, e.exec(context.Background(), "t", `{}`), c.wantName, c.wantCode)
	}
}

// Visible offers an agent its own tools, which shadow the global ones of the same name,
// and no other agent's.
func TestVisibleIncludesTheAgentsOwnTools(t *testing.T) {
	e := newEnv(t)
	e.register(t, Definition{Name: "x", Description: "global", Run: echoDef().Run})
	for _, d := range []Definition{{Name: "x", Description: "a1's"}, {Name: "mine", Description: "a1's"}} {
		d.Run = echoDef().Run
		if _, err := e.tools.RegisterForAgent("a1", d); err != nil {
			t.Fatal(err)
		}
	}
	describe := func(agent string) []string {
		var out []string
		for _, d := range e.tools.Visible(agent) {
			out = append(out, d.Name+":"+d.Description)
		}
		return out
	}
	if got, want := describe("a1"), []string{"mine:a1's", "x:a1's"}; !slices.Equal(got, want) {
		t.Errorf("Visible(a1) = %v, want %v", got, want)
	}
	for _, agent := range []string{"a2", ""} {
		if got, want := describe(agent), []string{"x:global"}; !slices.Equal(got, want) {
			t.Errorf("Visible(%q) = %v, want %v", agent, got, want)
		}
	}
}

// A nested call without an agent id runs for its parent's agent (and so sees that agent's
// tools); one that names an agent runs for that agent.
func TestNestedCallInheritsTheAgent(t *testing.T) {
	e := newEnv(t)
	for _, agent := range []string{"a1", "a2"} {
		who := agent
		if _, err := e.tools.RegisterForAgent(agent, toolDef("inner", func(ctx context.Context, rc *RunContext) (any, error) {
			return "inner of " + who, nil
		})); err != nil {
			t.Fatal(err)
		}
	}
	e.register(t, toolDef("outer", func(ctx context.Context, rc *RunContext) (any, error) {
		var in struct {
			Agent string `json:"agent"`
		}
		if err := rc.BindArguments(&in); err != nil {
			return nil, err
		}
		r := rc.Execute(ctx, Input{CallID: "n1", Name: "inner", Arguments: json.RawMessage(`{}`), AgentID: in.Agent})
		return text(r), nil
	}))
	for args, want := range map[string]string{`{}`: "inner of a1", `{"agent":"a2"}`: "inner of a2"} {
		r := e.rt.Execute(context.Background(), Input{CallID: "c1", Name: "outer", Arguments: json.RawMessage(args), AgentID: "a1"})
		if got := text(r); got != want {
			t.Errorf("outer %s for a1: %q, want %q", args, got, want)
		}
	}
}

// A violation inside nested arrays names each index, however deep (the path follows the
// instance through every array).
func TestViolationPathThroughNestedArrays(t *testing.T) {
	e := newEnv(t)
	e.register(t, Definition{Name: "t",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"m":{"type":"array","items":{"type":"array","items":{"type":"object","properties":{"s":{"type":"string"}}}}}}}`),
		Run:         func(ctx context.Context, rc *RunContext) (any, error) { return "ok", nil }})
	for args, want := range map[string]string{
		`{"m":[[{"s":1}]]}`:       `invalid arguments: "m[0][0].s" must be a string`,
		`{"m":[[],[{},{"s":2}]]}`: `invalid arguments: "m[1][1].s" must be a string`,
	} {
		if got := failureOfResult(t, e.exec(context.Background(), "t", args)).Error.Message; got != want {
			t.Errorf("%s: %q, want %q", args, got, want)
		}
	}
}

// Content given as pointers to blocks is kept as the blocks, images included.
func TestPointerContentBlocksAreKept(t *testing.T) {
	e := newEnv(t)
	e.register(t, echoDef())
	e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		return dsh.PostToolAccept{Content: []dsh.ContentBlock{&dsh.TextBlock{Text: "t"}, &dsh.ImageBlock{MediaType: "image/png", Data: "AA=="}}}, nil
	})
	r := e.exec(context.Background(), "echo", `{"text":"hi"}`)
	want := []dsh.ContentBlock{dsh.TextBlock{Text: "t"}, dsh.ImageBlock{MediaType: "image/png", Data: "AA=="}}
	if got := r.Content(); !reflect.DeepEqual(got, want) {
		t.Errorf("content = %#v, want %#v", got, want)
	}
}

// Contexts keep their sources: a pointer source is kept as the source, a model source
// without replay state is valid, and one with replay state gets a private copy of it.
func TestContextSourcesAreKept(t *testing.T) {
	state := json.RawMessage(`{"k":1}`)
	sources := []dsh.MessageSource{
		&dsh.SourceTool{CallID: "x"}, dsh.SourceModel{Provider: "p", Model: "m"},
		&dsh.SourceModel{Provider: "p", Model: "m", ReplayState: state},
	}
	e := newEnv(t)
	e.register(t, echoDef())
	e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		var contexts []dsh.UserMessage
		for i, s := range sources {
			m := ctxMsg(strconv.Itoa(i), "p")
			m.Source = s
			contexts = append(contexts, m)
		}
		return dsh.PostToolAccept{AdditionalContexts: contexts}, nil
	})
	r := e.exec(context.Background(), "echo", `{"text":"hi"}`)
	if r.IsError() {
		t.Fatalf("rejected: %s", text(r))
	}
	state[1] = 'X' // the listener's buffer changes afterwards
	var got []dsh.MessageSource
	for _, m := range r.AdditionalContexts() {
		got = append(got, m.Source)
	}
	want := []dsh.MessageSource{
		dsh.SourceTool{CallID: "x"}, dsh.SourceModel{Provider: "p", Model: "m"},
		dsh.SourceModel{Provider: "p", Model: "m", ReplayState: json.RawMessage(`{"k":1}`)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sources = %#v, want %#v", got, want)
	}
}

// A staged call's Exec is a copy: no agent id for an agent-less call, and a private one
// otherwise.
func TestStagedExecIsACopy(t *testing.T) {
	e := newEnv(t)
	e.register(t, echoDef())
	if id := e.rt.Start(context.Background(), Input{CallID: "c1", Name: "echo", Arguments: json.RawMessage(`{}`)}).Exec().AgentID; id != nil {
		t.Errorf("agent-less call: agent id %q", *id)
	}
	k := e.rt.Start(context.Background(), Input{CallID: "c2", Name: "echo", Arguments: json.RawMessage(`{}`), AgentID: "a1"})
	first := k.Exec()
	*first.AgentID = "changed"
	if id := k.Exec().AgentID; id == nil || *id != "a1" {
		t.Errorf("after changing a copy: agent id %v, want a1", id)
	}
	k.PreDispatch()
	k.Dispatch()
	k.Finish()
}
