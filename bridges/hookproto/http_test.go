package hookproto

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
)

// ccLoad loads cfg as a Claude Code settings file named f.json.
func ccLoad(t testing.TB, cfg string) (*Config, []Diagnostic) {
	t.Helper()
	return Load([]byte(cfg), LoadOptions{Dialect: ClaudeCode, Source: "f.json"})
}

// An http handler loads in the claude-code dialect with its URL (its Command), headers
// and allowedEnvVars, and the table's default timeout: 600 s, 30 s at UserPromptSubmit;
// a configured timeout wins.
func TestLoadHTTPHandler(t *testing.T) {
	c, ds := ccLoad(t, `{"hooks":{
		"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"http","url":"http://127.0.0.1:9/pre","headers":{"X-Token":"$TOKEN","Authorization":"Bearer ${KEY}"},"allowedEnvVars":["TOKEN"],"statusMessage":"asking"}]}],
		"UserPromptSubmit":[{"hooks":[{"type":"http","url":"https://hooks.example.com/ups"}]}],
		"Stop":[{"hooks":[{"type":"http","url":"http://127.0.0.1:9/stop","timeout":2}]}]}}`)
	if len(ds) != 0 {
		t.Fatalf("diagnostics %v", ds)
	}
	pre := c.Match("PreToolUse", "Bash")
	if len(pre) != 1 || pre[0].HTTP == nil {
		t.Fatalf("PreToolUse: %+v", pre)
	}
	h := pre[0]
	if h.Command != "http://127.0.0.1:9/pre" || h.HTTP.URL != h.Command || h.StatusMessage != "asking" ||
		h.HTTP.Headers["X-Token"] != "$TOKEN" || h.HTTP.Headers["Authorization"] != "Bearer ${KEY}" ||
		len(h.HTTP.AllowedEnvVars) != 1 || h.HTTP.AllowedEnvVars[0] != "TOKEN" || h.Timeout != 600*time.Second {
		t.Errorf("PreToolUse handler %+v (http %+v)", h, h.HTTP)
	}
	if ups := c.Handlers("UserPromptSubmit"); len(ups) != 1 || ups[0].Timeout != 30*time.Second {
		t.Errorf("UserPromptSubmit: %+v, want the 30 s default", ups)
	}
	if stop := c.Handlers("Stop"); len(stop) != 1 || stop[0].Timeout != 2*time.Second {
		t.Errorf("Stop: %+v, want the configured 2 s", stop)
	}
}

// Codex and Gemini CLI have no http handler: theirs is refused, with a diagnostic naming
// the file, the path and what the dialect runs; Claude Code's other types still are.
func TestLoadHTTPHandlerRefused(t *testing.T) {
	for _, tc := range []struct {
		dialect Dialect
		event   string
		typ     string
		want    string
	}{
		{Codex, "PreToolUse", "http", `f.json: hooks.PreToolUse[0].hooks[0]: unsupported hook handler type "http": codex runs command and mcp_tool handlers (handler skipped)`},
		{Gemini, "BeforeTool", "http", `f.json: hooks.BeforeTool[0].hooks[0]: unsupported hook handler type "http": gemini runs only command handlers (handler skipped)`},
		{Codex, "PreToolUse", "prompt", `f.json: hooks.PreToolUse[0].hooks[0]: unsupported hook handler type "prompt": codex runs command and mcp_tool handlers (handler skipped)`},
		{ClaudeCode, "PreToolUse", "webhook", `f.json: hooks.PreToolUse[0].hooks[0]: unsupported hook handler type: unknown type "webhook" (handler skipped)`},
	} {
		cfg := `{"hooks":{"` + tc.event + `":[{"hooks":[{"type":"` + tc.typ + `","url":"http://127.0.0.1:9/x","prompt":"p"}]}]}}`
		c, ds := Load([]byte(cfg), LoadOptions{Dialect: tc.dialect, Source: "f.json"})
		if len(ds) != 1 || !errors.Is(ds[0], ErrUnsupportedHandler) || ds[0].Error() != tc.want {
			t.Errorf("%s %s: diagnostics %v, want %q", tc.dialect, tc.typ, ds, tc.want)
		}
		if hs := c.Handlers(tc.event); len(hs) != 0 {
			t.Errorf("%s %s: loaded %+v", tc.dialect, tc.typ, hs)
		}
	}
}

// A malformed url, headers or allowedEnvVars skips the handler with a diagnostic naming
// the file and the JSON path of the value; a body-length header is dropped with one.
func TestLoadHTTPHandlerMalformed(t *testing.T) {
	for _, tc := range []struct{ handler, path, want string }{
		{`{"type":"http"}`, ".url", "an http handler needs a non-empty url string, got nothing"},
		{`{"type":"http","url":7}`, ".url", "an http handler needs a non-empty url string, got 7"},
		{`{"type":"http","url":"not a url"}`, ".url", `url must be an absolute http or https URL, got "not a url"`},
		{`{"type":"http","url":"file:///etc/passwd"}`, ".url", "url must be an absolute http or https URL"},
		{`{"type":"http","url":"http://"}`, ".url", "url must be an absolute http or https URL"},
		{`{"type":"http","url":"http://h/x","headers":["X-A"]}`, ".headers", "headers must be an object of header names to strings"},
		{`{"type":"http","url":"http://h/x","headers":{"X-A":1}}`, ".headers", "headers must be an object of header names to strings"},
		{`{"type":"http","url":"http://h/x","headers":{"X A":"v"}}`, `.headers["X A"]`, "a header name must be an HTTP token"},
		{`{"type":"http","url":"http://h/x","allowedEnvVars":"HOME"}`, ".allowedEnvVars", "allowedEnvVars must be an array of variable names"},
		{`{"type":"http","url":"http://h/x","allowedEnvVars":[1]}`, ".allowedEnvVars", "allowedEnvVars must be an array of variable names"},
	} {
		c, ds := ccLoad(t, `{"hooks":{"Stop":[{"hooks":[`+tc.handler+`]}]}}`)
		want := "f.json: hooks.Stop[0].hooks[0]" + tc.path + ": malformed hook entry: "
		if len(ds) != 1 || !errors.Is(ds[0], ErrMalformed) || ds[0].Skipped != "handler" ||
			!strings.HasPrefix(ds[0].Error(), want) || !strings.Contains(ds[0].Error(), tc.want) {
			t.Errorf("%s: diagnostics %v, want %q…%q", tc.handler, ds, want, tc.want)
		}
		if hs := c.Handlers("Stop"); len(hs) != 0 {
			t.Errorf("%s: loaded %+v", tc.handler, hs)
		}
	}
	c, ds := ccLoad(t, `{"hooks":{"Stop":[{"hooks":[{"type":"http","url":"http://h/x","headers":{"Content-Length":"9","X-A":"a"}}]}]}}`)
	if len(ds) != 1 || ds[0].Skipped != "" || ds[0].Path != `hooks.Stop[0].hooks[0].headers["Content-Length"]` {
		t.Errorf("Content-Length: diagnostics %v, want one that skips nothing", ds)
	}
	if hs := c.Handlers("Stop"); len(hs) != 1 || len(hs[0].HTTP.Headers) != 1 || hs[0].HTTP.Headers["X-A"] != "a" {
		t.Errorf("Content-Length: handlers %+v", hs)
	}
}

// allowedHttpHookUrls and httpHookAllowedEnvVars: unset is nil (no restriction), set
// empty is empty (nothing allowed), malformed allows nothing with a diagnostic; several
// files' lists add up; a settings file holding only them has no events.
func TestLoadHTTPSettings(t *testing.T) {
	c, ds := ccLoad(t, `{"hooks":{}}`)
	if len(ds) != 0 || c.AllowedHTTPHookURLs != nil || c.HTTPHookAllowedEnvVars != nil {
		t.Errorf("unset: %v %v %v", ds, c.AllowedHTTPHookURLs, c.HTTPHookAllowedEnvVars)
	}
	empty, ds := ccLoad(t, `{"allowedHttpHookUrls":[],"httpHookAllowedEnvVars":[]}`)
	if len(ds) != 0 || empty.AllowedHTTPHookURLs == nil || len(empty.AllowedHTTPHookURLs) != 0 || empty.HTTPHookAllowedEnvVars == nil {
		t.Errorf("empty: %v %#v %#v", ds, empty.AllowedHTTPHookURLs, empty.HTTPHookAllowedEnvVars)
	}
	bad, ds := ccLoad(t, `{"allowedHttpHookUrls":"http://x/*","hooks":{}}`)
	if len(ds) != 1 || ds[0].Path != "allowedHttpHookUrls" || bad.AllowedHTTPHookURLs == nil || len(bad.AllowedHTTPHookURLs) != 0 {
		t.Errorf("malformed: %v %#v", ds, bad.AllowedHTTPHookURLs)
	}
	one, _ := ccLoad(t, `{"allowedHttpHookUrls":["http://a/*"],"httpHookAllowedEnvVars":["A"]}`)
	two, _ := ccLoad(t, `{"allowedHttpHookUrls":["http://b/*"]}`)
	m, err := Merge(c, one, two)
	if err != nil || strings.Join(m.AllowedHTTPHookURLs, " ") != "http://a/* http://b/*" || strings.Join(m.HTTPHookAllowedEnvVars, " ") != "A" {
		t.Errorf("merged: %v %v %v", err, m.AllowedHTTPHookURLs, m.HTTPHookAllowedEnvVars)
	}
	if m, _ := Merge(c, empty); m.AllowedHTTPHookURLs == nil {
		t.Error("merged with an empty list: nil, want empty (nothing allowed)")
	}
	// Codex has no http hooks: the keys are nothing to it.
	cx, _ := Load([]byte(`{"allowedHttpHookUrls":[]}`), LoadOptions{Dialect: Codex, Source: "f.json"})
	if cx.AllowedHTTPHookURLs != nil {
		t.Errorf("codex: %#v", cx.AllowedHTTPHookURLs)
	}
}

// The same URL configured twice posts once, as in the engine (de-duplication by URL).
func TestHTTPHandlerDedupe(t *testing.T) {
	c, _ := Load([]byte(`{"hooks":{"Stop":[{"hooks":[{"type":"http","url":"http://h/x"},{"type":"http","url":"http://h/x","timeout":3},{"type":"http","url":"http://h/y"},{"command":"http://h/x"}]}]}}`),
		LoadOptions{Dialect: ClaudeCode, Rules: &Rules{Dedupe: true}})
	var got []string
	for _, h := range c.Match("Stop", "") {
		got = append(got, fmt.Sprintf("%v:%s", h.HTTP != nil, h.Command))
	}
	if strings.Join(got, " ") != "true:http://h/x true:http://h/y false:http://h/x" {
		t.Errorf("matched %v", got)
	}
}

func TestHTTPURLAllowed(t *testing.T) {
	for _, tc := range []struct {
		url, pattern string
		want         bool
	}{
		{"http://127.0.0.1:8080/hook", "*", true},
		{"http://127.0.0.1:8080/hook", "http://127.0.0.1:8080/*", true},
		{"http://127.0.0.1:8080/hook", "http://127.0.0.1:8080", true}, // no path: any path
		{"http://127.0.0.1:8080/hook", "http://127.0.0.1:8080/", false},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8080/", true},
		{"http://127.0.0.1:8080/hook", "http://127.0.0.1:9090/*", false},
		{"http://127.0.0.1:8080/hook", "http://127.0.0.1:*/*", true},
		{"http://127.0.0.1:8080/hook", "http://127.0.0.1/*", false}, // port 80 only
		{"http://127.0.0.1/hook", "http://127.0.0.1:80/*", true},    // a default port is none
		{"https://127.0.0.1:8080/hook", "http://127.0.0.1:8080/*", false},
		{"https://hooks.example.com/a/b", "https://*.example.com/*", true},
		{"https://hooks.example.com:8443/a", "https://*.example.com", true}, // a wildcard host: any port
		{"https://evil.com/hooks.example.com/", "https://*.example.com/*", false},
		{"https://HOOKS.Example.com/a", "https://hooks.example.com/*", true},
		{"https://hooks.example.com/a?x=1", "https://hooks.example.com/a", false},
		{"https://hooks.example.com/a?x=1", "https://hooks.example.com/a*", true},
		{"https://hooks.example.com/a/b/c", "https://hooks.example.com/a/*/c", true},
		{"https://hooks.example.com/a/b/c", "hooks.example.com/*", false}, // not a URL: segment by segment
		{"http://x/y", "http:/*", false},
		{"not a url", "*", false},
	} {
		if got := HTTPURLAllowed(tc.url, []string{tc.pattern}); got != tc.want {
			t.Errorf("%s against %q: %v, want %v", tc.url, tc.pattern, got, tc.want)
		}
	}
	if HTTPURLAllowed("http://127.0.0.1/x", []string{}) {
		t.Error("an empty list allows a URL")
	}
}

func TestInterpolateHeader(t *testing.T) {
	env := []string{"TOKEN=t0", "TOKEN=t1", "KEY=k", "lower=l", "EVIL=a\r\nX-Injected: 1"}
	for _, tc := range []struct {
		in, want, refused string
	}{
		{"Bearer $TOKEN", "Bearer t1", ""},
		{"${TOKEN}-${KEY}", "t1-", "KEY"},
		{"$KEY", "", "KEY"},
		{"$lower ${lower} $UNSET", "$lower ${lower} ", ""},
		{"$EVIL", "aX-Injected: 1", ""},
		{"a\r\nb\x00c", "abc", ""},
	} {
		got, refused := InterpolateHeader(tc.in, []string{"TOKEN", "EVIL", "UNSET"}, env)
		if got != tc.want || strings.Join(refused, ",") != tc.refused {
			t.Errorf("%q: %q (refused %v), want %q (%q)", tc.in, got, refused, tc.want, tc.refused)
		}
	}
}

// hookServer is an httptest server answering every request with handle, counting them.
func hookServer(t testing.TB, handle http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		handle(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func httpCommand(url string) Command {
	return Command{Stdin: []byte(`{"hook_event_name":"PreToolUse"}`), Timeout: 5 * time.Second, HTTP: &HTTPRequest{URL: url}}
}

// A 2xx answer is exit 0 with the body as stdout; the input is posted as JSON, with the
// request's headers.
func TestRunHTTP(t *testing.T) {
	var gotBody, gotType, gotToken, gotMethod string
	srv, _ := hookServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotBody, gotType, gotToken, gotMethod = string(b), r.Header.Get("Content-Type"), r.Header.Get("X-Token"), r.Method
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, `{"decision":"block","reason":"no"}`)
	})
	c := httpCommand(srv.URL + "/hook")
	c.HTTP.Header = http.Header{"X-Token": {"t"}}
	r := Run(context.Background(), c)
	if exitCode(r) != "0" || string(r.Stdout) != `{"decision":"block","reason":"no"}` || r.HTTPStatus != 202 || r.Err != nil {
		t.Fatalf("%+v", r)
	}
	if gotMethod != "POST" || gotBody != string(c.Stdin) || gotType != "application/json" || gotToken != "t" {
		t.Errorf("the server saw %s %q, Content-Type %q, X-Token %q", gotMethod, gotBody, gotType, gotToken)
	}
	// A command's stdin ends with a newline in Claude Code; its http body does not.
	c.Stdin = append(c.Stdin, '\n')
	if r := Run(context.Background(), c); exitCode(r) != "0" || gotBody != strings.TrimSuffix(string(c.Stdin), "\n") {
		t.Errorf("the server saw %s %q, Content-Type %q, X-Token %q", gotMethod, gotBody, gotType, gotToken)
	}
}

// What an http hook's answer comes to at PreToolUse in Claude Code's table: a deny, an
// empty body (pass), and each bad answer a recorded non-blocking error saying what it
// was, never a decision.
func TestRunHTTPAnswers(t *testing.T) {
	ev, _ := hookmap.ClaudeCode.Lookup("PreToolUse")
	for _, tc := range []struct {
		name    string
		status  int
		body    string
		outcome Outcome
		diag    string
	}{
		{"deny", 200, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"nope"}}`, dsh.HookOutcomeDeny, ""},
		{"empty", 200, "  \n", dsh.HookOutcomePass, ""},
		{"500", 500, `{"decision":"block","reason":"x"}`, dsh.HookOutcomeError, "HTTP 500 from "},
		{"404", 404, "", dsh.HookOutcomeError, "HTTP 404 from "},
		{"plain", 200, "all good", dsh.HookOutcomeError, "HTTP hook must return JSON, but got non-JSON response body: all good (non-blocking)"},
		{"array", 200, `["deny"]`, dsh.HookOutcomeError, "HTTP hook must return JSON, but got non-JSON response body: [\"deny\"]"},
		{"broken", 200, `{"decision":`, dsh.HookOutcomeError, "HTTP hook must return valid JSON, but parsing failed: unexpected end of JSON input"},
		{"long", 200, strings.Repeat("x", 300), dsh.HookOutcomeError, "body: " + strings.Repeat("x", 200) + "… (non-blocking)"},
	} {
		srv, _ := hookServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(tc.status)
			_, _ = io.WriteString(w, tc.body)
		})
		r := Run(context.Background(), httpCommand(srv.URL))
		v := Decode(&hookmap.ClaudeCode, &ev, r)
		if v.Outcome != tc.outcome || (tc.outcome == dsh.HookOutcomeDeny && v.Reason != "nope") {
			t.Errorf("%s: %s %q, want %s (%+v)", tc.name, v.Outcome, v.Reason, tc.outcome, r)
		}
		if tc.diag != "" && !strings.Contains(strings.Join(v.Diagnostics, "\n"), tc.diag) {
			t.Errorf("%s: diagnostics %q, want %q", tc.name, v.Diagnostics, tc.diag)
		}
		if tc.outcome == dsh.HookOutcomeError && !errors.As(r.Err, new(*HTTPError)) {
			t.Errorf("%s: Err %v, want an *HTTPError", tc.name, r.Err)
		}
	}
}

// A server that hangs: the hook times out at its timeout, decides nothing, and the
// request is abandoned (the server sees it go).
func TestRunHTTPHangs(t *testing.T) {
	gone := make(chan struct{}, 2)
	srv, _ := hookServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body) // the server sees the client go once the body is read
		<-r.Context().Done()
		gone <- struct{}{}
	})
	c := httpCommand(srv.URL)
	c.Timeout = 200 * time.Millisecond
	start := time.Now()
	r := Run(context.Background(), c)
	if !r.TimedOut || r.ExitCode != nil || time.Since(start) > 3*time.Second {
		t.Fatalf("%+v after %v, want a timeout at 200ms", r, time.Since(start))
	}
	ev, _ := hookmap.ClaudeCode.Lookup("PreToolUse")
	if v := Decode(&hookmap.ClaudeCode, &ev, r); v.Outcome != dsh.HookOutcomeTimeout || !strings.Contains(v.Diagnostics[0], "timed out after 200ms; the request was abandoned") {
		t.Errorf("decoded %+v", v)
	}
	select {
	case <-gone:
	case <-time.After(3 * time.Second):
		t.Error("the server never saw the request go")
	}
	// A body that never ends times out too.
	srv2, _ := hookServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		_, _ = io.WriteString(w, `{"decision":`)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	c = httpCommand(srv2.URL)
	c.Timeout = 200 * time.Millisecond
	if r := Run(context.Background(), c); !r.TimedOut {
		t.Errorf("a body that never ends: %+v", r)
	}
	// ctx ending first is a cancellation.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if r := Run(ctx, httpCommand(srv.URL)); !r.Cancelled || r.TimedOut {
		t.Errorf("cancelled: %+v", r)
	}
}

// A redirect is never followed, not even to the same origin: it is a non-2xx answer, a
// non-blocking error, as in the engine; the target never sees a request.
func TestRunHTTPRedirect(t *testing.T) {
	target, hits := hookServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"decision":"block","reason":"followed"}`)
	})
	for _, status := range []int{301, 302, 307, 308} {
		srv, _ := hookServer(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL, status)
		})
		c := httpCommand(srv.URL)
		// Even a caller's client that would follow it.
		c.HTTP.Client = &http.Client{}
		r := Run(context.Background(), c)
		var he *HTTPError
		if !errors.As(r.Err, &he) || he.Status != status || !strings.Contains(he.Error(), "a redirect: not followed") {
			t.Errorf("%d: %+v", status, r)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("the redirect's target got %d requests", hits.Load())
	}
}

// A refused connection is a non-blocking error naming the cause.
func TestRunHTTPRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	r := Run(context.Background(), httpCommand("http://"+addr+"/hook"))
	if !errors.Is(r.Err, ErrHTTPRequest) || !strings.Contains(r.Err.Error(), "connection refused") || r.ExitCode != nil {
		t.Errorf("%+v", r)
	}
	ev, _ := hookmap.ClaudeCode.Lookup("PreToolUse")
	if v := Decode(&hookmap.ClaudeCode, &ev, r); v.Outcome != dsh.HookOutcomeError || !strings.HasPrefix(v.Diagnostics[0], "HTTP hook error: ") {
		t.Errorf("decoded %+v", v)
	}
}

// A URL that allowedHttpHookUrls does not allow is never requested: a non-blocking error
// that says so. An empty list allows nothing; nil allows all.
func TestRunHTTPURLNotAllowed(t *testing.T) {
	srv, hits := hookServer(t, func(w http.ResponseWriter, r *http.Request) {})
	for _, allowed := range [][]string{{}, {"https://hooks.example.com/*"}} {
		c := httpCommand(srv.URL + "/hook")
		c.HTTP.AllowedURLs = allowed
		r := Run(context.Background(), c)
		if !errors.Is(r.Err, ErrHTTPBlocked) || r.Err.Error() != "HTTP hook blocked: "+srv.URL+"/hook does not match any pattern in allowedHttpHookUrls" {
			t.Errorf("%q: %+v", allowed, r)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("the server got %d requests", hits.Load())
	}
	c := httpCommand(srv.URL + "/hook")
	c.HTTP.AllowedURLs = []string{"http://127.0.0.1:*/hook"}
	if r := Run(context.Background(), c); exitCode(r) != "0" || hits.Load() != 1 {
		t.Errorf("allowed: %+v (%d requests)", r, hits.Load())
	}
}

// A 50 MB answer is read no further than the cap (and a little): its kept part is the
// cap, its decision cannot be read, so at PreToolUse it blocks (fail closed), as command
// stdout cut by the cap does. White space past the cap is read and dropped.
func TestRunHTTPHugeBody(t *testing.T) {
	var sent atomic.Int64
	srv, _ := hookServer(t, func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(`{"decision":"approve","reason":"` + strings.Repeat("x", 64<<10-32) + `",`)
		for range (50 << 20) / len(chunk) {
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	})
	c := httpCommand(srv.URL)
	c.MaxStdout = 1 << 20
	r := Run(context.Background(), c)
	if len(r.Stdout) != 1<<20 || !r.StdoutLost || r.ExitCode == nil {
		t.Fatalf("kept %d bytes, lost %v, %+v", len(r.Stdout), r.StdoutLost, r.Err)
	}
	srv.Close() // the handler returns once its writes fail
	if s := sent.Load(); s > 16<<20 {
		t.Errorf("the server got %d bytes out: the answer was read on past the cap", s)
	}
	ev, _ := hookmap.ClaudeCode.Lookup("PreToolUse")
	if v := Decode(&hookmap.ClaudeCode, &ev, r); v.Outcome != dsh.HookOutcomeDeny {
		t.Errorf("decoded %+v, want a deny (fail closed)", v)
	}

	srv2, _ := hookServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"decision":"block","reason":"padded"}`)
		_, _ = w.Write([]byte(strings.Repeat(" ", 3<<20)))
	})
	c = httpCommand(srv2.URL)
	c.MaxStdout = 1 << 20
	r = Run(context.Background(), c)
	if v := Decode(&hookmap.ClaudeCode, &ev, r); v.Outcome != dsh.HookOutcomeDeny || v.Reason != "padded" {
		t.Errorf("padded: %+v (%+v)", v, r.Err)
	}
}

// An engine fires an http hook like a command: it posts the event's stdin with the
// headers' allowed variables read from its base environment (others empty, the
// settings' httpHookAllowedEnvVars narrowing), honours the answer, and records it.
func TestEngineFiresHTTPHook(t *testing.T) {
	type seen struct{ body, token, key, lang string }
	got := make(chan seen, 4)
	srv, _ := hookServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{string(b), r.Header.Get("X-Token"), r.Header.Get("X-Key"), r.Header.Get("X-Lang")}
		_, _ = io.WriteString(w, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"by http"}}`)
	})
	cfg, ds := ccLoad(t, `{"httpHookAllowedEnvVars":["TOKEN","LANG"],"hooks":{"PreToolUse":[{"hooks":[{"type":"http","url":"`+srv.URL+`/pre",
		"headers":{"X-Token":"Bearer $TOKEN","X-Key":"${KEY}","X-Lang":"$LANG"},"allowedEnvVars":["TOKEN","KEY"]}]}]}}`)
	if len(ds) != 0 {
		t.Fatal(ds)
	}
	var recs []dsh.SessionEventData
	e := &Engine{Table: &hookmap.ClaudeCode, Config: cfg, BaseEnv: []string{"TOKEN=tok", "KEY=key", "LANG=C"}, Logger: slog.New(slog.DiscardHandler),
		Recorder: RecorderFunc(func(_ context.Context, d dsh.SessionEventData) error { recs = append(recs, d); return nil })}
	stdin := `{"hook_event_name":"PreToolUse","tool_name":"Bash"}`
	rep := e.Fire(context.Background(), Fire{Event: "PreToolUse", Subject: "Bash", Stdin: []byte(stdin), InTurn: true, Turn: 1})
	if rep.Merged.Outcome != dsh.HookOutcomeDeny || rep.Merged.Reason != "by http" {
		t.Errorf("merged %+v", rep.Merged)
	}
	s := <-got
	// KEY is the hook's but not the settings'; LANG the settings' but not the hook's.
	if s.body != stdin || s.token != "Bearer tok" || s.key != "" || s.lang != "" {
		t.Errorf("the server saw %+v", s)
	}
	if len(recs) != 2 {
		t.Fatalf("records %v", recs)
	}
	if inv, ok := recs[0].(dsh.HookInvoked); !ok || inv.Command != srv.URL+"/pre" {
		t.Errorf("hook/invoked %+v", recs[0])
	}
	if res, ok := recs[1].(dsh.HookResult); !ok || res.Outcome != dsh.HookOutcomeDeny || res.ExitCode == nil || *res.ExitCode != 0 {
		t.Errorf("hook/result %+v", recs[1])
	}
}

// BenchmarkHTTPHook measures what an http hook costs over its server's own time: the same
// body posted to the same httptest server with http.Post (direct), through Run (run),
// fired through an Engine, from matching to the merged decision (engine), and the last
// two interleaved in one loop, reporting the engine's extra time per hook as
// overhead-ns/op (interleaving cancels most of the machine's noise). The budget is 1 ms.
func BenchmarkHTTPHook(b *testing.B) {
	answer := []byte(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`)
	srv, _ := hookServer(b, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = w.Write(answer)
	})
	stdin := []byte(`{"session_id":"s","transcript_path":"/tmp/t.jsonl","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_1"}` + "\n")
	client := NewHTTPClient()
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			resp, err := client.Post(srv.URL+"/hook", "application/json", strings.NewReader(string(stdin)))
			if err != nil {
				b.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if len(body) == 0 {
				b.Fatal("no body")
			}
		}
	})
	b.Run("run", func(b *testing.B) {
		c := Command{Stdin: stdin, Timeout: time.Minute, HTTP: &HTTPRequest{URL: srv.URL + "/hook", Client: client}}
		for b.Loop() {
			if r := Run(context.Background(), c); exitCode(r) != "0" {
				b.Fatalf("%+v", r)
			}
		}
	})
	b.Run("engine", func(b *testing.B) {
		cfg, ds := ccLoad(b, `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"http","url":"`+srv.URL+`/hook"}]}]}}`)
		if len(ds) != 0 {
			b.Fatal(ds)
		}
		e := &Engine{Table: &hookmap.ClaudeCode, Config: cfg, HTTPClient: client, BaseEnv: []string{}}
		f := Fire{Event: "PreToolUse", Subject: "Bash", Stdin: stdin}
		for b.Loop() {
			if rep := e.Fire(context.Background(), f); rep.Merged.Outcome != dsh.HookOutcomeAllow {
				b.Fatalf("%+v", rep.Merged)
			}
		}
	})
	b.Run("overhead", func(b *testing.B) {
		cfg, _ := ccLoad(b, `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"http","url":"`+srv.URL+`/hook"}]}]}}`)
		e := &Engine{Table: &hookmap.ClaudeCode, Config: cfg, HTTPClient: client, BaseEnv: []string{}}
		f := Fire{Event: "PreToolUse", Subject: "Bash", Stdin: stdin}
		var direct, fired time.Duration
		for b.Loop() {
			t0 := time.Now()
			resp, err := client.Post(srv.URL+"/hook", "application/json", strings.NewReader(string(stdin)))
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			t1 := time.Now()
			if rep := e.Fire(context.Background(), f); rep.Merged.Outcome != dsh.HookOutcomeAllow {
				b.Fatalf("%+v", rep.Merged)
			}
			direct, fired = direct+t1.Sub(t0), fired+time.Since(t1)
		}
		b.ReportMetric(float64(fired-direct)/float64(b.N), "overhead-ns/op")
	})
}

func TestHookAddressAllowed(t *testing.T) {
	for _, tc := range []struct {
		ip           string
		direct, prox bool
	}{
		{"127.0.0.1", true, true}, {"127.1.2.3", true, true}, {"::1", true, true}, {"::ffff:127.0.0.1", true, true},
		{"93.184.216.34", true, true}, {"2606:2800:220:1::", true, true},
		{"10.0.0.5", false, true}, {"172.16.0.1", false, true}, {"172.31.255.255", false, true}, {"192.168.1.1", false, true},
		{"100.64.0.1", false, true}, {"0.0.0.0", false, true}, {"::", false, true}, {"fd12::1", false, true},
		{"::ffff:10.0.0.5", false, true},
		{"169.254.169.254", false, false}, {"fe80::1", false, false}, {"100.100.100.200", false, false},
		{"168.63.129.16", false, false}, {"fd00:ec2::254", false, false},
		{"172.32.0.1", true, true}, {"100.128.0.1", true, true},
	} {
		ip := netip.MustParseAddr(tc.ip)
		if got := HookAddressAllowed(ip, false) == nil; got != tc.direct {
			t.Errorf("%s: allowed %v, want %v", tc.ip, got, tc.direct)
		}
		if got := HookAddressAllowed(ip, true) == nil; got != tc.prox {
			t.Errorf("%s as a proxy: allowed %v, want %v", tc.ip, got, tc.prox)
		}
	}
}

// A hook URL at an address that is not public is refused before any connection, with
// the engine's words; loopback is fine (every other test's server is on 127.0.0.1).
func TestRunHTTPPrivateAddress(t *testing.T) {
	for url, want := range map[string]string{
		"http://10.255.255.1:9/hook":      "HTTP hook blocked: 10.255.255.1 is not a public address. Loopback (127.0.0.1, ::1) is allowed for local dev.",
		"http://169.254.169.254/latest":   "HTTP hook blocked: 169.254.169.254 is a link-local, cloud metadata or reserved address. Loopback (127.0.0.1, ::1) is allowed for local dev.",
		"http://[fe80::1]:9/hook":         "HTTP hook blocked: fe80::1 is a link-local, cloud metadata or reserved address",
		"http://[::ffff:192.168.0.1]:9/x": "HTTP hook blocked: 192.168.0.1 is not a public address",
	} {
		c := httpCommand(url)
		c.Timeout = 2 * time.Second
		r := Run(context.Background(), c)
		if !errors.Is(r.Err, ErrHTTPBlocked) || !strings.HasPrefix(r.Err.Error(), want) || r.TimedOut {
			t.Errorf("%s: %+v, want %q", url, r, want)
		}
	}
}
