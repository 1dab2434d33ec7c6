package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dshkit/dsh/internal/httporigin"
	"github.com/dshkit/dsh/internal/procgroup"
	"github.com/dshkit/dsh/internal/ssemeter"
)

// errMessageTooLarge ends a body that crossed Options.MaxMessageBytes: the SDK fails the
// connection, and the call reports the cap (CodeResultTooLarge).
var errMessageTooLarge = errors.New("mcp: server message over the size cap; the rest was not read")

// RedirectError is an HTTP or SSE server that redirected a request to another origin
// (scheme, host and port): dsh does not follow it, so that the server's configured headers
// (an Authorization token, say) go to the configured origin only.
type RedirectError struct {
	// Server is the server's name; From and To are the request's URL and the redirect's
	// target, without their query.
	Server, From, To string
}

// Error names the server and both URLs.
func (e *RedirectError) Error() string {
	return fmt.Sprintf("MCP server %q: %s redirected to another origin, %s: not followed, so that the configured headers stay with their server", e.Server, e.From, e.To)
}

// httpClient is the client of an HTTP or SSE server: its configured headers go to the
// configured origin only, a redirect to another origin is refused ([RedirectError]), and
// every response body is bounded ([boundedBody]).
func (srv *server) httpClient() (*http.Client, error) {
	u, err := url.Parse(srv.cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("url: %w", err)
	}
	home := httporigin.Of(u)
	return &http.Client{
		Transport: headerTransport{base: http.DefaultTransport, origin: home, headers: srv.cfg.Headers,
			max: int64(srv.o.MaxMessageBytes), capped: &srv.capped},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if httporigin.Of(req.URL) != home {
				return &RedirectError{Server: srv.cfg.Name, From: httporigin.Redact(via[0].URL), To: httporigin.Redact(req.URL)}
			}
			if len(via) >= 10 {
				return fmt.Errorf("MCP server %q: stopped after 10 redirects", srv.cfg.Name)
			}
			return nil
		},
	}, nil
}

// headerTransport adds the server's configured headers to every request to its origin
// (and to no other: an SSE server's endpoint event may name another), and bounds every
// response body.
type headerTransport struct {
	base    http.RoundTripper
	origin  string
	headers map[string]string
	max     int64 // Options.MaxMessageBytes; negative: no cap
	capped  *atomic.Int64
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 && httporigin.Of(r.URL) == t.origin {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil || t.max < 0 {
		return resp, err
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	resp.Body = &boundedBody{rc: resp.Body, sse: ct == "text/event-stream", max: t.max, capped: t.capped}
	return resp, nil
}

// sseSlack is how far past the cap an event may run before boundedBody ends the body: the
// SDK's own event cap (set to the same Options.MaxMessageBytes) trips first, reading
// ahead at most its buffer, and fails the connection; boundedBody then ends the drain
// that follows, which would otherwise read an endless event to its end.
const sseSlack = 64 << 10

// boundedBody ends a response body once one message of it is over max bytes: the whole
// body of a JSON (or any other) response, or one event of an event stream. It records the
// cap in capped, so that the call says why it failed.
type boundedBody struct {
	rc     io.ReadCloser
	sse    bool
	max    int64
	capped *atomic.Int64
	n      int64          // bytes of the body (not sse)
	event  ssemeter.Meter // the current event's size (sse)
	err    error
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.rc.Read(p)
	if !b.sse {
		b.n += int64(n)
		if b.n > b.max {
			b.capped.Store(b.max)
			b.err = errMessageTooLarge
			return max(0, n-int(b.n-b.max)), b.err
		}
		return n, err
	}
	for i := 0; i < n; i++ {
		if size := b.event.Add(p[i]); size > b.max {
			b.capped.Store(b.max)
			if size > b.max+sseSlack {
				b.err = errMessageTooLarge
				return i, b.err
			}
		}
	}
	return n, err
}

func (b *boundedBody) Close() error { return b.rc.Close() }

// stdioTransport runs a stdio server as the SDK's CommandTransport does (closing the
// connection closes its stdin, then SIGTERM after grace, then SIGKILL), and records the
// process group so that it can be killed whole. Unlike the SDK's, it tolerates
// lines on stdout that are not JSON-RPC (a banner, a stray log line before the reply):
// they are logged and skipped, where the SDK's decoder would end the connection. The
// MCP TypeScript SDK, which Claude Code uses, skips them too.
type stdioTransport struct {
	cmd    *exec.Cmd
	group  *atomic.Pointer[procgroup.Group]
	grace  time.Duration
	log    *slog.Logger
	server string
	// max is Options.MaxMessageBytes; capped records it when a line crosses it.
	max    int
	capped *atomic.Int64
}

// Connect starts the server.
func (t *stdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	group, err := procgroup.Start(t.cmd)
	if err != nil {
		return nil, err
	}
	t.group.Store(group)
	lines := &jsonLines{r: bufio.NewReaderSize(stdout, 64<<10), max: t.max,
		over: func() { t.capped.Store(int64(t.max)) },
		skipped: func(line []byte) {
			const show = 200
			if len(line) > show {
				line = append(line[:show:show], "…"...)
			}
			t.log.Warn("mcp: server wrote a line that is not JSON-RPC on stdout; skipped", "server", t.server, "line", string(line))
		}}
	return (&sdk.IOTransport{Reader: io.NopCloser(lines), Writer: &stdinCloser{cmd: t.cmd, stdin: stdin, grace: t.grace},
		MaxLineLength: t.max}).Connect(ctx)
}

// stdinCloser is a server's stdin whose Close ends the server: stdin is closed, then
// SIGTERM after grace, then SIGKILL after grace (the MCP stdio shutdown).
type stdinCloser struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	grace time.Duration
}

func (s *stdinCloser) Write(p []byte) (int, error) { return s.stdin.Write(p) }

func (s *stdinCloser) Close() error {
	err := s.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	for _, next := range []func(){
		func() { _ = s.cmd.Process.Signal(syscall.SIGTERM) },
		func() { _ = s.cmd.Process.Kill() },
	} {
		select {
		case werr := <-done:
			return errors.Join(err, ignoreExit(werr))
		case <-time.After(s.grace):
			next()
		}
	}
	return errors.Join(err, ignoreExit(<-done))
}

// ignoreExit drops an exit status: how the server ended is not the connection's error.
func ignoreExit(err error) error {
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return nil
	}
	return err
}

// jsonLines passes on the lines of r that are JSON objects or arrays (and blank lines),
// and hands every other line to skipped. A line longer than max (max > 0) is passed on
// as it is, for the SDK to refuse, and reported to over.
type jsonLines struct {
	r       *bufio.Reader
	max     int
	skipped func(line []byte)
	over    func()

	out     []byte // what Read returns next
	line    []byte // the line being gathered
	through bool   // passing an over-long line on until its newline
	err     error
}

func (j *jsonLines) Read(p []byte) (int, error) {
	for len(j.out) == 0 {
		if j.err != nil {
			return 0, j.err
		}
		chunk, err := j.r.ReadSlice('\n')
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			j.err = err
		}
		complete := err == nil || j.err != nil
		switch {
		case j.through:
			j.out = append(j.out[:0], chunk...)
			j.through = !complete
			continue
		}
		j.line = append(j.line, chunk...)
		if !complete {
			if j.max > 0 && len(j.line) > j.max {
				if j.over != nil {
					j.over()
				}
				j.out, j.line, j.through = append(j.out[:0], j.line...), j.line[:0], true
			}
			continue
		}
		trimmed := bytes.TrimSpace(j.line)
		switch {
		case len(trimmed) == 0, (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid(trimmed):
			j.out = append(j.out[:0], j.line...)
		default:
			j.skipped(bytes.Clone(trimmed))
		}
		j.line = j.line[:0]
	}
	n := copy(p, j.out)
	j.out = j.out[n:]
	return n, nil
}

// logWriter forwards a stdio server's stderr to the logger, line by line.
type logWriter struct {
	log    *slog.Logger
	server string
	mu     sync.Mutex
	buf    []byte
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := strings.IndexByte(string(w.buf), '\n')
		if i < 0 {
			break
		}
		w.log.Debug("mcp server stderr", "server", w.server, "line", string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 4096 {
		w.log.Debug("mcp server stderr", "server", w.server, "line", string(w.buf))
		w.buf = w.buf[:0]
	}
	return len(p), nil
}
