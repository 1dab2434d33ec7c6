package differential

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The hook server records a request as a run of its hook (stdin, headers, the status it
// answered as the exit) and answers as the case says; a client that gives up before a
// delayed answer leaves a run with no exit; Compare sees a tracked header differ.
func TestHookServer(t *testing.T) {
	dir := t.TempDir()
	s, err := StartHookServer(dir, map[string]HTTPAnswer{
		"PreToolUse-1": {Status: 202, Body: `{"decision":"block"}`},
		"Stop-1":       {Delay: 5 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	req, _ := http.NewRequest("POST", s.URL()+"/PreToolUse-1", strings.NewReader(`{"hook_event_name":"PreToolUse"}`))
	req.Header.Set("X-Hook-Token", "t")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 202 || string(body) != `{"decision":"block"}` {
		t.Errorf("answered %d %q", resp.StatusCode, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ = http.NewRequestWithContext(ctx, "POST", s.URL()+"/Stop-1", strings.NewReader(`{}`))
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Error("the delayed answer came before the client gave up")
	}
	time.Sleep(100 * time.Millisecond) // the server sees the client go
	runs, err := ReadHookRuns(dir)
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs %+v, %v", runs, err)
	}
	pre, stop := runs[0], runs[1]
	if pre.Name != "PreToolUse-1" || pre.Exit != "202" || pre.Stdin["hook_event_name"] != "PreToolUse" ||
		pre.Headers["X-Hook-Token"] != "t" || pre.Headers["Content-Type"] != "application/json" {
		t.Errorf("PreToolUse run %+v", pre)
	}
	if stop.Name != "Stop-1" || stop.Exit != "" {
		t.Errorf("Stop run %+v, want no exit", stop)
	}
	other := pre
	other.Headers = map[string]string{"Content-Type": "application/json", "User-Agent": "other"}
	diffs := Compare(Observation{Hooks: []HookRun{pre}}, Observation{Hooks: []HookRun{other}}, Normalizer{}, Normalizer{})
	if len(diffs) != 1 || diffs[0].Aspect != "header.X-Hook-Token" {
		t.Errorf("diffs %v, want one for X-Hook-Token (User-Agent is not compared)", diffs)
	}
}
