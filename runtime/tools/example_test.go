package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
)

// A tool definition and a pre-execute listener that denies writes outside /tmp.
func Example() {
	registry := tools.NewRegistry()
	_, err := registry.Register(tools.Definition{
		Name:        "write_file",
		Description: "Write text to a file.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"text":{"type":"string"}},"required":["path","text"]}`),
		Output:      &tools.Output{Schema: json.RawMessage(`{"type":"integer"}`)},
		Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
			var args struct{ Path, Text string }
			if err := rc.BindArguments(&args); err != nil {
				return nil, err
			}
			return len(args.Text), nil // pretend we wrote it; the value is the byte count
		},
	})
	if err != nil {
		panic(err)
	}

	hooks := dsh.NewRegistry()
	hooks.Plugin("sandbox").OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		var args struct{ Path string }
		if p.Exec.Name == "write_file" && json.Unmarshal(p.Exec.Arguments, &args) == nil && !strings.HasPrefix(args.Path, "/tmp/") {
			return dsh.NewPreToolDeny("writes are limited to /tmp"), nil
		}
		return next.Call(ctx)
	})

	rt := tools.New(registry, hooks)
	for _, path := range []string{"/tmp/notes.txt", "/etc/passwd"} {
		args, _ := json.Marshal(map[string]string{"path": path, "text": "hello"})
		r := rt.Execute(context.Background(), tools.Input{CallID: "call-1", Name: "write_file", Arguments: args, AgentID: "agent-1"})
		fmt.Println(r.IsError(), r.Content()[0].(dsh.TextBlock).Text)
	}
	// Output:
	// false 5
	// true Error: writes are limited to /tmp
}
