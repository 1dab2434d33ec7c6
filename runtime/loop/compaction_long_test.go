// Tests of compaction over long sessions: a session many times the model's window stays
// under it.

package loop

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

// summarizingModel is a deterministic model for long sessions: it answers a summarizer
// request (the last message is the compaction directive) with a short summary, any other
// request with a short answer, reports the estimator's usage, and fails a request larger
// than its window with CONTEXT_WINDOW_EXCEEDED, as a provider would.
type summarizingModel struct {
	window int
	flat   bool // report a fixed usage instead of estimating the request (a model whose cost does not grow)

	mu        sync.Mutex
	record    bool
	digests   []string // sha256 of each request's JSON (summarizer requests included), when recording
	largest   int      // the largest request, in estimated tokens
	overflows int
	summaries int
	calls     int
}

func (m *summarizingModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[dsh.AssistantChunk, error] {
	return func(yield func(dsh.AssistantChunk, error) bool) {
		in := 1
		if !m.flat {
			in = llm.EstimateRequest(req)
		}
		last := ""
		if n := len(req.Messages); n > 0 {
			last = textOf(req.Messages[n-1].Content)
		}
		summarizer := strings.HasPrefix(last, summaryDirective)
		m.mu.Lock()
		m.calls++
		m.largest = max(m.largest, in)
		if m.window > 0 && in > m.window {
			m.overflows++
			m.mu.Unlock()
			yield(dsh.ChunkFinish{Reason: dsh.FinishReasonError, Error: &dsh.LLMFailure{Message: "too long", Code: llm.CodeContextWindowExceeded}}, nil)
			return
		}
		if m.record {
			data, err := json.Marshal(req)
			if err != nil {
				panic(err)
			}
			sum := sha256.Sum256(data)
			m.digests = append(m.digests, fmt.Sprintf("%x", sum[:8]))
		}
		var out string
		if summarizer {
			m.summaries++
			out = fmt.Sprintf("Summary of %d messages; the last said: %.40s", len(req.Messages)-1, textOf(req.Messages[max(len(req.Messages)-2, 0)].Content))
		} else {
			out = "answer to " + last
		}
		m.mu.Unlock()
		if !yield(dsh.ChunkTextDelta{Text: out}, nil) {
			return
		}
		yield(dsh.ChunkFinish{Reason: dsh.FinishReasonStop, Usage: &dsh.Usage{InputTokens: in, OutputTokens: llm.EstimateText(out)}}, nil)
	}
}

// longSession runs turns prompts (from first) through a, one turn each.
func longSession(t testing.TB, a *Agent, first, turns int) {
	t.Helper()
	for i := first; i < first+turns; i++ {
		followup(t, a, fmt.Sprintf("p%d", i), fmt.Sprintf("prompt number %d: please look at item %d", i, i*7))
		wait(t, a)
	}
}

// longEnv is an env over a summarizingModel with a window of window tokens (0: none, and
// compaction off).
func longEnv(t testing.TB, window int) (*env, *summarizingModel) {
	e := newEnv(t)
	m := &summarizingModel{window: window}
	e.model = m
	e.cfg.Compaction = CompactionConfig{ContextWindow: window, Disabled: window == 0}
	return e, m
}

// TestLongSessionStaysUnderTheWindow: 2,000 turns with a 1,000-token window stay under it
// by compacting (no request ever overflows), and a session restarted halfway sends
// byte-identical requests to the one that ran straight through.
func TestLongSessionStaysUnderTheWindow(t *testing.T) {
	const window, turns = 1000, 2000
	ref, rm := longEnv(t, window)
	ra := ref.agent()
	longSession(t, ra, 0, turns/2)
	rm.mu.Lock()
	rm.record = true
	rm.mu.Unlock()
	longSession(t, ra, turns/2, turns/2)

	if rm.overflows != 0 || rm.largest > window {
		t.Fatalf("%d requests overflowed; the largest held %d tokens (window %d)", rm.overflows, rm.largest, window)
	}
	ends := records[dsh.CompactionEnd](t, ref.log)
	if len(ends) < 20 {
		t.Fatalf("%d compactions in %d turns, want many", len(ends), turns)
	}
	for _, e := range ends {
		if e.Outcome != dsh.CompactionOutcomeCommitted || e.TokensAfter >= e.TokensBefore {
			t.Fatalf("compaction/end %+v: want committed and smaller", e)
		}
	}
	if n := len(records[dsh.TurnEnd](t, ref.log)); n != turns {
		t.Fatalf("%d turns, want %d", n, turns)
	}
	t.Logf("%d turns, %d compactions, %d model calls, largest request %d tokens", turns, len(ends), rm.calls, rm.largest)

	// The same session, restarted after turn 1,000.
	e, _ := longEnv(t, window)
	a := e.agent()
	longSession(t, a, 0, turns/2)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b, rest := resumeRecording(t, e, window)
	longSession(t, b, turns/2, turns/2)
	if len(rest.digests) != len(rm.digests) || !slices.Equal(rest.digests, rm.digests) {
		i := 0
		for i < min(len(rest.digests), len(rm.digests)) && rest.digests[i] == rm.digests[i] {
			i++
		}
		t.Fatalf("after resume the requests differ from request %d on (%d vs %d requests)", i, len(rest.digests), len(rm.digests))
	}
}

// resumeRecording closes e's log, reopens it and resumes the session with a new
// summarizingModel that records the digests of its requests; the agent is closed when
// the test ends.
func resumeRecording(t *testing.T, e *env, window int) (*Agent, *summarizingModel) {
	t.Helper()
	if err := e.log.Close(); err != nil {
		t.Fatal(err)
	}
	rest := &summarizingModel{window: window, record: true}
	e.log, e.model = e.openLog(), rest
	b, err := Resume(context.Background(), e.config())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b, rest
}

// BenchmarkLongSession measures the throughput of the 2,000-turn session with compaction
// on (a 1,000-token window) and off (no window: the history grows to 4,000 messages). The
// test model estimates every request it gets, as a provider's cost grows with the request;
// compaction-off-flat-model has it report a fixed usage instead, which leaves the loop's
// own cost of a growing session.
func BenchmarkLongSession(b *testing.B) {
	for _, c := range []struct {
		name   string
		window int
		flat   bool
	}{{"compaction-on", 1000, false}, {"compaction-off", 0, false}, {"compaction-off-flat-model", 0, true}} {
		b.Run(c.name, func(b *testing.B) {
			const turns = 2000
			for b.Loop() {
				e, m := longEnv(b, c.window)
				m.flat = c.flat
				a := e.agent()
				longSession(b, a, 0, turns)
				_ = a.Close()
			}
			b.ReportMetric(float64(turns*b.N)/b.Elapsed().Seconds(), "turns/s")
		})
	}
}
