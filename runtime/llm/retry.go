package llm

import (
	"context"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/internal/duration"
)

// RetryPolicy is dsh's default answer to a failed model call: a rate limit (429), an
// overloaded provider (529, overloaded_error) or a server error (5xx) is retried with
// bounded exponential backoff and jitter, honouring the provider's Retry-After; anything
// else is not retried. The SDKs' own retries are off, so this is the whole policy.
//
// It runs as an agent/request-error listener ([RetryPolicy.Listener]): register it after
// every other listener of the event (innermost), and a plugin's listener, which runs
// around it, replaces it by deciding without calling next.
type RetryPolicy struct {
	// MaxRetries is how many times one step's request is retried; zero means 6.
	MaxRetries int
	// Base is the delay before the first retry; zero means 500 ms. Retry n waits
	// Base·2^(n-1), capped at Max, less up to a quarter of it at random (jitter).
	Base time.Duration
	// Max caps a delay, Retry-After included; zero means 32 s.
	Max time.Duration
	// Rand returns a number in [0, 1) for the jitter; nil means math/rand/v2.
	Rand func() float64
}

// Retryable reports whether f is a failure the policy retries: status 429, 529 or 5xx,
// or the provider's overloaded or rate-limit code.
func Retryable(f dsh.LLMFailure) bool {
	if f.Status != nil {
		s := *f.Status
		if s == 429 || s == 529 || s >= 500 && s <= 599 {
			return true
		}
	}
	switch strings.ToLower(f.Code) {
	case "overloaded_error", "rate_limit_error", "rate_limit_exceeded", "resource_exhausted", "unavailable", "server_error":
		return true
	}
	return false
}

// Delay returns the wait before retry number attempt (1 for the first) of f, and
// whether to retry at all.
func (p RetryPolicy) Delay(f dsh.LLMFailure, attempt int) (time.Duration, bool) {
	maxRetries, base, ceiling := p.MaxRetries, p.Base, p.Max
	if maxRetries <= 0 {
		maxRetries = 6
	}
	if base <= 0 {
		base = 500 * time.Millisecond
	}
	if ceiling <= 0 {
		ceiling = 32 * time.Second
	}
	if attempt < 1 || attempt > maxRetries || !Retryable(f) {
		return 0, false
	}
	if f.ProviderRetryAfterMS != nil {
		return min(duration.Millis(*f.ProviderRetryAfterMS), ceiling), true
	}
	d := base << min(attempt-1, 30)
	if d <= 0 || d > ceiling {
		d = ceiling
	}
	r := p.Rand
	if r == nil {
		r = rand.Float64
	}
	return d - time.Duration(float64(d)/4*r()), true
}

// Listener returns the policy as an agent/request-error listener. It decides retry with
// the delay of [RetryPolicy.Delay] when the policy retries f; otherwise it passes to the
// listeners inside it (none, by default: the turn ends with the failure).
func (p RetryPolicy) Listener() dsh.RequestErrorListener {
	return func(ctx context.Context, pl *dsh.RequestErrorPayload, next dsh.RequestErrorNext) (dsh.RequestErrorDecision, error) {
		if d, ok := p.Delay(pl.Failure, pl.Attempt); ok {
			ms := int(d / time.Millisecond)
			return dsh.RequestErrorRetry{DelayMS: &ms}, nil
		}
		return next.Call(ctx)
	}
}
