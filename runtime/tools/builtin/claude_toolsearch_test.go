package builtin_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// references are the names of a result's tool references.
func references(r tools.Result) []string {
	var out []string
	for _, c := range r.Content() {
		if t, ok := c.(dsh.TextBlock); ok && t.ToolReference != nil {
			out = append(out, *t.ToolReference)
		}
	}
	return out
}

// TestClaudeToolSearch replays the searches of the differential cases
// tools/search-select and tools/search-keyword: each finds what Claude Code 2.1.328 found
// (measured), reads as tool references followed by "Tool loaded.", and its value is
// the engine's tool_response, counting the deferred tools of the registry.
func TestClaudeToolSearch(t *testing.T) {
	reg := tools.NewRegistry()
	if _, err := builtin.Register(reg, builtin.Options{Workspace: t.TempDir(), Style: builtin.StyleClaudeCode, Model: "claude-sonnet-4-5"}); err != nil {
		t.Fatal(err)
	}
	mcpTool := tools.Definition{Name: "mcp__hk__hook", Description: "Records a hook call.", Loading: tools.LoadDeferred,
		Run: func(context.Context, *tools.RunContext) (any, error) { return "ok", nil }}
	if _, err := reg.Register(mcpTool); err != nil {
		t.Fatal(err)
	}
	rt := tools.New(reg, dsh.NewRegistry())
	for _, step := range []struct {
		query string
		max   string
		want  []string
	}{
		{"select:NotebookEdit,TaskCreate", "5", []string{"NotebookEdit", "TaskCreate"}},
		{"notebook jupyter", "5", []string{"NotebookEdit"}},
		{"task list", "2", []string{"TaskList", "TaskCreate"}},
		{"select:NotebookEdit,Read", "5", []string{"NotebookEdit", "Read"}},
		{"select:NoSuchTool", "5", nil},
		{"+hk hook", "5", []string{"mcp__hk__hook"}},
	} {
		r := run(t, rt, "ToolSearch", `{"query":"`+step.query+`","max_results":`+step.max+`}`)
		if r.IsError() {
			t.Fatalf("%s: failed: %s", step.query, text(r))
		}
		if got := references(r); !slices.Equal(got, step.want) {
			t.Errorf("%s: found %v, want %v", step.query, got, step.want)
		}
		matches := `[]`
		if step.want != nil {
			matches = `["` + strings.Join(step.want, `","`) + `"]`
		}
		// Six deferred built-in tools for sonnet (NotebookEdit, TaskCreate, TaskGet,
		// TaskList, TaskUpdate, WebFetch) and the MCP tool.
		if got, want := value(t, r), `{"matches":`+matches+`,"query":"`+step.query+`","total_deferred_tools":7}`; got != want {
			t.Errorf("%s: value %s, want %s", step.query, got, want)
		}
		loaded := slices.ContainsFunc(r.AdditionalContexts(), func(m dsh.UserMessage) bool {
			return len(m.Content) == 1 && m.Content[0] == dsh.ContentBlock(dsh.TextBlock{Text: "Tool loaded."})
		})
		if loaded != (step.want != nil) {
			t.Errorf("%s: \"Tool loaded.\" follows: %v", step.query, loaded)
		}
		if step.want != nil && text(r) != "Tool "+strings.Join(step.want, " loaded.Tool ")+" loaded." {
			t.Errorf("%s: reads %q where the wire has no tool_reference", step.query, text(r))
		}
		if step.want == nil && text(r) != "No matching deferred tools found" {
			t.Errorf("%s: %q", step.query, text(r))
		}
	}
}

// TestClaudeDeferredLoading: for a model the toolset's search covers, the deferred rows
// are offered behind ToolSearch (the model's own deferred list for claude-opus-5-5) and
// the placeholder is declared meanwhile; another model gets every tool in full, with no
// ToolSearch and no placeholder.
func TestClaudeDeferredLoading(t *testing.T) {
	loading := func(model string) map[string]tools.Loading {
		defs, err := builtin.Definitions(builtin.Options{Workspace: t.TempDir(), Style: builtin.StyleClaudeCode, Model: model})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]tools.Loading{}
		for _, d := range defs {
			out[d.Name] = d.Loading
		}
		return out
	}
	for model, want := range map[string]map[string]tools.Loading{
		"claude-sonnet-4-5": {"Bash": tools.LoadEager, "ToolSearch": tools.LoadEager, "DeferredToolPlaceholder": tools.LoadPlaceholder,
			"NotebookEdit": tools.LoadDeferred, "TaskCreate": tools.LoadDeferred, "WebFetch": tools.LoadDeferred},
		"claude-opus-5-5": {"Read": tools.LoadEager, "ToolSearch": tools.LoadEager, "DeferredToolPlaceholder": tools.LoadPlaceholder,
			"NotebookEdit": tools.LoadDeferred, "WebFetch": tools.LoadDeferred},
	} {
		got := loading(model)
		for name, l := range want {
			if g, ok := got[name]; !ok || g != l {
				t.Errorf("%s: %s loads %q (offered %v), want %q", model, name, g, ok, l)
			}
		}
	}
	got := loading("gpt-5")
	for name, l := range got {
		if l != tools.LoadEager || name == "ToolSearch" || name == "DeferredToolPlaceholder" {
			t.Errorf("gpt-5: %s offered, loading %q", name, l)
		}
	}
	if _, ok := got["NotebookEdit"]; !ok {
		t.Errorf("gpt-5: NotebookEdit not offered")
	}
	if !builtin.DefersMCP(builtin.Options{Style: builtin.StyleClaudeCode, Model: "claude-sonnet-4-5"}) || builtin.DefersMCP(builtin.Options{Style: builtin.StyleClaudeCode, Model: "gpt-5"}) {
		t.Error("MCP tools are deferred for sonnet only")
	}
	want := "The following deferred tools are now available via ToolSearch. Their schemas are NOT loaded \u2014 calling them directly will fail with InputValidationError. " +
		"Use ToolSearch with query \"select:<name>[,<name>...]\" to load tool schemas before calling them:\nTaskCreate\nWebFetch\nmcp__hk__hook"
	if got := builtin.DeferredReminder(builtin.Options{Style: builtin.StyleClaudeCode, Model: "claude-opus-5-5"}, []string{"mcp__hk__hook", "WebFetch", "TaskCreate"}); got != want {
		t.Errorf("reminder %q", got)
	}
	if got := builtin.DeferredReminder(builtin.Options{Style: builtin.StyleCodex, Model: "claude-opus-5-5"}, []string{"x"}); got != "" {
		t.Errorf("codex reminder %q", got)
	}
}
