// Package duration converts a count of milliseconds that dsh did not choose (a script's
// delay, a decision's retry delay, a server's Retry-After) to a time.Duration without
// overflow: a count past what a Duration holds would otherwise wrap to a negative
// duration, which a timer treats as "at once".
package duration

import (
	"math"
	"time"
)

// Max is the longest duration the conversions return: the largest time.Duration (about
// 292 years), i.e. never in practice.
const Max = time.Duration(math.MaxInt64)

// Millis is ms milliseconds, clamped to [0, Max]: a negative count is 0, one too large
// for a Duration is Max.
func Millis[I ~int | ~int32 | ~int64](ms I) time.Duration {
	switch {
	case ms <= 0:
		return 0
	case int64(ms) > int64(Max/time.Millisecond):
		return Max
	}
	return time.Duration(ms) * time.Millisecond
}
