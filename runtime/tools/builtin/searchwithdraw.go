package builtin

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/runtime/llm"
	"github.com/dshkit/dsh/runtime/tools"
)

// Withdrawal is how an engine answers a failed request that declared tools behind its tool
// search (the "withdraw" block of a [ToolSearch]): it sends the request Sends times in
// all, then withdraws the search (the deferred tools declared in full, the search and its
// placeholder gone, Text told to the model) and sends it Sends times more, before the
// failure ends the turn. Claude Code 2.1.328 does so for HTTP 400 and 422. The
// withdrawal holds for the rest of the step: the next session's requests offer the
// search again and no longer carry Text.
type Withdrawal struct {
	// Statuses are the HTTP statuses of the failures it answers so.
	Statuses []int `json:"statuses"`
	// Sends is how many times the request is sent with the search, and again without it.
	Sends int `json:"sends"`
	// Text is what the model is told in the requests without the search.
	Text string `json:"text"`
}

// SearchRetry is the retry policy of a toolset's tool search withdrawal (Withdrawal) for
// one session: an agent/request listener, which notes whether a step's request declares
// deferred tools and rewrites the requests of a withdrawn step, and an agent/request-error
// listener, which retries a failure the withdrawal answers on its schedule and passes
// every other one on. Register it before the default retry policy.
type SearchRetry struct {
	w        Withdrawal
	reg      *tools.Registry
	search   []string                           // the search's tools, dropped on withdrawal
	reminder func(text string) dsh.ModelMessage // the message that carries Text

	mu    sync.Mutex
	steps map[string]*withdrawalStep // by agent id: its current step
}

type withdrawalStep struct {
	turn, step int
	deferred   bool // the step's first request declared deferred tools
	withdrawn  bool
}

// NewSearchRetry returns o's toolset's search withdrawal policy for o's model over the
// tools of reg, the model told of it by the message reminder makes of its text; nil when
// o's model gets no tool search or the toolset's search has no withdrawal.
func NewSearchRetry(o Options, reg *tools.Registry, reminder func(text string) dsh.ModelMessage) *SearchRetry {
	all, err := Toolsets()
	if err != nil {
		return nil
	}
	for _, ts := range all {
		if ts.Style != o.Style || o.Style == StyleDSH {
			continue
		}
		s := searchFor(ts, o.Model)
		if s == nil || s.Withdraw == nil || s.Withdraw.Sends < 1 {
			return nil
		}
		p := &SearchRetry{w: *s.Withdraw, reg: reg, reminder: reminder, steps: map[string]*withdrawalStep{}}
		for _, r := range ts.Tools {
			if r.Impl == "claude.tool_search" || r.DeferLoading {
				p.search = append(p.search, r.Name)
			}
		}
		return p
	}
	return nil
}

// Register registers the policy's listeners on r and returns a func that unregisters them.
func (p *SearchRetry) Register(r *dsh.Registrar) (unregister func()) {
	u1 := r.OnRequest(p.Request)
	u2 := r.OnRequestError(p.RequestError)
	return func() { u1(); u2() }
}

// Request is the policy's agent/request listener: on a step's first attempt it notes
// whether the request declares tools behind the search; on the attempts after a
// withdrawal it declares every tool in full, without the search's, and adds the
// withdrawal's message.
func (p *SearchRetry) Request(_ context.Context, pl *dsh.RequestPayload) (dsh.RequestDecision, error) {
	p.mu.Lock()
	st := p.steps[pl.AgentID]
	if st == nil || st.turn != pl.Turn || st.step != pl.Step || pl.Attempt == 1 {
		st = &withdrawalStep{turn: pl.Turn, step: pl.Step}
		st.deferred = slices.ContainsFunc(pl.Request.Tools, func(t dsh.ModelTool) bool { return t.DeferLoading != nil && *t.DeferLoading })
		p.steps[pl.AgentID] = st
	}
	withdrawn := st.withdrawn
	p.mu.Unlock()
	if !withdrawn {
		return dsh.RequestPass{}, nil
	}
	return dsh.RequestRewrite{Tools: p.withdrawnTools(pl), Messages: append(slices.Clone(pl.Request.Messages), p.reminder(p.w.Text)),
		Reason: ptr("the tool search is withdrawn after a failed request")}, nil
}

// withdrawnTools are the request's tools without the search's and with every deferred
// tool of the registry the agent sees, all in full, in name order.
func (p *SearchRetry) withdrawnTools(pl *dsh.RequestPayload) []dsh.ModelTool {
	out := make([]dsh.ModelTool, 0, len(pl.Request.Tools))
	for _, t := range pl.Request.Tools {
		if slices.Contains(p.search, t.Name) {
			continue
		}
		t.DeferLoading = nil
		out = append(out, t)
	}
	for _, d := range p.reg.Visible(pl.AgentID) {
		if d.Loading != tools.LoadDeferred || slices.ContainsFunc(out, func(t dsh.ModelTool) bool { return t.Name == d.Name }) {
			continue
		}
		out = append(out, dsh.ModelTool{Name: d.Name, Description: d.Description, InputSchema: slices.Clone(d.InputSchema)})
	}
	slices.SortFunc(out, func(a, b dsh.ModelTool) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// RequestError is the policy's agent/request-error listener: a failure of one of the
// statuses, in a step whose request declared deferred tools, is retried at once until
// the request was sent Sends times; then the search is withdrawn and the request retried
// until it was sent Sends times more. Every other failure (one over the context window
// too), and this one past the schedule, goes to the listeners inside.
func (p *SearchRetry) RequestError(ctx context.Context, pl *dsh.RequestErrorPayload, next dsh.RequestErrorNext) (dsh.RequestErrorDecision, error) {
	if pl.Failure.Status == nil || !slices.Contains(p.w.Statuses, *pl.Failure.Status) || llm.IsContextWindowExceeded(pl.Failure) {
		// A request over the context window is the loop's overflow recovery's, whose
		// failure ends the turn (the engine's own recoveries take it first too).
		return next.Call(ctx)
	}
	p.mu.Lock()
	st := p.steps[pl.AgentID]
	retry := false
	if st != nil && st.turn == pl.Turn && st.step == pl.Step && st.deferred {
		switch {
		case pl.Attempt < p.w.Sends || st.withdrawn && pl.Attempt < 2*p.w.Sends:
			retry = true
		case pl.Attempt == p.w.Sends && !st.withdrawn:
			st.withdrawn, retry = true, true
		}
	}
	p.mu.Unlock()
	if !retry {
		return next.Call(ctx)
	}
	return dsh.RequestErrorRetry{}, nil
}

func ptr[T any](v T) *T { return &v }
