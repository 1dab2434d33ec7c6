package differential

import (
	"slices"
	"strings"
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

// TestContinuity: the normalization hides session_id and transcript_path values, so a
// side whose resumed run changes either shows as a "continuity" difference; the same
// count of values on both sides does not.
func TestContinuity(t *testing.T) {
	run := func(id, path string) HookRun {
		return HookRun{Name: "SessionStart-1", Stdin: map[string]any{"session_id": id, "transcript_path": path}}
	}
	engine := []HookRun{run("a", "/t/a.jsonl"), run("a", "/t/a.jsonl")}
	if d, ok := continuityDiff(engine, []HookRun{run("b", "/t/b.jsonl"), run("b", "/t/b.jsonl")}); ok {
		t.Fatalf("one id and path on each side: %v", d)
	}
	d, ok := continuityDiff(engine, []HookRun{run("b", "/t/b.jsonl"), run("c", "/t/c.jsonl")})
	if !ok || d.Aspect != "continuity" || !strings.Contains(d.Detail, "session_id") || !strings.Contains(d.Detail, "transcript_path") {
		t.Fatalf("continuityDiff = %v, %v; want a continuity difference naming both fields", d, ok)
	}
	if d, ok := continuityDiff(engine, []HookRun{run("b", "/t/b.jsonl"), run("b", "/t/c.jsonl")}); !ok || strings.Contains(d.Detail, "session_id") {
		t.Fatalf("continuityDiff = %v, %v; want a transcript_path difference only", d, ok)
	}
}
