package builtin_test

import (
	"context"
	"slices"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/tools"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// withdrawalText is the claude-code toolset's withdrawal reminder, as Claude Code 2.1.328
// sends it (channel/failure, stop/failure).
const withdrawalText = "ToolSearch is no longer available. Tools listed earlier as deferred that are still available are declared in full: call them directly."

// searchRetry is the claude-code search withdrawal policy for model over a registry of the
// claude-code toolset, registered on a hook registry of its own.
func searchRetry(t *testing.T, model string) (*tools.Registry, *dsh.Registry, *builtin.SearchRetry) {
	t.Helper()
	reg := tools.NewRegistry()
	o := builtin.Options{Workspace: t.TempDir(), Style: builtin.StyleClaudeCode, Model: model}
	if _, err := builtin.Register(reg, o); err != nil {
		t.Fatal(err)
	}
	p := builtin.NewSearchRetry(o, reg, func(text string) dsh.ModelMessage {
		return dsh.ModelMessage{Role: dsh.ModelRoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: text}}, Source: dsh.SourcePlugin{Plugin: "test"}}
	})
	hooks := dsh.NewRegistry()
	if p != nil {
		p.Register(hooks.Plugin("tool-search-retry"))
	}
	return reg, hooks, p
}

// declared is the request the loop derives while every deferred tool is behind the
// search: the eager tools and the placeholder with deferLoading, in name order.
func declared(reg *tools.Registry) []dsh.ModelTool {
	var out []dsh.ModelTool
	yes := true
	for _, d := range reg.Visible("") {
		switch d.Loading {
		case tools.LoadEager:
			out = append(out, dsh.ModelTool{Name: d.Name, Description: d.Description, InputSchema: d.InputSchema})
		case tools.LoadPlaceholder:
			out = append(out, dsh.ModelTool{Name: d.Name, Description: d.Description, InputSchema: d.InputSchema, DeferLoading: &yes})
		}
	}
	slices.SortFunc(out, func(a, b dsh.ModelTool) int {
		if a.Name < b.Name {
			return -1
		}
		return 1
	})
	return out
}

// attempt runs the agent/request listeners on one attempt of a step and then, with the
// failure of status, the agent/request-error ones; it returns the request as sent, the
// decision, and whether the listeners inside the policy (dsh's default) were asked.
func attempt(t *testing.T, hooks *dsh.Registry, req dsh.ModelRequest, step, n, status int) (dsh.ModelRequest, dsh.RequestErrorDecision, bool) {
	t.Helper()
	return attemptFailure(t, hooks, req, step, n, dsh.LLMFailure{Message: "bad request", Code: "invalid_request_error", Status: &status})
}

// attemptFailure is attempt with the failure f.
func attemptFailure(t *testing.T, hooks *dsh.Registry, req dsh.ModelRequest, step, n int, f dsh.LLMFailure) (dsh.ModelRequest, dsh.RequestErrorDecision, bool) {
	t.Helper()
	ctx := context.Background()
	sent := req
	p := &dsh.RequestPayload{AgentID: "main", Turn: 1, Step: step, Attempt: n, Request: req, Original: req}
	err := hooks.RunRequest(ctx, p, 0, func(_ context.Context, _ string, d dsh.RequestDecision) (*dsh.RequestPayload, error) {
		if rw, ok := d.(dsh.RequestRewrite); ok {
			if rw.Tools != nil {
				sent.Tools = rw.Tools
			}
			if rw.Messages != nil {
				sent.Messages = rw.Messages
			}
		}
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	inner := false
	d, err := hooks.RunRequestError(ctx, &dsh.RequestErrorPayload{AgentID: "main", Turn: 1, Step: step, Provider: "anthropic", Attempt: n,
		Failure: f},
		func(context.Context) (dsh.RequestErrorDecision, error) {
			inner = true
			return dsh.RequestErrorNone{}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return sent, d, inner
}

func names(ts []dsh.ModelTool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

// TestSearchRetrySchedule replays channel/failure and stop/failure: a request that
// declared deferred tools and fails with HTTP 400 (or 422) is sent three times, then three
// times more with the search withdrawn (every deferred tool in full, no ToolSearch or
// placeholder, the withdrawal's reminder last), and then the failure ends the turn.
func TestSearchRetrySchedule(t *testing.T) {
	for _, status := range []int{400, 422} {
		reg, hooks, p := searchRetry(t, "claude-sonnet-4-5")
		if p == nil {
			t.Fatal("no withdrawal policy for claude-sonnet-4-5")
		}
		prompt := dsh.ModelMessage{Role: dsh.ModelRoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: "Do the task."}}}
		req := dsh.ModelRequest{Config: dsh.LLMCallConfig{Provider: "anthropic", Model: "claude-sonnet-4-5"}, Messages: []dsh.ModelMessage{prompt}, Tools: declared(reg)}
		before := names(req.Tools)
		if !slices.Contains(before, "ToolSearch") || !slices.Contains(before, "DeferredToolPlaceholder") || slices.Contains(before, "NotebookEdit") {
			t.Fatalf("the first request declares %v", before)
		}
		for n := 1; n <= 6; n++ {
			sent, d, inner := attempt(t, hooks, req, 1, n, status)
			_, retry := d.(dsh.RequestErrorRetry)
			if want := n < 6; retry != want || inner == want {
				t.Errorf("%d: attempt %d: retry %v (inner listeners asked: %v), want %v", status, n, retry, inner, want)
			}
			got := names(sent.Tools)
			if n <= 3 {
				if !slices.Equal(got, before) || len(sent.Messages) != 1 {
					t.Errorf("%d: attempt %d: sent %v and %d messages before the withdrawal", status, n, got, len(sent.Messages))
				}
				continue
			}
			// Every tool but the search's, Agent aside (no host gives it here).
			want := []string{"Bash", "Edit", "NotebookEdit", "Read", "TaskCreate", "TaskGet", "TaskList", "TaskUpdate", "WebFetch", "Write"}
			if !slices.Equal(got, want) {
				t.Errorf("%d: attempt %d: withdrawn, the request declares %v, want %v", status, n, got, want)
			}
			for _, tool := range sent.Tools {
				if tool.DeferLoading != nil || tool.Description == "" || len(tool.InputSchema) == 0 {
					t.Errorf("%d: attempt %d: %s is not declared in full: %+v", status, n, tool.Name, tool)
				}
			}
			if len(sent.Messages) != 2 || sent.Messages[1].Content[0] != dsh.ContentBlock(dsh.TextBlock{Text: withdrawalText}) {
				t.Errorf("%d: attempt %d: messages %+v, want the prompt and the withdrawal", status, n, sent.Messages)
			}
		}
		// The next step offers the search again.
		sent, d, _ := attempt(t, hooks, req, 2, 1, status)
		if _, retry := d.(dsh.RequestErrorRetry); !retry || !slices.Equal(names(sent.Tools), before) {
			t.Errorf("%d: the next step: retry %v, tools %v", status, retry, names(sent.Tools))
		}
	}
}

// TestSearchRetryPasses: a failure of another status goes to the listeners inside at once
// (a 403 is sent once by the engine; a 429 or 5xx is dsh's retry policy's), as do a
// request over the context window (the overflow recovery's) and a failure of a request
// that declared no deferred tools; a model without the tool search
// gets no policy (the engine sends its failing request once).
func TestSearchRetryPasses(t *testing.T) {
	reg, hooks, _ := searchRetry(t, "claude-opus-5-5")
	req := dsh.ModelRequest{Tools: declared(reg)}
	for _, status := range []int{403, 429, 500} {
		if _, d, inner := attempt(t, hooks, req, status, 1, status); !inner {
			t.Errorf("%d: decided %T without the inner listeners", status, d)
		}
	}
	over := 400
	if _, d, inner := attemptFailure(t, hooks, req, 8, 1, dsh.LLMFailure{Message: "prompt is too long", Code: llm.CodeContextWindowExceeded, Status: &over}); !inner {
		t.Errorf("a request over the context window: decided %T without the inner listeners", d)
	}
	full := dsh.ModelRequest{Tools: slices.DeleteFunc(declared(reg), func(t dsh.ModelTool) bool { return t.DeferLoading != nil })}
	if _, d, inner := attempt(t, hooks, full, 9, 1, 400); !inner {
		t.Errorf("a request without deferred tools: decided %T without the inner listeners", d)
	}
	if _, _, p := searchRetry(t, "claude-3-7-sonnet-20250219"); p != nil {
		t.Error("a model without the tool search has a withdrawal policy")
	}
}
