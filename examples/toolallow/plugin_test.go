package toolallow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/dshkit/dsh/examples/toolallow"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/loop"
	"github.com/dshkit/dsh/runtime/session"
	"github.com/dshkit/dsh/runtime/tools"
)

// run runs one turn of an agent with the tools read, write and bash registered and the
// plugin registered; it returns the tool names each request offered.
func run(p *toolallow.Plugin, responses ...llm.ScriptedResponse) ([]string, error) {
	ctx := context.Background()
	reg := dsh.NewRegistry()
	p.Register(reg.Plugin("toolallow"))
	treg := tools.NewRegistry()
	for _, name := range []string{"read", "write", "bash"} {
		if _, err := treg.Register(tools.Definition{Name: name, Description: name,
			Run: func(ctx context.Context, rc *tools.RunContext) (any, error) { return "ok", nil }}); err != nil {
			return nil, err
		}
	}
	model := llm.NewScripted(responses...).RecordRequests()
	log, err := session.Open(ctx, session.NewMemory())
	if err != nil {
		return nil, err
	}
	a, err := loop.New(ctx, loop.Config{ID: "a1", Registry: reg, Tools: tools.New(treg, reg), Model: model, Log: log,
		LLM: dsh.LLMCallConfig{Provider: "scripted", Model: "m"}})
	if err != nil {
		return nil, err
	}
	defer a.Close()
	if err := a.Followup(ctx, dsh.UserMessage{Content: []dsh.ContentBlock{dsh.TextBlock{Text: "go"}}, Source: dsh.SourceUser{}}); err != nil {
		return nil, err
	}
	if err := a.Wait(ctx); err != nil {
		return nil, err
	}
	var out []string
	for _, r := range model.Requests() {
		var names []string
		for _, t := range r.Tools {
			names = append(names, t.Name)
		}
		out = append(out, "["+strings.Join(names, ",")+"]")
	}
	return out, nil
}

func call(name string) llm.ScriptedResponse {
	return llm.ScriptedResponse{ToolCalls: []llm.ScriptedToolCall{{ID: "c-" + name, Name: name, Arguments: json.RawMessage(`{}`)}}}
}

// TestRestrictsEachRequest: every request offers only the allowed tools that are
// registered; past ReadOnlyAfter, none.
func TestRestrictsEachRequest(t *testing.T) {
	got, err := run(&toolallow.Plugin{Allow: []string{"read", "grep"}, ReadOnlyAfter: 2},
		call("read"), call("read"), llm.ScriptedResponse{Text: "done"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"[read]", "[read]", "[]"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("tools per request %v, want %v", got, want)
	}
}

// Example shows the tools each request of a turn offers: the allow-list, then none.
func Example() {
	got, err := run(&toolallow.Plugin{Allow: []string{"read", "bash"}, ReadOnlyAfter: 1}, call("bash"), llm.ScriptedResponse{Text: "done"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.Join(got, " "))
	// Output: [bash,read] []
}
