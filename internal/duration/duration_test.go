package duration_test

import (
	"math"
	"testing"
	"time"

	"github.com/dshkit/dsh/internal/duration"
)

func TestMillis(t *testing.T) {
	for _, tc := range []struct {
		ms   int64
		want time.Duration
	}{
		{0, 0},
		{-1, 0},
		{math.MinInt64, 0},
		{1500, 1500 * time.Millisecond},
		{int64(duration.Max / time.Millisecond), duration.Max / time.Millisecond * time.Millisecond},
		{int64(duration.Max/time.Millisecond) + 1, duration.Max},
		{math.MaxInt64, duration.Max},
	} {
		if got := duration.Millis(tc.ms); got != tc.want || got < 0 {
			t.Errorf("Millis(%d) = %v, want %v", tc.ms, got, tc.want)
		}
	}
	if got := duration.Millis(math.MaxInt32); got != math.MaxInt32*time.Millisecond {
		t.Errorf("Millis(MaxInt32) = %v", got)
	}
}
