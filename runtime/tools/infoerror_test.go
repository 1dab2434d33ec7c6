package tools_test

import (
	"context"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
)

// codedError is a plugin's own structured error.
type codedError struct{ code string }

func (e codedError) Error() string { return "coded: " + e.code }
func (e codedError) ToolErrorInfo() dsh.ToolErrorInfo {
	return dsh.ToolErrorInfo{Name: "PluginError", Code: e.code}
}

// TestInfoErrorFromListener: a listener failing with an error that implements
// tools.InfoError gives the failure that info, as an *Error would (B §3.2).
func TestInfoErrorFromListener(t *testing.T) {
	hooks := dsh.NewRegistry()
	hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		return nil, codedError{code: "DENIED"}
	})
	reg := tools.NewRegistry()
	if _, err := reg.Register(tools.Definition{Name: "echo", Run: func(ctx context.Context, rc *tools.RunContext) (any, error) { return "x", nil }}); err != nil {
		t.Fatal(err)
	}
	res := tools.New(reg, hooks).Execute(context.Background(), tools.Input{CallID: "c1", Name: "echo", Arguments: []byte(`{}`)})
	f, ok := res.Outcome.(dsh.ToolFailure)
	if !ok {
		t.Fatalf("outcome = %#v, want a failure", res.Outcome)
	}
	if f.Error.Message != "coded: DENIED" || f.Error.Info == nil || *f.Error.Info != (dsh.ToolErrorInfo{Name: "PluginError", Code: "DENIED"}) {
		t.Errorf("error = %+v (info %+v)", f.Error, f.Error.Info)
	}
}
