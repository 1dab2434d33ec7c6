package acp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dshkit/dsh/bridges/acp"
	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/tools"
	"github.com/dshkit/dsh/runtime/tools/builtin"
)

// testServer is a server whose sessions have the built-in tools and a scripted model.
func testServer(t testing.TB, dir string, cfg acp.Config, newModel func() llm.Model) *acp.Server {
	t.Helper()
	cfg.SessionsDir = filepath.Join(dir, "sessions")
	if cfg.Permissions == "" {
		cfg.Permissions = acp.PermissionsAllow
	}
	cfg.Setup = func(ctx context.Context, spec acp.SessionSpec) (*acp.Env, error) {
		reg := tools.NewRegistry()
		if _, err := builtin.Register(reg, builtin.Options{Workspace: spec.CWD}); err != nil {
			return nil, err
		}
		return &acp.Env{Hooks: dsh.NewRegistry(), Tools: reg, Model: newModel(), LLM: dsh.LLMCallConfig{Provider: "test", Model: "m"}}, nil
	}
	srv, err := acp.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// stallingWriter passes the first allow bytes to w, then blocks every write until
// released: a client that stops reading the agent's output.
type stallingWriter struct {
	mu      sync.Mutex
	allow   int
	release chan struct{}
	w       io.Writer
}

func (s *stallingWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	if s.allow >= len(p) {
		s.allow -= len(p)
		s.mu.Unlock()
		return s.w.Write(p)
	}
	s.mu.Unlock()
	<-s.release
	return s.w.Write(p)
}

// lineCounter counts the lines written to it, and the ids answered.
type lineCounter struct {
	n   atomic.Int64
	mu  sync.Mutex
	ids map[string]bool
}

func (c *lineCounter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimSpace(string(p)), "\n") {
		c.n.Add(1)
		var f struct{ ID json.RawMessage }
		json.Unmarshal([]byte(line), &f)
		c.mu.Lock()
		c.ids[string(f.ID)] = true
		c.mu.Unlock()
	}
	return len(p), nil
}

// TestBackpressure: a client that stops reading the agent's output is no longer read from
// once MaxInFlight requests are in flight, so that neither goroutines nor memory grow with
// what it sends (before this test, every request got a goroutine, 1.9 GB after 320k);
// once it reads again, every request is answered.
func TestBackpressure(t *testing.T) {
	const maxInFlight, sent = 8, 20000
	dir := t.TempDir()
	srv := testServer(t, dir, acp.Config{MaxInFlight: maxInFlight}, scripted())
	inR, inW := io.Pipe()
	lines := &lineCounter{ids: map[string]bool{}}
	out := &stallingWriter{allow: 1 << 10, release: make(chan struct{}), w: lines}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background(), inR, out) }()

	goroutines := runtime.NumGoroutine()
	var written atomic.Int64
	go func() {
		w := inW // one pipe write per frame
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1}}`+"\n")
		for i := range sent {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"sess_unknown","prompt":[{"type":"text","text":"hi"}]}}`+"\n", i)
			written.Add(1)
		}
		inW.Close()
	}()

	// Wait until the client's writes stall (the agent stopped reading) or all went in.
	last, still := int64(-1), 0
	for still < 10 && last < sent {
		time.Sleep(50 * time.Millisecond)
		if n := written.Load(); n == last {
			still++
		} else {
			last, still = n, 0
		}
	}
	if last >= sent {
		t.Fatalf("the agent read all %d requests while its output was not read: no backpressure", sent)
	}
	// In flight: maxInFlight handlers, the busy answer the reader is blocked on, and
	// what the pipe and the reader's buffer hold.
	if last > 100 {
		t.Errorf("the agent read %d requests before it stopped reading, want about %d", last, maxInFlight)
	}
	if g := runtime.NumGoroutine() - goroutines; g > 2*maxInFlight+8 {
		t.Errorf("%d goroutines more while stalled, want about %d", g, maxInFlight)
	}

	close(out.release) // the client reads again: everything is answered
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if got := lines.n.Load(); got != sent+1 {
		t.Errorf("%d frames answered, want %d (every request, busy or not)", got, sent+1)
		for i := range sent {
			if !lines.ids[fmt.Sprint(i)] {
				t.Errorf("request %d not answered", i)
				break
			}
		}
	}
}

// serveWaiting is serve, and the test's cleanup waits for Serve to return.
func serveWaiting(t *testing.T, srv *acp.Server) *client {
	t.Helper()
	c := serve(t, srv, nil)
	t.Cleanup(func() { c.in.Close(); <-c.served })
	return c
}

// TestBusy: past MaxInFlight a request is answered -32000 at once; a session/cancel
// request is never refused, and the cancelled prompt answers.
func TestBusy(t *testing.T) {
	dir := t.TempDir()
	c := serveWaiting(t, testServer(t, dir, acp.Config{MaxInFlight: 1}, scripted(llm.ScriptedResponse{Text: "thinking", Hang: true})))
	id := c.newSession(dir)
	// session/new's slot is free once its available_commands_update (sent after the
	// release) arrives.
	c.until(func(f map[string]any) bool { return strings.Contains(fmt.Sprint(f), "available_commands_update") })
	p := c.request("session/prompt", prompt(id, "hang"))
	c.until(func(f map[string]any) bool { return strings.Contains(fmt.Sprint(f), "thinking") }) // the prompt runs
	if f := c.call("session/new", map[string]any{"cwd": dir, "mcpServers": []any{}}); errCode(f) != acp.CodeServerBusy {
		t.Errorf("a second request with one in flight: %v, want -32000", f)
	}
	seen := c.until(responseTo(c.request("session/cancel", map[string]any{"sessionId": id})))
	if r := seen[len(seen)-1]; r["error"] != nil {
		t.Errorf("session/cancel refused: %v", r)
	}
	if r := c.until(responseTo(p)); stopReason(r[len(r)-1]) != "cancelled" {
		t.Errorf("the cancelled prompt: %v", r[len(r)-1])
	}
	// Once the prompt is answered its slot is free (a client may see busy for the instant
	// between the response and the release: it retries).
	for i := 0; ; i++ {
		f := c.call("session/new", map[string]any{"cwd": dir, "mcpServers": []any{}})
		if errCode(f) == acp.CodeServerBusy && i < 100 {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if f["error"] != nil {
			t.Errorf("after the prompt answered: %v", f)
		}
		break
	}
}

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// TestIdleSessionsReleased: 1,000 session/new keep at most MaxOpenSessions sessions open
// (before this test, 797 file descriptors stayed open); a prompt to a session closed for
// being idle reopens it from its log, without replaying it, and session/load reopens one
// too.
func TestIdleSessionsReleased(t *testing.T) {
	dir := t.TempDir()
	c := serveWaiting(t, testServer(t, dir, acp.Config{}, scripted(llm.ScriptedResponse{Text: "hello again"})))

	first := c.newSession(dir)
	if f := c.call("session/prompt", prompt(first, "first prompt")); stopReason(f) != "end_turn" {
		t.Fatalf("first prompt: %v", f)
	}
	before := openFDs(t)
	ids := []string{first}
	for i := range 1000 {
		r := c.call("session/new", map[string]any{"cwd": dir, "mcpServers": []any{}})
		res, _ := r["result"].(map[string]any)
		if res == nil {
			t.Fatalf("session/new %d: %v", i, r)
		}
		ids = append(ids, res["sessionId"].(string))
	}
	grown := openFDs(t) - before
	t.Logf("1,000 session/new: %d more open file descriptors", grown)
	if grown > 2*acp.DefaultMaxOpenSessions {
		t.Errorf("%d more open file descriptors after 1,000 session/new, want at most %d", grown, 2*acp.DefaultMaxOpenSessions)
	}

	// The first session was closed long ago: a prompt reopens it, quietly.
	seen := c.until(responseTo(c.request("session/prompt", prompt(first, "second prompt"))))
	if r := seen[len(seen)-1]; stopReason(r) != "end_turn" {
		t.Fatalf("prompt to a closed idle session: %v", r)
	}
	all := fmt.Sprint(seen)
	if strings.Contains(all, "first prompt") || !strings.Contains(all, "again") {
		t.Errorf("reopening replayed the log, or the prompt did not run: %s", all)
	}
	// session/load of another closed session replays it.
	if r := c.call("session/load", map[string]any{"sessionId": ids[1], "cwd": dir, "mcpServers": []any{}}); r["error"] != nil {
		t.Errorf("session/load of a closed idle session: %v", r)
	}
	// The reopened session kept its history: its log holds both prompts.
	data, err := os.ReadFile(filepath.Join(dir, "sessions", first+".jsonl"))
	if err != nil || !strings.Contains(string(data), "first prompt") || !strings.Contains(string(data), "second prompt") {
		t.Errorf("log of the reopened session: %v\n%s", err, data)
	}
}
