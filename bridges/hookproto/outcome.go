package hookproto

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Outcome is what one hook run came to, as recorded in hook/result (the spec's
// #HookOutcome). Only pass, allow, deny, ask, block and halt can carry a decision.
type Outcome string

// The outcomes.
const (
	// OutcomePass: the hook ran and made no decision.
	OutcomePass Outcome = "pass"
	// OutcomeAllow: the hook allowed the action.
	OutcomeAllow Outcome = "allow"
	// OutcomeDeny: the hook denied the action.
	OutcomeDeny Outcome = "deny"
	// OutcomeAsk: the hook asked for the user's approval.
	OutcomeAsk Outcome = "ask"
	// OutcomeBlock: the hook blocked (exit 2 or decision "block").
	OutcomeBlock Outcome = "block"
	// OutcomeHalt: the hook stopped the run (continue:false).
	OutcomeHalt Outcome = "halt"
	// OutcomeError: a non-blocking hook error: another exit code, a signal, a spawn
	// failure, a cancellation or an over-cap output.
	OutcomeError Outcome = "error"
	// OutcomeTimeout: the hook was killed at its timeout.
	OutcomeTimeout Outcome = "timeout"
	// OutcomeFailed: output the engine rejects (Codex), recorded without a decision.
	OutcomeFailed Outcome = "failed"
)

// Outcomes returns every outcome, in the spec's order.
func Outcomes() []Outcome {
	return []Outcome{OutcomePass, OutcomeAllow, OutcomeDeny, OutcomeAsk, OutcomeBlock,
		OutcomeHalt, OutcomeError, OutcomeTimeout, OutcomeFailed}
}

// Valid reports whether o is one of the nine outcomes.
func (o Outcome) Valid() bool {
	switch o {
	case OutcomePass, OutcomeAllow, OutcomeDeny, OutcomeAsk, OutcomeBlock,
		OutcomeHalt, OutcomeError, OutcomeTimeout, OutcomeFailed:
		return true
	}
	return false
}

// ProcessOutcome settles the outcome of runs whose process side alone rules out any
// decision: OutcomeTimeout for a timeout; OutcomeError for a cancellation, a spawn
// failure, an I/O failure, a death by signal or an over-cap stdout or stderr (dsh bridge
// decision 4). Otherwise it returns false, and the dialect decodes the exit code and
// output.
func ProcessOutcome(r Result) (Outcome, bool) {
	switch {
	case r.TimedOut:
		return OutcomeTimeout, true
	case r.Cancelled, r.SpawnErr != nil, r.Err != nil, r.ExitCode == nil,
		r.StdoutOverCap, r.StderrOverCap:
		return OutcomeError, true
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
