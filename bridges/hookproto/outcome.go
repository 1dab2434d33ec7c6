package hookproto

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dshkit/dsh/generated/dsh"
)

// Outcome is what one hook run came to, as recorded in hook/result: the generated
// dsh.HookOutcome (spec/hooks.cue), whose constants are dsh.HookOutcomePass and so on.
// Only pass, allow, deny, ask, block and halt can carry a decision.
type Outcome = dsh.HookOutcome

// ProcessOutcome settles the outcome of runs whose process side alone rules out any
// decision: dsh.HookOutcomeTimeout for a timeout; dsh.HookOutcomeError for a cancellation, a spawn
// failure, an I/O failure or a death by signal (dsh bridge decision 4). Otherwise it
// returns false, and the dialect decodes the exit code and output. Output over the cap
// settles nothing here: [Decode] decides what it comes to, and never lets it lose a block.
func ProcessOutcome(r Result) (Outcome, bool) {
	switch {
	case r.TimedOut:
		return dsh.HookOutcomeTimeout, true
	case r.Cancelled, r.SpawnErr != nil, r.Err != nil, r.ExitCode == nil:
		return dsh.HookOutcomeError, true
	}
	return "", false
}

// Default caps for summaries and contexts.
const (
	// DefaultStderrSummaryMax is the default length of a stderr summary, in characters.
	DefaultStderrSummaryMax = 500
	// DefaultContextMax is the cap on one injected context, in characters.
	DefaultContextMax = 10000
)

// StderrSummary is the stderr text recorded in hook/result: trimmed, with invalid UTF-8
// replaced by U+FFFD, and cut to max characters (runes) followed by "…" when longer.
// max <= 0 means DefaultStderrSummaryMax. Empty stderr gives "".
func StderrSummary(stderr []byte, max int) string {
	if max <= 0 {
		max = DefaultStderrSummaryMax
	}
	s := strings.TrimSpace(strings.ToValidUTF8(string(stderr), "\uFFFD"))
	if cut, ok := cutRunes(s, max); ok {
		return cut + "…"
	}
	return s
}

// CapContext caps a context injected for the model at max characters (runes), max <= 0
// meaning DefaultContextMax (dsh bridge decision 7). A longer text is cut so that the
// kept part plus a note saying how long the original was fit in max characters; when
// max is too small for the note, the text is just cut.
func CapContext(s string, max int) string {
	if max <= 0 {
		max = DefaultContextMax
	}
	n := utf8.RuneCountInString(s)
	if n <= max {
		return s
	}
	const note = "\n[truncated: %d of %d characters omitted]"
	keep := max - utf8.RuneCountInString(fmt.Sprintf(note, n, n)) // n bounds the omitted count

	if keep <= 0 {
		cut, _ := cutRunes(s, max)
		return cut
	}
	cut, _ := cutRunes(s, keep)
	return cut + fmt.Sprintf(note, n-keep, n)
}

// cutRunes returns the first n runes of s, and whether anything was cut.
func cutRunes(s string, n int) (string, bool) {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos], true
		}
		i++
	}
	return s, false
}
