package llm

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
)

// TestRetryPolicy: 429, 529 and 5xx are retried with growing, jittered, capped delays
// and Retry-After honoured; other failures and attempts past the bound are not.
func TestRetryPolicy(t *testing.T) {
	p := RetryPolicy{MaxRetries: 3, Base: 100 * time.Millisecond, Max: time.Second, Rand: func() float64 { return 0 }}
	st := func(n int) *int { return &n }
	for _, tt := range []struct {
		name    string
		f       dsh.LLMFailure
		attempt int
		want    time.Duration
		retry   bool
	}{
		{"429 first", dsh.LLMFailure{Status: st(429)}, 1, 100 * time.Millisecond, true},
		{"529 second", dsh.LLMFailure{Status: st(529)}, 2, 200 * time.Millisecond, true},
		{"503 third", dsh.LLMFailure{Status: st(503)}, 3, 400 * time.Millisecond, true},
		{"past the bound", dsh.LLMFailure{Status: st(503)}, 4, 0, false},
		{"overloaded event", dsh.LLMFailure{Code: "overloaded_error"}, 1, 100 * time.Millisecond, true},
		{"retry-after", dsh.LLMFailure{Status: st(429), ProviderRetryAfterMS: st(700)}, 1, 700 * time.Millisecond, true},
		{"retry-after capped", dsh.LLMFailure{Status: st(429), ProviderRetryAfterMS: st(70000)}, 1, time.Second, true},
		// A script's retryAfterMs too large for a Duration once wrapped to a negative delay.
		{"retry-after past a Duration", dsh.LLMFailure{Status: st(429), ProviderRetryAfterMS: st(math.MaxInt)}, 1, time.Second, true},
		{"retry-after negative", dsh.LLMFailure{Status: st(429), ProviderRetryAfterMS: st(-5)}, 1, 0, true},
		{"400", dsh.LLMFailure{Status: st(400)}, 1, 0, false},
		{"context window", dsh.LLMFailure{Status: st(400), Code: CodeContextWindowExceeded}, 1, 0, false},
		{"auth", dsh.LLMFailure{Status: st(401)}, 1, 0, false},
	} {
		d, ok := p.Delay(tt.f, tt.attempt)
		if d != tt.want || ok != tt.retry {
			t.Errorf("%s: %v %v, want %v %v", tt.name, d, ok, tt.want, tt.retry)
		}
	}
	// Jitter takes off at most a quarter; the cap bounds a long backoff.
	p.Rand = func() float64 { return 0.999 }
	if d, _ := p.Delay(dsh.LLMFailure{Status: st(500)}, 1); d <= 75*time.Millisecond || d >= 100*time.Millisecond {
		t.Errorf("jittered %v", d)
	}
	p.MaxRetries = 20
	p.Rand = func() float64 { return 0 }
	if d, _ := p.Delay(dsh.LLMFailure{Status: st(500)}, 15); d != time.Second {
		t.Errorf("capped %v", d)
	}
}

func TestContextWindow(t *testing.T) {
	for model, want := range map[string]int{"claude-sonnet-4-5": 200_000, "gpt-5-codex": 400_000, "gpt-4.1-mini": 1_047_576, "gpt-4o": 128_000,
		"gemini-2.5-pro": 1_048_576, "gemini-1.5-pro-002": 2_097_152, "llama3": 0} {
		if got := ContextWindow(model); got != want {
			t.Errorf("%s: %d, want %d", model, got, want)
		}
	}
}

// TestRetryListenerReplaceable: registered innermost, the policy decides when the
// listeners around it call next, and a plugin that decides without calling next replaces
// it.
func TestRetryListenerReplaceable(t *testing.T) {
	st := 529
	p := &dsh.RequestErrorPayload{Failure: dsh.LLMFailure{Message: "Overloaded", Code: "overloaded_error", Status: &st}, Attempt: 1}
	for _, tt := range []struct {
		name      string
		plugin    dsh.RequestErrorListener
		wantRetry bool
	}{
		{"alone", nil, true},
		{"a plugin that calls next", func(ctx context.Context, p *dsh.RequestErrorPayload, next dsh.RequestErrorNext) (dsh.RequestErrorDecision, error) {
			return next.Call(ctx)
		}, true},
		{"a plugin that gives up", func(ctx context.Context, p *dsh.RequestErrorPayload, next dsh.RequestErrorNext) (dsh.RequestErrorDecision, error) {
			return dsh.RequestErrorNone{}, nil
		}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reg := dsh.NewRegistry()
			if tt.plugin != nil {
				reg.Plugin("mine").OnRequestError(tt.plugin)
			}
			reg.Plugin("retry").OnRequestError(RetryPolicy{Rand: func() float64 { return 0 }}.Listener())
			d, err := reg.RunRequestError(context.Background(), p, nil)
			if err != nil {
				t.Fatal(err)
			}
			r, retry := d.(dsh.RequestErrorRetry)
			if retry != tt.wantRetry {
				t.Fatalf("decision %#v", d)
			}
			if retry && (r.DelayMS == nil || *r.DelayMS != 500) {
				t.Errorf("delay %v", r.DelayMS)
			}
		})
	}
}
