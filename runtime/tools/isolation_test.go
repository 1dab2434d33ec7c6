package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
)

// TestResultCopiesAreIsolated checks that every party that gets the result of a call (a
// wrapper, post-execute, the finalizer, an observer, the caller) gets its own copy: each
// one mutates what it got, in place and after the call, and nobody else sees it.
func TestResultCopiesAreIsolated(t *testing.T) {
	for _, tc := range []struct {
		name   string
		output *Output
		want   string
	}{
		{"default render", nil,
			`{"kind":"success","value":"hello","content":[{"kind":"text","text":"hello"}],"concludesTurn":true}`},
		{"render and meta", &Output{
			Render: func(args, value json.RawMessage) ([]dsh.ContentBlock, error) {
				return []dsh.ContentBlock{dsh.TextBlock{Text: "a"}, &dsh.TextBlock{Text: string(value)}}, nil
			},
			PresentationMeta: func(args, value json.RawMessage) (json.RawMessage, error) {
				return json.RawMessage(`{"m":1}`), nil
			},
		}, `{"kind":"success","value":"hello","content":[{"kind":"text","text":"a"},{"kind":"text","text":"\"hello\""}],
			"meta":{"m":1},"concludesTurn":true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			def := Definition{Name: "iso", Output: tc.output, Run: func(ctx context.Context, rc *RunContext) (any, error) {
				rc.ConcludeTurn()
				return "hello", nil
			}}
			type kept struct {
				party string
				r     dsh.ToolExecutionResult
				after string // its JSON after its own mutation
			}
			var keep []*kept
			// got checks that a party received the pristine result, mutates it in place and
			// keeps it.
			got := func(party string, r dsh.ToolExecutionResult) {
				data, _ := json.Marshal(r)
				if !jsonEqual(string(data), tc.want) {
					t.Errorf("%s got %s", party, data)
				}
				mutate(r)
				after, _ := json.Marshal(r)
				keep = append(keep, &kept{party: party, r: r, after: string(after)})
			}
			def.FinalizeContent = func(exec dsh.ToolExecution, r dsh.ToolExecutionResult) ([]dsh.ContentBlock, error) {
				got("finalizer", r)
				return nil, nil
			}
			e.register(t, def)
			e.hooks.WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
				r := next.Call(ctx)
				got("wrapper", r)
				return r // core dispatch's own result: the pipeline keeps its private one
			})
			e.hooks.OnPostTool(func(ctx context.Context, p *dsh.PostToolPayload, next dsh.PostToolNext) (dsh.PostToolDecision, error) {
				got("post", p.Result)
				return next.Call(ctx)
			})
			e.hooks.OnToolResult(func(ctx context.Context, p *dsh.ToolResultPayload) { got("observer", p.Result) })
			r := e.rt.Execute(context.Background(), Input{CallID: "c1", Name: "iso", Arguments: json.RawMessage(`{"a":"b"}`), AgentID: "a1"})
			wantOutcome(t, r, tc.want)
			if len(keep) != 4 {
				t.Fatalf("%d parties got the result", len(keep))
			}
			mutate(r.Outcome) // the caller's changes reach nobody else either
			for _, k := range keep {
				if data, _ := json.Marshal(k.r); string(data) != k.after {
					t.Errorf("%s's copy changed: %s, want %s", k.party, data, k.after)
				}
			}
		})
	}
}

// mutate changes a success in place: its value and meta bytes, its content blocks, its
// concludesTurn.
func mutate(r dsh.ToolExecutionResult) {
	s, ok := r.(dsh.ToolSuccess)
	if !ok {
		return
	}
	for i := range s.Value {
		if s.Value[i] >= 'a' && s.Value[i] <= 'z' {
			s.Value[i] = 'X'
			break
		}
	}
	for i := range s.Meta {
		if s.Meta[i] == '1' {
			s.Meta[i] = '2'
		}
	}
	for i := range s.Content {
		s.Content[i] = dsh.TextBlock{Text: "mutated"}
	}
	if s.ConcludesTurn != nil {
		*s.ConcludesTurn = false
	}
	if cap(s.Content) > len(s.Content) {
		_ = append(s.Content, dsh.TextBlock{Text: "appended"})
	}
	if cap(s.Value) > len(s.Value) {
		_ = append(s.Value, '!')
	}
}

// TestStragglingNext races a next called on another goroutine, which may reach core
// dispatch before or after the wrapper returned, with the phases after dispatch: whichever
// way it goes, the call ends with the wrapper's own result (re-normalized), and nothing
// races (go test -race).
func TestStragglingNext(t *testing.T) {
	e := newEnv(t)
	e.register(t, Definition{Name: "echo", Run: func(ctx context.Context, rc *RunContext) (any, error) { return "body", nil }})
	for _, early := range []bool{false, true} {
		unwrap := e.hooks.WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
			wctx := ctx
			if early { // core dispatch's early path: the context next gets is already cancelled
				var cancel context.CancelFunc
				wctx, cancel = context.WithCancel(ctx)
				cancel()
			}
			go next.Call(wctx) //dshvet:allow nextonce the wrapper returns before next ends, on purpose
			return dsh.ToolSuccess{Value: json.RawMessage(`"wrapper"`)}
		})
		var seen []string
		unobserve := e.hooks.OnToolResult(func(ctx context.Context, p *dsh.ToolResultPayload) {
			data, _ := json.Marshal(p.Result)
			seen = append(seen, string(data))
		})
		for range 200 {
			r := e.exec(context.Background(), "echo", `{}`)
			if text(r) != "wrapper" {
				t.Fatalf("early=%v: %s", early, outcomeJSON(t, r))
			}
		}
		if len(seen) != 200 {
			t.Errorf("%d results observed", len(seen))
		}
		unwrap()
		unobserve()
	}
}
