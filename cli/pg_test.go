package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshkit/dsh/internal/pgtest"
	"github.com/dshkit/dsh/runtime/session/pgstore"
)

// The PostgreSQL server of this package's tests, started by the first test that needs it
// and stopped by TestMain.
var pg struct {
	once sync.Once
	srv  *pgtest.Server
	err  error
}

// postgres returns the package's server (pgtest.Need: skips without the binaries, fails
// under CI).
func postgres(t *testing.T) *pgtest.Server {
	t.Helper()
	pg.once.Do(func() { pg.srv, pg.err = pgtest.Start() })
	return pgtest.Need(t, pg.srv, pg.err)
}

func stopPostgres() {
	if pg.srv != nil {
		pg.srv.Close()
	}
}

// runDSH runs Main with args and returns its exit code, stdout and stderr.
func runDSH(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestRunOnPostgres: dsh run --log postgres://... --session ID creates the session, a
// second run resumes it, dsh log prints it; a session another writer holds is refused
// with one line until --takeover.
func TestRunOnPostgres(t *testing.T) {
	url := postgres(t).Schema(t)
	ws := t.TempDir()
	code, _, stderr := runDSH("run", "--demo", "--workspace", ws, "--log", url, "--session", "s1")
	if code != 0 || !strings.Contains(stderr, "turn 1 ended: completed") {
		t.Fatalf("first run: exit %d\n%s", code, stderr)
	}
	code, _, stderr = runDSH("run", "--demo", "--workspace", ws, "--log", url, "--session", "s1", "/compact")
	if code != 0 || !strings.Contains(stderr, "/compact") {
		t.Fatalf("second run (resumed): exit %d\n%s", code, stderr)
	}
	code, stdout, stderr := runDSH("log", "--session", "s1", url)
	if code != 0 || !strings.Contains(stdout, "turn 1 ended: completed") || !strings.Contains(stdout, "compacted") {
		t.Fatalf("dsh log: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = runDSH("log", "--raw", "--session", "s1", url)
	if code != 0 || !strings.HasPrefix(stdout, "0 session/created {") || !strings.Contains(stdout, `"sessionId":"s1"`) {
		t.Fatalf("dsh log --raw: exit %d\n%s", code, stdout)
	}

	// Another writer holds s1: refused in one line, exit 1; --takeover takes it.
	db, err := pgstore.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := db.Open(context.Background(), "s1", pgstore.WithOwner("elsewhere"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	code, _, stderr = runDSH("run", "--demo", "--workspace", ws, "--log", url, "--session", "s1")
	if code != 1 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "held by elsewhere") || !strings.Contains(stderr, "--takeover elsewhere") {
		t.Fatalf("held session: exit %d, stderr %q; want one line naming the holder and --takeover elsewhere", code, stderr)
	}
	// A takeover that names another writer is refused, naming the holder; the holder
	// keeps the session.
	code, _, stderr = runDSH("run", "--demo", "--workspace", ws, "--log", url, "--session", "s1", "--takeover", "host:1234")
	if code != 1 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "held by elsewhere") || !strings.Contains(stderr, "not by host:1234") {
		t.Fatalf("takeover from the wrong writer: exit %d, stderr %q; want one line naming the holder", code, stderr)
	}
	if _, err := st.Load(context.Background()); err != nil {
		t.Fatalf("a refused takeover fenced the holder out: %v", err)
	}
	code, _, stderr = runDSH("run", "--demo", "--workspace", ws, "--log", url, "--session", "s1", "--takeover", "elsewhere")
	if code != 0 || !strings.Contains(stderr, "turn 2 ended: completed") {
		t.Fatalf("takeover: exit %d\n%s", code, stderr)
	}
	if err := st.Append(context.Background(), []byte(`{"type":"turn/start","seq":99,"time":"2026-01-01T00:00:00Z","data":{"turn":9}}`+"\n")); err == nil {
		t.Fatal("the fenced writer's append succeeded")
	}

	// --force takes a session over whoever holds it.
	st2, err := db.Open(context.Background(), "s1", pgstore.WithOwner("another"), pgstore.WithTakeover())
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	code, _, stderr = runDSH("run", "--demo", "--workspace", ws, "--log", url, "--session", "s1", "--force")
	if code != 0 || !strings.Contains(stderr, "turn 3 ended: completed") {
		t.Fatalf("--force: exit %d\n%s", code, stderr)
	}
	if _, err := st2.Load(context.Background()); !errors.Is(err, pgstore.ErrFenced) {
		t.Fatalf("the writer --force took the session from: %v, want ErrFenced", err)
	}

	// Without --session: a new session, whose id is printed.
	code, _, stderr = runDSH("run", "--demo", "--workspace", ws, "--log", url)
	if code != 0 || !strings.Contains(stderr, "resume it with --session ses_") {
		t.Fatalf("run without --session: exit %d\n%s", code, stderr)
	}
}

// TestPostgresBadInput: a bad URL, wrong credentials or a server that is not there exit 1
// with one line (never the password); flags that need a postgres --log are usage errors.
func TestPostgresBadInput(t *testing.T) {
	srv := postgres(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := fmt.Sprintf("postgres://dsh:sekrit@127.0.0.1:%d/postgres?sslmode=disable", l.Addr().(*net.TCPAddr).Port)
	l.Close()
	url := srv.Schema(t)
	for name, c := range map[string]struct {
		args []string
		code int
		want string
	}{
		"bad URL":            {[]string{"run", "--demo", "--log", "postgres://dsh:sekrit@127.0.0.1:notaport/db", "--session", "x"}, 1, "bad database URL"},
		"wrong password":     {[]string{"run", "--demo", "--log", srv.TCPURL(pgtest.User, "sekrit"), "--session", "x"}, 1, "password authentication failed"},
		"server down":        {[]string{"run", "--demo", "--log", down, "--session", "x"}, 1, "connect"},
		"acp server down":    {[]string{"acp", "--demo", "--sessions", down}, 1, "connect"},
		"log server down":    {[]string{"log", "--session", "x", down}, 1, "connect"},
		"log no session":     {[]string{"log", "--session", "nope", url}, 1, "no such session"},
		"log list raw":       {[]string{"log", "--raw", url}, 2, "give --session ID"},
		"resume missing":     {[]string{"run", "--demo", "--log", url, "--resume", "nope"}, 1, "--resume nope: no such session in postgres://"},
		"continue none":      {[]string{"run", "--demo", "--workspace", t.TempDir(), "--log", url, "--continue"}, 1, "--continue: no session of "},
		"session no pg":      {[]string{"run", "--demo", "--log", t.TempDir() + "/x.jsonl", "--session", "x"}, 2, "postgres:// --log"},
		"takeover alone":     {[]string{"run", "--demo", "--log", url, "--takeover", "w"}, 2, "--takeover and --force need --session"},
		"force alone":        {[]string{"run", "--demo", "--log", url, "--force"}, 2, "--takeover and --force need --session"},
		"takeover no owner":  {[]string{"run", "--demo", "--log", url, "--session", "x", "--takeover"}, 2, "takeover"},
		"takeover a flag":    {[]string{"run", "--demo", "--log", url, "--takeover", "--session", "x"}, 2, "want the writer id"},
		"takeover and force": {[]string{"run", "--demo", "--log", url, "--session", "x", "--takeover", "w", "--force"}, 2, "give one"},
		"acp force":          {[]string{"acp", "--demo", "--force"}, 2, "--takeover and --force need a postgres"},
		"bad session id":     {[]string{"run", "--demo", "--log", url, "--session", "a b"}, 2, "--session"},
		"acp takeover":       {[]string{"acp", "--demo", "--takeover", "w"}, 2, "--takeover and --force need a postgres"},
	} {
		code, stdout, stderr := runDSH(c.args...)
		first, _, _ := strings.Cut(stderr, "\n")
		switch {
		case code != c.code || !strings.Contains(first, c.want) || strings.Contains(stderr, "sekrit") || stdout != "":
			t.Errorf("%s: exit %d, stderr %q; want exit %d naming %q", name, code, stderr, c.code, c.want)
		case strings.Contains(stderr, "file does not exist"):
			t.Errorf("%s: a file-system error for a database: %q", name, stderr)
		case c.code == 1 && strings.Count(strings.TrimSpace(stderr), "\n") != 0:
			t.Errorf("%s: not one line: %q", name, stderr)
		}
	}
}

// acpConn drives dsh acp in process over pipes.
type acpConn struct {
	t      *testing.T
	in     *io.PipeWriter
	frames chan map[string]any
	done   chan int
	id     int
	// onFrame, if set, sees every frame call reads.
	onFrame func(map[string]any)
}

func startACP(t *testing.T, args ...string) *acpConn {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &acpConn{t: t, in: inW, frames: make(chan map[string]any, 256), done: make(chan int, 1)}
	go func() {
		var stderr bytes.Buffer
		code := Run(context.Background(), append([]string{"acp"}, args...), inR, outW, &stderr)
		if code != 0 {
			t.Logf("dsh acp: exit %d\n%s", code, &stderr)
		}
		outW.Close()
		c.done <- code
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var f map[string]any
			if json.Unmarshal(sc.Bytes(), &f) == nil {
				c.frames <- f
			}
		}
		close(c.frames)
	}()
	return c
}

// call sends a request and returns its response, answering permission requests.
func (c *acpConn) call(method string, params any) map[string]any {
	c.t.Helper()
	c.id++
	id := c.id
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
	for {
		select {
		case f, ok := <-c.frames:
			if !ok {
				c.t.Fatalf("dsh acp ended before answering %s", method)
			}
			if c.onFrame != nil {
				c.onFrame(f)
			}
			if f["method"] == "session/request_permission" {
				r, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": f["id"],
					"result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow-once"}}})
				c.in.Write(append(r, '\n'))
			}
			if n, ok := f["id"].(float64); ok && int(n) == id && f["method"] == nil {
				return f
			}
		case <-time.After(60 * time.Second):
			c.t.Fatalf("no answer to %s", method)
		}
	}
}

func (c *acpConn) close() int {
	c.in.Close()
	for range c.frames {
	}
	return <-c.done
}

// TestACPOnPostgres: dsh acp --sessions postgres://... creates a session in the database;
// another dsh acp (another process, another machine) loads it by id; an unknown id gets
// the spec's Resource-not-found error; dsh run resumes the same session.
func TestACPOnPostgres(t *testing.T) {
	url := postgres(t).Schema(t)
	cwd := t.TempDir()
	a := startACP(t, "--demo", "--sessions", url)
	a.call("initialize", map[string]any{"protocolVersion": 1})
	res := a.call("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}})
	id, _ := res["result"].(map[string]any)["sessionId"].(string)
	if id == "" {
		t.Fatalf("session/new: %v", res)
	}
	res = a.call("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "go"}}})
	if res["result"] == nil {
		t.Fatalf("session/prompt: %v", res)
	}
	if code := a.close(); code != 0 {
		t.Fatalf("first dsh acp: exit %d", code)
	}

	b := startACP(t, "--demo", "--sessions", url)
	b.call("initialize", map[string]any{"protocolVersion": 1})
	res = b.call("session/load", map[string]any{"sessionId": id, "cwd": cwd, "mcpServers": []any{}})
	if res["error"] != nil {
		t.Fatalf("session/load: %v", res)
	}
	res = b.call("session/load", map[string]any{"sessionId": "sess_nope", "cwd": cwd, "mcpServers": []any{}})
	e, _ := res["error"].(map[string]any)
	if e == nil || e["code"] != float64(-32002) || !strings.Contains(fmt.Sprint(e["message"]), "Resource not found") {
		t.Fatalf("session/load of an unknown id: %v, want error -32002 Resource not found", res)
	}
	if data, _ := e["data"].(map[string]any); data["sessionId"] != "sess_nope" {
		t.Fatalf("error data: %v", e["data"])
	}
	if code := b.close(); code != 0 {
		t.Fatalf("second dsh acp: exit %d", code)
	}

	// dsh run resumes the ACP session.
	code, _, stderr := runDSH("run", "--demo", "--workspace", cwd, "--log", url, "--session", id)
	if code != 0 || !strings.Contains(stderr, "turn 2 ended") {
		t.Fatalf("dsh run on the ACP session: exit %d\n%s", code, stderr)
	}
	if _, err := pgstore.Connect(context.Background(), url); err != nil && !errors.Is(err, pgstore.ErrSchemaVersion) {
		t.Fatal(err)
	}
}

// TestACPTakeoverOnPostgres: dsh acp --takeover OWNER loads a session OWNER holds, and
// refuses one another writer holds, naming it.
func TestACPTakeoverOnPostgres(t *testing.T) {
	url := postgres(t).Schema(t)
	cwd := t.TempDir()
	if code, _, stderr := runDSH("run", "--demo", "--workspace", cwd, "--log", url, "--session", "held"); code != 0 {
		t.Fatalf("dsh run: exit %d\n%s", code, stderr)
	}
	db, err := pgstore.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := db.Open(context.Background(), "held", pgstore.WithOwner("elsewhere"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	load := func(args ...string) map[string]any {
		c := startACP(t, append([]string{"--demo", "--sessions", url}, args...)...)
		defer c.close()
		c.call("initialize", map[string]any{"protocolVersion": 1})
		return c.call("session/load", map[string]any{"sessionId": "held", "cwd": cwd, "mcpServers": []any{}})
	}
	res := load("--takeover", "host:1234")
	e, _ := res["error"].(map[string]any)
	if msg := fmt.Sprint(e["message"]); e == nil || !strings.Contains(msg, "held by elsewhere") || !strings.Contains(msg, "not by host:1234") {
		t.Fatalf("session/load with the wrong owner: %v, want an error naming the holder", res)
	}
	n, err := st.Load(context.Background())
	if err != nil {
		t.Fatalf("a refused takeover fenced the holder out: %v", err)
	}
	if res := load("--takeover", "elsewhere"); res["error"] != nil {
		t.Fatalf("session/load --takeover elsewhere: %v", res)
	}
	next := fmt.Sprintf(`{"type":"turn/start","seq":%d,"time":"2026-01-01T00:00:00Z","data":{"turn":9}}`+"\n", n)
	if err := st.Append(context.Background(), []byte(next)); !errors.Is(err, pgstore.ErrFenced) {
		t.Fatalf("the holder's append after the takeover: %v, want ErrFenced", err)
	}
}

// stopAfter runs the tests, then stops the PostgreSQL server (testscript.Main exits the
// process itself).
type stopAfter struct{ m *testing.M }

func (s stopAfter) Run() int {
	// dsh run keeps a session without --log in the session store under XDG_STATE_HOME:
	// the tests' sessions go to a directory of their own, never the user's. (Only the
	// test process gets here, not the dsh commands testscript runs.)
	dir, err := os.MkdirTemp("", "dsh-cli-test-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	os.Setenv("XDG_STATE_HOME", dir)
	code := s.m.Run()
	stopPostgres()
	return code
}

// TestFencedRunOnPostgres: a run whose session another writer takes over mid-turn ends
// with exit 1 and one line saying so (not "no turn ran").
func TestFencedRunOnPostgres(t *testing.T) {
	url := postgres(t).Schema(t)
	ws := t.TempDir()
	script := ws + "/slow.json"
	if err := os.WriteFile(script, []byte(`{"responses": [
  {"toolCalls": [{"id": "c1", "name": "Bash", "arguments": {"command": "sleep 3"}}]},
  {"text": "done"}
]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := pgstore.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	done := make(chan struct{})
	var code int
	var stdout, stderr string
	go func() {
		defer close(done)
		code, stdout, stderr = runDSH("run", "--model", "scripted:"+script, "--workspace", ws, "--log", url, "--session", "fenced", "--output-format", "json", "go")
	}()
	// Take the session over once the run holds it and its Bash sleeps.
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, err := db.Exists(context.Background(), "fenced")
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run never created its session")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second)
	st, err := db.Open(context.Background(), "fenced", pgstore.WithOwner("newer"), pgstore.WithTakeover())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	<-done
	var res runResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("stdout is not the result: %v\n%s", err, stdout)
	}
	last := strings.TrimSpace(stderr)
	last = last[strings.LastIndex(last, "\n")+1:]
	if code != 1 || !res.IsError || strings.Contains(stderr, "no turn ran") ||
		!strings.Contains(res.Error, "the session log refused the turn: pgstore: writer fenced out") ||
		!strings.HasPrefix(last, "dsh run: the session log refused the turn: ") || !strings.Contains(last, "taken over") {
		t.Fatalf("fenced run: exit %d, result %+v\nstderr %s", code, res, stderr)
	}
}

// TestPGSessionsListAndContinue: dsh log postgres://... without --session lists the
// sessions, the one created last first, with their workspace and events; dsh run --continue
// on a postgres --log goes on with the workspace's session written last, --resume ID with
// that one.
func TestPGSessionsListAndContinue(t *testing.T) {
	url := postgres(t).Schema(t)
	code, stdout, stderr := runDSH("log", url)
	if code != 0 || !strings.HasPrefix(stdout, "no sessions in postgres://") {
		t.Fatalf("empty list: exit %d, %q %q", code, stdout, stderr)
	}
	ws1, ws2 := t.TempDir(), t.TempDir()
	for _, r := range [][]string{{ws1, "a"}, {ws2, "b"}, {ws1, "c"}} {
		if code, _, stderr := runDSH("run", "--demo", "--workspace", r[0], "--log", url, "--session", r[1]); code != 0 {
			t.Fatalf("run %v: exit %d\n%s", r, code, stderr)
		}
	}
	code, stdout, stderr = runDSH("log", url)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != 0 || len(lines) != 4 || !strings.HasPrefix(lines[0], "SESSION ") ||
		!strings.HasPrefix(lines[1], "c ") || !strings.Contains(lines[1], ws1) ||
		!strings.HasPrefix(lines[2], "b ") || !strings.Contains(lines[2], ws2) ||
		!strings.HasPrefix(lines[3], "a ") || !strings.HasSuffix(lines[3], " -") {
		t.Fatalf("dsh log %s: exit %d\n%s%s", url, code, stdout, stderr)
	}
	// --continue in ws1: c, created last there; then --resume a.
	code, _, stderr = runDSH("run", "--demo", "--workspace", ws1, "--log", url, "--continue")
	if code != 0 || !strings.Contains(stderr, "turn 2 ended") {
		t.Fatalf("--continue: exit %d\n%s", code, stderr)
	}
	code, _, stderr = runDSH("run", "--demo", "--workspace", ws2, "--log", url, "--resume", "a")
	if code != 0 || !strings.Contains(stderr, "turn 2 ended") {
		t.Fatalf("--resume a: exit %d\n%s", code, stderr)
	}
	// a written last now: --continue in ws1 takes a
	code, _, stderr = runDSH("run", "--demo", "--workspace", ws1, "--log", url, "--continue")
	if code != 0 || !strings.Contains(stderr, "turn 3 ended") {
		t.Fatalf("--continue after --resume a: exit %d\n%s", code, stderr)
	}
	var n int
	for e, err := range mustConnect(t, url).Events(context.Background(), "a") {
		if err != nil {
			t.Fatal(err)
		}
		if e.Type == "turn/end" {
			n++
		}
	}
	if n != 3 {
		t.Fatalf("session a has %d turns, want 3 (created, --resume, --continue)", n)
	}
}

// mustConnect connects to the database at url, closed when the test ends.
func mustConnect(t *testing.T, url string) *pgstore.DB {
	t.Helper()
	db, err := pgstore.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

// TestSubagentLogOnPostgres: a child's log is a session of the parent's database, and
// dsh log shows it nested under the line of its start.
func TestSubagentLogOnPostgres(t *testing.T) {
	url := postgres(t).Schema(t)
	dir := t.TempDir()
	t.Setenv("HOME", filepath.Join(dir, "home"))
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "agent.json")
	hooks := filepath.Join(dir, "hooks.json")
	if err := os.WriteFile(model, []byte(`{"responses": [
  {"toolCalls": [{"id": "c1", "name": "Agent", "arguments": {"description": "probe", "prompt": "work", "subagent_type": "general-purpose", "run_in_background": false}}]},
  {"toolCalls": [{"id": "c2", "name": "Bash", "arguments": {"command": "echo from-the-child"}}]},
  {"text": "child answer"},
  {"text": "parent done"}
]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hooks, []byte(`{"hooks": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runDSH("run", "--dialect", "claude-code", "--model", "scripted:"+model, "--hooks", hooks,
		"--setting-sources", "user", "--workspace", ws, "--log", url, "--session", "parent", "delegate")
	if code != 0 {
		t.Fatalf("dsh run: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr := runDSH("log", "--session", "parent", url)
	if code != 0 {
		t.Fatalf("dsh log: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"⤷ subagent", "│ ", "from-the-child", "⤶ subagent"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("dsh log lacks %q:\n%s", want, stdout)
		}
	}
	if !regexp.MustCompile(`(?m)^ +│ .*Bash`).MatchString(stdout) {
		t.Errorf("the child's Bash call is not nested under its start:\n%s", stdout)
	}
}
