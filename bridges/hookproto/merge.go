package hookproto

import (
	"strings"

	"github.com/dshkit/dsh/generated/dsh"
	"github.com/dshkit/dsh/generated/hookmap"
)

// Merged is the combined verdict of every hook one event ran.
type Merged struct {
	// Outcome is halt, deny, block, ask, allow or pass.
	Outcome Outcome
	// Reason is the reason of the winning decision: the halting hook's stop reason, or the
	// reasons of the winning rank (joined or first, per the event's JoinReasons).
	Reason string
	// Contexts are every hook's contexts in configuration order, empty ones left out,
	// each capped at DefaultContextMax characters (CapContext).
	Contexts []string
	// Notices are every hook's notices in configuration order.
	Notices []string
	// HaltBefore says the halt came from a rule, not continue:false (Verdict.HaltBefore).
	HaltBefore bool
}

// rank orders decisions: deny and block 3, ask 2, allow 1, anything else 0.
func rank(o Outcome) int {
	switch o {
	case dsh.HookOutcomeDeny, dsh.HookOutcomeBlock:
		return 3
	case dsh.HookOutcomeAsk:
		return 2
	case dsh.HookOutcomeAllow:
		return 1
	}
	return 0
}

// MergeVerdicts combines the verdicts of one event's hooks, given in configuration order
// (docs/design/HOOK-PROTOCOLS.md#18-merging-several-hooks, docs/design/HOOK-PROTOCOLS.md#26-per-event-decision-rules, docs/design/HOOK-PROTOCOLS.md#32-decode-and-merge-rules and docs/design/HOOK-PROTOCOLS.md#bridge-decision-7-mapping-beyond-the-reference-bridge): the first halt wins
// over every decision; otherwise the highest rank wins (deny = block > ask > allow >
// pass), its reasons joined by a blank line (ev.JoinReasons "all") or the first one
// ("first"). error, timeout and failed verdicts carry no decision. Contexts and notices
// accumulate in order whatever the decision.
func MergeVerdicts(ev *hookmap.Event, vs []Verdict) Merged {
	m := Merged{Outcome: dsh.HookOutcomePass}
	best := 0
	halted := false
	var reasons []string
	for _, v := range vs {
		for _, c := range v.Contexts {
			if c != "" {
				m.Contexts = append(m.Contexts, CapContext(c, DefaultContextMax))
			}
		}
		m.Notices = append(m.Notices, v.Notices...)
		if halted {
			continue
		}
		if v.Outcome == dsh.HookOutcomeHalt {
			halted = true
			m.Outcome, m.Reason, m.HaltBefore = dsh.HookOutcomeHalt, v.Reason, v.HaltBefore
			continue
		}
		r := rank(v.Outcome)
		if ev != nil && ev.JoinReasons == "every" {
			// Every deciding hook's reason counts, allowing ones included (Gemini CLI).
			if r > 0 && v.Reason != "" {
				reasons = append(reasons, v.Reason)
			}
			if r > best {
				best, m.Outcome = r, v.Outcome
			}
			continue
		}
		switch {
		case r == 0:
		case r > best:
			best, m.Outcome, reasons = r, v.Outcome, nil
			fallthrough
		case r == best:
			if v.Reason != "" {
				reasons = append(reasons, v.Reason)
			}
		}
	}
	if !halted && best > 0 {
		if ev != nil && ev.JoinReasons == "first" && len(reasons) > 1 {
			reasons = reasons[:1]
		}
		sep := "\n\n"
		if ev != nil && ev.JoinReasons == "every" {
			sep = "\n"
		}
		m.Reason = strings.Join(reasons, sep)
	}
	return m
}
