// Tests of compaction's figures: usage and estimates, the cut, payload figures, summary
// bounds and checkpoint tokens.

package loop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
)

// msgs is a history of user messages with the texts.
func msgs(texts ...string) []llm.Message {
	out := make([]llm.Message, len(texts))
	for i, s := range texts {
		out[i] = llm.Message{Role: llm.RoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: s}}}
	}
	return out
}

// TestMeasureUsageAndEstimate: measure is the provider's usage plus the estimate of the
// messages appended since it applied (usageAt from 0 to len(history) inclusive), else the
// prefix plus the estimate of the whole history (no usage, or a usage position past the
// history); the pending messages' estimate is added either way.
func TestMeasureUsageAndEstimate(t *testing.T) {
	h := msgs(filler("one", 40), filler("two", 50), filler("three", 60))
	pending := []dsh.UserMessage{{Content: []dsh.ContentBlock{dsh.TextBlock{Text: filler("four", 30)}}}}
	pend := pendingTokens(pending)
	if pend <= 0 {
		t.Fatalf("pendingTokens = %d", pend)
	}
	const prefix, usage = 100, 5000
	whole := prefix + llm.EstimateMessages(h)
	for _, c := range []struct {
		usageAt, want int
	}{
		{-1, whole},
		{0, usage + llm.EstimateMessages(h)},
		{1, usage + llm.EstimateMessages(h[1:])},
		{3, usage},
		{4, whole},
	} {
		t.Run(fmt.Sprint(c.usageAt), func(t *testing.T) {
			var a Agent
			a.req.usage, a.req.usageAt = usage, c.usageAt
			if got := a.measure(prefix, h, nil); got != c.want {
				t.Errorf("measure = %d, want %d", got, c.want)
			}
			if got := a.measure(prefix, h, pending); got != c.want+pend {
				t.Errorf("measure with pending = %d, want %d", got, c.want+pend)
			}
		})
	}
}

// TestSelectCut: selectCut keeps the newest unit (an assistant message with its tool
// results, or one message), grows the retained tail backwards while it fits the budget
// (a tail exactly at the budget fits), never starts the tail at a tool result, never
// shadows nothing but the previous checkpoint, and returns 0 when nothing can be shadowed.
func TestSelectCut(t *testing.T) {
	u := func(s string) llm.Message {
		return llm.Message{Role: llm.RoleUser, Content: []dsh.ContentBlock{dsh.TextBlock{Text: s}}}
	}
	call := func(id string) llm.Message {
		return llm.Message{Role: llm.RoleAssistant, Content: []dsh.ContentBlock{dsh.ToolCallBlock{ID: id, Name: "echo", Arguments: "{}"}}}
	}
	result := func(id string) llm.Message {
		return llm.Message{Role: llm.RoleUser, Content: []dsh.ContentBlock{dsh.ToolResultBlock{ToolCallID: id,
			Content: []dsh.ContentBlock{dsh.TextBlock{Text: "r"}}}}}
	}
	cp := llm.Message{Role: llm.RoleUser, Content: checkpointMessage("s").Content,
		Source: dsh.SourcePlugin{Plugin: CheckpointPlugin, Form: dsh.PluginFormCheckpoint}}
	five := msgs("m0", "m1", "m2", "m3", "m4")
	e := llm.EstimateMessage(five[0]) // every message of five costs e
	withTools := []llm.Message{u("m0"), call("a"), result("a"), u("m3"), call("b"), result("b"), result("b2")}
	for _, c := range []struct {
		name    string
		history []llm.Message
		budget  int
		want    int
	}{
		{"empty", nil, -1, 0},
		{"one message", msgs("m0"), -1, 0},
		{"two messages", msgs("m0", "m1"), -1, 1},
		{"only the checkpoint before the newest", []llm.Message{cp, u("m1")}, -1, 0},
		{"the checkpoint and one more", []llm.Message{cp, u("m1"), u("m2")}, -1, 2},
		{"newest unit with its results", withTools, -1, 4},
		{"only results after the first message", []llm.Message{u("m0"), call("a"), result("a")}, -1, 1},
		{"budget 0 keeps the newest", five, 0, 4},
		{"tail of two fits", five, 2 * e, 3},
		{"tail of three fits exactly", five, 3 * e, 2},
		{"tail just under three", five, 3*e - 1, 3},
		{"everything fits: the first message still goes", five, 100 * e, 1},
		{"a tail does not start at a tool result", withTools, llm.EstimateMessages(withTools[2:]), 3},
		{"a tail may start at the call", withTools, llm.EstimateMessages(withTools[1:]), 1},
	} {
		if got := selectCut(c.history, c.budget); got != c.want {
			t.Errorf("%s: selectCut = %d, want %d", c.name, got, c.want)
		}
	}
}

// TestCompactUsesTheCallersContext: Compact runs the attempt under the caller's context
// (its values reach the compaction listeners), not a fresh one.
func TestCompactUsesTheCallersContext(t *testing.T) {
	e := newEnv(t, text(filler("one", 60)), text("two"), text("SUMMARY"))
	var got any
	e.reg.Plugin("p").OnPreCompact(func(ctx context.Context, p *dsh.PreCompactPayload) (dsh.PreCompactDecision, error) {
		got = ctx.Value(ctxKey{})
		return dsh.PreCompactProceed{}, nil
	})
	a := e.agent()
	turns(t, a, "first", "second")
	if _, err := a.Compact(context.WithValue(context.Background(), ctxKey{}, "mine"), ""); err != nil {
		t.Fatal(err)
	}
	if got != "mine" {
		t.Fatalf("the pre-compact listener's context holds %v", got)
	}
}

// TestResumedContextSources: the resumed context's tokens are the provider's usage when
// one applies (usageAt 0 included), else the last checkpoint's projected size (not
// measured), else the estimate of the history; a log without a response gives {}.
func TestResumedContextSources(t *testing.T) {
	at := time.Unix(1700000000, 0)
	h := msgs(filler("one", 40), filler("two", 50))
	for _, c := range []struct {
		name string
		r    requestState
		want ResumedContext
	}{
		{"no response", requestState{usageAt: 0, usage: 7}, ResumedContext{}},
		{"usage at 0", requestState{respondedAt: at, usageAt: 0, usage: 7, generation: 1, checkpointTokens: 42},
			ResumedContext{OK: true, LastResponse: at, Tokens: 7, Measured: true}},
		{"checkpoint", requestState{respondedAt: at, usageAt: -1, usage: 7, generation: 1, checkpointTokens: 42, history: h},
			ResumedContext{OK: true, LastResponse: at, Tokens: 42}},
		{"estimate", requestState{respondedAt: at, usageAt: -1, usage: 7, checkpointTokens: 42, history: h},
			ResumedContext{OK: true, LastResponse: at, Tokens: llm.EstimateMessages(h), Measured: true}},
	} {
		if got := c.r.resumedContext(); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestCompactFreshAgentHasNothingToCompact: Compact on an agent that has sent no request
// yet (no request/context recorded) and has no provider or model configured returns
// ErrNothingToCompact and writes nothing.
func TestCompactFreshAgentHasNothingToCompact(t *testing.T) {
	e := newEnv(t)
	e.cfg.LLM = dsh.LLMCallConfig{}
	a := e.agent()
	res, err := a.Compact(context.Background(), "")
	if !errors.Is(err, ErrNothingToCompact) || res.CompactionID != "" {
		t.Fatalf("Compact: %+v, %v", res, err)
	}
	if got := typesOf(e.log, compactionTypes...); len(got) != 0 {
		t.Fatalf("compaction events %v", got)
	}
}

// TestRetainedTailFollowsTheTrigger: with a known window, a manual compaction retains the
// newest messages up to RetainRatio of it (here all but the first), while overflow
// recovery keeps only the newest unit, whatever the window.
func TestRetainedTailFollowsTheTrigger(t *testing.T) {
	t.Run("manual", func(t *testing.T) {
		e := newEnv(t, text(filler("one", 60)), text("two"), text("SUMMARY"))
		e.cfg.Compaction = CompactionConfig{ContextWindow: 100000}
		a := e.agent()
		turns(t, a, filler("first", 80), "second")
		if _, err := a.Compact(context.Background(), ""); err != nil {
			t.Fatal(err)
		}
		start := records[dsh.CompactionStart](t, e.log)
		if len(start) != 1 || start[0].Range.End != 1 {
			t.Fatalf("compaction/start %+v, want the range [0, 1)", start)
		}
	})
	t.Run("overflow", func(t *testing.T) {
		e := newEnv(t, text(filler("alpha", 300)), text("SUMMARY"), text("fits now"))
		e.script.WithContextWindow(500)
		e.cfg.Compaction = CompactionConfig{ContextWindow: 100000} // wrong, and too big to press
		a := e.agent()
		turns(t, a, "first", filler("gamma", 250))
		start := records[dsh.CompactionStart](t, e.log)
		if len(start) != 1 || start[0].Trigger != dsh.CompactionTriggerOverflow || start[0].Range.End != 2 {
			t.Fatalf("compaction/start %+v, want one overflow over [0, 2)", start)
		}
	})
}

// TestPreCompactPayloadFigures: the pre-compact payload's retained tokens are the measured
// tokens less the shadowed range and the request prefix (system prompt and tools), and the
// first attempt's ordinal is 1.
func TestPreCompactPayloadFigures(t *testing.T) {
	e := newEnv(t, text(filler("one", 60)), text("two"), text("SUMMARY"))
	e.cfg.System = "You are terse."
	var got *dsh.PreCompactPayload
	e.reg.Plugin("p").OnPreCompact(func(ctx context.Context, p *dsh.PreCompactPayload) (dsh.PreCompactDecision, error) {
		c := *p
		got = &c
		return dsh.PreCompactProceed{}, nil
	})
	a := e.agent()
	turns(t, a, filler("first", 80), "second")
	if _, err := a.Compact(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	prefix := llm.EstimatePrefix(e.cfg.System, nil)
	if got == nil || prefix <= 0 {
		t.Fatalf("payload %v, prefix %d", got, prefix)
	}
	if want := got.MeasuredTokens - got.ShadowedTokens - prefix; want <= 0 || got.RetainedTokens != want {
		t.Errorf("retained %d, want %d (measured %d, shadowed %d, prefix %d)", got.RetainedTokens, want,
			got.MeasuredTokens, got.ShadowedTokens, prefix)
	}
	if got.Ordinal != 1 {
		t.Errorf("ordinal %d, want 1", got.Ordinal)
	}
}

// TestPressureNeedsTheModelsWindow: with windows known for other models only, the window
// of the model the agent calls is unknown and the pressure check does nothing, however
// long the history.
func TestPressureNeedsTheModelsWindow(t *testing.T) {
	big := filler("alpha", 250)
	e := newEnv(t, text(big), text(big), text(big), text("SUMMARY"), text("after"))
	e.cfg.Compaction = CompactionConfig{Windows: map[string]int{"other/model": 1000}}
	a := e.agent()
	fourTurns(t, a)
	if got := typesOf(e.log, compactionTypes...); len(got) != 0 {
		t.Fatalf("compaction events %v", got)
	}
}

// twoTurns runs two turns, the first with a prompt big enough to be worth summarizing.
func twoTurns(t *testing.T, a *Agent) {
	t.Helper()
	turns(t, a, filler("first", 80), "second")
}

// TestSummaryMaxTokens: the summarizer request is capped, and compaction/summary records
// the cap: the configured SummaryMaxTokens, else the config's maxTokens. With no
// instructions the directive is the request's last text, as it is.
func TestSummaryMaxTokens(t *testing.T) {
	for _, c := range []struct {
		name          string
		summaryMax, w int
	}{{"config", 0, 123}, {"summary", 77, 77}} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, text(filler("one", 60)), text("two"), text("SUMMARY"))
			mt := 123
			e.cfg.LLM.MaxTokens = &mt
			e.cfg.Compaction = CompactionConfig{SummaryMaxTokens: c.summaryMax}
			a := e.agent()
			twoTurns(t, a)
			if _, err := a.Compact(context.Background(), ""); err != nil {
				t.Fatal(err)
			}
			sum := records[dsh.CompactionSummary](t, e.log)
			if len(sum) != 1 || sum[0].MaxTokens == nil || *sum[0].MaxTokens != c.w {
				t.Fatalf("compaction/summary %+v, want maxTokens %d", sum, c.w)
			}
			reqs := e.requests()
			if mt := reqs[2].Config.MaxTokens; mt == nil || *mt != c.w {
				t.Fatalf("the summarizer request's maxTokens %v, want %d", mt, c.w)
			}
			// No plugin instructions: the directive ends the request as it is.
			if last := texts(reqs[2]); last[len(last)-1] != "user:"+summaryDirective {
				t.Fatalf("the summarizer request ends with %q", last[len(last)-1])
			}
		})
	}
}

// TestSecondAttemptOrdinal: the second compaction attempt's pre-compact payload has
// ordinal 2.
func TestSecondAttemptOrdinal(t *testing.T) {
	e := newEnv(t, text(filler("one", 60)), text("two"), text("SUMMARY-1"), text(filler("three", 60)), text("SUMMARY-2"))
	var ordinals []int
	e.reg.Plugin("p").OnPreCompact(func(ctx context.Context, p *dsh.PreCompactPayload) (dsh.PreCompactDecision, error) {
		ordinals = append(ordinals, p.Ordinal)
		return dsh.PreCompactProceed{}, nil
	})
	a := e.agent()
	twoTurns(t, a)
	if _, err := a.Compact(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	followup(t, a, "p3", filler("third", 80))
	wait(t, a)
	if _, err := a.Compact(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if len(ordinals) != 2 || ordinals[0] != 1 || ordinals[1] != 2 {
		t.Fatalf("ordinals %v, want [1 2]", ordinals)
	}
}

// TestSummaryAsBigAsTheRangeIsRefused: a summary whose checkpoint costs exactly as much as
// the range it replaces does not shrink the history: the attempt fails.
func TestSummaryAsBigAsTheRangeIsRefused(t *testing.T) {
	e := newEnv(t, text(filler("one", 60)), text("two"))
	e.reg.Plugin("p").OnPreCompact(func(ctx context.Context, p *dsh.PreCompactPayload) (dsh.PreCompactDecision, error) {
		for n := 1; n < 4*p.ShadowedTokens; n++ {
			s := strings.Repeat("x", n)
			if llm.EstimateMessage(llm.Message{Content: checkpointMessage(s).Content}) == p.ShadowedTokens {
				return dsh.PreCompactReplace{Summary: s}, nil
			}
		}
		t.Errorf("no summary costs exactly %d tokens", p.ShadowedTokens)
		return dsh.PreCompactProceed{}, nil
	})
	a := e.agent()
	twoTurns(t, a)
	res, err := a.Compact(context.Background(), "")
	var fe *FailedError
	if !errors.As(err, &fe) || res.Outcome != dsh.CompactionOutcomeFailed || !strings.Contains(fe.Reason, "does not shrink") {
		t.Fatalf("Compact: %+v, %v", res, err)
	}
}

// TestCheckpointTokensAfterCountsThePending: a pressure compaction's projected size
// (compaction/checkpoint tokensAfter) is what the next request costs: the prefix, the
// checkpoint, the retained tail and the claimed prompt not yet in the history.
func TestCheckpointTokensAfterCountsThePending(t *testing.T) {
	e := pressureSetup(t, text("SUMMARY"), text("after"))
	a := e.agent()
	fourTurns(t, a)
	cps := records[dsh.CompactionCheckpoint](t, e.log)
	if len(cps) != 1 {
		t.Fatalf("%d checkpoints", len(cps))
	}
	reqs := e.requests()
	next := reqs[len(reqs)-1]
	if want := llm.EstimatePrefix(next.System, next.Tools) + llm.EstimateMessages(next.Messages); cps[0].TokensAfter != want {
		t.Fatalf("tokensAfter %d, want %d (the next request's estimate)", cps[0].TokensAfter, want)
	}
}

// TestPostCompactPayloadSummaryAndError: the post-compact payload carries the summary of a
// committed attempt and the failure of a failed one.
func TestPostCompactPayloadSummaryAndError(t *testing.T) {
	for _, c := range []struct {
		name, replace, summary, errPart string
	}{{"committed", "SHORT", "SHORT", ""}, {"failed", " ", "", "empty"}} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, text(filler("one", 60)), text("two"))
			e.reg.Plugin("p").OnPreCompact(func(ctx context.Context, p *dsh.PreCompactPayload) (dsh.PreCompactDecision, error) {
				return dsh.PreCompactReplace{Summary: c.replace}, nil
			})
			var summary, failure string
			e.reg.Plugin("p").OnPostCompact(func(ctx context.Context, p *dsh.PostCompactPayload) (dsh.PostCompactDecision, error) {
				if p.Summary != nil {
					summary = *p.Summary
				}
				if p.Error != nil {
					failure = *p.Error
				}
				return dsh.PostCompactAccept{}, nil
			})
			a := e.agent()
			twoTurns(t, a)
			_, _ = a.Compact(context.Background(), "")
			if summary != c.summary || (c.errPart == "") != (failure == "") || !strings.Contains(failure, c.errPart) {
				t.Fatalf("post-compact summary %q, error %q; want %q, an error with %q", summary, failure, c.summary, c.errPart)
			}
		})
	}
}

// TestPostCompactContextsThenSessionStart: after a committed compaction whose post-compact
// listener appends a context, agent/session-start{compact} still runs, and the context
// is claimed with the step, before the turn's prompt.
func TestPostCompactContextsThenSessionStart(t *testing.T) {
	e := pressureSetup(t, text("SUMMARY"), text("after"))
	e.reg.Plugin("restorer").OnPostCompact(func(ctx context.Context, p *dsh.PostCompactPayload) (dsh.PostCompactDecision, error) {
		return dsh.PostCompactAppend{Contexts: []dsh.UserMessage{{Content: []dsh.ContentBlock{dsh.TextBlock{Text: "RESTORED"}}}}}, nil
	})
	started := 0
	e.reg.Plugin("watch").OnSessionStart(func(ctx context.Context, p *dsh.SessionStartPayload) error {
		if p.Source == dsh.SessionStartSourceCompact {
			started++
		}
		return nil
	})
	a := e.agent()
	fourTurns(t, a)
	if started != 1 {
		t.Fatalf("session-start{compact} ran %d times", started)
	}
	reqs := e.requests()
	if next := strings.Join(texts(reqs[len(reqs)-1]), "|"); !strings.Contains(next, "|user:RESTORED|user:prompt 3") {
		t.Fatalf("the request after compaction lacks the context before the prompt: %s", next)
	}
}

// TestPressureWithPerModelWindowsOnly: a window known only per model (Windows, no
// ContextWindow) is enough for the pressure check to compact.
func TestPressureWithPerModelWindowsOnly(t *testing.T) {
	big := filler("alpha", 250)
	e := newEnv(t, text(big), text(big), text(big), text("SUMMARY"), text("after"))
	e.cfg.Compaction = CompactionConfig{Windows: map[string]int{"test/m1": 1000}}
	a := e.agent()
	fourTurns(t, a)
	if got := records[dsh.CompactionStart](t, e.log); len(got) != 1 || got[0].Trigger != dsh.CompactionTriggerPressure {
		t.Fatalf("compaction/start %+v, want one pressure attempt", got)
	}
}

// TestPressureAtExactlyTheThreshold: a step boundary whose measure equals the threshold
// compacts (the threshold is reached, not exceeded); one token under it does not.
func TestPressureAtExactlyTheThreshold(t *testing.T) {
	for _, c := range []struct {
		name  string
		extra int // window - measure
		want  bool
	}{{"at", 0, true}, {"under", 1, false}} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, text(filler("one", 80)), text("two"), text("SUMMARY"))
			a := e.agent()
			twoTurns(t, a)
			a.cfg.Compaction.ThresholdRatio = 1
			a.cfg.Compaction.ContextWindow = 1 << 30
			probe := a.compact(context.Background(), attempt{trigger: dsh.CompactionTriggerPressure})
			if probe.selected || probe.err != nil || probe.before <= 0 {
				t.Fatalf("probe: %+v", probe)
			}
			a.cfg.Compaction.ContextWindow = probe.before + c.extra
			res := a.compact(context.Background(), attempt{trigger: dsh.CompactionTriggerPressure})
			if res.err != nil || res.before != probe.before {
				t.Fatalf("attempt: %+v (measure %d before)", res, probe.before)
			}
			if res.selected != c.want || res.bracketed != c.want {
				t.Fatalf("measure %d, window %d: selected %v, bracketed %v, want %v", res.before,
					a.cfg.Compaction.ContextWindow, res.selected, res.bracketed, c.want)
			}
		})
	}
}
