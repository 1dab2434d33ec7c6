package runner_test

import (
	"context"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runner"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/session"
)

// claudeSession is a claude-code session in ws over log, with the hooks file hooks
// (trusted), whose model is model, named modelName in its requests; it closes with the
// test.
func claudeSession(t *testing.T, ws, hooks string, log *session.Log, model llm.Model, modelName string) *runner.Session {
	t.Helper()
	s, err := runner.New(context.Background(), runner.Config{Workspace: ws, SessionID: "ses_test", Log: log,
		Hooks: runner.Hooks{Dialect: "claude-code", File: hooks, Trust: true},
		OpenModel: func(string, runner.ContextPlacement) (llm.Model, dsh.LLMCallConfig, error) {
			return model, dsh.LLMCallConfig{Provider: "scripted", Model: modelName}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}
