package hookproto

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
)

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
