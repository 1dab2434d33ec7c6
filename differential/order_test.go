package differential

import (
	"slices"
	"testing"
)

// TestEventOrder: the events in start order, consecutive runs of one event merged; a
// different order is an "order" difference, the same order with other counts is not.
func TestEventOrder(t *testing.T) {
	runs := func(names ...string) []HookRun {
		out := make([]HookRun, len(names))
		for i, n := range names {
			out[i] = HookRun{Name: n, Start: int64(i)}
		}
		return out
	}
	claude := runs("SessionStart-1", "PreCompact-1", "PreCompact-2", "SessionStart-1", "PostCompact-1")
	if got, want := EventOrder(claude), []string{"SessionStart", "PreCompact", "SessionStart", "PostCompact"}; !slices.Equal(got, want) {
		t.Fatalf("EventOrder = %v, want %v", got, want)
	}
	dsh := runs("SessionStart-1", "PreCompact-2", "PreCompact-1", "PostCompact-1", "SessionStart-1")
	d, ok := orderDiff(claude, dsh)
	if !ok || d.Aspect != "order" {
		t.Fatalf("orderDiff = %v, %v; want an order difference", d, ok)
	}
	if d, ok := orderDiff(claude, runs("SessionStart-1", "PreCompact-1", "SessionStart-1", "PostCompact-1")); ok {
		t.Fatalf("same order, fewer PreCompact runs: %v", d)
	}
}
