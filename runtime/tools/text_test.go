package tools

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dshkit/dsh/generated/dsh"
)

// invalid is text that is not valid UTF-8: JSON cannot carry it unchanged (encoding/json
// writes U+FFFD for it), so it is not lossless.
const invalid = "bad \xff"

// selfMarshaled writes its own JSON: the escape \ufffd, whatever its field holds.
type selfMarshaled struct{ hidden string }

func (selfMarshaled) MarshalJSON() ([]byte, error) { return []byte(`"\ufffd"`), nil }

// textMarshaled writes its text through MarshalText.
type textMarshaled string

func (t textMarshaled) MarshalText() ([]byte, error) { return []byte(t), nil }

// rawInvalid writes raw JSON that is not valid UTF-8.
type rawInvalid struct{}

func (rawInvalid) MarshalJSON() ([]byte, error) { return []byte("\"" + invalid + "\""), nil }

// wantJSONSafe checks that r's outcome encodes as valid UTF-8 JSON that decodes back to
// itself.
func wantJSONSafe(t *testing.T, r Result) {
	t.Helper()
	data := outcomeJSON(t, r)
	if !utf8.ValidString(data) {
		t.Fatalf("outcome is not valid UTF-8: %q", data)
	}
	back, err := dsh.UnmarshalToolExecutionResult([]byte(data))
	if err != nil {
		t.Fatalf("outcome does not decode: %v\n%s", err, data)
	}
	again, err := json.Marshal(back)
	if err != nil || string(again) != data {
		t.Fatalf("outcome does not round-trip:\n%s\n%s (%v)", data, again, err)
	}
}

// TestValueText: a value whose strings are not valid UTF-8 is not lossless JSON
// (docs/design/SEMANTICS.md#45-building-a-success-result step 1; docs/design/SEMANTICS.md#0-shared-vocabulary's lossless JSON, for Go strings); a value that writes
// the \ufffd escape itself is.
func TestValueText(t *testing.T) {
	notLossless := `tool "t" returned invalid output: value is not lossless JSON`
	for _, tc := range []struct {
		name  string
		value any
		want  string // the failure message, or "" for a success with wantValue
		// wantValue is the value of a success.
		wantValue string
	}{
		{"string", invalid, notLossless, ""},
		{"map key", map[string]int{invalid: 1}, notLossless, ""},
		{"nested string", struct{ A []any }{[]any{"ok", map[string]any{"k": invalid}}}, notLossless, ""},
		{"pointer", &struct{ S *string }{S: new(invalid)}, notLossless, ""},
		{"MarshalJSON writing invalid bytes", rawInvalid{}, notLossless, ""},
		{"generated record", []dsh.ContentBlock{dsh.TextBlock{Text: invalid}}, notLossless, ""},
		{"MarshalText type holding invalid bytes", []textMarshaled{"ok", invalid}, notLossless, ""},
		{"MarshalText", map[string]any{"t": textMarshaled("\uFFFD"), "r": json.RawMessage(`"\ufffd"`)}, "", `{"r":"\ufffd","t":"\uFFFD"}`},
		{"replacement character", "ok \uFFFD", "", `"ok \uFFFD"`},
		{"raw escape", json.RawMessage(`"\ufffd"`), "", `"\ufffd"`},
		{"MarshalJSON writing the escape", selfMarshaled{hidden: invalid}, "", `"\ufffd"`},
		{"bytes", []byte(invalid), "", `"YmFkIP8="`},
		{"ignored field", struct {
			A string
			B string `json:"-"`
			c string
		}{"\ufffd", invalid, invalid}, "", `{"A":"\ufffd"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.register(t, Definition{Name: "t", Run: func(context.Context, *RunContext) (any, error) { return tc.value, nil }})
			r := e.exec(context.Background(), "t", `{}`)
			wantJSONSafe(t, r)
			if tc.want != "" {
				if f := failureOfResult(t, r); f.Error.Message != tc.want {
					t.Errorf("message %q, want %q", f.Error.Message, tc.want)
				}
				wantInfo(t, r, NameToolOutput, CodeInvalidToolOutput)
				return
			}
			if s := successOf(t, r); !jsonEqual(string(s.Value), tc.wantValue) {
				t.Errorf("value %s, want %s", s.Value, tc.wantValue)
			}
		})
	}
}

// TestSuppliedText: content, contexts and failures a listener, a renderer, a finalizer or
// the body supplies with text that is not valid UTF-8 are not lossless, and get the
// failure specified for that (B §4.5 step 4, B §4.7, B §4.8).
func TestSuppliedText(t *testing.T) {
	bad := []dsh.ContentBlock{dsh.TextBlock{Text: "fine"}, &dsh.ImageBlock{MediaType: "image/png", Data: invalid}}
	for _, tc := range []struct {
		name    string
		setup   func(e *env)
		def     func(d *Definition)
		message string
	}{
		{"post-execute accept content", func(e *env) {
			e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
				return dsh.PostToolAccept{Content: bad}, nil
			})
		}, nil, msgResultNotJSON},
		{"post-execute block feedback", func(e *env) {
			e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
				return dsh.PostToolBlock{Feedback: []dsh.ContentBlock{dsh.ToolCallBlock{ID: "x", Name: "n", Arguments: invalid}}}, nil
			})
		}, nil, msgResultNotJSON},
		{"post-execute context source", func(e *env) {
			e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
				m := ctxMsg("m", "p")
				m.Source = dsh.SourceModel{Provider: invalid, Model: "m"}
				return dsh.PostToolAccept{AdditionalContexts: []dsh.UserMessage{m}}, nil
			})
		}, nil, msgResultNotJSON},
		{"tool-result block", func(e *env) {
			e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
				return dsh.PostToolAccept{Content: []dsh.ContentBlock{dsh.ToolResultBlock{ToolCallID: "c",
					Content: []dsh.ContentBlock{dsh.ReasoningBlock{Text: invalid}}}}}, nil
			})
		}, nil, msgResultNotJSON},
		{"wrapper failure", func(e *env) {
			e.hooks.WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
				next.Call(ctx)
				return dsh.ToolFailure{Error: dsh.ToolError{Message: invalid}, Content: []dsh.ContentBlock{}}
			})
		}, nil, msgResultNotJSON},
		{"wrapper failure info", func(e *env) {
			e.hooks.WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
				next.Call(ctx)
				return dsh.ToolFailure{Error: dsh.ToolError{Message: "m", Info: &dsh.ToolErrorInfo{Name: "N", Code: invalid}},
					Content: []dsh.ContentBlock{}}
			})
		}, nil, msgResultNotJSON},
		{"finalizer", nil, func(d *Definition) {
			d.FinalizeContent = func(dsh.ToolExecution, dsh.ToolExecutionResult) ([]dsh.ContentBlock, error) { return bad, nil }
		}, msgResultNotJSON},
		{"renderer", nil, func(d *Definition) {
			d.Output = &Output{Render: func(args, value json.RawMessage) ([]dsh.ContentBlock, error) { return bad, nil }}
		}, `tool "echo" returned invalid output: output.render returned non-lossless JSON`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			def := echoDef()
			if tc.def != nil {
				tc.def(&def)
			}
			e.register(t, def)
			if tc.setup != nil {
				tc.setup(e)
			}
			r := e.exec(context.Background(), "echo", `{"text":"hi"}`)
			wantJSONSafe(t, r)
			if f := failureOfResult(t, r); f.Error.Message != tc.message {
				t.Errorf("message %q, want %q", f.Error.Message, tc.message)
			}
		})
	}
}

// TestDeferContextText: DeferContext refuses a message with text that is not valid UTF-8,
// in its content, its id or its source.
func TestDeferContextText(t *testing.T) {
	summary := invalid
	for _, m := range []dsh.UserMessage{
		{Source: dsh.SourceUser{}, Content: []dsh.ContentBlock{dsh.TextBlock{Text: invalid}}},
		{ID: invalid, Source: dsh.SourceUser{}},
		{Source: dsh.SourcePlugin{Plugin: "p", Summary: &summary}},
		{Source: &dsh.SourceTool{CallID: invalid}},
	} {
		e := newEnv(t)
		var err error
		e.register(t, toolDef("t", func(ctx context.Context, rc *RunContext) (any, error) {
			err = rc.DeferContext(m)
			return "ok", nil
		}))
		r := e.exec(context.Background(), "t", `{}`)
		if !errors.Is(err, errNotLossless) {
			t.Errorf("DeferContext(%+v) = %v, want not lossless", m, err)
		}
		if len(r.AdditionalContexts()) != 0 {
			t.Errorf("kept %+v", r.AdditionalContexts())
		}
	}
}

// TestFailureText: a failure made from an error, a panic or a policy reason is JSON-safe
// whatever its bytes: each run of invalid bytes becomes U+FFFD, in the message, the
// content, the info and the halt reason (Part A item 4: the process never fails for a
// plugin's bytes).
func TestFailureText(t *testing.T) {
	for _, tc := range []struct {
		name     string
		setup    func(e *env)
		message  string
		halt     string
		infoCode string
	}{
		{"body error", func(e *env) {
			e.register(t, toolDef("t", func(context.Context, *RunContext) (any, error) {
				return nil, &Error{Code: "C\xfe", Message: "boom \xff\xfe end"}
			}))
		}, "boom \uFFFD end", "", "C\uFFFD"},
		{"body panic", func(e *env) {
			e.register(t, toolDef("t", func(context.Context, *RunContext) (any, error) { panic(invalid) }))
		}, "panic: bad \uFFFD", "", ""},
		{"pre-execute deny", func(e *env) {
			e.register(t, toolDef("t", func(context.Context, *RunContext) (any, error) { return "ok", nil }))
			e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
				return dsh.PreToolDeny{Reason: invalid}, nil
			})
		}, "bad \uFFFD", "", ""},
		{"pre-execute halt", func(e *env) {
			e.register(t, toolDef("t", func(context.Context, *RunContext) (any, error) { return "ok", nil }))
			e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
				return dsh.PreToolHalt{Reason: invalid}, nil
			})
		}, "bad \uFFFD", "bad \uFFFD", ""},
		{"guard", func(e *env) {
			e.register(t, toolDef("t", func(context.Context, *RunContext) (any, error) { return "ok", nil }))
			e.hooks.Guard(func(ctx context.Context, p *dsh.GuardPayload) dsh.GuardVerdict { return dsh.GuardDeny{Reason: invalid} })
		}, "bad \uFFFD", "", ""},
		{"unknown tool name", nil, `unknown tool "bad ` + "\uFFFD" + `"`, "", CodeUnknownTool},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			name := "t"
			if tc.setup != nil {
				tc.setup(e)
			} else {
				name = invalid
			}
			r := e.exec(context.Background(), name, `{}`)
			wantJSONSafe(t, r)
			f := failureOfResult(t, r)
			if f.Error.Message != tc.message || text(r) != "Error: "+tc.message {
				t.Errorf("message %q, content %q, want %q", f.Error.Message, text(r), tc.message)
			}
			if tc.infoCode != "" && (f.Error.Info == nil || f.Error.Info.Code != tc.infoCode) {
				t.Errorf("info %+v, want code %q", f.Error.Info, tc.infoCode)
			}
			switch {
			case tc.halt == "" && r.Halt != nil:
				t.Errorf("halt %+v", *r.Halt)
			case tc.halt != "" && (r.Halt == nil || r.Halt.Reason != tc.halt):
				t.Errorf("halt %+v, want reason %q", r.Halt, tc.halt)
			}
		})
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
