package hookproto

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
)

// memRecorder keeps the records it is given.
type memRecorder struct {
	mu   sync.Mutex
	recs []dsh.SessionEventData
}

func (r *memRecorder) Record(_ context.Context, d dsh.SessionEventData) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, d)
	return nil
}

func (r *memRecorder) all() []dsh.SessionEventData {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]dsh.SessionEventData(nil), r.recs...)
}

type testHook struct {
	command string
	timeout float64
	async   bool
}

// writeScript writes an executable shell script into dir and returns its path.
func writeScript(t testing.TB, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// engineFor loads the groups (matcher → hooks) of one event and returns an engine.
func engineFor(t testing.TB, b *hookmap.Bridge, event string, groups ...any) (*Engine, *memRecorder, []Diagnostic) {
	t.Helper()
	cfg := map[string]any{"hooks": map[string]any{event: groups}}
	data, _ := json.Marshal(cfg)
	var events, noMatcher []string
	for _, e := range b.Events {
		events = append(events, e.Name)
		if e.Matcher == "" {
			noMatcher = append(noMatcher, e.Name)
		}
	}
	c, diags := Load(data, LoadOptions{Dialect: Dialect(b.Dialect), Source: "test.json", Events: events, NoMatcherEvents: noMatcher, Table: b})
	rec := &memRecorder{}
	e := &Engine{Table: b, Config: c, Shell: TableRules(b).ShellArgv(nil), Recorder: rec, Dir: t.TempDir()}
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	return e, rec, diags
}

func group(matcher string, hooks ...testHook) map[string]any {
	var hs []any
	for _, h := range hooks {
		m := map[string]any{"type": "command", "command": h.command}
		if h.timeout > 0 {
			m["timeout"] = h.timeout
		}
		if h.async {
			m["async"] = true
		}
		hs = append(hs, m)
	}
	g := map[string]any{"hooks": hs}
	if matcher != "" {
		g["matcher"] = matcher
	}
	return g
}

func h(cmd string) testHook { return testHook{command: cmd} }

// TestFireRecordsInConfigOrder: invoked records precede every run, results follow all of
// them, both in configuration order whatever the finishing order (decision 3).
func TestFireRecordsInConfigOrder(t *testing.T) {
	e, rec, _ := engineFor(t, &hookmap.ClaudeCode, "PreToolUse",
		group("Bash", h("sleep 0.3; echo slow >&2; exit 2"), h("exit 0")),
		group("", h("sleep 0.1; exit 1")),
		group("Read", h("exit 2")), // does not match
	)
	rep := e.Fire(context.Background(), Fire{Event: "PreToolUse", Subject: "Bash", Stdin: []byte("{}\n"), Turn: 3, InTurn: true})
	recs := rec.all()
	if len(recs) != 6 {
		t.Fatalf("%d records, want 6: %#v", len(recs), recs)
	}
	var ids []string
	for i, r := range recs[:3] {
		inv, ok := r.(dsh.HookInvoked)
		if !ok {
			t.Fatalf("record %d is %T, want HookInvoked", i, r)
		}
		if inv.Turn != 3 || inv.Point != "PreToolUse" || inv.Dialect != dsh.HookDialectClaudeCode {
			t.Errorf("invoked %d: %+v", i, inv)
		}
		ids = append(ids, inv.HandlerID)
	}
	if m := recs[0].(dsh.HookInvoked).Matcher; m == nil || *m != "Bash" {
		t.Errorf("matcher %v", m)
	}
	if recs[2].(dsh.HookInvoked).Matcher != nil {
		t.Errorf("match-all group has a matcher")
	}
	want := []dsh.HookOutcome{"deny", "pass", "error"}
	for i, r := range recs[3:] {
		res, ok := r.(dsh.HookResult)
		if !ok {
			t.Fatalf("record %d is %T, want HookResult", i+3, r)
		}
		if res.HandlerID != ids[i] || res.Outcome != want[i] || res.Turn != 3 {
			t.Errorf("result %d: %+v, want id %s outcome %s", i, res, ids[i], want[i])
		}
		if err := res.Validate(); err != nil {
			t.Error(err)
		}
	}
	if s := recs[3].(dsh.HookResult).StderrSummary; s == nil || *s != "slow" {
		t.Errorf("stderr summary %v", s)
	}
	if rep.Merged.Outcome != "deny" || rep.Merged.Reason != "slow" {
		t.Errorf("merged %+v", rep.Merged)
	}
	// Outside a turn nothing is recorded.
	rec.recs = nil
	e.Fire(context.Background(), Fire{Event: "PreToolUse", Subject: "Bash", InTurn: false})
	if len(rec.all()) != 0 {
		t.Errorf("records outside a turn: %v", rec.all())
	}
}

// TestFireParallel: 10 matched hooks that sleep 200 ms each finish in well under a
// second, their results in configuration order (decision 3).
func TestFireParallel(t *testing.T) {
	var hooks []testHook
	for i := range 10 {
		hooks = append(hooks, h(fmt.Sprintf("sleep 0.2; echo ctx-%d", i)))
	}
	e, rec, _ := engineFor(t, &hookmap.ClaudeCode, "UserPromptSubmit", group("", hooks...))
	start := time.Now()
	rep := e.Fire(context.Background(), Fire{Event: "UserPromptSubmit", Turn: 1, InTurn: true})
	elapsed := time.Since(start)
	if elapsed > 800*time.Millisecond {
		t.Errorf("10 hooks of 200 ms took %v, want well under 1 s", elapsed)
	}
	if len(rep.Merged.Contexts) != 10 {
		t.Fatalf("contexts %q", rep.Merged.Contexts)
	}
	for i, c := range rep.Merged.Contexts {
		if c != fmt.Sprintf("ctx-%d", i) {
			t.Errorf("context %d = %q", i, c)
		}
	}
	recs := rec.all()
	for i := range 10 {
		inv := recs[i].(dsh.HookInvoked)
		res := recs[10+i].(dsh.HookResult)
		if inv.HandlerID != res.HandlerID || !strings.HasSuffix(inv.Command, fmt.Sprintf("ctx-%d", i)) {
			t.Errorf("record pair %d: %s / %s (%s)", i, inv.HandlerID, res.HandlerID, inv.Command)
		}
	}
	t.Logf("10 × 200 ms hooks: %v", elapsed)
}

// TestFireBadInputs runs one event whose hooks misbehave in every listed way next to a
// valid deny, with an invalid regex in another group: each misbehaving hook is a
// recorded outcome with a diagnostic, the valid hooks still decide, and the event does
// not wait past the timeout plus a small grace.
func TestFireBadInputs(t *testing.T) {
	dir := t.TempDir()
	const timeout = 0.5
	bad := []struct {
		name    string
		hook    testHook
		outcome dsh.HookOutcome
		diag    string
	}{
		{"hang", testHook{command: "sleep 30", timeout: timeout}, "timeout", "timed out"},
		{"hang with grandchild", testHook{command: "sleep 30 & sleep 30", timeout: timeout}, "timeout", "timed out"},
		{"grandchild holds stdout", h("sleep 30 & echo 'plain'"), "pass", "kept the hook's output open"},
		{"crash", h(`kill -SEGV $$`), "error", "signal"},
		{"exit 1", h("echo oops >&2; exit 1"), "error", "exit status 1 (non-blocking): oops"},
		{"exit 127", h("/nonexistent/guard.sh"), "error", "exit status 127"},
		{"missing script", h(filepath.Join(dir, "missing.sh")), "error", "exit status 127"},
		{"invalid JSON", h(`echo '{ not json'`), "pass", "taken as plain output"},
		{"two JSON objects", h(`echo '{"decision":"block"}{"decision":"block"}'`), "pass", "taken as plain output"},
		{"10 MB plain", h(`head -c 10485760 /dev/zero | tr '\0' x`), "pass", "stdout exceeded its cap"},
		{"non-UTF-8", h(`printf '\377\376 plain'`), "pass", "not valid UTF-8"},
		{"other event", h(`echo '{"hookSpecificOutput":{"hookEventName":"Stop","permissionDecision":"deny","permissionDecisionReason":"x"}}'`), "pass", `hookEventName "Stop"`},
	}
	var hooks []testHook
	for _, b := range bad {
		hooks = append(hooks, b.hook)
	}
	guard := writeScript(t, dir, "guard.sh", `cat >/dev/null; echo "denied by guard" >&2; exit 2`)
	e, rec, diags := engineFor(t, &hookmap.ClaudeCode, "PreToolUse",
		group("Bash", hooks...),
		group("(", h("exit 2")), // invalid regex: skipped with a diagnostic
		group("Bash|Edit", h(guard)),
	)
	if len(diags) != 1 || !strings.Contains(diags[0].Error(), `invalid claude-code regex matcher "("`) || diags[0].Skipped != "group" {
		t.Fatalf("diagnostics %v", diags)
	}
	start := time.Now()
	rep := e.Fire(context.Background(), Fire{Event: "PreToolUse", Subject: "Bash", Stdin: []byte(`{"tool_name":"Bash"}` + "\n"), Turn: 1, InTurn: true})
	elapsed := time.Since(start)
	if limit := time.Duration(timeout*float64(time.Second)) + DefaultKillGrace + DefaultPipeGrace + 700*time.Millisecond; elapsed > limit {
		t.Errorf("the event took %v, want at most the timeout plus a small grace (%v)", elapsed, limit)
	}
	t.Logf("bad-input event took %v", elapsed)
	if len(rep.Hooks) != len(bad)+1 {
		t.Fatalf("%d runs, want %d", len(rep.Hooks), len(bad)+1)
	}
	for i, b := range bad {
		r := rep.Hooks[i]
		if r.Verdict.Outcome != b.outcome || !strings.Contains(strings.Join(r.Verdict.Diagnostics, "\n"), b.diag) {
			t.Errorf("%s: %s %q, want %s with %q", b.name, r.Verdict.Outcome, r.Verdict.Diagnostics, b.outcome, b.diag)
		}
	}
	if g := rep.Hooks[len(bad)]; g.Verdict.Outcome != "deny" {
		t.Errorf("valid guard: %+v", g.Verdict)
	}
	if rep.Merged.Outcome != "deny" || rep.Merged.Reason != "denied by guard" {
		t.Errorf("merged %+v", rep.Merged)
	}
	results := 0
	for _, r := range rec.all() {
		if res, ok := r.(dsh.HookResult); ok {
			results++
			if res.Outcome == "timeout" && res.ExitCode != nil {
				t.Errorf("timed-out run has an exit code: %+v", res)
			}
		}
	}
	if results != len(bad)+1 {
		t.Errorf("%d hook/result records, want %d", results, len(bad)+1)
	}
}

// TestFireStderrSummary: scenario 52, the stderr summary cap.
func TestFireStderrSummary(t *testing.T) {
	e, rec, _ := engineFor(t, &hookmap.ClaudeCode, "PreToolUse", group("", h(`printf 'x%.0s' $(seq 600) >&2; exit 2`)))
	rep := e.Fire(context.Background(), Fire{Event: "PreToolUse", Subject: "Bash", Turn: 1, InTurn: true})
	if got := rep.Hooks[0].StderrSummary; got != strings.Repeat("x", 500)+"…" {
		t.Errorf("summary of %d runes", len([]rune(got)))
	}
	if rep.Merged.Reason != strings.Repeat("x", 600) {
		t.Errorf("the reason is the full stderr, got %d chars", len(rep.Merged.Reason))
	}
	e.StderrSummaryMax = 40
	rep = e.Fire(context.Background(), Fire{Event: "PreToolUse", Subject: "Bash", Turn: 1, InTurn: true})
	if got := rep.Hooks[0].StderrSummary; got != strings.Repeat("x", 40)+"…" {
		t.Errorf("summary %q", got)
	}
	_ = rec
}

// TestFireAsync: async hooks run detached, never awaited and never recorded; their
// outcome reaches OnAsync (decision 7).
func TestFireAsync(t *testing.T) {
	e, rec, _ := engineFor(t, &hookmap.ClaudeCode, "UserPromptSubmit",
		group("", testHook{command: "sleep 1; echo late context", async: true}, h("echo now")))
	got := make(chan HookRun, 1)
	start := time.Now()
	rep := e.Fire(context.Background(), Fire{Event: "UserPromptSubmit", Turn: 1, InTurn: true, OnAsync: func(r HookRun) { got <- r }})
	if d := time.Since(start); d > 800*time.Millisecond {
		t.Errorf("Fire waited %v for an async hook of 1 s", d)
	}
	if rep.Async != 1 || len(rep.Hooks) != 1 || rep.Merged.Contexts[0] != "now" {
		t.Errorf("report %+v", rep)
	}
	select {
	case r := <-got:
		if r.Verdict.Outcome != "pass" || len(r.Verdict.Contexts) != 1 || r.Verdict.Contexts[0] != "late context" {
			t.Errorf("async verdict %+v", r.Verdict)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("async hook never reported")
	}
	if n := len(rec.all()); n != 2 {
		t.Errorf("%d records, want the sync hook's 2", n)
	}
	// Close kills a still-running async hook.
	e2, _, _ := engineFor(t, &hookmap.ClaudeCode, "Stop", group("", testHook{command: "sleep 30", async: true}))
	e2.Fire(context.Background(), Fire{Event: "Stop", OnAsync: func(r HookRun) { got <- r }})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start = time.Now()
	if err := e2.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r.Verdict.Outcome != "error" || !r.Result.Cancelled {
		t.Errorf("killed async hook: %+v", r.Verdict)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v", d)
	}
}

// markRewrites: a rewrite is overridden by any later replacement, never by a later merge.
func TestMarkRewrites(t *testing.T) {
	run := func(rw string, merge bool) HookRun {
		var r HookRun
		if rw != "" {
			r.Verdict.Rewrite, r.Verdict.RewriteMerge = []byte(rw), merge
		}
		return r
	}
	for _, tc := range []struct {
		runs []HookRun
		want string
	}{
		{[]HookRun{run(`{"a":1}`, false), run(`{"b":1}`, true), run(`{"c":1}`, false), run("", false), run(`{"d":1}`, true)}, "overridden overridden applied - applied"},
		{[]HookRun{run(`{"a":1}`, true), run(`{"b":1}`, false)}, "overridden applied"},
		{[]HookRun{run(`{"a":1}`, false), run(`{"b":1}`, true)}, "applied applied"},
		{[]HookRun{run("", false)}, "-"},
	} {
		markRewrites(tc.runs)
		var got []string
		for _, r := range tc.runs {
			s := string(r.Rewrite)
			if s == "" {
				s = "-"
			}
			got = append(got, s)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("got %q, want %q", strings.Join(got, " "), tc.want)
		}
	}
}

// A hook/result record carries a notice and a diagnostic only when the run had some, each
// joined one per line.
func TestRecordNoticeAndDiagnostic(t *testing.T) {
	if rec := (HookRun{}).Record(1); rec.Notice != nil || rec.Diagnostic != nil || rec.StderrSummary != nil {
		t.Errorf("a quiet run records notice %v, diagnostic %v, stderr %v", rec.Notice, rec.Diagnostic, rec.StderrSummary)
	}
	run := HookRun{Verdict: Verdict{Notices: []string{"n1", "n2"}, Diagnostics: []string{"d1", "d2"}}, StderrSummary: "err"}
	rec := run.Record(2)
	if rec.Turn != 2 || rec.Notice == nil || *rec.Notice != "n1\nn2" || rec.Diagnostic == nil || *rec.Diagnostic != "d1\nd2" ||
		rec.StderrSummary == nil || *rec.StderrSummary != "err" {
		t.Errorf("record = %+v", rec)
	}
}

// A Recorder that fails is logged once per record it refused; a run with neither
// diagnostics nor notices is not logged, one with a diagnostic is.
func TestFireLogsRecorderFailuresAndNoisyRuns(t *testing.T) {
	for _, c := range []struct {
		name, cmd string
		failing   bool
		want      map[string]bool // log messages: whether each must appear
	}{
		{"quiet run, healthy recorder", "exit 0", false,
			map[string]bool{"hook/invoked not recorded": false, "hook/result not recorded": false, "hook run": false}},
		{"noisy run, failing recorder", "exit 1", true,
			map[string]bool{"hook/invoked not recorded": true, "hook/result not recorded": true, "hook run": true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, _, _ := engineFor(t, &hookmap.ClaudeCode, "Stop", group("", h(c.cmd)))
			var logs bytes.Buffer
			e.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			if c.failing {
				e.Recorder = RecorderFunc(func(context.Context, dsh.SessionEventData) error { return errors.New("log full") })
			}
			e.Fire(context.Background(), Fire{Event: "Stop", Turn: 1, InTurn: true, Stdin: []byte(`{}`)})
			// The noisy run's line carries its diagnostics, and no empty notices.
			if c.failing && (!strings.Contains(logs.String(), "diagnostics=") || strings.Contains(logs.String(), "notices=")) {
				t.Errorf("hook run line: %s", logs.String())
			}
			for msg, want := range c.want {
				if got := strings.Contains(logs.String(), "msg=\""+msg+"\""); got != want {
					t.Errorf("logged %q: %v, want %v\n%s", msg, got, want, logs.String())
				}
			}
		})
	}
}

// A run with a notice only is logged with the notice, and no empty diagnostics.
func TestFireLogsANoticeOnlyRun(t *testing.T) {
	e, _, _ := engineFor(t, &hookmap.ClaudeCode, "Stop", group("", h(`echo '{"systemMessage":"hello"}'`)))
	var logs bytes.Buffer
	e.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	e.Fire(context.Background(), Fire{Event: "Stop", Turn: 1, InTurn: true, Stdin: []byte(`{}`)})
	if line := logs.String(); !strings.Contains(line, "notices=hello") || strings.Contains(line, "diagnostics=") {
		t.Errorf("notice-only run logged: %q", line)
	}
}

// A hook runs in the fire's directory when it names one, else in the engine's.
func TestHookRunsInTheFiresDirElseTheEngines(t *testing.T) {
	e := &Engine{Dir: "/engine"}
	if got := e.command(Handler{Command: "true"}, Fire{}).Dir; got != "/engine" {
		t.Errorf("no fire dir: %q, want the engine's", got)
	}
	if got := e.command(Handler{Command: "true"}, Fire{Dir: "/fire"}).Dir; got != "/fire" {
		t.Errorf("fire dir: %q, want the fire's", got)
	}
}
