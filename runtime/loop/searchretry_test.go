package loop

import (
	"slices"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// TestSearchWithdrawalRetries runs the claude-code toolset's search withdrawal policy
// (builtin.SearchRetry) in the loop, as dsh run registers it: a request that declared
// deferred tools and fails with HTTP 400 is sent three times, then three times more
// without ToolSearch and its placeholder, every deferred tool declared in full and the
// withdrawal's reminder last, the listener's rewrite recorded; then the turn ends on the
// failure, within one step.
func TestSearchWithdrawalRetries(t *testing.T) {
	status := 400
	fail := llm.ScriptedResponse{Error: &llm.ScriptedError{Message: "bad request", Code: "invalid_request_error", Status: &status}}
	e := newEnv(t, fail, fail, fail, fail, fail, fail, text("never"))
	o := builtin.Options{Workspace: t.TempDir(), Style: builtin.StyleClaudeCode, Model: "claude-sonnet-4-5"}
	if _, err := builtin.Register(e.tools, o); err != nil {
		t.Fatal(err)
	}
	p := builtin.NewSearchRetry(o, e.tools, func(text string) dsh.ModelMessage {
		return dsh.ModelMessage{Role: dsh.ModelRoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: text}}, Source: dsh.SourcePlugin{Plugin: "test"}}
	})
	if p == nil {
		t.Fatal("no withdrawal policy for claude-sonnet-4-5")
	}
	p.Register(e.reg.Plugin("tool-search-retry"))
	a := e.agent()
	followup(t, a, "u1", "go")
	wait(t, a)
	reqs := e.requests()
	diff(t, "requests", 6, len(reqs))
	for i, r := range reqs {
		var names []string
		for _, s := range r.Tools {
			names = append(names, s.Name)
		}
		withdrawn := i >= 3
		if slices.Contains(names, "ToolSearch") == withdrawn || slices.Contains(names, "DeferredToolPlaceholder") == withdrawn ||
			slices.Contains(names, "NotebookEdit") != withdrawn || slices.Contains(names, "WebFetch") != withdrawn {
			t.Errorf("request %d declares %v", i+1, names)
		}
		want := []string{"user:go"}
		if withdrawn {
			want = append(want, "user:ToolSearch is no longer available. Tools listed earlier as deferred that are still available are declared in full: call them directly.")
		}
		diff(t, "request messages", want, texts(r))
	}
	diff(t, "steps", 1, len(records[dsh.StepStart](t, e.log)))
	diff(t, "rewrites", 3, len(records[dsh.RequestRewritten](t, e.log)))
	diff(t, "reasons", []string{`{"kind":"error","error":{"message":"bad request","code":"invalid_request_error","status":400}}`}, reasons(t, e.log))
}
