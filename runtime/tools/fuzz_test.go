package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
)

// FuzzExecute feeds arbitrary arguments and listener decisions (decoded from the fuzz
// bytes into the generated unions; undecodable bytes make the listener fail or panic),
// and arbitrary text (not always valid UTF-8) that the body defers, a renderer renders
// and a failing listener gives as its error, and checks that no panic escapes and every
// result is valid, lossless JSON that decodes back to itself.
func FuzzExecute(f *testing.F) {
	f.Add([]byte(`{"text":"hi"}`), []byte(`{"kind":"allow"}`), []byte(`{"kind":"abstain"}`),
		[]byte(`{"kind":"success","value":"x","content":[]}`), []byte(`{"kind":"accept"}`), uint8(0), []byte("x"))
	f.Add([]byte(`{"text":1}`), []byte(`{"kind":"deny","reason":"no"}`), []byte(`{"kind":"deny","reason":"g"}`),
		[]byte(`{"kind":"failure","error":{"message":"w"},"content":[]}`), []byte(`{"kind":"block","feedback":[]}`), uint8(1), []byte("x"))
	f.Add([]byte(`not json`), []byte(`{"kind":"ask"}`), []byte(`{}`), []byte(`[]`),
		[]byte(`{"kind":"accept","value":1}`), uint8(2), []byte("x"))
	f.Add([]byte(`{"text":"x"}`), []byte(`{"kind":"halt","reason":"h"}`), []byte(`x`),
		[]byte(`{"kind":"success","value":{"a":-0},"content":[]}`), []byte(`{"kind":"accept","value":"v","content":[]}`), uint8(3), []byte("x"))
	f.Add([]byte(`{}`), []byte(`{"kind":"ask","reason":"r"}`), []byte(`{"kind":"abstain"}`),
		[]byte(`{"kind":"success","value":"s","content":[{"kind":"text","text":"t"}],"meta":{"m":1}}`),
		[]byte(`{"kind":"halt","reason":"p"}`), uint8(0xff), []byte("x"))
	for i, text := range []string{"ok", "bad \xff", "\xed\xa0\x80 surrogate", "\ufffd"} {
		f.Add([]byte(`{"text":"t"}`), []byte(`?`), []byte(`{"kind":"abstain"}`), []byte(`[]`), []byte(`{}`), uint8(0x80|i), []byte(text))
	}

	f.Fuzz(func(t *testing.T, args, pre, guard, wrapped, post []byte, mode uint8, text []byte) {
		e := newEnv(t)
		def := echoDef()
		run := def.Run
		def.Run = func(ctx context.Context, rc *RunContext) (any, error) {
			_ = rc.DeferContext(dsh.UserMessage{Source: dsh.SourceUser{}, Content: []dsh.ContentBlock{dsh.TextBlock{Text: string(text)}}})
			return run(ctx, rc)
		}
		def.FinalizeContent = func(exec dsh.ToolExecution, r dsh.ToolExecutionResult) ([]dsh.ContentBlock, error) {
			if mode&0x40 != 0 {
				panic("finalizer")
			}
			return nil, nil
		}
		if mode&0x80 != 0 {
			def.Output.Render = func(args, value json.RawMessage) ([]dsh.ContentBlock, error) {
				return []dsh.ContentBlock{dsh.TextBlock{Text: string(args)}, dsh.TextBlock{Text: string(value)},
					dsh.TextBlock{Text: string(text)}}, nil
			}
		}
		e.register(t, def)
		e.hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
			d, err := dsh.UnmarshalPreToolDecision(pre)
			if err != nil {
				if mode&1 != 0 {
					return next.Call(ctx)
				}
				return nil, errors.New(string(text))
			}
			return d, nil
		})
		e.hooks.Guard(func(ctx context.Context, p *dsh.GuardPayload) dsh.GuardVerdict {
			v, err := dsh.UnmarshalGuardVerdict(guard)
			if err != nil {
				if mode&2 != 0 {
					panic(err)
				}
				return dsh.GuardAbstain{}
			}
			return v
		})
		e.hooks.WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
			if mode&4 == 0 {
				return next.Call(ctx)
			}
			r, err := dsh.UnmarshalToolExecutionResult(wrapped)
			if err != nil {
				return nil
			}
			return r
		})
		e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
			d, err := dsh.UnmarshalPostToolDecision(post)
			if err != nil {
				if mode&8 != 0 {
					panic(err)
				}
				return next.Call(ctx)
			}
			return d, nil
		})
		ctx := context.Background()
		if mode&0x10 != 0 {
			c, cancel := context.WithCancel(ctx)
			cancel()
			ctx = c
		}
		agent := ""
		if mode&0x20 != 0 {
			agent = "a1"
		}
		r := e.rt.Execute(ctx, Input{CallID: "c1", Name: "echo", Arguments: args, AgentID: agent})
		checkResult(t, r)
		if mode&0x20 != 0 {
			// Through ModelArguments, any string is executable.
			checkResult(t, e.rt.Execute(ctx, Input{CallID: "c2", Name: "echo", Arguments: ModelArguments(string(args))}))
		}
	})
}

// checkResult checks that r is a complete, lossless JSON result.
func checkResult(t *testing.T, r Result) {
	t.Helper()
	if r.Outcome == nil {
		t.Fatal("nil outcome")
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	if _, err := snapshotJSON(data); err != nil {
		t.Fatalf("result is not lossless JSON: %s", data)
	}
	outcome := mustMarshal(t, r.Outcome)
	back, err := dsh.UnmarshalToolExecutionResult(outcome)
	if err != nil {
		t.Fatalf("result does not decode strictly: %v: %s", err, data)
	}
	if again := mustMarshal(t, back); !bytes.Equal(again, outcome) {
		t.Fatalf("result does not decode back to itself:\n%s\n%s", outcome, again)
	}
	if err := (dsh.ToolResultPayload{Exec: r.Exec, Result: back}).Validate(); err != nil {
		t.Fatalf("result does not validate: %v", err)
	}
	if f, ok := r.Outcome.(dsh.ToolFailure); ok && f.Content == nil {
		t.Fatalf("a failure without content: %s", data)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
