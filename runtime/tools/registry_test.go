package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dshkit/dsh/generated/dsh"
)

func TestRegistryErrors(t *testing.T) {
	r := NewRegistry()
	run := func(context.Context, *RunContext) (any, error) { return nil, nil }
	if _, err := r.Register(Definition{Run: run}); !errors.Is(err, ErrMissingName) {
		t.Errorf("missing name: %v", err)
	}
	if _, err := r.Register(Definition{Name: "x"}); !errors.Is(err, ErrMissingRun) {
		t.Errorf("missing run: %v", err)
	}
	if _, err := r.Register(Definition{Name: "x", Run: run, InputSchema: json.RawMessage(`{"type":"nope"}`)}); !errors.Is(err, ErrInvalidSchema) {
		t.Errorf("invalid input schema: %v", err)
	}
	if _, err := r.Register(Definition{Name: "x", Run: run, InputSchema: json.RawMessage(`{"$ref":"file:///etc/passwd"}`)}); !errors.Is(err, ErrInvalidSchema) {
		t.Errorf("external ref: %v", err)
	}
	if _, err := r.Register(Definition{Name: "x", Run: run, Output: &Output{Schema: json.RawMessage(`{`)}}); !errors.Is(err, ErrInvalidSchema) {
		t.Errorf("invalid output schema: %v", err)
	}
	if _, err := r.Register(Definition{Name: "x", Run: run}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Register(Definition{Name: "x", Run: run}); !errors.Is(err, ErrDuplicate) {
		t.Errorf("duplicate: %v", err)
	}
	if _, err := r.RegisterForAgent("a1", Definition{Name: "x", Run: run}); err != nil {
		t.Errorf("same name in another layer: %v", err)
	}
	if _, err := r.RegisterForAgent("a1", Definition{Name: "x", Run: run}); !errors.Is(err, ErrDuplicate) {
		t.Errorf("duplicate in the agent layer: %v", err)
	}
	if _, err := r.RegisterForAgent("", Definition{Name: "y", Run: run}); err == nil {
		t.Error("an empty agent id was accepted")
	}
}

func TestRegistryShadowingAndUnregister(t *testing.T) {
	e := newEnv(t)
	global := func(context.Context, *RunContext) (any, error) { return "global", nil }
	scoped := func(context.Context, *RunContext) (any, error) { return "scoped", nil }
	unregGlobal := e.register(t, Definition{Name: "x", Run: global})
	unregScoped, err := e.tools.RegisterForAgent("a1", Definition{Name: "x", Run: scoped})
	if err != nil {
		t.Fatal(err)
	}
	e.register(t, Definition{Name: "a", Run: global})
	run := func(agent string) string {
		return text(e.rt.Execute(context.Background(), Input{CallID: "c", Name: "x", Arguments: json.RawMessage(`{}`), AgentID: agent}))
	}
	if run("a1") != "scoped" || run("a2") != "global" || run("") != "global" {
		t.Errorf("visible: a1 %q a2 %q none %q", run("a1"), run("a2"), run(""))
	}
	names := func(defs []Definition) []string {
		var out []string
		for _, d := range defs {
			out = append(out, d.Name)
		}
		return out
	}
	if got := names(e.tools.Visible("a1")); !slices.Equal(got, []string{"a", "x"}) {
		t.Errorf("visible = %v", got)
	}
	unregScoped()
	if run("a1") != "global" {
		t.Errorf("after unregistering the scoped tool: %q", run("a1"))
	}
	unregGlobal()
	// A stale unregister func does not remove a later registration of the same name.
	e.register(t, Definition{Name: "x", Run: scoped})
	unregGlobal()
	if _, ok := e.tools.Lookup("", "x"); !ok {
		t.Error("a stale unregister removed a newer registration")
	}
	if run("") != "scoped" {
		t.Errorf("re-registered: %q", run(""))
	}
}

func TestExecutionMode(t *testing.T) {
	e := newEnv(t)
	e.register(t, Definition{Name: "read", Run: func(context.Context, *RunContext) (any, error) { return nil, nil },
		InputSchema:       json.RawMessage(`{"type":"object"}`),
		IsConcurrencySafe: func(args json.RawMessage) bool { return !strings.Contains(string(args), "write") }})
	e.register(t, Definition{Name: "panics", Run: func(context.Context, *RunContext) (any, error) { return nil, nil },
		IsConcurrencySafe: func(json.RawMessage) bool { panic("no") }})
	e.register(t, Definition{Name: "plain", Run: func(context.Context, *RunContext) (any, error) { return nil, nil }})
	for _, tc := range []struct {
		name, args string
		want       Mode
	}{
		{"read", `{}`, ModeParallel},
		{"read", `{"mode":"write"}`, ModeExclusive},
		{"read", `"not an object"`, ModeExclusive},
		{"read", `{`, ModeExclusive},
		{"panics", `{}`, ModeExclusive},
		{"plain", `{}`, ModeExclusive},
		{"unknown", `{}`, ModeExclusive},
	} {
		if got := e.rt.ExecutionMode("", tc.name, json.RawMessage(tc.args)); got != tc.want {
			t.Errorf("%s %s: %s, want %s", tc.name, tc.args, got, tc.want)
		}
	}
}

func TestSnapshotJSON(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{`{"a":[1,2.5,-3,1e3,"x\"-0"]}`, true},
		{` "s" `, true},
		{`-0`, false},
		{`[-0.0]`, false},
		{`-0e5`, false},
		{`-1e-400`, false},
		{`1e999`, false},
		{`-1e999`, false},
		{`0`, true},
		{`-1`, true},
		{`1e-400`, true},
		{"\"\xff\"", false},
		{`{"a":1}{}`, false},
		{``, false},
		{`NaN`, false},
	} {
		_, err := snapshotJSON([]byte(tc.in))
		if (err == nil) != tc.ok {
			t.Errorf("%q: err %v, want ok %v", tc.in, err, tc.ok)
		}
	}
	if _, err := marshalValue(math.Copysign(0, -1)); err == nil {
		t.Error("-0 value accepted")
	}
}

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", "quote\" back\\slash", "ctl\x00\x1f\n\r\t", "html <&>", "uni é 😀 \u2028\u2029"} {
		data := appendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(data, &back); err != nil || back != s || !utf8.Valid(data) {
			t.Errorf("%q: %s -> %q, %v", s, data, back, err)
		}
	}
}

func TestDeferContext(t *testing.T) {
	e := newEnv(t)
	var rc0 *RunContext
	e.register(t, toolDef("t", func(ctx context.Context, rc *RunContext) (any, error) {
		rc0 = rc
		if err := rc.DeferContext(ctxMsg("", "p")); err != nil { // an empty id is minted
			return nil, err
		}
		msg := ctxMsg("mutated-later", "p")
		if err := rc.DeferContext(msg); err != nil {
			return nil, err
		}
		msg.Content[0] = nil // the snapshot is not affected
		if err := rc.DeferContext(ctxMsg("bad", "p")); err != nil {
			return nil, err
		}
		bad := ctxMsg("nil-block", "p")
		bad.Content = append(bad.Content, nil)
		if rc.DeferContext(bad) == nil {
			t.Error("a nil block was accepted")
		}
		if rc.DeferContext(dsh.UserMessage{ID: "no-source"}) == nil {
			t.Error("a message without a source was accepted")
		}
		return "ok", nil
	}))
	r := e.exec(context.Background(), "t", `{}`)
	ids := contextIDs(r)
	if len(ids) != 3 || !strings.HasPrefix(ids[0], "msg_") || ids[1] != "mutated-later" {
		t.Fatalf("contexts %v", ids)
	}
	if got := r.AdditionalContexts()[1].Content[0]; got != (dsh.TextBlock{Text: "mutated-later"}) {
		t.Errorf("the deferred snapshot changed: %#v", got)
	}
	if !errors.Is(rc0.DeferContext(ctxMsg("late", "p")), ErrRunContextClosed) {
		t.Error("DeferContext after return was accepted")
	}
}

// Arguments larger than the shared arena are copied per phase too.
func TestLargeArgumentsAreCopiedPerPhase(t *testing.T) {
	e := newEnv(t)
	big := `{"text":"` + strings.Repeat("x", 3*maxArena) + `"}`
	var bodySaw string
	e.register(t, Definition{Name: "big", Run: func(ctx context.Context, rc *RunContext) (any, error) {
		bodySaw = string(rc.Arguments())
		return "ok", nil
	}})
	e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		p.Exec.Arguments[2] = 'X' //dshvet:allow payloadwrite the test checks that writing the payload changes nothing
		return next.Call(ctx)
	})
	r := e.exec(context.Background(), "big", big)
	if bodySaw != big || string(r.Exec.Arguments) != big {
		t.Error("a listener's change to its arguments copy leaked")
	}
}

// FuzzLosslessJSON checks the one-pass validator against encoding/json: it accepts
// exactly the valid UTF-8 JSON texts whose numbers are finite and not -0.
func FuzzLosslessJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,-2.5e3,"x\u00e9\"",true,false,null,{}]}`, `-0`, `1e999`, `"\ud800"`,
		"\"\xff\"", `[1,]`, `{"a" 1}`, ` 0 `, `01`, `1.`, `.5`, `"\x01"`, `[[[]]]`, `"\u12"`, `-`, `1e`, `{"a":1,}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want := json.Valid(data) && utf8.Valid(data) && finiteNumbers(bytes.TrimSpace(data))
		if got := validLossless(data); got != want {
			t.Errorf("validLossless(%q) = %v, want %v", data, got, want)
		}
	})
}
