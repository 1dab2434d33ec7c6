package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dshkit/dsh/internal/procgroup"
)

// headerTransport adds fixed headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}

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
	lines := &jsonLines{r: bufio.NewReaderSize(stdout, 64<<10), max: sdk.DefaultMaxLineLength,
		skipped: func(line []byte) {
			const show = 200
			if len(line) > show {
				line = append(line[:show:show], "…"...)
			}
			t.log.Warn("mcp: server wrote a line that is not JSON-RPC on stdout; skipped", "server", t.server, "line", string(line))
		}}
	return (&sdk.IOTransport{Reader: io.NopCloser(lines), Writer: &stdinCloser{cmd: t.cmd, stdin: stdin, grace: t.grace}}).Connect(ctx)
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
// and hands every other line to skipped. A line longer than max is passed on as it is,
// for the SDK to refuse.
type jsonLines struct {
	r       *bufio.Reader
	max     int
	skipped func(line []byte)

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
			if len(j.line) > j.max {
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
