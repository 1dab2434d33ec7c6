package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/clix"
	"github.com/dshkit/dsh/runtime/session"
)

// failedResult says whether a tool result is a failure: the call failed (isError), or
// its command exited non-zero (a Bash result's {"exitCode": N} metadata, which the dsh
// and Codex wordings report as a successful call).
func failedResult(d dsh.ToolResultLogged) bool {
	for _, b := range d.Message.Content {
		if r, ok := b.(dsh.ToolResultBlock); ok && r.IsError {
			return true
		}
	}
	return exitCodeOf(d) != 0
}

// exitCodeOf is the exit code in a tool result's metadata (0 when there is none).
func exitCodeOf(d dsh.ToolResultLogged) int {
	var meta struct {
		ExitCode int `json:"exitCode"`
	}
	if len(d.Meta) > 0 && json.Unmarshal(d.Meta, &meta) == nil {
		return meta.ExitCode
	}
	return 0
}

// logSummary accumulates dsh log --summary: the session's turns, tools, hooks, tokens and
// timings, for a session too long to read event by event.
type logSummary struct {
	sessionID   string
	sandbox     string // the last session/sandbox record, described
	events      int
	first, last time.Time

	turns      int
	ends       map[string]int
	turnTime   time.Duration
	turnStart  time.Time
	steps      int
	tokensIn   int
	tokensOut  int
	calls      map[string]*toolStats // by tool name
	callName   map[string]string     // call id → tool name
	callStart  map[string]time.Time  // call id → its tool/call time
	hooks      map[string]*hookStats // by point
	compaction int
}

type toolStats struct {
	calls, failed int
	time          time.Duration
}

type hookStats struct {
	runs     int
	outcomes map[string]int
	time     time.Duration
}

func newLogSummary() *logSummary {
	return &logSummary{ends: map[string]int{}, calls: map[string]*toolStats{}, callName: map[string]string{},
		callStart: map[string]time.Time{}, hooks: map[string]*hookStats{}}
}

// add folds one event into the summary.
func (s *logSummary) add(e session.Event) {
	s.events++
	if s.first.IsZero() {
		s.first = e.Time
	}
	s.last = e.Time
	data, err := e.Decode()
	if err != nil {
		return
	}
	//dshvet:partial the summary counts turns, steps, calls and failures; the other events are not counted
	switch d := data.(type) {
	case dsh.SessionCreated:
		s.sessionID = d.SessionID
	case dsh.SandboxApplied:
		s.sandbox = sandboxLine(d)
	case dsh.TurnStart:
		s.turns++
		s.turnStart = e.Time
	case dsh.TurnEnd:
		s.ends[string(d.Reason.Kind())]++
		if !s.turnStart.IsZero() {
			s.turnTime += e.Time.Sub(s.turnStart)
			s.turnStart = time.Time{}
		}
	case dsh.StepStart:
		s.steps++
	case dsh.AssistantMessageLogged:
		if d.Usage != nil {
			s.tokensIn += d.Usage.InputTokens
			s.tokensOut += d.Usage.OutputTokens
		}
	case dsh.ToolCall:
		st := s.calls[d.Name]
		if st == nil {
			st = &toolStats{}
			s.calls[d.Name] = st
		}
		st.calls++
		s.callName[d.CallID] = d.Name
		s.callStart[d.CallID] = e.Time
	case dsh.ToolResultLogged:
		id := ""
		if src, ok := d.Message.Source.(dsh.SourceTool); ok {
			id = src.CallID
		}
		st := s.calls[s.callName[id]]
		if st == nil {
			return
		}
		if failedResult(d) {
			st.failed++
		}
		if t, ok := s.callStart[id]; ok {
			st.time += e.Time.Sub(t)
		}
	case dsh.HookResult:
		h := s.hooks[d.Point]
		if h == nil {
			h = &hookStats{outcomes: map[string]int{}}
			s.hooks[d.Point] = h
		}
		h.runs++
		h.outcomes[string(d.Outcome)]++
		h.time += time.Duration(d.DurationMS) * time.Millisecond
	case dsh.CompactionEnd:
		s.compaction++
	}
}

// write prints the summary, its control characters (a tool's name is the model's)
// written out (clix.Visible).
func (s *logSummary) write(out io.Writer) {
	var w strings.Builder
	defer func() { io.WriteString(out, clix.Visible(w.String())) }()
	fmt.Fprintf(&w, "session %s: %d events", s.sessionID, s.events)
	if !s.first.IsZero() {
		fmt.Fprintf(&w, ", %s to %s (%s)", s.first.Format(time.RFC3339), s.last.Format(time.RFC3339), s.last.Sub(s.first).Round(time.Millisecond))
	}
	fmt.Fprintln(&w)
	if s.sandbox != "" {
		fmt.Fprintln(&w, s.sandbox)
	}
	fmt.Fprintf(&w, "turns:  %d%s, %d model steps, %s in turns\n", s.turns, counts(s.ends), s.steps, s.turnTime.Round(time.Millisecond))
	fmt.Fprintf(&w, "tokens: %d in, %d out\n", s.tokensIn, s.tokensOut)
	total, failed := 0, 0
	var names []string
	for n, st := range s.calls {
		names = append(names, n)
		total += st.calls
		failed += st.failed
	}
	slices.Sort(names)
	fmt.Fprintf(&w, "tools:  %d calls, %d failed\n", total, failed)
	for _, n := range names {
		st := s.calls[n]
		fmt.Fprintf(&w, "  %-24s %4d calls  %4d failed  %s\n", n, st.calls, st.failed, st.time.Round(time.Millisecond))
	}
	runs := 0
	var points []string
	for p, h := range s.hooks {
		points = append(points, p)
		runs += h.runs
	}
	slices.Sort(points)
	fmt.Fprintf(&w, "hooks:  %d runs\n", runs)
	for _, p := range points {
		h := s.hooks[p]
		fmt.Fprintf(&w, "  %-24s %4d runs%s  %s\n", p, h.runs, counts(h.outcomes), h.time.Round(time.Millisecond))
	}
	if s.compaction > 0 {
		fmt.Fprintf(&w, "compactions: %d\n", s.compaction)
	}
}

// counts renders a count map as " (a 2, b 1)", keys sorted; "" when empty.
func counts(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
