package loop

import (
	"fmt"
	"testing"

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
