package loop

import (
	"time"

	"github.com/dshkit/dsh/runtime/llm"
)

// ResumedContext describes the context a resumed agent starts from, as the session log
// left it: what a hook at SessionStart[resume] needs to judge the prompt cache (Claude
// Code sends it as seconds_since_last_response, context_tokens and
// prompt_cache_likely_expired).
type ResumedContext struct {
	// OK is set when the agent was resumed from a log holding a model response; the
	// other fields are meaningful only then.
	OK bool
	// LastResponse is when the last model response was logged.
	LastResponse time.Time
	// Tokens is the size of the context: the input and output tokens the provider
	// reported for the last response since the last compaction; with no such response,
	// the last checkpoint's projected size (compaction/checkpoint tokensAfter); with
	// neither, the estimate of the history.
	Tokens int
	// Measured is set when Tokens is the provider's usage or no compaction happened: a
	// response since the last compaction (or the session's) may have cached the
	// context. It is false right after a compaction: nothing has cached the compacted
	// context yet.
	Measured bool
}

// ResumedContext returns the context Resume found ({OK: false} for an agent New created
// or a log without a model response). It does not change while the agent runs.
func (a *Agent) ResumedContext() ResumedContext { return a.resumed }

// ResumeStats is ResumedContext in plain values, for the hook bridges (which do not
// import the loop): when the last response was logged, the context's tokens, whether a
// response since the last compaction measured them, and ok.
func (a *Agent) ResumeStats() (lastResponse time.Time, tokens int, measured, ok bool) {
	r := a.resumed
	return r.LastResponse, r.Tokens, r.Measured, r.OK
}

// resumedContext is the context the folded log describes.
func (r *requestState) resumedContext() ResumedContext {
	if r.respondedAt.IsZero() {
		return ResumedContext{}
	}
	out := ResumedContext{OK: true, LastResponse: r.respondedAt}
	switch {
	case r.usageAt >= 0:
		out.Tokens, out.Measured = r.usage, true
	case r.generation > 0:
		out.Tokens = r.checkpointTokens
	default:
		out.Tokens, out.Measured = llm.EstimateMessages(r.history), true
	}
	return out
}
