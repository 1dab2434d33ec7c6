package rmguard_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dshkit/dsh/examples/rmguard"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
)

// TestGuardThroughThePipeline registers the plugin on a registry and runs Bash calls
// through the tool pipeline: rm -rf is denied before the body runs, the rest runs.
func TestGuardThroughThePipeline(t *testing.T) {
	hooks := dsh.NewRegistry()
	unregister := (&rmguard.Plugin{}).Register(hooks.Plugin("rmguard"))
	reg := tools.NewRegistry()
	ran := 0
	if _, err := reg.Register(tools.Definition{Name: "Bash", Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
		ran++
		return "ok", nil
	}}); err != nil {
		t.Fatal(err)
	}
	rt := tools.New(reg, hooks)
	run := func(cmd string) tools.Result {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		return rt.Execute(context.Background(), tools.Input{CallID: "c", Name: "Bash", Arguments: args})
	}
	for cmd, denied := range map[string]bool{
		"rm -rf /":           true,
		"rm -fr build":       true,
		"rm -Rf x":           true,
		"rm -r -f x":         true,
		"sudo rm -rf ~":      true,
		"rm -r build":        false,
		"ls -la":             false,
		"echo rm-rf-is-text": false,
	} {
		ran = 0
		r := run(cmd)
		if r.IsError() != denied || (ran == 0) != denied {
			t.Errorf("%q: isError %v, body ran %d times; want denied=%v", cmd, r.IsError(), ran, denied)
		}
	}
	unregister()
	ran = 0
	if r := run("rm -rf /tmp/x"); r.IsError() || ran != 1 {
		t.Errorf("after unregister: isError %v, ran %d", r.IsError(), ran)
	}
}
