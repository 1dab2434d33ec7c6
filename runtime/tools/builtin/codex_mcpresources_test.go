package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// fakeResources is an MCPResources over fixed servers: b has two resources in two pages
// and a template, a has one resource; reading anything but b's first resource fails with
// a JSON-RPC error.
type fakeResources struct{ listed []string }

type rpcErr struct{}

func (rpcErr) Error() string { return "rpc" }
func (rpcErr) RPC() (int64, string, json.RawMessage) {
	return -32602, "Resource not found", json.RawMessage(`{ "uri": "x://zzz" }`)
}

func (f *fakeResources) ResourceServers() []string { return []string{"b", "a"} }

func (f *fakeResources) ListResources(_ context.Context, server, cursor string) ([]json.RawMessage, string, error) {
	f.listed = append(f.listed, server+"@"+cursor)
	switch {
	case server == "b" && cursor == "":
		return []json.RawMessage{json.RawMessage(`{"mimeType":"text/plain","name":"one","uri":"x://one","extra":1}`)}, "p2", nil
	case server == "b" && cursor == "p2":
		return []json.RawMessage{json.RawMessage(`{"name":"two","uri":"x://two"}`)}, "", nil
	case server == "a":
		return []json.RawMessage{json.RawMessage(`{"uri":"a://1","name":"a1"}`)}, "", nil
	}
	return nil, "", fmt.Errorf("no page %q", cursor)
}

func (f *fakeResources) ListResourceTemplates(_ context.Context, server, _ string) ([]json.RawMessage, string, error) {
	if server != "b" {
		return nil, "", nil
	}
	return []json.RawMessage{json.RawMessage(`{"name":"t","uriTemplate":"x://{n}"}`)}, "", nil
}

func (f *fakeResources) ReadResource(_ context.Context, server, uri string) ([]json.RawMessage, error) {
	if server == "b" && uri == "x://one" {
		return []json.RawMessage{json.RawMessage(`{"text":"body","uri":"x://one","mimeType":"text/plain"}`)}, nil
	}
	return nil, fmt.Errorf("reading: %w", rpcErr{})
}

// TestCodexMCPResources: Codex's resource tools are offered only with MCP servers; they
// answer in Codex's JSON (every server's resources in name order, "server" first in each
// entry, the keys in rmcp's order; one server's page with its server and next cursor; a
// read with the fields Codex adds) and fail in its words (measured: codex/mcp-resources*).
func TestCodexMCPResources(t *testing.T) {
	defs, err := builtin.Definitions(builtin.Options{Workspace: t.TempDir(), Style: builtin.StyleCodex})
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(defs, func(d tools.Definition) bool { return d.Name == "list_mcp_resources" }) {
		t.Fatal("resource tools offered without MCP servers")
	}
	f := &fakeResources{}
	defs, err = builtin.Definitions(builtin.Options{Workspace: t.TempDir(), Style: builtin.StyleCodex, MCPResources: f})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	reg := tools.NewRegistry()
	for _, d := range defs {
		names = append(names, d.Name)
		if _, err := reg.Register(d); err != nil {
			t.Fatal(err)
		}
	}
	if i := slices.Index(names, "list_mcp_resources"); i != 2 || names[3] != "list_mcp_resource_templates" || names[4] != "read_mcp_resource" {
		t.Fatalf("tools %v: want the resource tools after write_stdin, as Codex lists them", names)
	}
	rt := tools.New(reg, dsh.NewRegistry())
	run := func(name, args string) (string, bool) {
		r := rt.Execute(context.Background(), tools.Input{CallID: "c", Name: name, Arguments: json.RawMessage(args)})
		var text string
		for _, b := range r.Content() {
			if tb, ok := b.(dsh.TextBlock); ok {
				text += tb.Text
			}
		}
		return text, r.IsError()
	}
	for _, c := range []struct {
		name, args, want string
		isErr            bool
	}{
		{"list_mcp_resources", `{}`, `{"resources":[{"server":"a","uri":"a://1","name":"a1"},{"server":"b","uri":"x://one","name":"one","mimeType":"text/plain","extra":1},{"server":"b","uri":"x://two","name":"two"}]}`, false},
		{"list_mcp_resources", `{"server":"b"}`, `{"server":"b","resources":[{"server":"b","uri":"x://one","name":"one","mimeType":"text/plain","extra":1}],"nextCursor":"p2"}`, false},
		{"list_mcp_resources", `{"server":" b ","cursor":"p2"}`, `{"server":"b","resources":[{"server":"b","uri":"x://two","name":"two"}]}`, false},
		{"list_mcp_resource_templates", `{}`, `{"resourceTemplates":[{"server":"b","uriTemplate":"x://{n}","name":"t"}]}`, false},
		{"list_mcp_resource_templates", `{"server":"a"}`, `{"server":"a","resourceTemplates":[]}`, false},
		{"read_mcp_resource", `{"server":"b","uri":"x://one"}`, `{"server":"b","uri":"x://one","ttlMs":0,"cacheScope":"public","contents":[{"uri":"x://one","mimeType":"text/plain","text":"body"}]}`, false},
		{"read_mcp_resource", `{"server":"b","uri":"x://zzz"}`, "resources/read failed: resources/read failed for `b` (x://zzz): Mcp error: -32602: Resource not found({\"uri\":\"x://zzz\"})", true},
		{"read_mcp_resource", `{"server":"nope","uri":"x://one"}`, "unknown MCP server 'nope'", true},
		{"list_mcp_resources", `{"server":"nope"}`, "unknown MCP server 'nope'", true},
		{"list_mcp_resources", `{"cursor":"p2"}`, "cursor can only be used when a server is specified", true},
		{"list_mcp_resources", `{"server":"b","cursor":"bad"}`, "resources/list failed: resources/list failed for `b`: no page \"bad\"", true},
	} {
		got, isErr := run(c.name, c.args)
		if got != c.want || isErr != c.isErr {
			t.Errorf("%s %s:\n got %s (error %v)\nwant %s (error %v)", c.name, c.args, got, isErr, c.want, c.isErr)
		}
	}
}

// TestCodexMCPResourcesRefusedBeforeListeners: the resource tools' rows' refusals (a
// missing argument in serde's words, a server there is none of) fail the call when it is
// created, before any tools/rewrite-input or tools/pre-execute listener (where the hooks
// run), as Codex refuses them before its hooks (measured: codex/mcp-resources-refused); a
// call that passes them reaches the listeners.
func TestCodexMCPResourcesRefusedBeforeListeners(t *testing.T) {
	defs, err := builtin.Definitions(builtin.Options{Workspace: t.TempDir(), Style: builtin.StyleCodex, MCPResources: &fakeResources{}})
	if err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry()
	for _, d := range defs {
		if _, err := reg.Register(d); err != nil {
			t.Fatal(err)
		}
	}
	hooks := dsh.NewRegistry()
	var seen []string
	hooks.OnRewriteInput(func(ctx context.Context, p *dsh.RewriteInputPayload) (dsh.RewriteDecision, error) {
		seen = append(seen, "rewrite "+p.Name)
		return dsh.RewriteKeep{}, nil
	})
	hooks.OnPreTool(func(ctx context.Context, p *dsh.PreToolPayload, next dsh.PreToolNext) (dsh.PreToolDecision, error) {
		seen = append(seen, "pre "+p.Exec.Name)
		return next.Call(ctx)
	})
	rt := tools.New(reg, hooks)
	for _, c := range []struct{ name, args, want string }{
		{"read_mcp_resource", `{"server":"nope","uri":"x://one"}`, "unknown MCP server 'nope'"},
		{"list_mcp_resources", `{"server":"nope"}`, "unknown MCP server 'nope'"},
		{"list_mcp_resource_templates", `{"server":" nope "}`, "unknown MCP server 'nope'"},
		{"read_mcp_resource", `{"server":"b"}`, "failed to parse function arguments: missing field `uri`"},
		// The missing argument is checked first, as serde parses before the server is looked up.
		{"read_mcp_resource", `{"uri":"x://one"}`, "failed to parse function arguments: missing field `server`"},
	} {
		seen = nil
		r := rt.Execute(context.Background(), tools.Input{CallID: "c", Name: c.name, Arguments: json.RawMessage(c.args), Turn: 1})
		var text string
		for _, b := range r.Content() {
			if tb, ok := b.(dsh.TextBlock); ok {
				text += tb.Text
			}
		}
		if !r.IsError() || text != c.want || len(seen) != 0 {
			t.Errorf("%s %s = %q (error %v), listeners %v; want the failure %q before any listener", c.name, c.args, text, r.IsError(), seen, c.want)
		}
	}
	seen = nil
	if r := rt.Execute(context.Background(), tools.Input{CallID: "c", Name: "read_mcp_resource", Arguments: json.RawMessage(`{"server":"b","uri":"x://one"}`), Turn: 1}); r.IsError() ||
		!slices.Equal(seen, []string{"rewrite read_mcp_resource", "pre read_mcp_resource"}) {
		t.Errorf("a call the refusals pass: error %v, listeners %v", r.IsError(), seen)
	}
}
