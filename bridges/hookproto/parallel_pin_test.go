package hookproto

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// Wait returns once every detached run has finished (its callback included), run after
// run, and the tracker is idle again in between.
func TestDetachedWaitCountsRuns(t *testing.T) {
	d := NewDetached(context.Background(), nil)
	var done atomic.Int32
	for round := 1; round <= 2; round++ {
		for range 2 {
			d.Go(context.Background(), Command{Command: "sleep 0.05"}, func(Result) { done.Add(1) })
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := d.Wait(ctx)
		cancel()
		if err != nil {
			t.Fatalf("round %d: Wait = %v", round, err)
		}
		if got := done.Load(); got != int32(2*round) {
			t.Errorf("round %d: Wait returned after %d callbacks, want %d", round, got, 2*round)
		}
	}
	if err := d.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
}
