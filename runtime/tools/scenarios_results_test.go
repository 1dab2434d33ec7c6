package tools

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
)

// hostile is a thrown value whose every rendering panics.
type hostile struct{}

func (hostile) Error() string  { panic("error trap") }
func (hostile) String() string { panic("string trap") }

// Scenario 77: a thrown value that cannot be rendered is "<unprintable thrown value>".
func TestUnprintableThrownValue(t *testing.T) {
	e := newEnv(t)
	e.register(t, toolDef("returns", func(ctx context.Context, rc *RunContext) (any, error) { return nil, hostile{} }))
	e.register(t, toolDef("panics", func(ctx context.Context, rc *RunContext) (any, error) { panic(hostile{}) }))
	if r := e.exec(context.Background(), "returns", `{}`); text(r) != "Error: <unprintable thrown value>" {
		t.Errorf("returned: %q", text(r))
	}
	if r := e.exec(context.Background(), "panics", `{}`); text(r) != "Error: panic: <unprintable thrown value>" {
		t.Errorf("panicked: %q", text(r))
	}
	// A listener panicking with it.
	e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		panic(hostile{})
	})
	if r := e.exec(context.Background(), "returns", `{}`); text(r) != "Error: panic: <unprintable thrown value>" {
		t.Errorf("listener: %q", text(r))
	}
}

// Scenario 78: a wrapper's own success skips the body and is re-rendered from its value.
func TestWrapperShortCircuitRerendered(t *testing.T) {
	e := newEnv(t)
	ran := false
	e.register(t, toolDef("never-runs", func(ctx context.Context, rc *RunContext) (any, error) { ran = true; return "x", nil }))
	e.hooks.WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
		return dsh.ToolSuccess{Value: json.RawMessage(`"short-circuited"`),
			Content: []dsh.ContentBlock{dsh.TextBlock{Text: "ignored authored content"}},
			Meta:    json.RawMessage(`{"authored":true}`)}
	})
	r := e.exec(context.Background(), "never-runs", `{}`)
	wantOutcome(t, r, `{"kind":"success","value":"short-circuited","content":[{"kind":"text","text":"short-circuited"}]}`)
	if ran {
		t.Error("the body ran")
	}
}

// Scenario 79: a wrapper's failure, with meta and contexts, is kept verbatim.
func TestWrapperFailureKeptVerbatim(t *testing.T) {
	e := newEnv(t)
	e.register(t, echoDef())
	e.hooks.WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
		return &dsh.ToolFailure{Error: dsh.ToolError{Message: "wrapped failure"},
			Content:            []dsh.ContentBlock{dsh.TextBlock{Text: "wrapper content"}},
			Meta:               json.RawMessage(`{"wrapped":true}`),
			AdditionalContexts: []dsh.UserMessage{ctxMsg("w", "test")}}
	})
	r := e.exec(context.Background(), "echo", `{}`)
	wantOutcome(t, r, `{"kind":"failure","error":{"message":"wrapped failure"},"content":[{"kind":"text","text":"wrapper content"}],
		"meta":{"wrapped":true},"additionalContexts":[{"id":"w","role":"user","content":[{"kind":"text","text":"w"}],"source":{"kind":"plugin","plugin":"test"}}]}`)
}

// Scenario 80: a result cached from another dispatch is re-validated: INVALID_TOOL_OUTPUT
// for an object-output tool, and post-execute does not run.
func TestCachedResultRevalidated(t *testing.T) {
	e := newEnv(t)
	e.register(t, toolDef("string-output", func(ctx context.Context, rc *RunContext) (any, error) { return "cached", nil }))
	objectRan := false
	e.register(t, Definition{Name: "object-output",
		Output: &Output{Schema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"],"additionalProperties":false}`)},
		Run: func(ctx context.Context, rc *RunContext) (any, error) {
			objectRan = true
			return map[string]bool{"ok": true}, nil
		}})
	var cached dsh.ToolExecutionResult
	e.hooks.WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
		if p.Exec.Name == "string-output" {
			cached = next.Call(ctx)
			return cached
		}
		return cached
	})
	posts := 0
	e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		posts++
		return next.Call(ctx)
	})
	if r := e.exec(context.Background(), "string-output", `{}`); string(successOf(t, r).Value) != `"cached"` {
		t.Fatalf("first: %s", outcomeJSON(t, r))
	}
	r := e.exec(context.Background(), "object-output", `{}`)
	wantInfo(t, r, NameToolOutput, CodeInvalidToolOutput)
	if want := `Error: tool "object-output" returned invalid output: "value" must be an object`; text(r) != want {
		t.Errorf("text %q, want %q", text(r), want)
	}
	if objectRan || posts != 1 {
		t.Errorf("object body ran %v, post-execute ran %d times", objectRan, posts)
	}
}

// Scenario 81: a value that is not lossless JSON, or violates the output schema, is
// INVALID_TOOL_OUTPUT with no value.
func TestInvalidBodyValue(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value any
		want  string
	}{
		{"func", func() {}, `tool "t" returned invalid output: value is not lossless JSON`},
		{"nan", math.NaN(), `tool "t" returned invalid output: value is not lossless JSON`},
		{"inf", math.Inf(1), `tool "t" returned invalid output: value is not lossless JSON`},
		{"negzero", math.Copysign(0, -1), `tool "t" returned invalid output: value is not lossless JSON`},
		{"rawbad", json.RawMessage(`{"a":`), `tool "t" returned invalid output: value is not lossless JSON`},
		{"wrongtype", 42, `tool "t" returned invalid output: "value" must be a string`},
		{"marshaler", failingMarshaler{}, `tool "t" returned invalid output: value snapshot failed: marshal exploded`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.register(t, toolDef("t", func(ctx context.Context, rc *RunContext) (any, error) { return tc.value, nil }))
			r := e.exec(context.Background(), "t", `{}`)
			f := failureOfResult(t, r)
			if f.Error.Message != tc.want {
				t.Errorf("message %q, want %q", f.Error.Message, tc.want)
			}
			wantInfo(t, r, NameToolOutput, CodeInvalidToolOutput)
			if strings.Contains(outcomeJSON(t, r), `"value"`+":") {
				t.Errorf("a failure carries a value: %s", outcomeJSON(t, r))
			}
		})
	}
}

type failingMarshaler struct{}

func (failingMarshaler) MarshalJSON() ([]byte, error) { return nil, errors.New("marshal exploded") }

// Scenario 82: a failing render or presentationMeta (error, panic or non-JSON) is one failed
// call with INVALID_TOOL_OUTPUT and no value.
func TestThrowingProjectors(t *testing.T) {
	render := func(f func() ([]dsh.ContentBlock, error)) *Output {
		return &Output{Render: func(args, value json.RawMessage) ([]dsh.ContentBlock, error) { return f() }}
	}
	meta := func(f func() (json.RawMessage, error)) *Output {
		return &Output{PresentationMeta: func(args, value json.RawMessage) (json.RawMessage, error) { return f() }}
	}
	for _, tc := range []struct {
		name string
		out  *Output
		want string
	}{
		{"render-error", render(func() ([]dsh.ContentBlock, error) { return nil, errors.New("renderer exploded") }), "output.render failed: renderer exploded"},
		{"render-panic", render(func() ([]dsh.ContentBlock, error) { panic("renderer exploded") }), "output.render failed: panic: renderer exploded"},
		{"render-nil-block", render(func() ([]dsh.ContentBlock, error) { return []dsh.ContentBlock{nil}, nil }), "output.render returned non-lossless JSON"},
		{"meta-error", meta(func() (json.RawMessage, error) { return nil, errors.New("metadata exploded") }), "output.presentationMeta failed: metadata exploded"},
		{"meta-panic", meta(func() (json.RawMessage, error) { panic("metadata exploded") }), "output.presentationMeta failed: panic: metadata exploded"},
		{"meta-not-json", meta(func() (json.RawMessage, error) { return json.RawMessage(`{nope`), nil }), "output.presentationMeta returned non-lossless JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			calls := 0
			e.register(t, Definition{Name: "t", Output: tc.out, Run: func(ctx context.Context, rc *RunContext) (any, error) {
				calls++
				return "ok", nil
			}})
			r := e.exec(context.Background(), "t", `{}`)
			if want := `tool "t" returned invalid output: ` + tc.want; failureOfResult(t, r).Error.Message != want {
				t.Errorf("message %q, want %q", failureOfResult(t, r).Error.Message, want)
			}
			wantInfo(t, r, NameToolOutput, CodeInvalidToolOutput)
			if calls != 1 {
				t.Errorf("body ran %d times", calls)
			}
		})
	}
}

// projectedDef renders "render:<text>" and projects {projected: text}.
func projectedDef() Definition {
	return Definition{
		Name: "projected",
		Output: &Output{
			Schema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`),
			Render: func(args, value json.RawMessage) ([]dsh.ContentBlock, error) {
				var v struct{ Text string }
				if err := json.Unmarshal(value, &v); err != nil {
					return nil, err
				}
				return []dsh.ContentBlock{dsh.TextBlock{Text: "render:" + v.Text}}, nil
			},
			PresentationMeta: func(args, value json.RawMessage) (json.RawMessage, error) {
				var v struct{ Text string }
				if err := json.Unmarshal(value, &v); err != nil {
					return nil, err
				}
				return json.Marshal(map[string]string{"projected": v.Text})
			},
		},
		Run: func(ctx context.Context, rc *RunContext) (any, error) { return map[string]string{"text": "body"}, nil },
	}
}

// Scenario 83: accept{content} keeps value and meta; accept{value, ctx} recomputes content
// and meta and attaches the context.
func TestAcceptContentOrValue(t *testing.T) {
	e := newEnv(t)
	e.register(t, projectedDef())
	var decision dsh.PostToolDecision
	e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		return decision, nil
	})
	decision = dsh.PostToolAccept{Content: []dsh.ContentBlock{dsh.TextBlock{Text: "policy content"}}}
	wantOutcome(t, e.exec(context.Background(), "projected", `{}`),
		`{"kind":"success","value":{"text":"body"},"content":[{"kind":"text","text":"policy content"}],"meta":{"projected":"body"}}`)
	decision = dsh.PostToolAccept{Value: json.RawMessage(`{"text":"policy value"}`), AdditionalContexts: []dsh.UserMessage{ctxMsg("v", "test")}}
	wantOutcome(t, e.exec(context.Background(), "projected", `{}`),
		`{"kind":"success","value":{"text":"policy value"},"content":[{"kind":"text","text":"render:policy value"}],"meta":{"projected":"policy value"},
		"additionalContexts":[{"id":"v","role":"user","content":[{"kind":"text","text":"v"}],"source":{"kind":"plugin","plugin":"test"}}]}`)
}

// Scenario 84: accept{value, content} is a final failure; accept{value 1} for a string
// schema is INVALID_TOOL_OUTPUT with no value.
func TestAcceptBothAndInvalidValue(t *testing.T) {
	e := newEnv(t)
	e.register(t, echoDef())
	var decision dsh.PostToolDecision
	e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		return decision, nil
	})
	decision = dsh.PostToolAccept{Value: json.RawMessage(`"replacement"`), Content: []dsh.ContentBlock{dsh.TextBlock{Text: "also"}}}
	wantOutcome(t, e.exec(context.Background(), "echo", `{}`),
		`{"kind":"failure","error":{"message":"tools/post-execute accept decision cannot replace both value and content"},
		"content":[{"kind":"text","text":"Error: tools/post-execute accept decision cannot replace both value and content"}]}`)
	decision = dsh.PostToolAccept{Value: json.RawMessage(`1`)}
	r := e.exec(context.Background(), "echo", `{}`)
	wantInfo(t, r, NameToolOutput, CodeInvalidToolOutput)
	decision = dsh.PostToolAccept{Value: json.RawMessage(`"replacement"`)}
	wantOutcome(t, e.exec(context.Background(), "echo", `{}`),
		`{"kind":"success","value":"replacement","content":[{"kind":"text","text":"replacement"}]}`)
}

// Scenario 85: block turns the result into a valueless failure whose message derives from
// the feedback.
func TestBlock(t *testing.T) {
	for _, tc := range []struct {
		feedback []dsh.ContentBlock
		message  string
	}{
		{[]dsh.ContentBlock{dsh.TextBlock{Text: "blocked by policy"}}, "blocked by policy"},
		{[]dsh.ContentBlock{}, "tool result blocked by post-execute policy"},
		{[]dsh.ContentBlock{dsh.ReasoningBlock{Text: "private rationale"}}, "[reasoning content]"},
		{[]dsh.ContentBlock{dsh.TextBlock{Text: "a"}, dsh.ImageBlock{MediaType: "image/png", Data: "AA=="}, dsh.TextBlock{Text: "b"}}, "a\n[image content]\nb"},
	} {
		e := newEnv(t)
		e.register(t, echoDef())
		e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
			return dsh.NewPostToolBlock(tc.feedback), nil
		})
		r := e.exec(context.Background(), "echo", `{"text":"secret"}`)
		f := failureOfResult(t, r)
		if f.Error.Message != tc.message || f.Error.Info != nil || len(f.Content) != len(tc.feedback) || f.Meta != nil {
			t.Errorf("block %v: got %s", tc.feedback, outcomeJSON(t, r))
		}
	}
	// Feedback that is not lossless JSON is a safe final error.
	e := newEnv(t)
	e.register(t, echoDef())
	e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		return dsh.PostToolBlock{Feedback: []dsh.ContentBlock{(*dsh.TextBlock)(nil)}}, nil
	})
	wantOutcome(t, e.exec(context.Background(), "echo", `{}`),
		`{"kind":"failure","error":{"message":"tool result must be losslessly JSON-serializable"},
		"content":[{"kind":"text","text":"Error: tool result must be losslessly JSON-serializable"}]}`)
}

// Scenario 86: accept{value} over a failed body is a final failure.
func TestAcceptValueOverFailure(t *testing.T) {
	e := newEnv(t)
	e.register(t, toolDef("t", func(ctx context.Context, rc *RunContext) (any, error) { return nil, errors.New("body failed") }))
	e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		return dsh.PostToolAccept{Value: json.RawMessage(`"replacement"`)}, nil
	})
	r := e.exec(context.Background(), "t", `{}`)
	if f := failureOfResult(t, r); f.Error.Message != "tools/post-execute cannot replace the value of a failed result" {
		t.Errorf("message %q", f.Error.Message)
	}
	// The tool disappearing before accept{value} is UNKNOWN_TOOL.
	e = newEnv(t)
	unregister := e.register(t, echoDef())
	e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		unregister()
		return dsh.PostToolAccept{Value: json.RawMessage(`"replacement"`)}, nil
	})
	r = e.exec(context.Background(), "echo", `{}`)
	wantOutcome(t, r, `{"kind":"failure","error":{"message":"unknown tool \"echo\"","info":{"name":"ToolNotFoundError","code":"UNKNOWN_TOOL"}},
		"content":[{"kind":"text","text":"Error: unknown tool \"echo\""}]}`)
}

// Scenario 87: contexts are ordered body-deferred, wrapper, post-execute.
func TestContextOrder(t *testing.T) {
	e := newEnv(t)
	e.register(t, toolDef("composite", func(ctx context.Context, rc *RunContext) (any, error) {
		if err := rc.DeferContext(ctxMsg("n1", "nested-1")); err != nil {
			return nil, err
		}
		return "done", rc.DeferContext(ctxMsg("n2", "nested-2"))
	}))
	e.hooks.WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
		r := next.Call(ctx).(dsh.ToolSuccess)
		if len(r.AdditionalContexts) != 0 {
			t.Errorf("a wrapper saw deferred contexts: %v", r.AdditionalContexts)
		}
		r.AdditionalContexts = append(r.AdditionalContexts, ctxMsg("wrapper", "wrapper"))
		return r
	})
	e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		d, err := next.Call(ctx)
		if err != nil {
			return nil, err
		}
		a := d.(dsh.PostToolAccept)
		a.AdditionalContexts = append([]dsh.UserMessage{ctxMsg("post", "post")}, a.AdditionalContexts...)
		return a, nil
	})
	r := e.exec(context.Background(), "composite", `{}`)
	if got := contextIDs(r); !slices.Equal(got, []string{"n1", "n2", "wrapper", "post"}) {
		t.Errorf("contexts = %v", got)
	}
	if text(r) != "done" {
		t.Errorf("text %q", text(r))
	}
}

// Scenario 88: a body that defers then fails keeps its contexts; a block replaces them.
func TestDeferredContextsOnThrowAndBlock(t *testing.T) {
	e := newEnv(t)
	e.register(t, toolDef("failing-composite", func(ctx context.Context, rc *RunContext) (any, error) {
		_ = rc.DeferContext(ctxMsg("nested", "nested"))
		return nil, errors.New("outer failure")
	}))
	if got := contextIDs(e.exec(context.Background(), "failing-composite", `{}`)); !slices.Equal(got, []string{"nested"}) {
		t.Errorf("failure contexts = %v", got)
	}
	e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
		return dsh.PostToolBlock{Feedback: []dsh.ContentBlock{dsh.TextBlock{Text: "blocked"}},
			AdditionalContexts: []dsh.UserMessage{ctxMsg("blocker", "blocker")}}, nil
	})
	if got := contextIDs(e.exec(context.Background(), "failing-composite", `{}`)); !slices.Equal(got, []string{"blocker"}) {
		t.Errorf("blocked contexts = %v", got)
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
