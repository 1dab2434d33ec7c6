package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dshkit/dsh/bridges/mcp"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/tools"
)

// The test binary doubles as a stdio MCP server when DSH_MCP_FAKE is set.
func TestMain(m *testing.M) {
	if os.Getenv("DSH_MCP_FAKE") != "" {
		runFake()
		return
	}
	os.Exit(m.Run())
}

type echoIn struct {
	Text string `json:"text"`
}

type echoOut struct {
	Echo string `json:"echo"`
}

func fakeServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "fake", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "echoes", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, echoOut, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, echoOut{Echo: in.Text}, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "fail", Description: "fails"},
		func(ctx context.Context, req *sdk.CallToolRequest, in struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "it broke"}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "crash", Description: "exits"},
		func(ctx context.Context, req *sdk.CallToolRequest, in struct{}) (*sdk.CallToolResult, any, error) {
			os.Exit(3)
			return nil, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "hang", Description: "never answers"},
		func(ctx context.Context, req *sdk.CallToolRequest, in struct{}) (*sdk.CallToolResult, any, error) {
			select {}
		})
	sdk.AddTool(s, &sdk.Tool{Name: "big", Description: "returns 2 MB of text"},
		func(ctx context.Context, req *sdk.CallToolRequest, in struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "héllo " + strings.Repeat("x", 2<<20)}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "noisy", Description: "writes a stray line on stdout, then answers"},
		func(ctx context.Context, req *sdk.CallToolRequest, in struct{}) (*sdk.CallToolResult, any, error) {
			os.Stdout.WriteString("debug: handling noisy\n")
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "answered"}}}, nil, nil
		})
	if os.Getenv("DSH_MCP_FAKE_RESOURCES") != "" {
		s.AddResource(&sdk.Resource{URI: "fake://b", Name: "b", MIMEType: "text/plain"},
			func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
				return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "fake://b", MIMEType: "text/plain", Text: "body b"}}}, nil
			})
		s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "fake://t/{x}", Name: "t"},
			func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
				return nil, sdk.ResourceNotFoundError(req.Params.URI)
			})
	}
	if os.Getenv("DSH_MCP_FAKE_NAMES") != "" {
		// Tools whose names sanitise alike, and one far over 64 characters.
		for _, name := range []string{"x.y", "x_y", strings.Repeat("long", 52)} {
			sdk.AddTool(s, &sdk.Tool{Name: name, Description: name},
				func(ctx context.Context, req *sdk.CallToolRequest, in struct{}) (*sdk.CallToolResult, any, error) {
					return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "I am " + name}}}, nil, nil
				})
		}
	}
	sdk.AddTool(s, &sdk.Tool{Name: "garbage", Description: "writes garbage on stdout"},
		func(ctx context.Context, req *sdk.CallToolRequest, in struct{}) (*sdk.CallToolResult, any, error) {
			os.Stdout.WriteString("this is not JSON-RPC\n")
			os.Stdout.WriteString("{\"jsonrpc\":\"2.0\",\"id\":\n")
			select {}
		})
	return s
}

func runFake() {
	if f := os.Getenv("DSH_MCP_FAKE_CHILD"); f != "" {
		// A grandchild in the server's process group, to check that Close reaps it.
		c := exec.Command("sleep", "300")
		if err := c.Start(); err == nil {
			os.WriteFile(f, []byte(strconv.Itoa(c.Process.Pid)), 0o644)
		}
	}
	switch os.Getenv("DSH_MCP_FAKE") {
	case "silent":
		select {} // never answers initialize
	case "banner":
		os.Stdout.WriteString("Starting the fake server (a banner on stdout)...\n\n{not json either\n")
	}
	_ = fakeServer().Run(context.Background(), &sdk.StdioTransport{})
}

func fakeConfig(t *testing.T, name string, env ...string) mcp.ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return mcp.ServerConfig{Name: name, Type: mcp.TypeStdio, Command: exe, Env: append([]string{"DSH_MCP_FAKE=1"}, env...), Source: "test"}
}

// mount starts servers and registers their tools in a fresh runtime.
func mount(t *testing.T, o mcp.Options, servers ...mcp.ServerConfig) (*tools.Runtime, *mcp.Set, []error) {
	t.Helper()
	set, errs := mcp.Start(context.Background(), servers, o)
	t.Cleanup(func() { set.Close() })
	reg := tools.NewRegistry()
	if _, rerrs := set.Register(reg, ""); len(rerrs) > 0 {
		t.Fatalf("register: %v", rerrs)
	}
	return tools.New(reg, dsh.NewRegistry()), set, errs
}

func call(t *testing.T, rt *tools.Runtime, name, args string) tools.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return rt.Execute(ctx, tools.Input{CallID: "c1", Name: name, Arguments: json.RawMessage(args)})
}

func text(r tools.Result) string {
	var parts []string
	for _, b := range r.Content() {
		if tb, ok := b.(dsh.TextBlock); ok {
			parts = append(parts, tb.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func TestStdioToolsAndResults(t *testing.T) {
	rt, set, errs := mount(t, mcp.Options{}, fakeConfig(t, "fake.srv"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if got := set.Servers(); len(got) != 1 || got[0] != "fake.srv" {
		t.Fatalf("servers = %v", got)
	}
	if set.ReadOnly("mcp__fake_srv__echo") || set.ReadOnly("mcp__fake_srv__fail") {
		t.Error("readOnlyHint of an untrusted server counted")
	}
	var names []string
	for _, d := range set.Definitions() {
		names = append(names, d.Name)
		if d.Name == "mcp__fake_srv__echo" && !strings.Contains(string(d.InputSchema), `"text"`) {
			t.Errorf("echo schema = %s", d.InputSchema)
		}
	}
	if !strings.Contains(strings.Join(names, ","), "mcp__fake_srv__echo") {
		t.Fatalf("tools = %v", names)
	}

	r := call(t, rt, "mcp__fake_srv__echo", `{"text":"hi"}`)
	if r.IsError() || text(r) != "echo: hi" {
		t.Fatalf("echo: error=%v content=%q", r.IsError(), text(r))
	}
	ok := r.Outcome.(dsh.ToolSuccess)
	var v mcp.Value
	if err := json.Unmarshal(ok.Value, &v); err != nil || string(v.StructuredContent) != `{"echo":"hi"}` {
		t.Fatalf("value = %s (%v)", ok.Value, err)
	}

	// The server's schema is enforced before the call.
	r = call(t, rt, "mcp__fake_srv__echo", `{"text":3}`)
	if !r.IsError() || !strings.Contains(text(r), "invalid arguments") {
		t.Fatalf("bad args: %q", text(r))
	}

	r = call(t, rt, "mcp__fake_srv__fail", `{}`)
	f, isFail := r.Outcome.(dsh.ToolFailure)
	if !isFail || f.Error.Info == nil || f.Error.Info.Code != mcp.CodeToolError || !strings.Contains(f.Error.Message, "it broke") {
		t.Fatalf("fail: %#v", r.Outcome)
	}
}

func failureCode(t *testing.T, r tools.Result) string {
	t.Helper()
	f, ok := r.Outcome.(dsh.ToolFailure)
	if !ok {
		t.Fatalf("not a failure: %#v", r.Outcome)
	}
	if f.Error.Info == nil {
		return ""
	}
	return f.Error.Info.Code
}

func TestBrokenServersFailTheCallOnly(t *testing.T) {
	rt, _, errs := mount(t, mcp.Options{CallTimeout: 500 * time.Millisecond, StopGrace: 200 * time.Millisecond},
		fakeConfig(t, "a"), fakeConfig(t, "b"), fakeConfig(t, "c"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if code := failureCode(t, call(t, rt, "mcp__a__hang", `{}`)); code != mcp.CodeTimeout {
		t.Errorf("hang: code %q", code)
	}
	if code := failureCode(t, call(t, rt, "mcp__b__crash", `{}`)); code != mcp.CodeServerError {
		t.Errorf("crash: code %q", code)
	}
	// After a crash the server's calls keep failing, cleanly.
	if code := failureCode(t, call(t, rt, "mcp__b__echo", `{"text":"x"}`)); code != mcp.CodeServerError {
		t.Errorf("after crash: code %q", code)
	}
	// Garbage lines are skipped (and logged); the server never answers: a timeout.
	if code := failureCode(t, call(t, rt, "mcp__c__garbage", `{}`)); code != mcp.CodeTimeout {
		t.Errorf("garbage: code %q", code)
	}
	// The first server still works after its hung call.
	if r := call(t, rt, "mcp__a__echo", `{"text":"still"}`); r.IsError() {
		t.Errorf("a after hang: %q", text(r))
	}
}

func TestStartFailuresAreReportedAndOthersMount(t *testing.T) {
	silent := fakeConfig(t, "silent")
	silent.Env = []string{"DSH_MCP_FAKE=silent"}
	missing := mcp.ServerConfig{Name: "missing", Type: mcp.TypeStdio, Command: filepath.Join(t.TempDir(), "nope"), Source: "test"}
	start := time.Now()
	_, set, errs := mount(t, mcp.Options{StartTimeout: time.Second, StopGrace: 100 * time.Millisecond}, silent, missing, fakeConfig(t, "good"))
	if len(errs) != 2 {
		t.Fatalf("errors = %v", errs)
	}
	for _, e := range errs {
		if !strings.Contains(e.Error(), `"silent"`) && !strings.Contains(e.Error(), `"missing"`) {
			t.Errorf("error does not name its server: %v", e)
		}
	}
	if got := set.Servers(); len(got) != 1 || got[0] != "good" {
		t.Fatalf("servers = %v", got)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("start took %v", d)
	}
}

func TestStreamableHTTP(t *testing.T) {
	var gotHeader string
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return fakeServer() }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("X-Token"); v != "" {
			gotHeader = v
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close) // after the set is closed (cleanups run last-in first-out)
	rt, _, errs := mount(t, mcp.Options{}, mcp.ServerConfig{Name: "web", Type: mcp.TypeHTTP, URL: srv.URL, Headers: map[string]string{"X-Token": "s3cret"}, Source: "test"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if r := call(t, rt, "mcp__web__echo", `{"text":"over http"}`); r.IsError() || text(r) != "echo: over http" {
		t.Fatalf("echo: %q", text(r))
	}
	if gotHeader != "s3cret" {
		t.Errorf("header = %q", gotHeader)
	}
}

func TestParseConfig(t *testing.T) {
	env := func(k string) (string, bool) {
		if k == "TOKEN" {
			return "t0k", true
		}
		return "", false
	}
	data := `{"mcpServers": {
  "fs": {"command": "npx", "args": ["-y", "server", "${HOME_DIR:-/tmp}"], "env": {"A": "${TOKEN}"}},
  "web": {"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
  "nocmd": {"args": []},
  "badtype": {"type": "ws", "url": "ws://x"},
  "badargs": {"command": "x", "args": "notalist"},
  "unset": {"command": "x", "env": {"B": "${NOPE}"}}
}}`
	servers, errs := mcp.Parse([]byte(data), "/p/.mcp.json", env)
	if len(servers) != 2 || servers[0].Name != "fs" || servers[1].Name != "web" {
		t.Fatalf("servers = %+v", servers)
	}
	if servers[0].Args[2] != "/tmp" || servers[0].Env[0] != "A=t0k" || servers[1].Headers["Authorization"] != "Bearer t0k" {
		t.Errorf("expansion: %+v", servers)
	}
	want := []string{
		"/p/.mcp.json: mcpServers.badargs.args: must be an array",
		"/p/.mcp.json: mcpServers.badtype.type: \"ws\"",
		"/p/.mcp.json: mcpServers.nocmd.command:",
		"/p/.mcp.json: mcpServers.unset: environment variables not set: env.B: ${NOPE}",
	}
	if len(errs) != len(want) {
		t.Fatalf("errors = %v", errs)
	}
	for i, w := range want {
		var ce *mcp.ConfigError
		if !errors.As(errs[i], &ce) || !strings.HasPrefix(errs[i].Error(), w) {
			t.Errorf("error %d = %v, want prefix %q", i, errs[i], w)
		}
	}
	_, errs = mcp.Parse([]byte("{\n  \"mcpServers\": {,}\n}"), "x.json", env)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "x.json: not a JSON object: line 2") {
		t.Errorf("syntax error = %v", errs)
	}
}

// CallText (mcp_tool hooks) returns a tool's text and its isError flag; a server that
// is not mounted is ErrNotMounted, naming it.
func TestCallText(t *testing.T) {
	_, set, errs := mount(t, mcp.Options{}, fakeConfig(t, "fake"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if text, isErr, err := set.CallText(ctx, "fake", "echo", map[string]any{"text": "hi"}); err != nil || isErr || text != "echo: hi" {
		t.Errorf("echo: %q %v %v", text, isErr, err)
	}
	if text, isErr, err := set.CallText(ctx, "fake", "fail", nil); err != nil || !isErr || text != "it broke" {
		t.Errorf("fail: %q %v %v", text, isErr, err)
	}
	if _, _, err := set.CallText(ctx, "nope", "echo", nil); !errors.Is(err, mcp.ErrNotMounted) || !strings.Contains(err.Error(), "'nope'") {
		t.Errorf("not mounted: %v", err)
	}
	var none *mcp.Set
	if _, _, err := none.CallText(ctx, "fake", "echo", nil); !errors.Is(err, mcp.ErrNotMounted) {
		t.Errorf("nil set: %v", err)
	}
}
