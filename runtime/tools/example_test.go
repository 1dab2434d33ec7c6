package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
)

// A tool definition and a tools/pre-execute waterfall listener that denies writes outside
// /tmp; any other call goes on down the chain (next.Call).
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

// A guard denies or abstains; it can never allow, and no later listener can undo its
// denial. This one denies recursive forced removals in Bash.
func Example_guard() {
	hooks := dsh.NewRegistry()
	hooks.Plugin("rmguard").Guard(func(ctx context.Context, p *dsh.GuardPayload) dsh.GuardVerdict {
		var args struct{ Command string }
		if p.Exec.Name == "Bash" && json.Unmarshal(p.Exec.Arguments, &args) == nil && strings.Contains(args.Command, "rm -rf") {
			return dsh.GuardDeny{Reason: "no rm -rf here"}
		}
		return dsh.GuardAbstain{}
	})
	registry := tools.NewRegistry()
	registry.Register(tools.Definition{Name: "Bash", Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
		return "ran", nil
	}})
	rt := tools.New(registry, hooks)
	for _, cmd := range []string{"ls", "rm -rf /"} {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		r := rt.Execute(context.Background(), tools.Input{CallID: "c", Name: "Bash", Arguments: args})
		fmt.Println(cmd, "->", r.Content()[0].(dsh.TextBlock).Text)
	}
	// Output:
	// ls -> ran
	// rm -rf / -> Error: no rm -rf here
}

// A tools/execute wrapper runs around the tool body: here a timeout that gives up with a
// clean, final failure of its own (tools.Fail), and a note added to every other result
// (AppendAdditionalContexts, whatever the result's variant).
func Example_wrapper() {
	hooks := dsh.NewRegistry()
	hooks.Plugin("timeout").WrapExecute(func(ctx context.Context, p *dsh.ExecutePayload, next dsh.ExecuteNext) dsh.ToolExecutionResult {
		tctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
		defer cancel()
		r := next.Call(tctx)
		if tctx.Err() != nil {
			return tools.Fail(ctx, tools.NewError("TIMEOUT", p.Exec.Name+" took too long"))
		}
		return r.AppendAdditionalContexts(dsh.UserText(dsh.SourcePlugin{Plugin: "timeout"}, p.Exec.Name+" finished in time"))
	})
	registry := tools.NewRegistry()
	registry.Register(tools.Definition{Name: "Sleep", Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	registry.Register(tools.Definition{Name: "Echo", Run: func(ctx context.Context, rc *tools.RunContext) (any, error) {
		return "hi", nil
	}})
	rt := tools.New(registry, hooks)
	for _, name := range []string{"Echo", "Sleep"} {
		r := rt.Execute(context.Background(), tools.Input{CallID: "c", Name: name, Arguments: json.RawMessage(`{}`)})
		fmt.Println(name, "->", r.Content()[0].(dsh.TextBlock).Text, len(r.AdditionalContexts()))
	}
	// Output:
	// Echo -> hi 1
	// Sleep -> Error: Sleep took too long 0
}
