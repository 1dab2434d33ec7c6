package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dshkit/dsh/bridges/mcp"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

// TestResources: a server's resources and templates list as it sent them; a server
// without the resources capability lists none; reading a URI the server does not have is
// the server's JSON-RPC error, as an *mcp.RPCError; a server that is not running is an
// error naming it.
func TestResources(t *testing.T) {
	_, set, errs := mount(t, mcp.Options{}, fakeConfig(t, "res", "DSH_MCP_FAKE_RESOURCES=1"), fakeConfig(t, "plain"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	ctx := context.Background()
	if got := set.ResourceServers(); strings.Join(got, ",") != "res,plain" {
		t.Errorf("servers %v", got)
	}
	list, next, err := set.ListResources(ctx, "res", "")
	if err != nil || len(list) != 1 || next != "" || !strings.Contains(string(list[0]), `"uri":"fake://b"`) {
		t.Errorf("resources %s %q %v", list, next, err)
	}
	tmpl, _, err := set.ListResourceTemplates(ctx, "res", "")
	if err != nil || len(tmpl) != 1 || !strings.Contains(string(tmpl[0]), `"uriTemplate":"fake://t/{x}"`) {
		t.Errorf("templates %s %v", tmpl, err)
	}
	if list, _, err := set.ListResources(ctx, "plain", ""); err != nil || len(list) != 0 {
		t.Errorf("a server without resources: %s %v", list, err)
	}
	contents, err := set.ReadResource(ctx, "res", "fake://b")
	if err != nil || len(contents) != 1 || !strings.Contains(string(contents[0]), `"text":"body b"`) {
		t.Errorf("read %s %v", contents, err)
	}
	_, err = set.ReadResource(ctx, "res", "fake://t/zzz")
	var rpc *mcp.RPCError
	if !errors.As(err, &rpc) || rpc.Code != -32602 || rpc.Message != "Resource not found" || string(rpc.Data) != `{"uri":"fake://t/zzz"}` {
		t.Errorf("read of a missing resource: %#v", err)
	}
	if _, err := set.ReadResource(ctx, "nope", "fake://b"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("a server that is not running: %v", err)
	}
}

// TestNamespaceAndHeader: with Options.Namespace a tool's schema puts it in its server's
// namespace under its own name (its dsh name unchanged), and with Options.Header the
// model's content begins with the header and the call's wall time, for a success and for
// a result the server marked isError alike.
func TestNamespaceAndHeader(t *testing.T) {
	rt, set, errs := mount(t, mcp.Options{Namespace: "mcp__{server}", NamespaceDescription: "Tools in the {namespace} namespace.",
		Header: "Wall time: {seconds} seconds\nOutput:"}, fakeConfig(t, "fake.srv"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var found bool
	for _, d := range set.Definitions() {
		if d.Name != "mcp__fake_srv__echo" {
			continue
		}
		found = true
		var schema map[string]any
		if err := json.Unmarshal(d.InputSchema, &schema); err != nil {
			t.Fatal(err)
		}
		ns, rest, ok := llm.NamespaceOf(schema)
		if !ok || ns.Name != "mcp__fake_srv" || ns.Description != "Tools in the mcp__fake_srv namespace." || ns.Function != "echo" || rest["properties"] == nil {
			t.Errorf("namespace %+v %v (%v)", ns, rest, ok)
		}
	}
	if !found {
		t.Fatal("no echo tool")
	}
	head := func(blocks []dsh.ContentBlock) string {
		if len(blocks) != 2 {
			return ""
		}
		h, _ := blocks[0].(dsh.TextBlock)
		b, _ := blocks[1].(dsh.TextBlock)
		if !strings.HasPrefix(h.Text, "Wall time: ") || !strings.HasSuffix(h.Text, " seconds\nOutput:") {
			return ""
		}
		return b.Text
	}
	r := call(t, rt, "mcp__fake_srv__echo", `{"text":"hi"}`)
	if got := head(r.Content()); r.IsError() || got != "echo: hi" {
		t.Errorf("echo: %#v", r.Content())
	}
	r = call(t, rt, "mcp__fake_srv__fail", `{}`)
	if got := head(r.Content()); !r.IsError() || got != "it broke" {
		t.Errorf("fail: %#v", r.Content())
	}
}
