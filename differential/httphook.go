package differential

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// HTTPAnswer makes a Hook an http handler (Hook.HTTP): what the handler sends the run's
// hook server, and how the server answers.
type HTTPAnswer struct {
	// Status is the answer's status code (0: 200). A 3xx redirects to /redirected on the
	// same server, which records a run of its own if the redirect is followed.
	Status int
	// Body is the answer's body.
	Body string
	// Delay is how long the server waits before it answers (a hook whose timeout is
	// shorter gives up first, and the run records no exit).
	Delay time.Duration
	// Headers are the handler's headers (their values may read $VARS).
	Headers map[string]string
	// AllowedEnvVars are the handler's allowedEnvVars.
	AllowedEnvVars []string
}

// HookServer is a run's http hook server on 127.0.0.1. A POST to /NAME is recorded as a
// run of hook NAME under the run's hook log, as the shell wrapper records a command hook
// (WrapScript): its start time, its body as the stdin, and its headers instead of an
// environment; once the answer is sent, its status as the exit ("" when the client gave
// up first).
type HookServer struct {
	url     string
	srv     *http.Server
	log     string
	answers map[string]HTTPAnswer
}

// StartHookServer starts the hook server of a run whose hook log is logDir, answering
// hook NAME as answers[NAME] says; Close stops it.
func StartHookServer(logDir string, answers map[string]HTTPAnswer) (*HookServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &HookServer{url: "http://" + l.Addr().String(), log: logDir, answers: answers}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(l) }()
	return s, nil
}

// URL is the server's base URL (http://127.0.0.1:PORT).
func (s *HookServer) URL() string { return s.url }

// Close stops the server and the requests it still serves.
func (s *HookServer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		return errors.Join(err, s.srv.Close())
	}
	return nil
}

func (s *HookServer) serve(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/")
	start := time.Now().UnixNano()
	body, _ := io.ReadAll(io.LimitReader(r.Body, 16<<20)) // read whole, so that the server sees the client go
	d, err := os.MkdirTemp(s.log, "run.")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	var hdr strings.Builder
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range r.Header {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Fprintf(&hdr, "%s: %s\n", k, strings.Join(r.Header[k], ", "))
	}
	write := func(file, text string) { _ = os.WriteFile(filepath.Join(d, file), []byte(text), 0o644) }
	write("start", strconv.FormatInt(start, 10)+"\n")
	write("stdin", string(body))
	write("headers", hdr.String())
	write("name", name+"\n")
	a := s.answers[name]
	if a.Delay > 0 {
		t := time.NewTimer(a.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return // the client gave up: no exit
		}
	}
	status := a.Status
	if status == 0 {
		status = http.StatusOK
	}
	if status >= 300 && status < 400 {
		w.Header().Set("Location", "/redirected")
	}
	w.WriteHeader(status)
	_, err = io.WriteString(w, a.Body)
	if err == nil {
		write("exit", strconv.Itoa(status)+"\n")
	}
}

// HTTPHandler is the http handler of hook name of a case: it posts to the server at
// base, with the answer's headers and allowedEnvVars and the hook's timeout.
func HTTPHandler(base, name string, hk Hook) map[string]any {
	h := map[string]any{"type": "http", "url": base + "/" + name}
	if len(hk.HTTP.Headers) > 0 {
		h["headers"] = hk.HTTP.Headers
	}
	if hk.HTTP.AllowedEnvVars != nil {
		h["allowedEnvVars"] = hk.HTTP.AllowedEnvVars
	}
	if hk.Timeout > 0 {
		h["timeout"] = hk.Timeout
	}
	return h
}

// TrackedHeaders are the request headers of http hooks the suite compares: the content
// type and the cases' own (X-Hook-…).
func TrackedHeaders(h map[string]string) []string {
	var out []string
	for k := range h {
		if k == "Content-Type" || strings.HasPrefix(k, "X-Hook-") {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
