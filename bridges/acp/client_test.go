package acp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/dshkit/dsh/bridges/acp"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/tools"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// client is a test ACP client on pipes to an in-process server.
type client struct {
	t      testing.TB
	in     *io.PipeWriter
	frames chan map[string]any
	served chan error
	nextID int
}

// start serves a Server whose sessions use the models newModel returns (one per session)
// and the built-in tools plus extra.
func start(t testing.TB, dir string, perms acp.Permissions, newModel func() llm.Model, extra ...tools.Definition) *client {
	t.Helper()
	return startWith(t, dir, perms, newModel, nil, extra...)
}

// startWith is start with the server's output passed through wrap first.
func startWith(t testing.TB, dir string, perms acp.Permissions, newModel func() llm.Model, wrap func(io.Writer) io.Writer, extra ...tools.Definition) *client {
	t.Helper()
	return startHooked(t, dir, perms, newModel, wrap, nil, extra...)
}

// startHooked is startWith with plug registering listeners on each session's registry.
func startHooked(t testing.TB, dir string, perms acp.Permissions, newModel func() llm.Model, wrap func(io.Writer) io.Writer,
	plug func(*dsh.Registry), extra ...tools.Definition) *client {
	t.Helper()
	srv, err := acp.NewServer(acp.Config{
		SessionsDir: filepath.Join(dir, "sessions"),
		Permissions: perms,
		Setup: func(ctx context.Context, spec acp.SessionSpec) (*acp.Env, error) {
			reg := tools.NewRegistry()
			if _, err := builtin.Register(reg, builtin.Options{Workspace: spec.CWD}); err != nil {
				return nil, err
			}
			for _, d := range extra {
				if _, err := reg.Register(d); err != nil {
					return nil, err
				}
			}
			hooks := dsh.NewRegistry()
			if plug != nil {
				plug(hooks)
			}
			return &acp.Env{Hooks: hooks, Tools: reg, Model: newModel(), LLM: dsh.LLMCallConfig{Provider: "test", Model: "m"}}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, srv, wrap)
}

// serve serves srv to a test client on pipes; wrap, when not nil, wraps the server's
// output. Every line the server writes must be a JSON frame.
func serve(t testing.TB, srv *acp.Server, wrap func(io.Writer) io.Writer) *client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &client{t: t, in: inW, frames: make(chan map[string]any, 1024), served: make(chan error, 1)}
	var out io.Writer = outW
	if wrap != nil {
		out = wrap(outW)
	}
	go func() {
		c.served <- srv.Serve(context.Background(), inR, out)
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var f map[string]any
			if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
				t.Errorf("stdout is not a frame: %q", sc.Text())
				continue
			}
			c.frames <- f
		}
		close(c.frames)
	}()
	t.Cleanup(func() { inW.Close() })
	return c
}

func (c *client) send(raw string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, raw+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

// request sends a request and returns its id.
func (c *client) request(method string, params any) int {
	c.t.Helper()
	id := c.nextID
	c.nextID++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	c.send(string(b))
	return id
}

// next returns the next frame.
func (c *client) next() map[string]any {
	c.t.Helper()
	select {
	case f, ok := <-c.frames:
		if !ok {
			c.t.Fatal("connection ended")
		}
		return f
	case <-time.After(20 * time.Second):
		c.t.Fatal("no frame")
	}
	return nil
}

// until reads frames until one satisfies pred, answering permission requests with allow.
func (c *client) until(pred func(map[string]any) bool) (seen []map[string]any) {
	c.t.Helper()
	for {
		f := c.next()
		seen = append(seen, f)
		if pred(f) {
			return seen
		}
		if f["method"] == "session/request_permission" {
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": f["id"],
				"result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow-once"}}})
			c.send(string(b))
		}
	}
}

func responseTo(id int) func(map[string]any) bool {
	return func(f map[string]any) bool {
		v, ok := f["id"].(float64)
		return ok && int(v) == id && f["method"] == nil
	}
}

func (c *client) call(method string, params any) map[string]any {
	c.t.Helper()
	seen := c.until(responseTo(c.request(method, params)))
	return seen[len(seen)-1]
}

func errCode(f map[string]any) int {
	e, _ := f["error"].(map[string]any)
	if e == nil {
		return 0
	}
	return int(e["code"].(float64))
}

func (c *client) newSession(cwd string) string {
	c.t.Helper()
	if r := c.call("initialize", map[string]any{"protocolVersion": 1}); r["result"] == nil {
		c.t.Fatalf("initialize: %v", r)
	}
	r := c.call("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}})
	res, _ := r["result"].(map[string]any)
	if res == nil {
		c.t.Fatalf("session/new: %v", r)
	}
	return res["sessionId"].(string)
}

func prompt(id, text string) map[string]any {
	return map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": text}}}
}

func stopReason(f map[string]any) string {
	r, _ := f["result"].(map[string]any)
	s, _ := r["stopReason"].(string)
	return s
}

func scripted(rs ...llm.ScriptedResponse) func() llm.Model {
	return func() llm.Model { return llm.NewScripted(rs...) }
}
