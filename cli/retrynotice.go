package cli

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/dshkit/dsh/generated/dsh"
)

// retryNotice is dsh run's own plugin that says on stderr when a failed model request is
// retried ("retrying in 4 s: 429 rate_limit: slow down"), as Claude Code shows its
// retries: its agent/request-error listener, registered before the hooks and dsh's retry
// policy, lets them decide and reports what they decided.
type retryNotice struct {
	note func(string)
}

// Name is the plugin's name.
func (retryNotice) Name() string { return "retry-notice" }

// Register registers the listener.
func (p retryNotice) Register(r *dsh.Registrar) (unregister func()) {
	return r.OnRequestError(func(ctx context.Context, pl *dsh.RequestErrorPayload, next dsh.RequestErrorNext) (dsh.RequestErrorDecision, error) {
		d, err := next.Call(ctx)
		if retry, ok := d.(dsh.RequestErrorRetry); ok && err == nil {
			p.note(fmt.Sprintf("retrying in %s (attempt %d): %s", retryDelay(retry.DelayMS), pl.Attempt+1, failureText(pl.Failure)))
		}
		return d, err
	})
}

// retryDelay writes a retry's delay in seconds ("4 s", "0.5 s").
func retryDelay(ms *int) string {
	if ms == nil {
		return "0 s"
	}
	return strconv.FormatFloat((time.Duration(*ms)*time.Millisecond).Seconds(), 'g', 3, 64) + " s"
}

// failureText is a model failure on one line: its status, code and message.
func failureText(f dsh.LLMFailure) string {
	s := ""
	if f.Status != nil {
		s = strconv.Itoa(*f.Status) + " "
	}
	if f.Code != "" {
		s += f.Code + ": "
	}
	return oneLine(s + f.Message)
}
