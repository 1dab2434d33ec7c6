package loop

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/tools"
)

// declared is a request's tools, each name with "+" when it is declared with
// DeferLoading.
func declared(req llm.Request) []string {
	var out []string
	for _, t := range req.Tools {
		n := t.Name
		if t.DeferLoading {
			n += "+"
		}
		out = append(out, n)
	}
	return out
}

// TestDeferredTools: a deferred tool is declared only once a tool reference of the history
// names it, and then with DeferLoading; the placeholder is declared while a
// deferred tool is left out. A call to a deferred tool no request declared still runs.
func TestDeferredTools(t *testing.T) {
	e := newEnv(t, calls("c1:Late"), calls("c2:Search"), calls("c3:Late"), text("done"))
	e.register(okTool("Eager", false))
	late := okTool("Late", false)
	late.Loading = tools.LoadDeferred
	e.register(late)
	other := okTool("Other", false)
	other.Loading = tools.LoadDeferred
	e.register(other)
	ph := okTool("Placeholder", false)
	ph.Loading = tools.LoadPlaceholder
	e.register(ph)
	search := okTool("Search", false)
	search.Output = &tools.Output{Render: func(_, _ json.RawMessage) ([]dsh.ContentBlock, error) {
		late := "Late"
		return []dsh.ContentBlock{dsh.TextBlock{Text: "Tool Late loaded.", ToolReference: &late}}, nil
	}}
	e.register(search)
	a := e.agent()
	turns(t, a, "go")
	reqs := e.requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	before := []string{"Eager", "Placeholder+", "Search"}
	after := []string{"Eager", "Late+", "Placeholder+", "Search"}
	for i, want := range [][]string{before, before, after, after} {
		diff(t, "request tools", want, declared(reqs[i]))
	}
	// The first call to Late, before any search, ran.
	if got := textOf(reqs[1].Messages[len(reqs[1].Messages)-1].Content); got != "ok" {
		t.Errorf("the unloaded deferred tool's result: %q", got)
	}
}

// TestDeferredToolsRestrict: a restrict whose allow-list leaves a deferred tool out makes a
// call to it unknown, as a declared tool's.
func TestDeferredToolsRestrict(t *testing.T) {
	e := newEnv(t, calls("c1:Late"), text("done"))
	e.register(okTool("Eager", false))
	late := okTool("Late", false)
	late.Loading = tools.LoadDeferred
	e.register(late)
	e.reg.Plugin("only-eager").OnRequest(func(context.Context, *dsh.RequestPayload) (dsh.RequestDecision, error) {
		return dsh.RequestRestrict{Allow: []string{"Eager"}}, nil
	})
	a := e.agent()
	turns(t, a, "go")
	reqs := e.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if got := textOf(reqs[1].Messages[len(reqs[1].Messages)-1].Content); got == "ok" {
		t.Errorf("the restricted deferred tool ran: %q", got)
	}
}
